"""The settings of the legal reports that the models read, checked once and handed to the SQL as DuckDB variables.

A model reads `getvariable('fiscal_year_start')` and never the environment: the runner sets each variable before
each model (invoicing_warehouse/engine/sql_runner.py), so the gate, `models`, Dagster and the dashboard's as-of builds
all build with the same values, and a bad value stops the build naming the setting before any table is replaced.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal, InvalidOperation

import duckdb

from invoicing_warehouse.engine.environment.engine_settings import (
    COLLECTIVE_PROCEEDINGS,
    FISCAL_YEAR_START,
    PENALTY_RATE_PERCENT,
    PENALTY_RATES_BY_CUSTOMER,
    PERIODIC_INVOICES,
    PUBLIC_BUYERS,
)
from invoicing_warehouse.engine.environment.kinds import Setting
from invoicing_warehouse.engine.environment.reader import current_environment

# the first day of the fiscal year, as month-day (`01-01`, `07-01`); unset: the twelve months ending on the
# report date (the D441-6 table's year when the report date is the closing date)
FISCAL_YEAR_START_SETTING = FISCAL_YEAR_START.name
MONTH_DAY = re.compile(r"(\d{2})-(\d{2})")
# the late-payment penalty rate the terms of sale set, a yearly percentage (L441-10 II: at least three times the
# legal interest rate); unset: the legal default, the ECB rate + 10 points
PENALTY_RATE_SETTING = PENALTY_RATE_PERCENT.name
# the same per customer, `id=rate` comma-separated: a customer's own terms of sale win over the portal's rate
PENALTY_RATES_BY_CUSTOMER_SETTING = PENALTY_RATES_BY_CUSTOMER.name
# customer ids, comma-separated: public buyers (public procurement code R2192-31: the ECB rate of the half-year
# the delay began in + 8 points, fixed for the whole delay), and debtors in collective proceedings (safeguard,
# receivership, liquidation: L622-7 forbids paying debts born before the judgment, so nothing is claimed)
PUBLIC_BUYERS_SETTING = PUBLIC_BUYERS.name
COLLECTIVE_PROCEEDINGS_SETTING = COLLECTIVE_PROCEEDINGS.name
# the references of periodic invoices (factures périodiques, CGI 289 I 3: one invoice for several deliveries of a
# month), whose term L441-10 I caps at 45 days after issue: the API marks no invoice as periodic (the contract's
# document subtypes are credit notes, proformas, deposit and progress invoices), so the user names them, issued or
# received, each an exact reference or a prefix ending in `*` (`REC-*`)
PERIODIC_INVOICES_SETTING = PERIODIC_INVOICES.name
REFERENCE_PATTERN = re.compile(r"[A-Za-z0-9_./-]{1,64}\*?")
# an id as the API serves it: letters, digits, dashes and underscores (a MongoDB ObjectId is 24 hex digits)
CUSTOMER_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ReportSettingError(ValueError):
    """A report setting holds a value the models cannot use."""


def fiscal_year_start() -> str | None:
    """INVOICING_FISCAL_YEAR_START as `MM-DD`, or None when unset. Raises ReportSettingError, naming the
    setting, for anything that is not a day every year has (29 February is refused: a year would lack it)."""
    chosen = current_environment().text(FISCAL_YEAR_START) or ""
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


def _rate(setting: str, text: str) -> Decimal:
    """`text` as a yearly percentage above 0 and at most 100; ReportSettingError naming `setting` otherwise."""
    try:
        rate = Decimal(text.strip().replace(",", "."))
    except InvalidOperation:
        rate = Decimal(-1)
    if not rate.is_finite() or not 0 < rate <= 100:
        raise ReportSettingError(f"{setting}={text.strip()}: not a yearly percentage above 0 and at most 100 "
                                 "(the rate your terms of sale set, e.g. 12.5)")
    return rate


def penalty_rate_percent() -> Decimal | None:
    """INVOICING_PENALTY_RATE_PERCENT as a Decimal, or None when unset (the legal default applies). Raises
    ReportSettingError, naming the setting, for anything but a number above 0 and at most 100."""
    chosen = current_environment().text(PENALTY_RATE_PERCENT) or ""
    return _rate(PENALTY_RATE_SETTING, chosen) if chosen else None


def penalty_rates_by_customer() -> dict[str, Decimal]:
    """INVOICING_PENALTY_RATES_BY_CUSTOMER (`id=rate,id=rate`) as {customer id: rate}; empty when unset. Raises
    ReportSettingError, naming the setting, for an entry without `=`, a bad id or a bad rate."""
    rates: dict[str, Decimal] = {}
    for entry in filter(None, (part.strip() for part in (current_environment().text(PENALTY_RATES_BY_CUSTOMER) or "")
                               .split(","))):
        customer, _, rate = entry.partition("=")
        if not CUSTOMER_ID.fullmatch(customer.strip()):
            raise ReportSettingError(f"{PENALTY_RATES_BY_CUSTOMER_SETTING}: {entry!r} is not `customer id=rate`")
        rates[customer.strip()] = _rate(PENALTY_RATES_BY_CUSTOMER_SETTING, rate)
    return rates


def customer_ids(setting: Setting[str | None]) -> list[str]:
    """The customer ids a setting lists, comma-separated (empty when unset). Raises ReportSettingError, naming
    the setting, for an entry that is not an id."""
    chosen = [part.strip() for part in (current_environment().text(setting) or "").split(",") if part.strip()]
    wrong = [part for part in chosen if not CUSTOMER_ID.fullmatch(part)]
    if wrong:
        raise ReportSettingError(f"{setting.name}: {wrong[0]!r} is not a customer id (ids as the API serves them, "
                                 "comma-separated)")
    return chosen


def periodic_invoices() -> tuple[list[str], list[str]]:
    """INVOICING_PERIODIC_INVOICES as (exact references, reference prefixes), both empty when unset. Raises
    ReportSettingError, naming the setting, for an entry that is not a reference or a prefix ending in `*`."""
    chosen = [part.strip() for part in (current_environment().text(PERIODIC_INVOICES) or "").split(",")
              if part.strip()]
    wrong = [part for part in chosen if not REFERENCE_PATTERN.fullmatch(part)]
    if wrong:
        raise ReportSettingError(f"{PERIODIC_INVOICES_SETTING}: {wrong[0]!r} is not an invoice reference or a "
                                 "prefix ending in * (letters, digits, - _ . /; comma-separated)")
    return ([part for part in chosen if not part.endswith("*")],
            [part.removesuffix("*") for part in chosen if part.endswith("*")])


def set_report_variables(conn: duckdb.DuckDBPyConnection) -> None:
    """Sets the DuckDB variables of the report settings, for the models about to be built on `conn`."""
    conn.execute("set variable fiscal_year_start = ?", [fiscal_year_start()])
    conn.execute("set variable penalty_rate_percent = cast(? as decimal(9, 4))", [penalty_rate_percent()])
    by_customer = penalty_rates_by_customer()
    conn.execute("set variable penalty_rate_customers = cast(? as varchar[])", [list(by_customer)])
    conn.execute("set variable penalty_rate_customer_rates = cast(? as decimal(9, 4)[])",
                 [[str(rate) for rate in by_customer.values()]])
    # lists bound as parameters, never text in the statement: the values are the user's
    conn.execute("set variable public_buyers = cast(? as varchar[])", [customer_ids(PUBLIC_BUYERS)])
    conn.execute("set variable collective_proceedings = cast(? as varchar[])",
                 [customer_ids(COLLECTIVE_PROCEEDINGS)])
    references, prefixes = periodic_invoices()
    conn.execute("set variable periodic_invoice_references = cast(? as varchar[])", [references])
    conn.execute("set variable periodic_invoice_prefixes = cast(? as varchar[])", [prefixes])
