"""The settings of the warehouse and its models: where it is (a DuckDB file or a DuckLake), the lake's upkeep, the
analyst's models and the figures' own rules (reports, late-payment claims). Read through reader.py only."""

from __future__ import annotations

from typing import Any

from invoicing_warehouse.engine.environment.kinds import (
    CRON,
    FLAG,
    PATH,
    TEXT,
    Setting,
    number_above,
    one_of,
    whole,
)
from invoicing_warehouse.engine.names import DEFAULT_WAREHOUSE_PATH

WAREHOUSE_PATH = Setting(
    'INVOICING_WAREHOUSE_PATH', TEXT, DEFAULT_WAREHOUSE_PATH,
    '`data/warehouse.duckdb`',
    'Dagster (`warehouse` resource); the CLI takes `--warehouse PATH`')

WAREHOUSE_ENGINE = Setting(
    'INVOICING_WAREHOUSE_ENGINE', one_of("duckdb", "ducklake"), "duckdb",
    '`duckdb` (or `ducklake`)',
    'CLI and Dagster (invoicing_warehouse/engine/target.py)')

DUCKLAKE_CATALOG = Setting(
    'INVOICING_DUCKLAKE_CATALOG', TEXT, None,
    'none (required with `ducklake`): a PostgreSQL DSN without password',
    'CLI and Dagster')

DUCKLAKE_DATA_PATH = Setting(
    'INVOICING_DUCKLAKE_DATA_PATH', TEXT, None,
    'none (required with `ducklake`): the Parquet folder, or an object-storage URL `s3://bucket/prefix/` (`s3a://`,'
    ' `gcs://`, `gs://`, `r2://`; no credentials in it)',
    'CLI and Dagster')

DUCKLAKE_STATE_DIR = Setting(
    'INVOICING_DUCKLAKE_STATE_DIR', TEXT, None,
    '`data`',
    "a lake on object storage: this host's working files (dlt's state, the gate's state, exports; its hints wait in"
    ' the catalog database) in `<dir>/<catalog database>/` (invoicing_warehouse/engine/target.py)')

DUCKLAKE_PASSWORD = Setting(
    'INVOICING_DUCKLAKE_PASSWORD', TEXT, None,
    "none; else dlt's `warehouse.ducklake.password`",
    'CLI and Dagster', secret=True)

LAKE_LOCK_WAIT_S = Setting(
    'INVOICING_LAKE_LOCK_WAIT_S', number_above(0, "seconds"), 900.0,
    '`900`',
    "a DuckLake's publication waiting for loads (invoicing_warehouse/engine/lake_lock.py)")

LAKE_SNAPSHOT_HORIZON_DAYS = Setting(
    'INVOICING_LAKE_SNAPSHOT_HORIZON_DAYS', number_above(0, "days", below=36500), 7.0,
    '`7`',
    "`lake maintain`, Dagster's lake upkeep job")

LAKE_MONTH_ENDS_KEPT = Setting(
    'INVOICING_LAKE_MONTH_ENDS_KEPT', whole(0, "months", high=1200), 12,
    '`12` (0: none)',
    'the same: the last published snapshot of each of that many months before the current one (UTC) outlives the '
    'horizon, for month-end reports (`lake maintain --keep-month-ends` wins)')

LAKE_MAINTENANCE_CRON = Setting(
    'INVOICING_LAKE_MAINTENANCE_CRON', CRON, "30 4 * * *",
    '`30 4 * * *` (UTC)',
    "Dagster's schedule")

MODELS_DIR = Setting(
    'INVOICING_MODELS_DIR', PATH, None,
    "none (the product's models only)",
    "`models`, the gate and Dagster: an analyst's folder of models built after the product's into the schema "
    '`analyst` (`models --models-dir DIR` wins; docs/add-a-model.md)')

