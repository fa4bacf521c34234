"""Amounts as people read them: French `1 234,56 €` (no-break spaces) and English `€1,234.56`, to the cent."""

from decimal import Decimal

import duckdb
import pandas as pd

from invoicing_warehouse.dashboard.formatting import ENGLISH, FRENCH, days, eur, html_table, money, to_csv
from invoicing_warehouse.dashboard.queries import currency

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
    assert to_csv(frame).decode() == "customer_name,open_amount\r\n<b>A&B</b>,1234.50\r\n"


def test_amounts_carry_the_currency_the_marts_name_euros_by_default():
    assert money(Decimal("1234.5"), FRENCH, "USD") == f"1{NBSP}234,50{NBSP}$US"
    assert money(Decimal("-1234.5"), ENGLISH, "USD") == "-$1,234.50"
    assert money(Decimal(10), ENGLISH, "SEK") == "SEK 10.00"  # an unknown code is written out
    assert money(Decimal(10), FRENCH) == eur(Decimal(10), FRENCH) == f"10,00{NBSP}€"
    frame = pd.DataFrame({"open_amount": [Decimal("1234.50")]})
    html = html_table(frame, "t", money=["open_amount"], style=ENGLISH, currency="USD")
    assert '<td data-column="open_amount" class="num">$1,234.50</td>' in html and "€" not in html


def test_the_dashboard_reads_the_portals_currency_from_the_cash_outlook():
    with duckdb.connect() as conn:
        conn.execute("create schema marts")
        conn.execute("create table marts.cash_outlook (period_index int, currency varchar, portal_id varchar)")
        conn.execute("insert into marts.cash_outlook values (0, 'USD', 'p1'), (1, 'USD', 'p1'), (0, 'EUR', 'p2')")
        assert (currency(conn, "p1"), currency(conn, "p2"), currency(conn, "p3")) == ("USD", "EUR", "EUR")
