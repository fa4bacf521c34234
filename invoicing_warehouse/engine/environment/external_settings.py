"""Settings whose names are not the product's own: dlt's keys (read by dlt, from the environment then
`.dlt/secrets.toml` and `.dlt/config.toml`; listed here so that docs/settings.md names them), and the standard
variables of object storage (AWS_*) and of the user's folders (XDG_*), read through reader.py like the others."""

from __future__ import annotations

from typing import Any

from invoicing_warehouse.engine.environment.kinds import DLT, TEXT, Setting

API_BASE_URL = Setting(
    'sources.invoicing.base_url', TEXT, None,
    'none (required); `https://` except on this machine',
    "credentials.py: sync, doctor, webhooks, Dagster's `invoicing_api` (portal `default`)", source=DLT)

API_CLIENT_ID = Setting(
    'sources.invoicing.client_id', TEXT, None,
    'none (required)',
    'the same', source=DLT)

API_CLIENT_SECRET = Setting(
    'sources.invoicing.client_secret', TEXT, None,
    'none (required)',
    'the same', secret=True, source=DLT)

WEBHOOK_CLIENT_ID = Setting(
    'sources.invoicing.webhook_client_id', TEXT, None,
    'none (needed only to register webhooks)',
    '`webhooks register/list/remove` (credentials.py, `webhook=True`)', source=DLT)

WEBHOOK_CLIENT_SECRET = Setting(
    'sources.invoicing.webhook_client_secret', TEXT, None,
    'none',
    'the same', secret=True, source=DLT)

PORTAL_CLIENT_ID = Setting(
    'sources.invoicing.portals.<name>.client_id', TEXT, None,
    'none',
    'a portal `<name>` of the portals file, CLI and Dagster (its base URL and rate are in the portals file)',
    source=DLT)

PORTAL_CLIENT_SECRET = Setting(
    'sources.invoicing.portals.<name>.client_secret', TEXT, None,
    'none',
    'the same', secret=True, source=DLT)

PORTAL_WEBHOOK_CLIENT_ID = Setting(
    'sources.invoicing.portals.<name>.webhook_client_id', TEXT, None,
    'none',
    'the same, to register its webhooks', source=DLT)

PORTAL_WEBHOOK_CLIENT_SECRET = Setting(
    'sources.invoicing.portals.<name>.webhook_client_secret', TEXT, None,
    'none',
    'the same', secret=True, source=DLT)

DUCKLAKE_PASSWORD_SECRET = Setting(
    'warehouse.ducklake.password', TEXT, None,
    'none',
    "the DuckLake catalog's password when `INVOICING_DUCKLAKE_PASSWORD` is not set "
    "(invoicing_warehouse/engine/target.py)", secret=True, source=DLT)

DLTHUB_TELEMETRY = Setting(
    'runtime.dlthub_telemetry', TEXT, None,
    "`false` (dlt's own default is on; the product turns it off unless set)",
    'every sync (pipelines/invoicing/load/sync.py)', source=DLT)

BUFFER_MAX_ITEMS = Setting(
    'normalize.data_writer.buffer_max_items', TEXT, None,
    '`500` rows',
    "every sync (memory of dlt's normalize step)", source=DLT)

INTERCEPT_SIGNALS = Setting(
    'runtime.intercept_signals', TEXT, None,
    '`false` under `sync --follow` (set by it, so Ctrl-C stops the loop, not a load half way)',
    '`sync --follow` (invoicing_warehouse/cli/follow.py)', source=DLT)

AWS_ACCESS_KEY_ID = Setting(
    'AWS_ACCESS_KEY_ID', TEXT, None,
    "none (then a DuckDB secret of the user's, if any)",
    'a lake on object storage: its key id, in a temporary secret of each lake instance '
    '(invoicing_warehouse/engine/object_storage.py)')

AWS_SECRET_ACCESS_KEY = Setting(
    'AWS_SECRET_ACCESS_KEY', TEXT, None,
    'none',
    'the same: its secret key', secret=True)

AWS_SESSION_TOKEN = Setting(
    'AWS_SESSION_TOKEN', TEXT, None,
    'none',
    'the same: the session token of temporary credentials', secret=True)

AWS_REGION = Setting(
    'AWS_REGION', TEXT, None,
    'none',
    'the same: the region')

AWS_DEFAULT_REGION = Setting(
    'AWS_DEFAULT_REGION', TEXT, None,
    'none',
    'the same, when `AWS_REGION` is not set')

AWS_ENDPOINT_URL_S3 = Setting(
    'AWS_ENDPOINT_URL_S3', TEXT, None,
    'none',
    "the same: an S3-compatible server's address (`http://` turns TLS off; addressed in path style)")

AWS_ENDPOINT_URL = Setting(
    'AWS_ENDPOINT_URL', TEXT, None,
    'none',
    'the same, when `AWS_ENDPOINT_URL_S3` is not set')

XDG_CACHE_HOME = Setting(
    'XDG_CACHE_HOME', TEXT, None,
    '`~/.cache`',
    'the folder `INVOICING_RATE_BUDGET_DIR` defaults under (pipelines/invoicing/http/private_state.py)')

XDG_RUNTIME_DIR = Setting(
    'XDG_RUNTIME_DIR', TEXT, None,
    'none',
    'the folder where versions before issue 40 kept the rate budget: a budget file still paced there is warned of '
    '(private_state.py)')


SETTINGS: tuple[Setting[Any], ...] = (
    API_BASE_URL, API_CLIENT_ID, API_CLIENT_SECRET, WEBHOOK_CLIENT_ID, WEBHOOK_CLIENT_SECRET,
    PORTAL_CLIENT_ID, PORTAL_CLIENT_SECRET, PORTAL_WEBHOOK_CLIENT_ID, PORTAL_WEBHOOK_CLIENT_SECRET,
    DUCKLAKE_PASSWORD_SECRET, DLTHUB_TELEMETRY, BUFFER_MAX_ITEMS, INTERCEPT_SIGNALS, AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3,
    AWS_ENDPOINT_URL, XDG_CACHE_HOME, XDG_RUNTIME_DIR,
)