PUBLISH_TRENDS = Setting(
    'INVOICING_PUBLISH_TRENDS', FLAG, True,
    '`1` (on)',
    'the gate, before every publication: the month-end trends (`marts.month_end_trends`, twelve builds of the three'
    ' marts DSO rests on; 2 s on the demo, 40 s at 1,000,000 documents) written into the copy, so the Trends page '
    'reads a table (a publication builds again only the month-ends whose raw rows changed, '
    'invoicing_warehouse/runs/month_end_inputs.py: none for a change dated this month); `0` publishes without them '
    '(hint runs that must publish within seconds at millions of documents) and the page builds them on its first visit '
    '(invoicing_warehouse/runs/month_end_trends.py)')

ECB_RATES_PATH = Setting(
    'INVOICING_ECB_RATES_PATH', TEXT, None,
    'none (the shipped `invoicing_warehouse/engine/seeds/ecb_main_refinancing_rates.csv`)',
    "`models`, the gate, Dagster and the dashboard's as-of builds: a CSV of your own "
    "(`effective_date,rate_percent,source`, one row per change of the ECB's main refinancing rate) for the "
    'late-payment interest (invoicing_warehouse/engine/seed_files.py); a path that is not a file stops the build '
    'naming it')

CLAIM_STATUSES_PATH = Setting(
    'INVOICING_CLAIM_STATUSES_PATH', TEXT, None,
    "none (the shipped, empty `invoicing_warehouse/engine/seeds/claim_statuses.csv`: every claim 'to claim')",
    "`models`, the gate, Dagster and the dashboard's as-of builds (invoicing_warehouse/engine/seed_files.py): your own "
    'CSV `portal_id,reference,status,status_date,note`, one line per late-payment claim you acted on (`status` `to '
    'claim`, `claimed` or `waived`; `portal_id` empty: any portal), read into '
    '`marts.late_payment_claims.claim_status` on every build, so a status survives rebuilds. A path that is not a '
    'file, an unknown status, a bad date or a reference listed twice stops the build naming the line')

FISCAL_YEAR_START = Setting(
    'INVOICING_FISCAL_YEAR_START', TEXT, None,
    'none (the twelve months ending on the report date)',
    "`models`, the gate, Dagster and the dashboard's as-of builds (invoicing_warehouse/engine/report_settings.py): the "
    'first day of the fiscal year as month-day (`01-01`, `07-01`); the D441-6 tables (`payment_terms_report`, '
    '`payment_terms_table`, `payment_terms_paid_late_table`) and `payment_terms_over_cap` cover the year from the '
    'last such day on or before the report date to it. Anything but a day every year has (`02-29` included) stops '
    'the build naming the setting')

PENALTY_RATE_PERCENT = Setting(
    'INVOICING_PENALTY_RATE_PERCENT', TEXT, None,
    'none (the legal default: the ECB rate + 10 points, L441-10 II)',
    "`models`, the gate, Dagster and the dashboard's as-of builds (invoicing_warehouse/engine/report_settings.py): the "
    'late-payment penalty rate your terms of sale set, a yearly percentage (L441-10 II: at least three times the '
    'legal interest rate; the product does not check that floor), applied to every day of every business claim but '
    "public buyers' (`late_payment_interest_periods.rate_basis` 'contractual'). Anything but a number above 0 and "
    'at most 100 stops the build naming the setting')

PENALTY_RATES_BY_CUSTOMER = Setting(
    'INVOICING_PENALTY_RATES_BY_CUSTOMER', TEXT, None,
    'none',
    "the same: `customer id=rate`, comma-separated (`64a1...=9,64b2...=15`): a customer's own terms of sale, "
    "winning over `INVOICING_PENALTY_RATE_PERCENT` for that customer (`rate_basis` 'contractual'). An entry without"
    ' `=`, a bad id or a bad rate stops the build naming it')

