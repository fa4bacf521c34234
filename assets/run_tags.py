"""The tags a portal's runs carry for the run queue: which egress and API host they spend, which portal, which interval.

The service limits requests per source IP (10/s), so the unit of capacity is an egress IP (docs/scaling.md): a
host's runs share its budget, and running 200 portal runs at once behind one IP only makes each wait longer.
Each portal's run (scheduled sync and reconcile, webhook hints) carries

| tag | value | what limits on it (docs/deploy/dagster/dagster.yaml) |
|---|---|---|
| `EGRESS_TAG` | `<API host> via <egress>`: the portal's API host, and `INVOICING_EGRESS_IP` (the name of the egress IP this host's runs leave through; default the host's name: one host, one egress IP) | a few runs at once per value (`tag_concurrency_limits`, `applyLimitPerUniqueValue`) |
| `PORTAL_TAG` | the portal's name | one run per portal at once (a DuckLake takes several writers, never two of one portal's pipeline) |
| `INTERVAL_TAG` | the schedule tick the run belongs to | nothing: the models sensor builds the marts once after an interval's portal runs (model_sensor.py) |

The API host of a portal of the portals file is its `base_url`'s; the portal `default`'s is the `invoicing_api`
resource's, else dlt's `sources.invoicing.base_url` (read when the definitions load, never a secret).
"""  # noqa: E501 (a table, one row a line)

from __future__ import annotations

import socket
from collections.abc import Mapping
from urllib.parse import urlsplit

from assets.resources import InvoicingApiResource
from invoicing_warehouse.engine.environment.api_settings import EGRESS_IP
from invoicing_warehouse.engine.environment.reader import environment
from pipelines.invoicing.portals import Portal

EGRESS_TAG = "invoicing-warehouse/egress"
PORTAL_TAG = "invoicing-warehouse/portal"
INTERVAL_TAG = "invoicing-warehouse/interval"
UNKNOWN_API_HOST = "unconfigured-api"  # the portal `default` before its base_url is set: its runs fail anyway


def egress_name(environ: Mapping[str, str] | None = None) -> str:
    """This host's egress: INVOICING_EGRESS_IP (the setting the rate budget is keyed by, egress.py), else the
    host's name."""
    return environment(environ).text(EGRESS_IP) or socket.gethostname()


def api_host(portal: Portal, api: InvoicingApiResource | None = None) -> str:
    """The host name of the portal's API (lower case, no port: the service counts per host, not per port)."""
    base_url = portal.base_url or (api.base_url if api is not None else None) or _configured_base_url()
    host = urlsplit(base_url).hostname if base_url else None
    return host or UNKNOWN_API_HOST


def _configured_base_url() -> str | None:
    """dlt's `sources.invoicing.base_url` (environment or .dlt/config.toml), the portal `default`'s address."""
    import dlt

    from pipelines.invoicing.credentials import build_config_providers

    build_config_providers()
    value: object = dlt.config.get("sources.invoicing.base_url")
    return str(value) if value else None


def egress_tag(portal: Portal, api: InvoicingApiResource | None = None,
               environ: Mapping[str, str] | None = None) -> str:
    """`<API host> via <egress>`: the budget a run of `portal` spends (EGRESS_TAG's value)."""
    return f"{api_host(portal, api)} via {egress_name(environ)}"


def portal_run_tags(portal: Portal, api: InvoicingApiResource | None = None, interval: str | None = None,
                    environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The tags of one run of `portal` (the interval's when a schedule tick launched it)."""
    tags = {EGRESS_TAG: egress_tag(portal, api, environ), PORTAL_TAG: portal.name}
    if interval is not None:
        tags[INTERVAL_TAG] = interval
    return tags
