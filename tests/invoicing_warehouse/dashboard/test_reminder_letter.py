"""The reminder letter (invoicing_warehouse/dashboard/reminder_letter.py) on a hand-built customer: the sums it is
given (marts.late_payment_claims_by_customer's `letter_*`, tested in tests/sql/test_late_payment_claims_page_marts.py),
the law it cites in each language (code de commerce L441-10 and D441-5 in their own French words; R2192-31 for a
public buyer) and every assumption it rests on, named by invoice, of the claimable invoices only."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd

from invoicing_warehouse.dashboard.reminder_letter import LetterSums, letter_html, letter_paragraphs

NBSP = "\u00a0"
LEGAL = "legal: ECB + 10, L441-10 II"


def _invoice(reference: str, open_amount: str, interest: str | None, *, customer_type: str = "business",
             excluded: str | None = None, status: str = "to claim", basis: str = LEGAL, due_assumed: bool = False,
             type_inferred: bool = False) -> dict:
    return {"reference": reference, "open_amount": Decimal(open_amount), "flat_indemnity_eur":
            Decimal("0" if excluded else "40.00"), "interest_amount": None if interest is None else Decimal(interest),
            "rate_basis": basis, "claim_status": status, "customer_type": customer_type,
            "claim_excluded_reason": excluded, "is_due_date_assumed": due_assumed, "is_paid_date_assumed": False,
            "is_customer_type_inferred": type_inferred}


# F-1 open, F-2 paid (only its penalties owed), F-3 a consumer's, F-4 waived by the user
INVOICES = pd.DataFrame([
    _invoice("F-1", "1000.00", "12.34", due_assumed=True, type_inferred=True),
    _invoice("F-2", "0.00", "5.66"),
    _invoice("F-3", "500.00", "0.00", customer_type="consumer", excluded="consumer"),
    _invoice("F-4", "300.00", "9.99", status="waived"),
])
LINES = pd.DataFrame({"reference": ["F-1", "F-2", "F-2", "F-4"],
                      "interest_rate_percent": [Decimal("12.15"), Decimal("12.15"), Decimal("12.40"),
                                                Decimal("13.15")]})


# what the mart says the letter asks for, over the claimable F-1 and F-2: open 1,000.00 + 0.00; interest
# 12.34 + 5.66 = 18.00; indemnities 2 x 40 = 80.00; in all 1,098.00
SUMS = LetterSums(2, Decimal("1000.00"), Decimal("18.00"), Decimal("80.00"), 0, Decimal("1098.00"))
NOTHING = LetterSums(0, Decimal(0), Decimal(0), Decimal(0), 0, None)


def test_the_letter_asks_for_the_sums_it_is_given_and_cites_the_claimable_invoices_only():
    text = "\n".join(letter_paragraphs(INVOICES, LINES, SUMS, "en", "en", "EUR"))
    assert "the 2 invoice(s) listed below" in text
    # a sum across currencies is never made: the mart gives none, the letter says none
    no_total = "\n".join(letter_paragraphs(INVOICES, LINES, LetterSums(2, Decimal("1000.00"), Decimal("18.00"),
                                                                        Decimal("80.00"), 0, None), "en", "en", "EUR"))
    assert "in all" not in no_total and "the fixed indemnities for recovery costs, €80.00." in no_total


def test_the_french_letter_cites_the_law_in_its_own_words():
    text = "\n".join(letter_paragraphs(INVOICES, LINES, SUMS, "fr", "fr", "EUR"))
    assert "Objet : factures impayées à échéance, pénalités de retard et indemnité forfaitaire" in text
    assert "En application de l'article L441-10 du Code de commerce" in text
    assert "des pénalités de retard au taux appliqué par la Banque centrale européenne" in text
    assert "majoré de 10 points de pourcentage (12,15 / 12,40 %)" in text  # F-4's 13.15 is waived: not cited
    assert "indemnité forfaitaire pour frais de recouvrement de 40 euros par facture (article D441-5 du Code de " \
           "commerce)" in text
    # 1,000.00 + 18.00 + 80.00 = 1,098.00
    assert (f"le solde restant dû, 1{NBSP}000,00{NBSP}€ ; les pénalités de retard, 18,00{NBSP}€ ; les indemnités "
            f"forfaitaires pour frais de recouvrement, 80,00{NBSP}€ ; soit au total 1{NBSP}098,00{NBSP}€.") in text
    assert "Échéance supposée (date d'émission + 30 jours, article L441-10 I du Code de commerce) : F-1." in text
    assert "Client considéré comme professionnel, d'après ses identifiants : F-1." in text
    assert "F-3" not in text and "F-4" not in text and "Date de règlement supposée" not in text


def test_the_english_letter_says_the_same_in_english():
    text = "\n".join(letter_paragraphs(INVOICES, LINES, SUMS, "en", "en", "EUR"))
    assert "Under article L441-10 of the French commercial code (code de commerce)" in text
    assert "main refinancing rate plus 10 points (12.15 / 12.40 %)" in text
    assert "fixed indemnity for recovery costs of 40 euros per invoice" in text and "D441-5" in text
    assert ("the balance still due, €1,000.00; the late-payment penalties, €18.00; the fixed indemnities for "
            "recovery costs, €80.00; in all €1,098.00.") in text
    assert "Due date assumed (emit date + 30 days, article L441-10 I of the code de commerce): F-1." in text


def test_a_contractual_rate_a_public_buyer_and_an_unknown_interest_are_said():
    invoices = pd.DataFrame([_invoice("F-9", "100.00", None, basis="contractual"),
                             _invoice("F-8", "50.00", "1.00", basis="public buyer: R2192-31")])
    lines = pd.DataFrame({"reference": ["F-9", "F-8"], "interest_rate_percent": [Decimal("9.00"), Decimal("10.15")]})
    # F-9 100.00 open, interest unknown; F-8 50.00 open, 1.00: open 150.00, interest 1.00, 2 x 40, 1 unknown
    figures = LetterSums(2, Decimal("150.00"), Decimal("1.00"), Decimal("80.00"), 1, Decimal("231.00"))
    text = "\n".join(letter_paragraphs(invoices, lines, figures, "fr", "fr", "EUR"))
    # each law with its own invoices' rates: F-9's contractual 9 % under L441-10, F-8's 10.15 % under R2192-31
    assert "des pénalités de retard au taux fixé par nos conditions générales de vente (9,00 %)" in text
    assert "intérêts moratoires" in text and "R2192-31 du code de la commande publique" in text
    assert "Les pénalités de 1 facture(s) ne sont pas chiffrées" in text
    public = "\n".join(letter_paragraphs(invoices.iloc[1:], lines, LetterSums(
        1, Decimal("50.00"), Decimal("1.00"), Decimal("40.00"), 0, Decimal("91.00")), "fr", "fr", "EUR"))
    assert "L441-10" not in public and "R2192-31" in public


def test_nothing_to_claim_and_the_html_escapes():
    consumer = pd.DataFrame([_invoice("F-3", "500.00", "0.00", customer_type="consumer", excluded="consumer")])
    assert letter_paragraphs(consumer, LINES, NOTHING, "fr", "fr", "EUR") == [
        ("Rien à réclamer à ce client : chaque facture en retard est celle d'un particulier, exclue par la loi ou "
        "abandonnée (voir Non réclamé et Statut de la réclamation ci-dessous).")]
    assert letter_html(["<b>x</b>"]) == ('<div class="iw-letter" data-letter="reminder">'
                                         '<p>&lt;b&gt;x&lt;/b&gt;</p></div>')