PUBLIC_BUYERS = Setting(
    'INVOICING_PUBLIC_BUYERS', TEXT, None,
    'none',
    'the same: customer ids, comma-separated, of public buyers (State, local authorities, hospitals...): their '
    'claims follow the public procurement code, R2192-31 (the ECB rate in force on the first day of the half-year '
    'the delay began in + 8 points, fixed for the whole delay; the 40 € indemnity). An entry that is not an id '
    'stops the build naming it')

COLLECTIVE_PROCEEDINGS = Setting(
    'INVOICING_COLLECTIVE_PROCEEDINGS', TEXT, None,
    'none',
    'the same: customer ids, comma-separated, of debtors in safeguard, receivership or liquidation: their late '
    "invoices stay listed and claim nothing (`claim_excluded_reason` 'collective proceedings (L622-7)')")


LEGAL_INTEREST_RATES_PATH = Setting(
    'INVOICING_LEGAL_INTEREST_RATES_PATH', TEXT, None,
    'none (the shipped `invoicing_warehouse/engine/seeds/legal_interest_rates.csv`, 2015 to the first half of 2026)',
    'the same (invoicing_warehouse/engine/seed_files.py): a CSV of your own '
    '(`half_year_start,individuals_rate_percent,other_cases_rate_percent,source`, optionally '
    "`checked_on`), one row per half-year's arrêté of the taux de l'intérêt légal; three times the other-"
    'cases rate is the floor a contractual penalty rate is checked against. A half-year without a row '
    'leaves the rate unchecked (flagged). A path that is not a file, a half-year not starting on 1 '
    'January or 1 July, one listed twice or a rate that is not a percentage stops the build naming the '
    'line')

PERIODIC_INVOICES = Setting(
    'INVOICING_PERIODIC_INVOICES', TEXT, None,
    'none (no invoice is known to be periodic: the general caps)',
    "`models`, the gate, Dagster and the dashboard's as-of builds (invoicing_warehouse/engine/report_settings.py): "
    'the periodic invoices (factures périodiques, CGI 289 I 3), issued or received, comma-separated, each'
    ' an exact reference (`F-000123`) or a prefix ending in `*` (`REC-*`); `payment_terms_over_cap` caps '
    'their term at 45 days after their date (L441-10 I). The API contract marks no invoice as periodic, '
    'hence the setting. An entry that is neither stops the build naming it')

LANGUAGE = Setting(
    'INVOICING_LANGUAGE', TEXT, None,
    'none: French for a portal whose figures are all in euros (`marts.cash_outlook.currency`; none '
    'served: euros by rule), English for any other currency or a mix',
    "the dashboard (the sidebar's Langue / Language choice and `?lang=fr` or `?lang=en` win for a "
    'session) and `export` (invoicing_warehouse/engine/report_language.py): `fr` or `en` (case-free), the language '
    'of every page text, the column headers of the tables, the xlsx and French-CSV downloads and exports '
    "(the plain CSV and Parquet keep the marts' names) and the reminder letter; dates `28/11/2026` in "
    'French. Anything else: the dashboard shows an error naming the setting and no figure, `export` exits'
    ' 1 naming it')

SETTINGS: tuple[Setting[Any], ...] = (
    WAREHOUSE_PATH, WAREHOUSE_ENGINE, DUCKLAKE_CATALOG, DUCKLAKE_DATA_PATH, DUCKLAKE_STATE_DIR,
    DUCKLAKE_PASSWORD, LAKE_LOCK_WAIT_S, LAKE_SNAPSHOT_HORIZON_DAYS, LAKE_MONTH_ENDS_KEPT,
    LAKE_MAINTENANCE_CRON, MODELS_DIR, PUBLISH_TRENDS, ECB_RATES_PATH, CLAIM_STATUSES_PATH, FISCAL_YEAR_START,
    PENALTY_RATE_PERCENT, PENALTY_RATES_BY_CUSTOMER, PUBLIC_BUYERS, COLLECTIVE_PROCEEDINGS,
    LEGAL_INTEREST_RATES_PATH, PERIODIC_INVOICES, LANGUAGE,
)
