"""The settings of the runs and of what watches them: the settings file, the portals, the schedules, the status,
the alerts, the webhook hints' runs and the dashboard. Read through reader.py only."""

from __future__ import annotations

from typing import Any

from invoicing_warehouse.engine.environment.kinds import (
    CRON,
    FLAG,
    TEXT,
    Setting,
    divisor_of_60,
    number_above,
    number_at_least,
    one_of,
    whole,
)

ENV_FILE = Setting(
    'INVOICING_ENV_FILE', TEXT, None,
    'none: `.env` at the project root',
    '`invoicing-warehouse` and Dagster, before any other setting: the settings file to read instead (a path; '
    'missing, it is an error). It must belong to the user and be writable by nobody else '
    '(invoicing_warehouse/engine/env_file.py)')

PORTALS_PATH = Setting(
    'INVOICING_PORTALS_PATH', TEXT, None,
    '`portals.toml` when it exists (else the one portal `default`)',
    'Dagster; the CLI takes `--portals PATH`')

SYNC_INTERVAL_MINUTES = Setting(
    'INVOICING_SYNC_INTERVAL_MINUTES', divisor_of_60(), 15,
    '`15` (a divisor of 60)',
    "Dagster's sync schedule and freshness check, `sync --follow`, `status` (its default threshold)")

RECONCILE_CRON = Setting(
    'INVOICING_RECONCILE_CRON', CRON, "30 3 * * *",
    '`30 3 * * *` (UTC)',
    "Dagster's reconcile schedule")

STALE_AFTER_MINUTES = Setting(
    'INVOICING_STALE_AFTER_MINUTES', number_above(0, "minutes"), None,
    'twice `INVOICING_SYNC_INTERVAL_MINUTES` (30)',
    "`status` and the dashboard's Portals page (invoicing_warehouse/runs/status.py); `status --stale-after` wins")

ALERT_URL = Setting(
    'INVOICING_ALERT_URL', TEXT, None,
    'unset (no webhook)',
    "alerts (invoicing_warehouse/runs/alerts.py: `sync`, `models`, `status`, Dagster's `alerts`, "
    "`alert_on_run_failure`, "
    '`alert_on_run_recovery` sensors): one JSON POST per condition raised or cleared, with a `text` field Slack and'
    ' Teams show; `https://`, or `http://` to this machine only; a secret (never printed)', secret=True)

ALERT_APPRISE_URLS = Setting(
    'INVOICING_ALERT_APPRISE_URLS', TEXT, None,
    'unset (none)',
    'the same alerts through Apprise: URLs separated by spaces or commas, e.g. '
    '`mailtos://user:password@smtp.example.com?to=finance-ops@example.com` (e-mail over SMTP), `slack://...`, '
    '`msteams://...`; secrets (never printed)', secret=True)

HINTS_LINGER_S = Setting(
    'INVOICING_HINTS_LINGER_S', number_at_least(0, "seconds"), 60.0,
    '`60` (0: one set of hints per run)',
    'the applying run of webhook hints (invoicing_warehouse/runs/linger.py), CLI and Dagster')

HINTS_RUN_MAX_S = Setting(
    'INVOICING_HINTS_RUN_MAX_S', number_at_least(0, "seconds"), 600.0,
    '`600`',
    'the same')

HINTS_SENSOR_INTERVAL_S = Setting(
    'INVOICING_HINTS_SENSOR_INTERVAL_S', whole(1, "seconds"), 3,
    '`3`',
    "Dagster's hints sensor")

HINTS_STANDBY = Setting(
    'INVOICING_HINTS_STANDBY', FLAG, False,
    '`0` (off)',
    "Dagster's hints sensor: keeps one applying run of each portal waiting for webhook hints even when none is "
    "pending, so that a change does not wait for the sensor's next evaluation (Dagster evaluates sensors every "
    '5 s), the run queue and a new process (5-9 s in all); each run waits at most INVOICING_HINTS_RUN_MAX_S, '
    'gives way to any writing run that waits (a sync, a reconcile), and the next takes its place. Costs a run '
    "process per portal and a run in Dagster's list every INVOICING_HINTS_RUN_MAX_S")

DASHBOARD_PORTALS = Setting(
    'INVOICING_DASHBOARD_PORTALS', TEXT, None,
    'none: every portal',
    'the dashboard: the portals it shows, comma-separated portal names (`acme,globex_fr`); every page then sees '
    "those portals' rows only, so a client company can be given its own view "
    "(invoicing_warehouse/dashboard/portal_scope.py, "
    'docs/dashboard-sign-in.md); a malformed value shows an error naming it and no figure')

COMPANY_SIZE = Setting(
    'INVOICING_COMPANY_SIZE', one_of("micro", "PME", "ETI", "GE"), "PME",
    '`PME`',
    "the dashboard's Benchmarks page (invoicing_warehouse/dashboard/observatory.py): the size the portal's DSO and "
    "lateness are "
    "compared with, one of `micro`, `PME`, `ETI`, `GE` (case-free; the Banque de France's categories, décret "
    '2008-1354: PME < 250 employees and ≤ 50 M€ of sales or ≤ 43 M€ of assets, ETI < 5,000 employees, GE above; '
    'micro < 10 employees). PME by default: the small businesses the product is built for; a size the data file has'
    ' no figure for is compared with the figure for all sizes, and the page says so. Anything else: the page shows '
    'an error naming the setting')

PAYMENT_BENCHMARKS_FILE = Setting(
    'INVOICING_PAYMENT_BENCHMARKS_FILE', TEXT, None,
    'the shipped `invoicing_warehouse/dashboard/payment_terms_observatory.csv`',
    'the same page: a CSV of the same columns (`company_size, measure, value_days, figure_year, report, source, '
    'note`; `measure` one of `customer_terms_dso`, `supplier_terms`, `average_lateness`; `company_size` one of the '
    'sizes or `all`) to use newer or other published figures; a malformed file is an error naming its line')


SETTINGS: tuple[Setting[Any], ...] = (
    ENV_FILE, PORTALS_PATH, SYNC_INTERVAL_MINUTES, RECONCILE_CRON, STALE_AFTER_MINUTES, ALERT_URL,
    ALERT_APPRISE_URLS, HINTS_LINGER_S, HINTS_RUN_MAX_S, HINTS_SENSOR_INTERVAL_S, HINTS_STANDBY, DASHBOARD_PORTALS,
    COMPANY_SIZE, PAYMENT_BENCHMARKS_FILE,
)
