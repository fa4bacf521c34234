"""Amounts as people read them: French `1 234,56 €` (no-break spaces) and English `€1,234.56`, to the cent."""

from decimal import Decimal

import pandas as pd

from dashboard.formatting import ENGLISH, FRENCH, days, eur, html_table, to_csv

NBSP = "\u00a0"


def test_euros_in_french_and_english():
    assert eur(Decimal("1234567.891"), FRENCH) == f"1{NBSP}234{NBSP}567,89{NBSP}€"
    assert eur(Decimal("-1234.5"), FRENCH) == f"-1{NBSP}234,50{NBSP}€"
    assert eur(Decimal("0.005"), ENGLISH) == "€0.01"  # half up, as accountants round
    assert eur(Decimal("-1234.5"), ENGLISH) == "-€1,234.50"
    assert eur(None) == ""
    assert days(Decimal("85.35"), FRENCH) == "85,4" and days(None) == "n/a"


def test_tables_escape_text_and_csv_keeps_raw_values():
    frame = pd.DataFrame({"customer_name": ["<b>A&B</b>"], "open_amount": [Decimal("1234.50")]})
    html = html_table(frame, "t", money=["open_amount"], style=ENGLISH)
    assert "&lt;b&gt;A&amp;B&lt;/b&gt;" in html and "<b>" not in html
    assert '<td data-column="open_amount" class="num">€1,234.50</td>' in html
    assert to_csv(frame).decode() == "customer_name,open_amount\n<b>A&B</b>,1234.50\n"
