"""Cash outlook: expected inflows (open receivables) against outflows (supplier payables) by due date: past
due, the next eight calendar weeks, later (marts.cash_outlook)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import cache
from dashboard.formatting import money
from dashboard.widgets import PageContext, heading, table


def _chart(rows: pd.DataFrame, currency: str) -> alt.LayerChart | alt.FacetChart:
    order = list(rows["period_label"])
    flows = pd.DataFrame(
        {
            "period": list(rows["period_label"]) * 2,
            "flow": ["inflows"] * len(rows) + ["outflows"] * len(rows),
            "amount": [float(v) for v in rows["expected_inflows"]] + [-float(v) for v in rows["expected_outflows"]],
        }
    )
    cumulative = pd.DataFrame({"period": order, "cumulative": [float(v) for v in rows["cumulative_net"]]})
    bars = (
        alt.Chart(flows)
        .mark_bar()
        .encode(
            x=alt.X("period:N", sort=order, title=None),
            y=alt.Y("amount:Q", title=currency),
            color=alt.Color("flow:N", scale=alt.Scale(domain=["inflows", "outflows"], range=["#4c9a5f", "#e76f51"])),
            tooltip=["period", "flow", alt.Tooltip("amount:Q", format=",.2f")],
        )
    )
    line = (
        alt.Chart(cumulative)
        .mark_line(point=True, color="#264653")
        .encode(x=alt.X("period:N", sort=order), y="cumulative:Q",
                tooltip=["period", alt.Tooltip("cumulative:Q", format=",.2f")])
    )
    return alt.layer(bars, line).properties(height=320)


def render(context: PageContext) -> None:
    """Lays out the Cash outlook page."""
    heading("Cash outlook", context)
    st.caption(
        "Open receivables and supplier payables by due date (not a forecast of when customers pay). "
        "Outflows count every bill received and not paid: approved, awaiting approval or disputed. "
        "Past due: due before the report date. Weeks run Monday to Sunday, week 1 being the report date's. "
        "Later: after week 8, or without a due date. Outflows are negative in the chart; the line is the "
        "cumulative net."
    )
    receivables = cache.receivables(context.view)
    currency = cache.currency(context.view)
    if receivables.assumed_due_count:
        # the server sent no dueDate for these: their period rests on the legal default
        st.warning(
            f"Assumed due dates: {receivables.assumed_due_count} open invoice(s), "
            f"{money(receivables.assumed_due_amount, context.style, currency)} of the inflows, have no due date from the API; "
            "they are placed by the emit date + 30 days (French commercial code L441-10).",
            icon=":material/warning:",
        )
    rows = cache.cash_outlook(context.view)
    if rows.empty:
        st.info("Nothing to receive nor to pay on this date.")
        return
    st.altair_chart(_chart(rows, currency), use_container_width=True)
    table(
        rows.drop(columns=["period_index"]),
        "cash_outlook",
        context,
        money=["expected_inflows", "expected_outflows", "net_flow", "cumulative_net"],
        currency=currency,
        download=rows,
    )
