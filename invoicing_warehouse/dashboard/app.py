"""The Streamlit entry point: `streamlit run invoicing_warehouse/dashboard/app.py -- --warehouse PATH` (what
`invoicing-warehouse dashboard` runs). Reads the readers' copy of PATH, never the warehouse; sidebar: portal, report
date, style.

The report date defaults to the one the published marts were built for; any other date shows the same SQL
models built for it in memory (dashboard.source). `?as_of=YYYY-MM-DD` in the URL picks a date too.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import date

import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.formatting import ENGLISH, FRENCH, STYLES
from invoicing_warehouse.dashboard.gate_banner import banner_lines, flag_lines
from invoicing_warehouse.dashboard.page_texts import tr
from invoicing_warehouse.dashboard.screens import (
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
from invoicing_warehouse.dashboard.source import Source, Unavailable, warehouse_argument
from invoicing_warehouse.dashboard.widgets import PageContext
from invoicing_warehouse.engine.report_language import (
    LANGUAGE_NAMES,
    LANGUAGES,
    LanguageSettingError,
    chosen_language,
    portal_language,
)
from invoicing_warehouse.engine.sql_runner import today_in_portal_zone

EARLIEST = date(2000, 1, 1)


def _as_of_from_url(default: date) -> date:
    text = st.query_params.get("as_of")
    try:
        return date.fromisoformat(text) if text else default
    except ValueError:
        st.warning(f"Ignored as_of={text!r} in the address: not a date (YYYY-MM-DD).")
        return default


def _default_language(landing: cache.View, portal: str) -> str:
    """`?lang=fr|en` in the URL, else INVOICING_LANGUAGE, else the portal's (French for a portal in euros)."""
    asked = (st.query_params.get("lang") or "").strip().lower()
    if asked in LANGUAGES:
        return asked
    return chosen_language() or portal_language(cache.currency(replace(landing, portal=portal)).split("/"))


def _context(source: Source) -> PageContext:
    """The sidebar (language, portal, report date, amounts' style) over the landing view, and the view it
    chooses."""
    landing, published_as_of, portals = cache.landing_view(source)
    if "language" not in st.session_state:
        st.session_state["language"] = _default_language(landing, st.session_state.get("portal") or portals[0])
    with st.sidebar:
        language = st.radio("Langue / Language", LANGUAGES, format_func=LANGUAGE_NAMES.__getitem__, key="language",
                            horizontal=True)
        portal = st.selectbox(tr(language, "Portal"), portals, key="portal")
        if "as_of" not in st.session_state:
            st.session_state["as_of"] = _as_of_from_url(published_as_of)
        as_of = st.date_input(
            tr(language, "As of"),
            min_value=EARLIEST,
            max_value=max(today_in_portal_zone(), published_as_of),
            key="as_of",
            format="DD/MM/YYYY" if language == FRENCH else "YYYY/MM/DD",
            help=tr(language, "The published marts are as of {date}; another date builds the same SQL models for "
                    "it in memory (the warehouse is not touched).", date=published_as_of.isoformat()),
        )
        style = st.radio(tr(language, "Amounts"), [FRENCH, ENGLISH], format_func=STYLES.__getitem__, key="style")
        st.caption(tr(language, "Readers' copy: {path}", path=source.snapshot_path))
    view = replace(landing, as_of=None if as_of == published_as_of else as_of, portal=portal)
    return PageContext(view, as_of, style, language)


def chosen_language_or_english() -> str:
    """The language of a page that could not read the portal: the setting's, else English."""
    try:
        return chosen_language() or ENGLISH
    except LanguageSettingError:
        return ENGLISH


def _banners(source: Source, detailed: bool, language: str) -> None:
    """The gate's banners: figures held back, and figures published though a check failed."""
    held = banner_lines(source.target, detailed)
    if held:
        st.error(tr(language, "**Figures held back by the checks.**") + "\n\n"
                 + "\n\n".join(f"- {line}" for line in held), icon=":material/block:")
    flagged = flag_lines(source.target, detailed)
    if flagged:
        st.warning(tr(language, "**Figures flagged by the checks** (published, but these checks failed):") + "\n\n"
                   + "\n\n".join(f"- {line}" for line in flagged), icon=":material/warning:")


def main() -> None:
    """Builds the navigation and runs the chosen page; an unreadable copy shows what to run instead."""
    st.set_page_config(page_title="Invoicing warehouse", layout="wide")
    source = Source(warehouse_argument(sys.argv[1:]))
    try:  # a dashboard limited to some portals: the checks' descriptions may name any portal's rows
        detailed = source.portals is None
    except Unavailable as problem:
        st.error(str(problem), icon=":material/warning:")
        st.stop()
    try:
        context = _context(source)
    except Unavailable as problem:
        _banners(source, detailed, chosen_language_or_english())
        st.title("Invoicing warehouse")
        st.error(str(problem), icon=":material/warning:")
        st.stop()
    except LanguageSettingError as problem:
        st.error(str(problem), icon=":material/warning:")
        st.stop()
    _banners(source, detailed, context.language)
    tr = context.tr
    pages = [
        st.Page(lambda: receivables.render(context), title=tr("Receivables"), url_path="receivables",
                default=True),
        st.Page(lambda: payables.render(context), title=tr("Payables"), url_path="payables"),
        st.Page(lambda: cash_outlook.render(context), title=tr("Cash outlook"), url_path="cash_outlook"),
        st.Page(lambda: trends.render(context), title=tr("Trends"), url_path="trends"),
        st.Page(lambda: late_payment_claims.render(context), title=tr("Late-payment claims"),
                url_path="late_payment_claims"),
        st.Page(lambda: payment_terms.render(context), title=tr("Payment terms (D441-6)"),
                url_path="payment_terms"),
        st.Page(lambda: payment_terms_paid_late.render(context), title=tr("Paid late (D441-6 II)"),
                url_path="payment_terms_paid_late"),
        st.Page(lambda: benchmarks.render(context), title=tr("Benchmarks"), url_path="benchmarks"),
        st.Page(lambda: freshness.render(context), title=tr("Freshness"), url_path="freshness"),
    ]
    firm = cache.landing_view(source)[2]
    if len(firm) > 1:  # a firm's overview; one portal has nothing to compare
        pages.append(st.Page(lambda: portals.render(context, firm), title=tr("Portals"), url_path="portals"))
    try:
        st.navigation(pages).run()
    except Unavailable as problem:
        st.error(str(problem), icon=":material/warning:")


main()
