"""The reminder letter of one customer's late invoices, in the page's language: what it owes (the rest of the
invoices, the late-payment penalties, the 40 euros indemnities), the law it rests on (code de commerce L441-10 and
D441-5; the public procurement code R2192-31 for a public buyer) and every assumption a figure relies on (a due
date the API did not serve, a paid date taken from the invoice's last change, a customer type inferred).

It reads the rows the page lists (dashboard.payment_law_queries.customer_claims and customer_interest_lines) and
adds nothing: the letter's sums are the customer's `letter_*` columns of marts.late_payment_claims_by_customer
(payment_law_queries.customer_letter), the sums of the claimable rows shown beneath it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from decimal import Decimal

import pandas as pd

from invoicing_warehouse.dashboard.formatting import FRENCH, eur, money
from invoicing_warehouse.dashboard.page_texts import tr

PUBLIC_BUYER_BASIS = "public buyer: R2192-31"
CONTRACTUAL_BASIS = "contractual"
WAIVED = "waived"
# the flags of marts.late_payment_claims a letter must not hide (finance review F11) -> the line saying so
ASSUMPTIONS = {
    "is_due_date_assumed": "Due date assumed (emit date + 30 days, article L441-10 I of the code de commerce): "
                           "{references}.",
    "is_paid_date_assumed": "Paid date assumed (the invoice's last change): {references}.",
    "is_customer_type_inferred": "Customer taken as a business, inferred from its identifiers: {references}.",
}


@dataclass(frozen=True)
class LetterSums:
    """What the letter asks for, from the claimable rows (business, not barred, not waived): the customer's
    `letter_*` columns of marts.late_payment_claims_by_customer."""

    invoice_count: int
    open_amount: Decimal
    interest: Decimal  # the known interest; `unknown_interest_count` invoices have none yet
    indemnities: Decimal
    unknown_interest_count: int
    total: Decimal | None  # the three together; None when the invoices are not all in euros (no sum across)


def _known(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and pd.isna(value)) and value is not pd.NA


def claimable(invoices: pd.DataFrame) -> pd.DataFrame:
    """The rows the letter claims: a business customer's, not barred by law (claim_excluded_reason empty), not
    waived by the user."""
    keep = [not _known(reason) and kind == "business" and status != WAIVED
            for reason, kind, status in zip(invoices["claim_excluded_reason"], invoices["customer_type"],
                                            invoices["claim_status"], strict=True)]
    return invoices[keep]


def _rates(lines: pd.DataFrame, references: set[str], style: str) -> str:
    """The rates applied to the claimed invoices' interest lines, `12,15 / 12,40` (decimal mark of `style`)."""
    rates = sorted({Decimal(str(rate))
                    for reference, rate in zip(lines["reference"], lines["interest_rate_percent"], strict=True)
                    if reference in references and _known(rate)})
    texts = [f"{rate:.2f}" for rate in rates]
    return " / ".join(text.replace(".", ",") if style == FRENCH else text for text in texts)


def _law(language: str, rows: pd.DataFrame, lines: pd.DataFrame, style: str) -> list[str]:
    """The paragraphs citing the law each rate basis of `rows` rests on, with the rates of its own invoices."""
    bases = {str(basis) for basis in rows["rate_basis"] if _known(basis)}
    commercial = {str(reference) for reference, basis in zip(rows["reference"], rows["rate_basis"], strict=True)
                  if basis != PUBLIC_BUYER_BASIS}
    rates = _rates(lines, commercial, style)
    paragraphs = []
    if commercial:
        rate = (tr(language, "at the rate our terms of sale set ({rates} %)", rates=rates)
                if bases - {PUBLIC_BUYER_BASIS} == {CONTRACTUAL_BASIS}
                else tr(language, "at the European Central Bank's main refinancing rate plus 10 points ({rates} %)",
                        rates=rates))
        paragraphs.append(tr(
            language,
            "Under article L441-10 of the French commercial code (code de commerce), late payment makes late-payment "
            "penalties (pénalités de retard) due by law, without a reminder being needed, {rate}, on the amount "
            "incl. tax left unpaid, from the day after the due date to the day of payment, and a fixed indemnity "
            "for recovery costs of 40 euros per invoice (indemnité forfaitaire pour frais de recouvrement, article "
            "D441-5 of the code de commerce).", rate=rate))
    if PUBLIC_BUYER_BASIS in bases:
        paragraphs.append(tr(
            language,
            "As a public buyer, late payment makes default interest due at the European Central Bank's rate in "
            "force on the first day of the half-year the delay began in, plus 8 points (article R2192-31 of the "
            "public procurement code), and the fixed indemnity for recovery costs of 40 euros (article D2192-35)."))
    return paragraphs


def _assumptions(language: str, rows: pd.DataFrame) -> list[str]:
    """One line per kind of assumption, naming the invoices that rest on it."""
    found = []
    for column, text in ASSUMPTIONS.items():
        references = [str(ref) for ref, flag in zip(rows["reference"], rows[column], strict=True)
                      if _known(flag) and bool(flag)]
        if references:
            found.append(tr(language, text, references=", ".join(references)))
    return found


def _demand(language: str, figures: LetterSums, style: str, currency: str) -> str:
    amounts = {"open": money(figures.open_amount, style, currency),
               "interest": money(figures.interest, style, currency),
               "indemnities": eur(figures.indemnities, style)}
    if currency != "EUR" or figures.total is None:  # the indemnity is in euros, the rest in the invoices'
        # currency: no sum across them
        return tr(language, "We ask you to pay: the balance still due, {open}; the late-payment penalties, "
                            "{interest}; the fixed indemnities for recovery costs, {indemnities}.", **amounts)
    return tr(language, "We ask you to pay: the balance still due, {open}; the late-payment penalties, {interest}; "
                        "the fixed indemnities for recovery costs, {indemnities}; in all {total}.",
              total=money(figures.total, style, currency), **amounts)


def letter_paragraphs(invoices: pd.DataFrame, lines: pd.DataFrame, figures: LetterSums, language: str, style: str,
                      currency: str) -> list[str]:
    """The letter's paragraphs, in `language`, amounts in `style` (`currency` for the invoices' amounts and
    interest, euros for the indemnities): `figures` are what it asks for, `invoices` and `lines` the rows it
    cites."""
    rows = claimable(invoices)
    if rows.empty:
        return [tr(language, "Nothing to claim from this customer: each late invoice is a consumer's, barred by law "
                             "or waived (see Not claimed and Claim status below).")]
    paragraphs = [
        tr(language, "Subject: overdue invoices, late-payment penalties and fixed indemnity for recovery costs"),
        tr(language, "Dear Sir or Madam,"),
        tr(language, "Unless we are mistaken, the {count} invoice(s) listed below were not paid by their due date.",
           count=figures.invoice_count),
        *_law(language, rows, lines, style),
        _demand(language, figures, style, currency),
    ]
    if figures.unknown_interest_count:
        paragraphs.append(tr(language, "The penalties of {count} invoice(s) are not stated: the ECB rate of a "
                                       "half-year of the delay is not known yet.",
                             count=figures.unknown_interest_count))
    paragraphs += _assumptions(language, rows)
    paragraphs.append(tr(language, "Yours faithfully,"))
    return paragraphs


def letter_html(paragraphs: list[str]) -> str:
    """The paragraphs as the page shows them, in a block `data-letter="reminder"` the browser tests read."""
    body = "".join(f"<p>{html.escape(paragraph)}</p>" for paragraph in paragraphs)
    return f'<div class="iw-letter" data-letter="reminder">{body}</div>'
