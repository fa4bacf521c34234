"""The Streamlit entry point: `streamlit run dashboard/app.py -- --warehouse PATH` (what `invoicing-warehouse
dashboard` runs). Reads the readers' copy of PATH, never the warehouse; sidebar: portal, report date, style.

The report date defaults to the one the published marts were built for; any other date shows the same SQL
models built for it in memory (dashboard.source). `?as_of=YYYY-MM-DD` in the URL picks a date too.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import date

import streamlit as st

from dashboard import cache
from dashboard.formatting import ENGLISH, FRENCH, STYLES
from dashboard.gate_banner import banner_lines, flag_lines
from dashboard.screens import (
    benchmarks,
    cash_outlook,
    freshness,
    late_payment_claims,
    payables,
    payment_terms,
    payment_terms_paid_late,
    portals,
    receivables,
    trends,
)
from dashboard.source import Source, Unavailable, warehouse_argument
from dashboard.widgets import PageContext
from warehouse_engine.sql_runner import today_in_portal_zone

EARLIEST = date(2000, 1, 1)


def _as_of_from_url(default: date) -> date:
    text = st.query_params.get("as_of")
    try:
        return date.fromisoformat(text) if text else default
    except ValueError:
        st.warning(f"Ignored as_of={text!r} in the address: not a date (YYYY-MM-DD).")
        return default


def _context(source: Source) -> PageContext:
    """The sidebar (portal, report date, amounts' style) over the landing view, and the view it chooses."""
    landing, published_as_of, portals = cache.landing_view(source)
    with st.sidebar:
        portal = st.selectbox("Portal", portals, key="portal")
        if "as_of" not in st.session_state:
            st.session_state["as_of"] = _as_of_from_url(published_as_of)
        as_of = st.date_input(
            "As of",
            min_value=EARLIEST,
            max_value=max(today_in_portal_zone(), published_as_of),
            key="as_of",
            help=f"The published marts are as of {published_as_of.isoformat()}; another date builds the same "
            "SQL models for it in memory (the warehouse is not touched).",
        )
        style = st.radio("Amounts", [FRENCH, ENGLISH], format_func=STYLES.__getitem__, key="style")
        st.caption(f"Readers' copy: {source.snapshot_path}")
    view = replace(landing, as_of=None if as_of == published_as_of else as_of, portal=portal)
    return PageContext(view, as_of, style)


def main() -> None:
    """Builds the navigation and runs the chosen page; an unreadable copy shows what to run instead."""
    st.set_page_config(page_title="Invoicing warehouse", layout="wide")
    source = Source(warehouse_argument(sys.argv[1:]))
    try:  # a dashboard limited to some portals: the checks' descriptions may name any portal's rows
        detailed = source.portals is None
    except Unavailable as problem:
        st.error(str(problem), icon=":material/warning:")
        st.stop()
    held = banner_lines(source.target, detailed)
    if held:
        st.error("**Figures held back by the checks.**\n\n" + "\n\n".join(f"- {line}" for line in held), icon=":material/block:")
    flagged = flag_lines(source.target, detailed)
    if flagged:
        st.warning("**Figures flagged by the checks** (published, but these checks failed):\n\n"
                   + "\n\n".join(f"- {line}" for line in flagged), icon=":material/warning:")
    try:
        context = _context(source)
    except Unavailable as problem:
        st.title("Invoicing warehouse")
        st.error(str(problem), icon=":material/warning:")
        st.stop()
    pages = [
        st.Page(lambda: receivables.render(context), title="Receivables", url_path="receivables", default=True),
        st.Page(lambda: payables.render(context), title="Payables", url_path="payables"),
        st.Page(lambda: cash_outlook.render(context), title="Cash outlook", url_path="cash_outlook"),
        st.Page(lambda: trends.render(context), title="Trends", url_path="trends"),
        st.Page(lambda: late_payment_claims.render(context), title="Late-payment claims",
                url_path="late_payment_claims"),
        st.Page(lambda: payment_terms.render(context), title="Payment terms (D441-6)", url_path="payment_terms"),
        st.Page(lambda: payment_terms_paid_late.render(context), title="Paid late (D441-6 II)",
                url_path="payment_terms_paid_late"),
        st.Page(lambda: benchmarks.render(context), title="Benchmarks", url_path="benchmarks"),
        st.Page(lambda: freshness.render(context), title="Freshness", url_path="freshness"),
    ]
    firm = cache.landing_view(source)[2]
    if len(firm) > 1:  # a firm's overview; one portal has nothing to compare
        pages.append(st.Page(lambda: portals.render(context, firm), title="Portals", url_path="portals"))
    try:
        st.navigation(pages).run()
    except Unavailable as problem:
        st.error(str(problem), icon=":material/warning:")


main()
