"""Per-snapshot caching: every figure is computed once per (readers' copy, report date, portal) and kept
by Streamlit, so pages switch instantly; a new publication changes `Source.snapshot_key` and with it every
key. Connections are opened inside each loader and closed before it returns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TypeVar

import duckdb
import pandas as pd
import streamlit as st

from invoicing_warehouse.dashboard import freshness, payment_law_queries, queries
from invoicing_warehouse.dashboard.portal_scope import restrict
from invoicing_warehouse.dashboard.reminder_letter import LetterSums
from invoicing_warehouse.dashboard.source import Source, Unavailable
from invoicing_warehouse.dashboard.trends import month_end_figures
from invoicing_warehouse.engine.sql_runner import today_in_portal_zone

T = TypeVar("T")


@dataclass(frozen=True)
class View:
    """What the user looks at: a warehouse's readers' copy (`key` = its snapshot key), a report date
    (None = the date the published marts were built for), a portal."""

    warehouse: str
    key: str
    as_of: date | None
    portal: str


@st.cache_resource(max_entries=3, show_spinner="Building the models as of the chosen date ...")
def _marts_as_of(warehouse: str, key: str, as_of: date) -> duckdb.DuckDBPyConnection:
    # `key` only keys the cache: a new publication builds again
    return Source(Path(warehouse)).build_as_of(as_of)


@contextmanager
def marts(view: View) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection whose `marts` are those of `view`: the readers' copy (opened now, closed on exit), or
    the in-memory marts built as of `view.as_of` (a cursor of the cached connection)."""
    source = Source(Path(view.warehouse))
    if view.as_of is None:
        connection = source.connect()
    # a cursor starts on the default catalog: back to the portals' views (invoicing_warehouse/dashboard/portal_scope.py)
    else:
        connection = restrict(_marts_as_of(view.warehouse, view.key, view.as_of).cursor(), source.portals)
    # A table missing from the catalog must fail as one (CatalogException, which `_load` turns into the banner's
    # message): with replacement scans on, DuckDB looks the name up among the caller's Python variables
    # instead, finds the loader of the same name (`expected_payments`) and fails with InvalidInputException.
    # Per connection: a cursor does not inherit it.
    connection.execute("set python_enable_replacements = false")
    try:
        yield connection
    finally:
        connection.close()


