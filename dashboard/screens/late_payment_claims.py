"""Late-payment claims (pénalités de retard): what each business customer owes for paying late, by French
commercial code L441-10 (interest at the ECB's main refinancing rate + 10 points, per half-year) and D441-5 (40 EUR
per late invoice); per customer, then the invoices and interest lines a reminder letter cites
(marts.late_payment_claims, marts.late_payment_interest_periods)."""

from __future__ import annotations

import streamlit as st

from dashboard import cache
from dashboard.formatting import eur, money
from dashboard.widgets import PageContext, heading, shown_of, table

LETTER_MONEY = ["total_incl_tax", "amount_late", "open_amount", "flat_indemnity_eur", "interest_amount"]


def render(context: PageContext) -> None:
    """Lays out the Late-payment claims page."""
    heading("Late-payment claims", context)
    st.caption("Between professionals a late invoice owes, from the day after its due date and without a reminder, "
               "interest at the rate the terms of sale set or, by default, the ECB's main refinancing rate + 10 "
               "points (the rate in force on 1 January for January-June, on 1 July for July-December; code de "
               "commerce L441-10 II) and a flat 40 € recovery indemnity (D441-5); a public buyer owes the ECB rate "
               "of the half-year the delay began + 8 points (R2192-31). Interest: amount late × rate × days / 365, "
               "per half-year.")
    figures = cache.claims(context.view)
    style = context.style
    if figures.last_rate_change is not None:
        since, rate = figures.last_rate_change
        checked = figures.rate_table_checked_on
        st.caption(f"ECB rate table: checked against the ECB's decisions up to {checked.isoformat() if checked else '?'}; "
                   f"newest change {since.isoformat()} ({rate:.2f} %).")
    if figures.rate_table_behind_count:
        st.warning(f"Rate table behind: {figures.rate_table_behind_count} claim(s) run into a half-year starting after "
                   "the day the ECB rate table was last checked; their interest is unknown (blank, flagged "
                   "'rate table behind') and not in the totals, never computed from an old rate. Check the ECB's "
                   "'Key ECB interest rates', add any change and the day you checked to your own table "
                   "(INVOICING_ECB_RATES_PATH, column checked_on) and rebuild the models.", icon="⚠️")
    count, at_rate, at_floor = figures.below_floor
    if count:
        st.warning(f"Contractual rate below its legal floor: {count} claim(s) use a rate of your terms of sale "
                   "below three times the legal interest rate of a half-year (code de commerce L441-10 II), so the "
                   f"clause may be void. Their interest at that rate, {eur(at_rate, style)}, is in the totals; at the "
                   f"floor it would be {eur(at_floor, style)}. Each is flagged in the letter (rate_flag).", icon="⚠️")
    if figures.floor_unchecked_count:
        st.info(f"{figures.floor_unchecked_count} claim(s) at a contractual rate run into a half-year whose legal "
                "interest rate the table does not hold: that rate is not checked against its floor "
                "(INVOICING_LEGAL_INTEREST_RATES_PATH).", icon=":material/info:")
    invoices, indemnities, interest, claim = st.columns(4)
    invoices.metric("Late invoices claimed", str(figures.claimed_invoice_count),
                    help="invoices of business customers overdue or paid after their due date, but those the law "
                         "bars (collective proceedings, time-barred)")
    indemnities.metric("Recovery indemnities", eur(figures.flat_indemnities_eur, style), help="40 € per late invoice")
    interest.metric("Late-payment interest", eur(figures.interest_eur, style),
                    help="invoices in euros; others are listed with their interest in their own currency")
    total_claim = figures.flat_indemnities_eur + figures.interest_eur
    claim.metric("Total claim", eur(total_claim, style),
                 help="of open invoices and of invoices already paid (their penalties only), told apart below")
    st.caption(f"Of the total claim: open invoices {eur(total_claim - figures.paid_invoices_claim_eur, style)}; "
               f"invoices already paid {eur(figures.paid_invoices_claim_eur, style)} (whether their penalties were "
               "invoiced or waived is not recorded). Interest rate: "
               f"{', '.join(figures.rate_bases) or 'legal: ECB + 10, L441-10 II'} (INVOICING_PENALTY_RATE_PERCENT sets "
               "the rate of your terms of sale; INVOICING_PUBLIC_BUYERS lists public buyers, R2192-31).")
    if figures.by_status:
        st.caption("By what you recorded (INVOICING_CLAIM_STATUSES_PATH): " + "; ".join(
            f"{status} {eur(amount, style)} ({count})" for status, count, amount in figures.by_status) + ".")
    if figures.excluded:
        st.info("Nothing claimed, by law: " + "; ".join(f"{reason}: {count} invoice(s)"
                                                         for reason, count in figures.excluded)
                + " (INVOICING_COLLECTIVE_PROCEEDINGS lists debtors in collective proceedings; a claim ended "
                "more than five years ago is time-barred, L110-4).", icon=":material/info:")
    if figures.consumer_invoice_count:
        st.info(f"Left out: {figures.consumer_invoice_count} late invoice(s) of consumer customers "
                f"({eur(figures.consumer_amount_late, style)} late). L441-10 and D441-5 apply between professionals; "
                "a customer is a consumer when the API says so, or, without a type, when it has no SIRET.",
                icon=":material/info:")
    if figures.unconverted_invoice_count:
        st.warning(f"{figures.unconverted_invoice_count} late invoice(s) are not in euros: their interest is in "
                   "their own currency, not converted, and not in the interest total.", icon=":material/warning:")

    by_customer = figures.by_customer
    st.subheader(f"By customer{shown_of(by_customer)}")
    view = context.view
    table(by_customer.rows.drop(columns=["customer_id"]), "claims_by_customer", context,
          money=["amount_late", "open_amount", "flat_indemnity_eur", "interest_eur", "claim_eur"],
          download=lambda: cache.payment_law_list(view, "claims_by_customer"), total=by_customer.total)
    if by_customer.rows.empty:
        return

    st.subheader("Reminder letter")
    names = dict(zip(by_customer.rows["customer_id"], by_customer.rows["customer_name"]))
    claims = dict(zip(by_customer.rows["customer_id"], by_customer.rows["claim_eur"]))
    customer_id = st.selectbox("Customer (largest claim first; type to search)", list(names),
                               format_func=lambda cid: f"{names[cid]} · {eur(claims[cid], style)}",
                               key="claims_customer")
    letter, lines = cache.customer_claims(view, customer_id)
    currency = str(letter["currency"].iloc[0]) if len(letter) and letter["currency"].nunique() == 1 else "EUR"
    st.caption("The invoices the letter cites: amount late = what was unpaid at the end of the due date (credit "
               "notes deducted); interest in the invoice's currency. What the letter assumes is said on each line: "
               "a due date the API did not serve (the legal 30 days), a paid date taken from the invoice's last "
               "change, a customer type inferred from the SIRET; 'rate table behind': interest unknown.")
    table(letter.drop(columns=["invoice_id", "currency"]), "claim_invoices", context, money=LETTER_MONEY,
          download=letter, currency=currency)
    st.caption("Interest line by line: each run of days at one amount late and one half-year's rate "
               "(ECB rate + 10 points).")
    table(lines.drop(columns=["invoice_id"]), "claim_interest_lines", context,
          money=["amount_late", "interest_amount"], download=lines, currency=currency)
    st.caption(f"Claim for this customer: {money(claims[customer_id], style)} (indemnities and interest in euros).")
