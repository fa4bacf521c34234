"""The data files (seeds) some models read, and the settings that replace them with a user's own file.

A seed ships inside this package (invoicing_warehouse/engine/seeds/, see its README.md for where each came from) and
reaches the SQL through a DuckDB variable the runner sets before each model, so a model reads
`read_csv(getvariable('ecb_rates_csv'))` and never a path of its own. A user's file replaces the shipped one
through the setting: the law's rate table changes twice a year, a release of the product may not.
"""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import duckdb

from invoicing_warehouse.engine.environment.engine_settings import (
    CLAIM_STATUSES_PATH,
    ECB_RATES_PATH,
    LEGAL_INTEREST_RATES_PATH,
)
from invoicing_warehouse.engine.environment.kinds import Setting
from invoicing_warehouse.engine.environment.reader import current_environment

SEEDS_DIR: Path = Path(__file__).resolve().parent / "seeds"
# the ECB's main refinancing rate, one row per change (reference.ecb_main_refinancing_rates)
ECB_RATES_SETTING = ECB_RATES_PATH.name
ECB_RATES_FILE = SEEDS_DIR / "ecb_main_refinancing_rates.csv"
# the optional column that records the day the table was last checked against the ECB's decisions (the latest value
# on any row counts): the interest of a half-year starting after it is unknown, never computed from an old rate
ECB_CHECKED_COLUMN = "checked_on"


# what became of each late-payment claim, kept in the user's own file across rebuilds (reference.claim_statuses);
# the shipped one is empty: every claim is 'to claim' until the user says otherwise
CLAIM_STATUSES_SETTING = CLAIM_STATUSES_PATH.name
CLAIM_STATUSES_FILE = SEEDS_DIR / "claim_statuses.csv"
CLAIM_STATUSES = ("to claim", "claimed", "waived")

# the French legal interest rate (taux de l'intérêt légal), one row per half-year (reference.legal_interest_rates):
# L441-10 II lets terms of sale set a penalty rate of at least three times it, so a contractual rate is checked
# against it; a half-year without a row has no known floor (flagged, never taken as met)
LEGAL_INTEREST_RATES_SETTING = LEGAL_INTEREST_RATES_PATH.name
LEGAL_INTEREST_RATES_FILE = SEEDS_DIR / "legal_interest_rates.csv"
LEGAL_INTEREST_RATES_COLUMNS = ("half_year_start", "individuals_rate_percent", "other_cases_rate_percent", "source")


class SeedFileError(ValueError):
    """A setting names a seed file that does not exist, or one whose content the models cannot use."""


def _chosen_path(setting: Setting[str | None], shipped: Path, columns: str) -> Path:
    """The file `setting` names, else the shipped seed; SeedFileError naming the setting when it is no file."""
    chosen = current_environment().text(setting)
    if chosen is None:
        return shipped
    path = Path(chosen).expanduser()
    if not path.is_file():
        raise SeedFileError(f"{setting.name}={chosen}: no such file (a CSV with the columns {columns}; see "
                            "invoicing_warehouse/engine/seeds/README.md)")
    return path


def ecb_rates_path() -> Path:
    """The ECB rate table the models read: the file INVOICING_ECB_RATES_PATH names, else the shipped seed."""
    return _chosen_path(ECB_RATES_PATH, ECB_RATES_FILE,
                        "effective_date, rate_percent, source and optionally checked_on")


def claim_statuses_path() -> Path:
    """The claim statuses the models read: the file INVOICING_CLAIM_STATUSES_PATH names, else the shipped (empty)
    one. Raises SeedFileError naming the file and line for a status other than CLAIM_STATUSES, a date that is
    not one, or a claim listed twice: a typo must not silently leave a claim 'to claim'."""
    path = _chosen_path(CLAIM_STATUSES_PATH, CLAIM_STATUSES_FILE, "portal_id, reference, status, status_date, note")
    seen: set[tuple[str, str]] = set()
    with path.open(newline="", encoding="utf-8-sig") as file:
        for line, row in enumerate(csv.DictReader(file), start=2):
            key = ((row.get("portal_id") or "").strip(), (row.get("reference") or "").strip())
            status = (row.get("status") or "").strip()
            if status not in CLAIM_STATUSES:
                raise SeedFileError(f"{path}, line {line}: status {status!r} is not one of {', '.join(CLAIM_STATUSES)}")
            if not key[1] or key in seen:
                raise SeedFileError(f"{path}, line {line}: reference {key[1]!r} is empty or listed twice")
            seen.add(key)
            day = (row.get("status_date") or "").strip()
            try:
                if day:
                    date.fromisoformat(day)
            except ValueError:
                raise SeedFileError(f"{path}, line {line}: status_date {day!r} is not a date (YYYY-MM-DD)") from None
    return path


