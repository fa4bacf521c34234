"""The one door for the source's settings: base URL and OAuth2 client credentials.

Explicit values win; otherwise dlt's configuration resolution (`sources.invoicing.base_url`,
`client_id`, `client_secret`: environment variables SOURCES__INVOICING__*, `.dlt/config.toml`,
`.dlt/secrets.toml`). `run_sync` and the standalone source both come through here. A portal of the portals
file (portals.py) has its base URL there and its credentials under its name:
`sources.invoicing.portals.<name>.client_id` / `client_secret` (SOURCES__INVOICING__PORTALS__<NAME>__...).
Webhook subscriptions need a second API client allowed the `write` scope, kept apart so that the sync's
client stays read-only: `webhook_client_id` / `webhook_client_secret` in the same section
(SOURCES__INVOICING__WEBHOOK_CLIENT_ID, or SOURCES__INVOICING__PORTALS__<NAME>__WEBHOOK_CLIENT_ID).
"""

from __future__ import annotations

import base64
import sys
from dataclasses import dataclass

import dlt

from invoicing_warehouse.engine.redaction import register_secret
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.url_policy import shown, url_problem


@dataclass(frozen=True)
class ApiSettings:
    """Where the portal is and how to log in; `repr` leaves the secret out."""

    base_url: str
    client_id: str
    client_secret: str

    def __post_init__(self) -> None:
        # masked in whatever the product prints (invoicing_warehouse/engine/redaction.py): the secret, and the
        # Basic-auth header value the token request sends
        register_secret(self.client_secret)
        if self.client_secret:
            register_secret(base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode())

    def __repr__(self) -> str:
        return f"ApiSettings(base_url={self.base_url!r}, client_id={self.client_id!r}, client_secret=***)"


def _section(portal: Portal | None) -> str:
    return f"sources.invoicing.portals.{portal.name}" if portal is not None and portal.from_file \
        else "sources.invoicing"


def build_config_providers() -> None:
    """Builds dlt's config providers now, without their look into Streamlit's secrets.

    dlt builds its providers once, on first use; finding no `.dlt/secrets.toml` it then tries Streamlit's
    `st.secrets`, importing Streamlit: 0.2 s of a 3 s no-change sync, because Streamlit is installed here
    for the dashboard. This product never keeps its secrets there, so the import is refused while the
    providers are built (dlt takes the ImportError as "not in Streamlit"). Inside a Streamlit process
    (already imported) nothing changes."""
    if "streamlit" in sys.modules:
        return
    sys.modules["streamlit"] = None  # type: ignore[assignment]  # `import streamlit` raises ImportError
    try:
        dlt.secrets.config_providers  # noqa: B018  # the property builds them
    finally:
        del sys.modules["streamlit"]


def resolve_settings(
    base_url: str | None = None, client_id: str | None = None, client_secret: str | None = None,
    portal: Portal | None = None, *, webhook: bool = False,
) -> ApiSettings:
    """Explicit values, else the portal's (file's base URL, credentials under its name), else dlt's config
    resolution; raises InvoicingApiError naming what is missing. `webhook`: the write-scope client of the
    webhook subscriptions (`webhook_client_id` / `webhook_client_secret`) instead of the sync's."""
    build_config_providers()
    section = _section(portal)
    explicit_url = base_url is not None
    if base_url is None and portal is not None:
        base_url = portal.base_url
    prefix = "webhook_" if webhook else ""
    values = []
    for name, given, accessor in (("base_url", base_url, dlt.config),
                                  (f"{prefix}client_id", client_id, dlt.config),
                                  (f"{prefix}client_secret", client_secret, dlt.secrets)):
        value = given if given is not None else accessor.get(f"{section}.{name}")
        if not value:
            env = "__".join(section.split(".")).upper()
            hint = (f"webhook subscriptions need their own API client allowed the 'write' scope: set "
                    f"{env}__WEBHOOK_CLIENT_ID and {env}__WEBHOOK_CLIENT_SECRET (or webhook_client_id / "
                    f"webhook_client_secret in [{section}] of .dlt/secrets.toml)") if webhook and prefix in name \
                else None
            raise InvoicingApiError("configuration", f"{section}.{name}", detail=f"not set ({env}__{name.upper()})",
                                    hint=hint)
        values.append(str(value))
    problem = url_problem(values[0])
    if problem is not None:
        where = ("base_url" if explicit_url else f"[portals.{portal.name}] of the portals file"
                 if portal is not None and portal.from_file
                 else f"{section}.base_url ({'__'.join(section.split('.')).upper()}__BASE_URL)")
        raise InvoicingApiError("configuration", where, detail=f"base URL {shown(values[0])!r} {problem}",
                                hint="fix the base URL before any credential is sent to it")
    return ApiSettings(values[0], values[1], values[2])
