"""Cash outlook: expected inflows (open receivables) against outflows (supplier payables) by due date: past
due, the next eight calendar weeks, later (marts.cash_outlook); beside them, the same receivables by the date
they will likely be paid (marts.expected_payments: the customer's own payment history, or the portal's)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.formatting import money
from invoicing_warehouse.dashboard.page_texts import tr
from invoicing_warehouse.dashboard.widgets import PageContext, heading, shown_of, table

FLOWS = ["inflows by due date", "inflows expected (payment history)", "outflows"]


def _chart(rows: pd.DataFrame, currency: str, language: str) -> alt.LayerChart | alt.FacetChart:
    flows_named = [tr(language, flow) for flow in FLOWS]
    order = list(rows["period_label"])
    count = len(rows)
    flows = pd.DataFrame(
        {
            "period": order * 3,
            "flow": [flows_named[0]] * count + [flows_named[1]] * count + [flows_named[2]] * count,
            "amount": [float(v) for v in rows["expected_inflows"]] + [float(v) for v in rows["forecast_inflows"]]
            + [-float(v) for v in rows["expected_outflows"]],
        }
    )
    cumulative = pd.DataFrame(
        {
            "period": order * 2,
            "line": [tr(language, "cumulative net by due date")] * count
            + [tr(language, "cumulative net expected")] * count,
            "cumulative": [float(v) for v in rows["cumulative_net"]]
            + [float(v) for v in rows["forecast_cumulative_net"]],
        }
    )
    bars = (
        alt.Chart(flows)
        .mark_bar()
        .encode(
            x=alt.X("period:N", sort=order, title=None),
            xOffset=alt.XOffset("flow:N", sort=flows_named),
            y=alt.Y("amount:Q", title=currency),
            color=alt.Color("flow:N", sort=flows_named,
                            scale=alt.Scale(domain=flows_named, range=["#4c9a5f", "#a8d5b5", "#e76f51"])),
            tooltip=["period", "flow", alt.Tooltip("amount:Q", format=",.2f")],
        )
    )
    line = (
        alt.Chart(cumulative)
        .mark_line(point=True)
        .encode(x=alt.X("period:N", sort=order), y="cumulative:Q",
                strokeDash=alt.StrokeDash("line:N", title=None),
                color=alt.value("#264653"),
                tooltip=["period", "line", alt.Tooltip("cumulative:Q", format=",.2f")])
    )
    return alt.layer(bars, line).properties(height=320)


def _expected_payments(context: PageContext, currency: str) -> None:
    expected = cache.expected_payments(context.view)
    tr = context.tr
    st.subheader(tr("Expected payments") + shown_of(expected.listing, context.language))
    bases = ", ".join(f"{basis}: {count}" for basis, count in sorted(expected.bases.items()))
    st.caption(tr(
        "When each open invoice will likely be paid: its due date + the median days the customer paid after the "
        "due date, over its invoices paid by the report date; a customer with fewer than 5 paid invoices borrows "
        "the rest from the portal's median (weight n/5), one with none gets the portal's. An estimate already "
        "past moves to the day after the report date (estimate passed). Invoices by basis: {bases}. "
        "Backtest against \"paid on the due date\": bench/RESULTS.md.", bases=bases or tr("none")))
    table(
        expected.listing.rows,
        "expected_payments",
        context,
        money=["open_amount"],
        currency=currency,
        download=lambda: cache.full_list(context.view, "expected_payments", (context.view.portal,)),
        total=expected.listing.total,
    )


def render(context: PageContext) -> None:
    """Lays out the Cash outlook page."""
    heading(context.tr("Cash outlook"), context)
    tr = context.tr
    st.caption(tr(
        "Open receivables and supplier payables by due date, and beside them the same receivables by the date "
        "they will likely be paid (from the customers' payment history, see Expected payments below). "
        "Inflows are net of what each customer will deduct: its unapplied credit notes and payments (cash already "
        "received), up to what it owes, from its oldest due invoices; what a customer's credit exceeds its debt by "
        "is owed back to it, an outflow in Later. Outflows count the bills received and not paid, approved or "
        "awaiting approval; a bill without a due date is due 30 days after its issue date (L441-10 I). Disputed "
        "bills are on hold: shown apart, outside the outflows and past due. "
        "Past due: due before the report date (an expected payment is never in the past: it holds none). "
        "Weeks run Monday to Sunday, week 1 being the report date's. Later: after week 8, or without a date. "
        "Outflows are negative in the chart; the lines are the cumulative net, by due date and expected."))
    receivables = cache.receivables(context.view)
    currency = cache.currency(context.view)
    if receivables.assumed_due_count:
        # the server sent no dueDate for these: their period rests on the legal default
        st.warning(tr(
            "Assumed due dates: {count} open invoice(s), {amount} of the inflows, have no due date from the API; "
            "they are placed by the emit date + 30 days (French commercial code L441-10).",
            count=receivables.assumed_due_count,
            amount=money(receivables.assumed_due_amount, context.style, currency)), icon=":material/warning:")
    rows = cache.cash_outlook(context.view)
    if rows.empty:
        st.info(tr("Nothing to receive nor to pay on this date."))
        return
    st.altair_chart(_chart(rows, currency, context.language), width="stretch")
    table(
        rows.drop(columns=["period_index"]),
        "cash_outlook",
        context,
        money=["expected_inflows", "forecast_inflows", "expected_outflows", "net_flow", "cumulative_net",
               "forecast_cumulative_net", "open_receivables", "credit_deducted", "credit_balances_owed",
               "disputed_outflows"],
        currency=currency,
        download=rows,
    )
    _expected_payments(context, currency)
