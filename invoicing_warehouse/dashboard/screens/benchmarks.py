"""Benchmarks: the portal's DSO and average lateness (marts.payment_behaviour) beside the Banque de France
payment-terms observatory's published figures for companies of its size (dashboard.observatory: a data file
with its source, report and year on each figure; INVOICING_COMPANY_SIZE, default PME)."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.formatting import day, days
from invoicing_warehouse.dashboard.observatory import (
    ALL_SIZES,
    FILE_SETTING,
    SIZE_SETTING,
    Benchmark,
    BenchmarksFileError,
    benchmarks_file,
    benchmarks_for,
    company_size,
    load_benchmarks,
)
from invoicing_warehouse.dashboard.widgets import PageContext, heading, table

# measure -> (what the row says, the portal's figure in marts.payment_behaviour or None when not computed)
ROWS = {
    # the observatory's "délais clients" are receivables / annual turnover incl. tax x 360: the portal's figure
    # computed the same way (marts.dso.annual_dso_days_360), not the 90-day sales-method headline
    "customer_terms_dso": (
        ("Customer payment terms, DSO (days of sales): receivables / annual turnover incl. tax x 360, as the "
         "observatory computes it"),
        "annual_dso_days_360",
    ),
    "average_lateness": ("Average lateness (days paid after the due date, per invoice)", "average_days_late"),
    "supplier_terms": ("Supplier payment terms (days of purchases)", None),
}


def _frame(portal: dict | None, chosen: dict[str, Benchmark], size: str, context: PageContext) -> pd.DataFrame:
    tr = context.tr
    rows = []
    for measure, (label, column) in ROWS.items():
        benchmark = chosen.get(measure)
        value = None if portal is None or column is None else portal.get(column)
        rows.append({
            "measure": tr(label),
            "portal_days": None if value is None or pd.isna(value) else Decimal(str(value)),
            "benchmark_days": benchmark.value_days if benchmark else None,
            "benchmark_size": ((tr("all sizes") if benchmark.company_size == ALL_SIZES else benchmark.company_size)
                               + ("" if benchmark.company_size == size
                                  else tr(" (no {size} figure in the file)", size=size)))
            if benchmark else "",
            "figure_year": str(benchmark.figure_year) if benchmark else "",
            "report": benchmark.report if benchmark else "",
            "source": benchmark.source if benchmark else "",
            "note": benchmark.note if benchmark else "",
        })
    return pd.DataFrame(rows)


def render(context: PageContext) -> None:
    """Lays out the Benchmarks page."""
    heading(context.tr("Benchmarks"), context)
    tr = context.tr
    try:
        size = company_size()
        path = benchmarks_file()
        chosen = benchmarks_for(load_benchmarks(path), size)
    except BenchmarksFileError as problem:
        st.error(str(problem), icon=":material/warning:")
        return
    portal = cache.payment_behaviour(context.view)
    st.caption(tr(
        "This portal's figures as of the report date beside the Banque de France payment-terms observatory's "
        "(Observatoire des délais de paiement) for companies of size {size} ({size_setting}; the observatory's "
        "figure for all sizes when the data file has none for {size}). Figures from {file} "
        "({file_setting} names another). Customer payment terms: the portal's figure is computed as the "
        "observatory computes its own, customer receivables (each customer's balance net of its unapplied credit notes "
        "and payments) / turnover incl. tax of the 12 months ending on the report date, net of credit notes, x 360 "
        "(marts.dso.annual_dso_days_360); the Receivables page's headline DSO (sales method over 90 days) is "
        "another method and is not compared here. Average lateness: "
        "marts.payment_behaviour, the invoices paid over the 365 days ending on the report date, each counting "
        "max(0, paid date - due date) days, unweighted (as the payment-behaviour studies count payments); "
        "the amount-weighted figure is below. The observatory's figures are national averages of other years: "
        "a yardstick, not a target.", size=size, size_setting=SIZE_SETTING, file=path.name,
        file_setting=FILE_SETTING))
    table(_frame(portal, chosen, size, context), "benchmarks", context, searchable=False)
    if portal is None or not portal.get("paid_invoice_count"):
        st.info(tr("No invoice paid in the 365 days ending on the report date: no lateness to compare."))
        return
    st.caption(tr(
        "{paid} invoices paid from {start}, {late} of them after their due date; average lateness weighted by "
        "amount: {weighted} days; of the late ones only: {when_late} days; median days after due: {median}.",
        paid=int(portal["paid_invoice_count"]), start=day(portal["window_start"], context.language),
        late=int(portal["late_invoice_count"]), weighted=days(portal["average_days_late_weighted"], context.style),
        when_late=days(portal["average_days_late_when_late"], context.style),
        median=days(portal["median_days_after_due"], context.style)))
