"""Late-payment claims (pénalités de retard): what each business customer owes for paying late, by French
commercial code L441-10 (interest at the ECB's main refinancing rate + 10 points, per half-year) and D441-5 (40 EUR
per late invoice); per customer, then the invoices and interest lines a reminder letter cites
(marts.late_payment_claims, marts.late_payment_interest_periods)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.formatting import day, eur, money
from invoicing_warehouse.dashboard.reminder_letter import letter_html, letter_paragraphs
from invoicing_warehouse.dashboard.widgets import PageContext, heading, shown_of, table

LETTER_MONEY = ["total_incl_tax", "amount_late", "open_amount", "flat_indemnity_eur", "interest_amount"]


def render(context: PageContext) -> None:
    """Lays out the Late-payment claims page."""
    tr = context.tr
    heading(tr("Late-payment claims"), context)
    st.caption(tr("Between professionals a late invoice owes, from the day after its due date and without a reminder, "
                  "interest at the rate the terms of sale set or, by default, the ECB's main refinancing rate + 10 "
                  "points (the rate in force on 1 January for January-June, on 1 July for July-December; code de "
                  "commerce L441-10 II) and a flat 40 € recovery indemnity (D441-5); a public buyer owes the ECB "
                  "rate of the half-year the delay began + 8 points (R2192-31). Interest: amount late × rate × days "
                  "/ 365, per half-year."))
    figures = cache.claims(context.view)
    style = context.style
    if figures.last_rate_change is not None:
        since, rate = figures.last_rate_change
        checked = figures.rate_table_checked_on
        st.caption(tr("ECB rate table: checked against the ECB's decisions up to {checked}; newest change {since} "
                      "({rate} %).", checked=day(checked, context.language) if checked else "?",
                      since=day(since, context.language), rate=f"{rate:.2f}"))
    if figures.rate_table_behind_count:
        st.warning(tr("Rate table behind: {count} claim(s) run into a half-year starting after the day the ECB rate "
                      "table was last checked; their interest is unknown (blank, flagged 'rate table behind') and "
                      "not in the totals, never computed from an old rate. Check the ECB's 'Key ECB interest "
                      "rates', add any change and the day you checked to your own table (INVOICING_ECB_RATES_PATH, "
                      "column checked_on) and rebuild the models.", count=figures.rate_table_behind_count),
                   icon="⚠️")
    count, at_rate, at_floor = figures.below_floor
    if count:
        st.warning(tr("Contractual rate below its legal floor: {count} claim(s) use a rate of your terms of sale below "
                      "three times the legal interest rate of a half-year (code de commerce L441-10 II), so the "
                      "clause may be void. Their interest at that rate, {at_rate}, is in the totals; at the floor it "
                      "would be {at_floor}. Each is flagged in the letter (rate_flag).", count=count,
                      at_rate=eur(at_rate, style), at_floor=eur(at_floor, style)), icon="⚠️")
    if figures.floor_unchecked_count:
        st.info(tr("{count} claim(s) at a contractual rate run into a half-year whose legal interest rate the table "
                   "does not hold: that rate is not checked against its floor (INVOICING_LEGAL_INTEREST_RATES_PATH).",
                   count=figures.floor_unchecked_count), icon=":material/info:")
    invoices, indemnities, interest, claim = st.columns(4)
    invoices.metric(tr("Late invoices claimed"), str(figures.claimed_invoice_count),
                    help=tr("invoices of business customers overdue or paid after their due date, but those the law "
                            "bars (collective proceedings, time-barred)"))
    indemnities.metric(tr("Recovery indemnities"), eur(figures.flat_indemnities_eur, style),
                       help=tr("40 € per late invoice"))
    interest.metric(tr("Late-payment interest"), eur(figures.interest_eur, style),
                    help=tr("invoices in euros; others are listed with their interest in their own currency"))
    claim.metric(tr("Total claim"), eur(figures.total_claim_eur, style),
                 help=tr("of open invoices and of invoices already paid (their penalties only), told apart below"))
    st.caption(tr("Of the total claim: open invoices {open}; invoices already paid {paid} (whether their penalties "
                  "were invoiced or waived is not recorded). Interest rate: {bases} (INVOICING_PENALTY_RATE_PERCENT "
                  "sets the rate of your terms of sale; INVOICING_PUBLIC_BUYERS lists public buyers, R2192-31).",
                  open=eur(figures.open_invoices_claim_eur, style),
                  paid=eur(figures.paid_invoices_claim_eur, style),
                  bases=figures.rate_bases or "legal: ECB + 10, L441-10 II"))
    if figures.by_status:
        st.caption(tr("By what you recorded (INVOICING_CLAIM_STATUSES_PATH): {statuses}.", statuses="; ".join(
            f"{status} {eur(amount, style)} ({count})" for status, count, amount in figures.by_status)))
    if figures.excluded:
        st.info(tr("Nothing claimed, by law: {reasons} (INVOICING_COLLECTIVE_PROCEEDINGS lists debtors in collective "
                   "proceedings; a claim ended more than five years ago is time-barred, L110-4).",
                   reasons="; ".join(tr("{reason}: {count} invoice(s)", reason=reason, count=count)
                                     for reason, count in figures.excluded)), icon=":material/info:")
    if figures.consumer_invoice_count:
        st.info(tr("Left out: {count} late invoice(s) of consumer customers ({amount} late). L441-10 and D441-5 apply "
                   "between professionals; a customer is a consumer when the API says so, or, without a type, when "
                   "it has no SIRET.", count=figures.consumer_invoice_count,
                   amount=eur(figures.consumer_amount_late, style)), icon=":material/info:")
    if figures.unconverted_invoice_count:
        st.warning(tr("{count} late invoice(s) are not in euros: their interest is in their own currency, not "
                      "converted, and not in the interest total.", count=figures.unconverted_invoice_count),
                   icon=":material/warning:")

    by_customer = figures.by_customer
    st.subheader(tr("By customer") + shown_of(by_customer, context.language))
    view = context.view
    table(by_customer.rows.drop(columns=["customer_id"]), "claims_by_customer", context,
          money=["amount_late", "open_amount", "flat_indemnity_eur", "interest_eur", "claim_eur"],
          download=lambda: cache.payment_law_list(view, "claims_by_customer"), total=by_customer.total)
    if by_customer.rows.empty:
        return
    _letter(context, by_customer.rows)


def _letter(context: PageContext, by_customer: pd.DataFrame) -> None:
    """The reminder letter of the customer chosen, and the invoices and interest lines it cites."""
    tr, style = context.tr, context.style
    st.subheader(tr("Reminder letter"))
    names = dict(zip(by_customer["customer_id"], by_customer["customer_name"], strict=True))
    claims = dict(zip(by_customer["customer_id"], by_customer["claim_eur"], strict=True))
    customer_id = st.selectbox(tr("Customer (largest claim first; type to search)"), list(names),
                               format_func=lambda cid: f"{names[cid]} · {eur(claims[cid], style)}",
                               key="claims_customer")
    letter, lines = cache.customer_claims(context.view, customer_id)
    currency = str(letter["currency"].iloc[0]) if len(letter) and letter["currency"].nunique() == 1 else "EUR"
    sums = cache.customer_letter(context.view, customer_id)
    st.html(letter_html(letter_paragraphs(letter, lines, sums, context.language, style, currency)))
    st.caption(tr("The invoices the letter cites: amount late = what was unpaid at the end of the due date (credit "
                  "notes deducted); interest in the invoice's currency. What the letter assumes is said on each "
                  "line: a due date the API did not serve (the legal 30 days), a paid date taken from the invoice's "
                  "last change, a customer type inferred from the SIRET; 'rate table behind': interest unknown."))
    table(letter.drop(columns=["invoice_id", "currency"]), "claim_invoices", context, money=LETTER_MONEY,
          download=letter, currency=currency)
    st.caption(tr("Interest line by line: each run of days at one amount late and one half-year's rate "
                  "(ECB rate + 10 points)."))
    table(lines.drop(columns=["invoice_id"]), "claim_interest_lines", context,
          money=["amount_late", "interest_amount"], download=lines, currency=currency)
    st.caption(tr("Claim for this customer: {claim} (indemnities and interest in euros).",
                  claim=money(claims[customer_id], style)))
