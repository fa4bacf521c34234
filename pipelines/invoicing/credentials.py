"""The one door for the source's settings: base URL and OAuth2 client credentials.

Explicit values win; otherwise dlt's configuration resolution (`sources.invoicing.base_url`,
`client_id`, `client_secret`: environment variables SOURCES__INVOICING__*, `.dlt/config.toml`,
`.dlt/secrets.toml`). `run_sync` and the standalone source both come through here.
"""

from __future__ import annotations

from dataclasses import dataclass

import dlt

from pipelines.invoicing.errors import InvoicingApiError


@dataclass(frozen=True)
class ApiSettings:
    """Where the portal is and how to log in; `repr` leaves the secret out."""

    base_url: str
    client_id: str
    client_secret: str

    def __repr__(self) -> str:
        return f"ApiSettings(base_url={self.base_url!r}, client_id={self.client_id!r}, client_secret=***)"


def resolve_settings(
    base_url: str | None = None, client_id: str | None = None, client_secret: str | None = None
) -> ApiSettings:
    """Explicit values, else dlt's config resolution; raises InvoicingApiError naming what is missing."""
    values = []
    for name, given, accessor in (("base_url", base_url, dlt.config), ("client_id", client_id, dlt.config),
                                  ("client_secret", client_secret, dlt.secrets)):
        value = given if given is not None else accessor.get(f"sources.invoicing.{name}")
        if not value:
            raise InvoicingApiError("configuration", f"sources.invoicing.{name}",
                                    detail=f"not set (SOURCES__INVOICING__{name.upper()})")
        values.append(str(value))
    return ApiSettings(values[0], values[1], values[2])
