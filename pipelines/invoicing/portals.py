"""The portals file: which portals (accounts) one warehouse holds, by the name the user gives them.

TOML, `portals.toml` at the project root unless `--portals PATH` says otherwise (commented example:
`portals.example.toml`)::

    [portals.acme]                          # the name is the portal's `portal_id` in every raw row
    base_url = "https://api.infast.fr/api/v2"
    rate_limit = 10                         # optional: requests/s this portal's syncs may make

Credentials never live in this file: they come through credentials.py from dlt's configuration,
`sources.invoicing.portals.<name>.client_id` / `client_secret` (SOURCES__INVOICING__PORTALS__ACME__CLIENT_ID
...). A secret written here is refused, naming where it belongs. Without a file, the single-portal
settings of today (`sources.invoicing.*`) are the one portal `default`.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from invoicing_warehouse.engine.names import DEFAULT_PORTAL
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.url_policy import shown, url_problem

NAME = re.compile(r"[a-z0-9_]+")
KNOWN_KEYS = {"base_url", "rate_limit"}
CREDENTIAL_KEYS = {"client_id", "client_secret", "secret", "password", "token"}


@dataclass(frozen=True)
class Portal:
    """One portal: its name (= `portal_id`), where it is and its pace. `base_url` None: the portal
    `default` of a project without a portals file, whose URL is dlt's `sources.invoicing.base_url`."""

    name: str
    base_url: str | None = None
    rate_limit_per_s: float | None = None

    @property
    def from_file(self) -> bool:
        """Whether the portal was declared in a portals file (its credentials then live under its name)."""
        return self.base_url is not None


def _error(path: Path, detail: str) -> InvoicingApiError:
    return InvoicingApiError("portals", str(path), detail=detail)


def _portal(path: Path, name: str, table: object) -> Portal:
    if not NAME.fullmatch(name):
        raise _error(path, f"portal name {name!r} must be lowercase letters, digits and _ ([a-z0-9_]+)")
    if not isinstance(table, dict):
        raise _error(path, f"[portals.{name}] must be a table of settings")
    secrets = sorted(set(table) & CREDENTIAL_KEYS)
    if secrets:
        env = f"SOURCES__INVOICING__PORTALS__{name.upper()}__{secrets[0].upper()}"
        # the value itself is never repeated: only the key's name and where it belongs
        raise _error(path, f"[portals.{name}] holds {secrets[0]!r}: credentials never go in the portals file; "
                           f"remove it and set {env} or [sources.invoicing.portals.{name}] in .dlt/secrets.toml")
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise _error(path, f"[portals.{name}] has unknown key(s) {unknown}; known: {sorted(KNOWN_KEYS)}")
    base_url = table.get("base_url")
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise _error(path, f"[portals.{name}] needs base_url = \"https://...\" (the API's v2 root)")
    problem = url_problem(base_url)
    if problem is not None:
        raise _error(path, f"[portals.{name}] base_url {shown(base_url)!r} {problem}")
    rate = table.get("rate_limit")
    # TOML reads `inf` and `nan` as floats: inf would crash the limiter, nan would silently turn pacing off
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate)
                             or rate < 0):
        raise _error(path, f"[portals.{name}] rate_limit must be a number of requests/s, finite and >= 0 "
                     f"(0: no pacing), not {rate!r}")
    return Portal(name, base_url.rstrip("/"), float(rate) if rate is not None else None)


def load_portals(path: str | Path) -> dict[str, Portal]:
    """The portals declared in the file at `path`, by name, in file order; raises InvoicingApiError
    (kind `portals`) naming the file and what is wrong."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise _error(path, f"cannot read it ({error.strerror})") from None
    except tomllib.TOMLDecodeError as error:
        raise _error(path, f"not valid TOML ({error})") from None
    extra = sorted(set(data) - {"portals"})
    if extra:
        raise _error(path, f"unknown top-level key(s) {extra}; portals are declared as [portals.<name>]")
    tables = data.get("portals")
    if not isinstance(tables, dict) or not tables:
        raise _error(path, "declares no portal; add at least one [portals.<name>] table")
    return {name: _portal(path, name, table) for name, table in tables.items()}


def configured_portals(path: str | Path | None, *, required: bool = False) -> dict[str, Portal]:
    """The portals of the file at `path` when it exists, else the one portal `default` of today's
    single-portal settings; `required` (a path the user named): a missing file is an error."""
    if path is not None and (required or Path(path).exists()):
        return load_portals(path)
    return {DEFAULT_PORTAL: Portal(DEFAULT_PORTAL)}


def select_portals(portals: dict[str, Portal], name: str | None, every: bool) -> list[Portal]:
    """The portals a command runs for: `--all` -> every one; `--portal NAME` -> that one; neither -> the
    only one (a file with several portals needs a choice)."""
    if every:
        return list(portals.values())
    if name is not None:
        if name not in portals:
            raise InvoicingApiError("portals", f"--portal {name}",
                                    detail=f"unknown portal; configured: {', '.join(portals)}")
        return [portals[name]]
    if len(portals) == 1:
        return list(portals.values())
    raise InvoicingApiError("portals", "--portal", detail=f"several portals are configured ({', '.join(portals)}); "
                            "choose one with --portal NAME or sync them all with --all")