def legal_interest_rates_path() -> Path:
    """The legal interest rate table the models read: the file INVOICING_LEGAL_INTEREST_RATES_PATH names, else the
    shipped seed. Raises SeedFileError naming the file and line for a missing column, a half-year that does not
    start on 1 January or 1 July, one listed twice, or a rate that is not a percentage from 0 to 100: a wrong floor
    would pass or flag contractual rates wrongly."""
    path = _chosen_path(LEGAL_INTEREST_RATES_PATH, LEGAL_INTEREST_RATES_FILE,
                        ", ".join(LEGAL_INTEREST_RATES_COLUMNS) + " and optionally checked_on")
    seen: set[date] = set()
    with path.open(newline="", encoding="utf-8-sig") as file:
        reader = csv.DictReader(file)
        missing = [column for column in LEGAL_INTEREST_RATES_COLUMNS if column not in (reader.fieldnames or [])]
        if missing:
            raise SeedFileError(f"{path}: no column {', '.join(missing)} (the columns are "
                                f"{', '.join(LEGAL_INTEREST_RATES_COLUMNS)}, checked_on)")
        for line, row in enumerate(reader, start=2):
            start = (row.get("half_year_start") or "").strip()
            try:
                day = date.fromisoformat(start)
                if (day.month, day.day) not in ((1, 1), (7, 1)) or day in seen:
                    raise ValueError(start)
                for column in LEGAL_INTEREST_RATES_COLUMNS[1:3]:
                    if not 0 <= float((row.get(column) or "").strip()) <= 100:
                        raise ValueError(column)
            except ValueError:
                raise SeedFileError(f"{path}, line {line}: a half-year starting on 1 January or 1 July, listed once, "
                                    "with two rates from 0 to 100 (YYYY-MM-DD, percent) is expected") from None
            seen.add(day)
    return path


def table_checked_on(path: Path) -> date | None:
    """The day the rate table at `path` was last checked against its source (the ECB's decisions, the Journal
    officiel's arrêtés): the latest `checked_on` of its rows, or None when the file has no such column or no value
    in it (the ECB table then counts as checked up to its newest change). Raises SeedFileError naming the file for
    a value that is not a date."""
    with path.open(newline="", encoding="utf-8-sig") as file:
        values = [row.get(ECB_CHECKED_COLUMN) or "" for row in csv.DictReader(file)]
    days = []
    for value in filter(None, (value.strip() for value in values)):
        try:
            days.append(date.fromisoformat(value))
        except ValueError:
            raise SeedFileError(f"{path}: {ECB_CHECKED_COLUMN} {value!r} is not a date (YYYY-MM-DD)") from None
    return max(days, default=None)


def set_seed_variables(conn: duckdb.DuckDBPyConnection) -> None:
    """Sets the DuckDB variables that name each seed file, for the models about to be built on `conn`."""
    path = ecb_rates_path()
    # a bound parameter, not text in the statement: the path is the user's and may hold any character
    conn.execute("set variable ecb_rates_csv = ?", [str(path)])
    conn.execute("set variable ecb_rates_checked_on = ?", [table_checked_on(path)])
    conn.execute("set variable claim_statuses_csv = ?", [str(claim_statuses_path())])
    legal = legal_interest_rates_path()
    conn.execute("set variable legal_interest_rates_csv = ?", [str(legal)])
    conn.execute("set variable legal_interest_rates_checked_on = ?", [table_checked_on(legal)])
