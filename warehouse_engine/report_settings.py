"""The settings of the legal reports that the models read, checked once and handed to the SQL as DuckDB variables.

A model reads `getvariable('fiscal_year_start')` and never the environment: the runner sets each variable before
each model (warehouse_engine/sql_runner.py), so the gate, `models`, Dagster and the dashboard's as-of builds all
build with the same values, and a bad value stops the build naming the setting before any table is replaced.
"""

from __future__ import annotations

import os
import re
from datetime import date

import duckdb

# the first day of the fiscal year, as month-day (`01-01`, `07-01`); unset: the twelve months ending on the
# report date (the D441-6 table's year when the report date is the closing date)
FISCAL_YEAR_START_SETTING = "INVOICING_FISCAL_YEAR_START"
MONTH_DAY = re.compile(r"(\d{2})-(\d{2})")


class ReportSettingError(ValueError):
    """A report setting holds a value the models cannot use."""


def fiscal_year_start() -> str | None:
    """INVOICING_FISCAL_YEAR_START as `MM-DD`, or None when unset. Raises ReportSettingError, naming the
    setting, for anything that is not a day every year has (29 February is refused: a year would lack it)."""
    chosen = (os.environ.get(FISCAL_YEAR_START_SETTING) or "").strip()
    if not chosen:
        return None
    match = MONTH_DAY.fullmatch(chosen)
    try:
        if match is None or (match[1], match[2]) == ("02", "29"):
            raise ValueError(chosen)
        date(2001, int(match[1]), int(match[2]))  # a day of a year without 29 February
    except ValueError:
        raise ReportSettingError(
            f"{FISCAL_YEAR_START_SETTING}={chosen}: not a month-day such as 01-01 or 07-01 (the first day of the "
            "fiscal year; 02-29 is refused)"
        ) from None
    return chosen


def set_report_variables(conn: duckdb.DuckDBPyConnection) -> None:
    """Sets the DuckDB variables of the report settings, for the models about to be built on `conn`."""
    conn.execute("set variable fiscal_year_start = ?", [fiscal_year_start()])
