"""The product's version, read once from the installed distribution's metadata: what `invoicing-warehouse
--version` prints and what the client sends in its User-Agent, so that `pyproject.toml` is the only place it is
written."""

from __future__ import annotations

from functools import cache
from importlib import metadata

DISTRIBUTION = "invoicing-warehouse"
UNKNOWN = "0+unknown"  # code run from a checkout that was never installed (no metadata to read)


@cache
def product_version() -> str:
    """The installed distribution's version (`0+unknown` when the package metadata is not there)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN


def user_agent() -> str:
    """`invoicing-warehouse/<version>`: the CDN in front of the service refuses some default agents."""
    return f"{DISTRIBUTION}/{product_version()}"
