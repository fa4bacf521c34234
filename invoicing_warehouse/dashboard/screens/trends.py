"""Trends: month-end receivables, overdue share and DSO at the last 12 month-ends, each from the SQL models built
as of that month-end (dashboard.trends)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.trends import MONTHS
from invoicing_warehouse.dashboard.widgets import PageContext, heading, table


def _charts(rows: pd.DataFrame, currency: str, context: PageContext) -> alt.VConcatChart:
    data = rows.assign(
        month=rows["month_end"].map(lambda d: d.isoformat()[:7]),
        receivables=rows["open_receivables"].astype(float),
        overdue=rows["overdue_receivables"].astype(float),
        dso=rows["dso_days"].map(lambda v: None if v is None else float(v)),
    )
    amounts = data.melt(id_vars=["month"], value_vars=["receivables", "overdue"], var_name="figure",
                        value_name="amount")
    # the legend's names in the page's language
    figures = [context.tr("receivables"), context.tr("overdue")]
    amounts["figure"] = amounts["figure"].map(dict(zip(["receivables", "overdue"], figures, strict=True)))
    money = (
        alt.Chart(amounts).mark_line(point=True)
        .encode(x=alt.X("month:O", title=None), y=alt.Y("amount:Q", title=currency),
                color=alt.Color("figure:N", scale=alt.Scale(domain=figures,
                                                            range=["#264653", "#e76f51"])),
                tooltip=["month", "figure", alt.Tooltip("amount:Q", format=",.2f")])
        .properties(height=240)
    )
    dso = (
        alt.Chart(data).mark_bar(color="#4c9a5f")
        .encode(x=alt.X("month:O", title=None), y=alt.Y("dso:Q", title=context.tr("DSO (days)")),
                tooltip=["month", alt.Tooltip("dso:Q", format=".1f")])
        .properties(height=160)
    )
    return alt.vconcat(money, dso)


def render(context: PageContext) -> None:
    """Lays out the Trends page."""
    heading(context.tr("Trends"), context)
    st.caption(context.tr(
        "Open receivables, the overdue part of them and DSO at each of the last {months} month-ends up to the "
        "report date, each from the SQL models built as of that month-end over the readers' copy (what "
        "`invoicing-warehouse models --as-of` would publish for it). Overdue share: overdue / open "
        "receivables, in percent. The run publishes them with the copy for its report date; another date "
        "builds them here, once.", months=MONTHS))
    every_portal = cache.trends(context.view.warehouse, context.view.key, context.as_of)
    rows = every_portal[every_portal["portal_id"] == context.view.portal].drop(columns=["portal_id"])
    rows = rows.reset_index(drop=True)
    currency = cache.currency(context.view)
    if rows.empty:
        st.info(context.tr("No receivables at any of these month-ends."))
    else:
        st.altair_chart(_charts(rows, currency, context), width="stretch")
    table(rows, "trends", context, money=["open_receivables", "overdue_receivables"], currency=currency)