def _load(view: View, read: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
    with marts(view) as connection:
        try:
            return read(connection)
        except duckdb.CatalogException as missing:
            # a mart the gate never let through (held since its first build): the banner says why
            raise Unavailable(f"These figures were never published: {missing}. The banner above says why.") from None


@st.cache_data(max_entries=16, show_spinner=False)
def published(warehouse: str, key: str) -> tuple[list[str], date | None]:
    """The portals and the report date of the published marts."""
    with marts(View(warehouse, key, None, "")) as connection:
        return queries.portals(connection), queries.marts_as_of(connection)


def landing_view(source: Source) -> tuple[View, date, list[str]]:
    """The view a visitor lands on (the published marts of the first portal), its report date (the
    published marts' own, today when they have none) and the portals to choose from. Opens the copy first,
    so a lock shows now, cached figures or not."""
    source.connect().close()
    key = source.snapshot_key()
    portals, published_as_of = published(str(source.warehouse), key)
    portals = portals or ["default"]
    return View(str(source.warehouse), key, None, portals[0]), published_as_of or today_in_portal_zone(), portals


@st.cache_data(max_entries=32, show_spinner=False)
def receivables(view: View) -> queries.ReceivablesFigures:
    """The Receivables page's figures."""
    return _load(view, lambda connection: queries.receivables(connection, view.portal))


@st.cache_data(max_entries=256, show_spinner=False)
def customer_invoices(view: View, customer_id: str) -> pd.DataFrame:
    """One customer's open invoices."""
    return _load(view, lambda connection: queries.customer_invoices(connection, view.portal, customer_id))


@st.cache_data(max_entries=32, show_spinner=False)
def payables(view: View, as_of: date) -> queries.PayablesFigures:
    """The Payables page's figures (`as_of`, the report date the marts were built for, keys the cache only: the
    week bounds are the marts' own)."""
    return _load(view, lambda connection: queries.payables(connection, view.portal))


@st.cache_data(max_entries=32, show_spinner=False)
def full_list(view: View, name: str, parameters: tuple) -> pd.DataFrame:
    """Every row of the long list `name` (queries._LISTS), for its CSV download."""
    return _load(view, lambda connection: queries.listing(connection, name, list(parameters), None).rows)


@st.cache_data(max_entries=32, show_spinner=False)
def cash_outlook(view: View) -> pd.DataFrame:
    """The Cash outlook page's rows."""
    return _load(view, lambda connection: queries.cash_outlook(connection, view.portal))


@st.cache_data(max_entries=32, show_spinner=False)
def claims(view: View) -> payment_law_queries.ClaimsFigures:
    """The Late-payment claims page's figures."""
    return _load(view, lambda connection: payment_law_queries.claims(connection, view.portal))


@st.cache_data(max_entries=256, show_spinner=False)
def customer_claims(view: View, customer_id: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One customer's late invoices and their interest lines."""
    return _load(view, lambda connection: (
        payment_law_queries.customer_claims(connection, view.portal, customer_id),
        payment_law_queries.customer_interest_lines(connection, view.portal, customer_id)))


@st.cache_data(max_entries=256, show_spinner=False)
def customer_letter(view: View, customer_id: str) -> LetterSums:
    """What one customer's reminder letter asks for."""
    return _load(view, lambda connection: payment_law_queries.customer_letter(connection, view.portal, customer_id))


@st.cache_data(max_entries=32, show_spinner=False)
def payment_terms(view: View) -> payment_law_queries.PaymentTermsFigures:
    """The Payment terms (D441-6) page's figures."""
    return _load(view, lambda connection: payment_law_queries.payment_terms(connection, view.portal))


@st.cache_data(max_entries=16, show_spinner=False)
def paid_late_table(view: View) -> pd.DataFrame:
    """The Paid late (D441-6 II) page's table."""
    return _load(view, lambda connection: payment_law_queries.model_table(
        connection, "payment_terms_paid_late_table", view.portal))


@st.cache_data(max_entries=16, show_spinner=False)
def payment_law_list(view: View, name: str) -> pd.DataFrame:
    """Every row of `claims_by_customer` or `over_cap`, for the CSV download."""
    read = {"claims_by_customer": payment_law_queries.claims_by_customer,
            "over_cap": payment_law_queries.over_cap}[name]
    return _load(view, lambda connection: read(connection, view.portal))


@st.cache_data(max_entries=32, show_spinner=False)
def expected_payments(view: View) -> queries.ExpectedPayments:
    """The Cash outlook page's expected payments."""
    return _load(view, lambda connection: queries.expected_payments(connection, view.portal))


@st.cache_data(max_entries=32, show_spinner=False)
def payment_behaviour(view: View) -> dict | None:
    """The Benchmarks page's figures of the portal (marts.payment_behaviour)."""
    return _load(view, lambda connection: queries.payment_behaviour(connection, view.portal))


@st.cache_data(max_entries=32, show_spinner=False)
def currency(view: View) -> str:
    """The currency the view's figures are in (euros when the marts name none)."""
    return _load(view, lambda connection: queries.currency(connection, view.portal))


@st.cache_data(max_entries=8, show_spinner=False)
def freshness_tables(warehouse: str, key: str) -> tuple[pd.DataFrame, datetime | None]:
    """Per raw table rows and last load, and the last successful load, of the readers' copy."""
    with marts(View(warehouse, key, None, "")) as connection:
        return freshness.raw_tables(connection), freshness.last_sync(connection)


@st.cache_data(max_entries=8, show_spinner="Running the warehouse's checks on the readers' copy ...")
def checks(warehouse: str, key: str) -> pd.DataFrame:
    """The warehouse's data checks, re-run on the readers' copy."""
    with marts(View(warehouse, key, None, "")) as connection:
        return freshness.checks(connection)


@st.cache_data(max_entries=8, show_spinner="Building the models at each of the last 12 month-ends ...")
def trends(warehouse: str, key: str, as_of: date) -> pd.DataFrame:
    """Every portal's month-end figures (dashboard.trends) up to `as_of`, built once per readers' copy and
    report date: twelve builds of the models are the slowest thing the dashboard does."""
    return month_end_figures(Source(Path(warehouse)), as_of)
