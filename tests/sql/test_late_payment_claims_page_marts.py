"""The marts behind the Late-payment claims page (issue 43 point 5): marts.late_payment_claims_summary,
late_payment_claim_tallies and late_payment_claims_by_customer, on the hand-made invoices of
test_late_payment_claims.py (D = 2025-08-31), every figure added up by hand from that file's claims:

  inv_a b1 Bistro   paid   amount late 1000.00, open    0.00, 40.00 + interest 6.93
  inv_b b1 Bistro   open   amount late  600.00, open  400.00, 40.00 + interest 4.80
  inv_h b1 Bistro   open   amount late 1000.00, open 1000.00, 40.00, interest 3.33 USD (not converted: no interest_eur,
                           claim_excluded_reason `interest not converted to EUR`)
  inv_c b2 Atelier  paid   amount late  400.00, open    0.00, 40.00 + interest 2.66
  inv_g b2 Atelier  paid   amount late  800.00, open    0.00, 40.00 + interest 0.53
  inv_r b2 Atelier  paid   amount late  500.00, open    0.00, 40.00 + interest 1.74 (1.66 + 0.08)
  inv_e k1 Dupont   consumer, amount late 250.00; inv_f k2 Martin consumer, amount late 120.00: nothing claimed
"""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest
from test_late_payment_claims import D, _load

from invoicing_warehouse.dashboard.payment_law_queries import claims as claims_page
from invoicing_warehouse.dashboard.payment_law_queries import customer_letter
from invoicing_warehouse.dashboard.reminder_letter import LetterSums
from invoicing_warehouse.engine.sql_runner import build_models

dec = Decimal
LEGAL = "legal: ECB + 10, L441-10 II"


@pytest.fixture(scope="module")
def claims() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect()
    _load(conn)
    build_models(conn, as_of=D)
    yield conn
    conn.close()


def test_the_summary_adds_up_the_claims(claims):
    assert claims.execute(
        "select claimed_invoice_count, flat_indemnities_eur, interest_eur, total_claim_eur, paid_invoices_claim_eur, "
        "open_invoices_claim_eur, consumer_invoice_count, consumer_amount_late, unconverted_invoice_count, "
        "rate_table_behind_count, below_floor_count, floor_unchecked_count, rate_bases "
        "from marts.late_payment_claims_summary").fetchall() == [(
            6,  # the six business invoices: a, b, h, c, g, r
            dec("240.00"),  # 6 x 40.00
            dec("16.66"),  # 6.93 + 4.80 + 2.66 + 0.53 + 1.74 (inv_h's USD interest is not in euros)
            dec("256.66"),  # 240.00 + 16.66
            # paid: a 46.93 + c 42.66 + g 40.53 + r 41.74 = 171.86
            dec("171.86"),
            dec("84.80"),  # open: b 44.80 + h 40.00 = 84.80 = 256.66 - 171.86
            2, dec("370.00"),  # inv_e 250.00 + inv_f 120.00
            1,  # inv_h, in dollars
            0, 0, 0,
            LEGAL,
    )]


def test_the_list_by_customer_and_its_letters(claims):
    rows = claims.execute(
        "select customer_id, customer_name, late_invoice_count, amount_late, open_amount, flat_indemnity_eur, "
        "interest_eur, claim_eur, interest_unknown_count, letter_invoice_count, letter_open_amount, "
        "letter_interest_amount, letter_indemnities_eur, letter_unknown_interest_count, letter_total "
        "from marts.late_payment_claims_by_customer order by customer_id").fetchall()
    assert rows == [
        # b1: late 1000.00 + 600.00 + 1000.00 = 2600.00; open 0 + 400.00 + 1000.00 = 1400.00; 3 x 40.00; interest
        # 6.93 + 4.80 = 11.73 (inv_h's unknown in euros: 1); claim 120.00 + 11.73 = 131.73. Its letter leaves inv_h
        # out (barred from a euro claim: not converted): a and b, open 400.00, interest 11.73, 2 x 40.00,
        # in all 400.00 + 11.73 + 80.00 = 491.73
        ("b1", "Bistro", 3, dec("2600.00"), dec("1400.00"), dec("120.00"), dec("11.73"), dec("131.73"), 1,
         2, dec("400.00"), dec("11.73"), dec("80.00"), 0, dec("491.73")),
        # b2: late 400.00 + 800.00 + 500.00 = 1700.00, all paid; interest 2.66 + 0.53 + 1.74 = 4.93; claim 124.93;
        # its letter claims all three: 0.00 + 4.93 + 120.00 = 124.93
        ("b2", "Atelier", 3, dec("1700.00"), dec("0.00"), dec("120.00"), dec("4.93"), dec("124.93"), 0,
         3, dec("0.00"), dec("4.93"), dec("120.00"), 0, dec("124.93")),
    ]  # k1 and k2 are consumers: no row
    assert customer_letter(claims, "default", "b1") == LetterSums(2, dec("400.00"), dec("11.73"), dec("80.00"), 0,
                                                                  dec("491.73"))
    assert customer_letter(claims, "default", "k1") == LetterSums(0, dec(0), dec(0), dec(0), 0, None)


def test_the_page_reads_the_summary_the_tallies_and_the_list(claims):
    figures = claims_page(claims, "default")
    assert (figures.claimed_invoice_count, figures.flat_indemnities_eur, figures.interest_eur,
            figures.total_claim_eur, figures.open_invoices_claim_eur, figures.paid_invoices_claim_eur) == (
        6, dec("240.00"), dec("16.66"), dec("256.66"), dec("84.80"), dec("171.86"))
    assert figures.by_status == (("to claim", 6, dec("256.66")),) and figures.excluded == ()
    assert figures.rate_bases == LEGAL
    # largest claim first: b1 131.73, b2 124.93
    assert list(figures.by_customer.rows["customer_id"]) == ["b1", "b2"] and figures.by_customer.total == 2
    assert claims_page(claims, "nobody").claimed_invoice_count == 0  # a portal without a late invoice: zeros


def test_claims_the_law_bars_and_a_rate_below_its_floor(monkeypatch):
    # test_late_payment_claims.py's public buyers test: inv_p 40.00 + 21.99 (public buyer), inv_c 40.00 + 1.08
    # (contractual 7.86 %, below H2 2025's floor 8.28 %: at the floor 500 x 8.28 x 10 / 36500 = 1.1342 -> 1.13),
    # inv_r 40.00 + 0.99 (contractual 9 %); barred: inv_x (collective proceedings), inv_o (time-barred)
    from test_late_payment_claims import _invoice, _payment

    from harness.model_raw_tables import create_raw_tables, insert

    monkeypatch.setenv("INVOICING_PENALTY_RATES_BY_CUSTOMER", "r1=9")
    monkeypatch.setenv("INVOICING_PUBLIC_BUYERS", "p1")
    monkeypatch.setenv("INVOICING_PENALTY_RATE_PERCENT", "7.86")
    monkeypatch.setenv("INVOICING_COLLECTIVE_PROCEEDINGS", "x1")
    conn = duckdb.connect()
    create_raw_tables(conn)
    insert(conn, "customers", [{"id": c, "name": c, "siret": f"1234567890001{i}"}
                               for i, c in enumerate(("p1", "c1", "x1", "o1", "r1"))])
    insert(conn, "documents", [
        _invoice("inv_p", "p1", "1000.00", "2025-05-21", "2025-06-20"),
        _invoice("inv_c", "c1", "500.00", "2025-07-01", "2025-07-31", status="PAID",
                 last_update="2025-08-10T12:00:00Z"),
        _invoice("inv_x", "x1", "800.00", "2025-05-31", "2025-06-30"),
        _invoice("inv_o", "o1", "300.00", "2020-01-01", "2020-01-31", status="PAID",
                 last_update="2020-03-01T12:00:00Z"),
        _invoice("inv_r", "r1", "400.00", "2025-07-01", "2025-07-31", status="PAID",
                 last_update="2025-08-10T12:00:00Z"),
    ])
    insert(conn, "transaction_usages", [_payment("u_r", "r1", "inv_r", "400.00", "2025-08-10"),
                                        _payment("u_c", "c1", "inv_c", "500.00", "2025-08-10"),
                                        _payment("u_o", "o1", "inv_o", "300.00", "2020-03-01")])
    build_models(conn, as_of=D)
    assert conn.execute("select tally, label, invoice_count, claim_eur from marts.late_payment_claim_tallies "
                        "order by tally, label").fetchall() == [
        ("excluded", "collective proceedings (L622-7)", 1, dec("0.00")),
        ("excluded", "time-barred (L110-4)", 1, dec("0.00")),
        # 61.99 + 41.08 + 40.99 = 144.06
        ("status", "to claim", 3, dec("144.06")),
    ]
    figures = claims_page(conn, "default")
    # inv_x is at the portal's 7.86 % too, below its floor, but barred: it counts, with 0.00 at either rate
    assert figures.below_floor == (2, dec("1.08"), dec("1.13"))
    assert figures.rate_bases == "contractual, public buyer: R2192-31"
    # paid: inv_c 41.08 + inv_r 40.99 = 82.07; open: inv_p 61.99
    assert (figures.total_claim_eur, figures.paid_invoices_claim_eur, figures.open_invoices_claim_eur) == (
        dec("144.06"), dec("82.07"), dec("61.99"))
    conn.close()


def test_a_waived_claim_leaves_the_letter_not_the_list(tmp_path, monkeypatch):
    # the user waives INV_B (b1): b1's list row keeps it (claim 131.73), its letter claims inv_a only: open 0.00,
    # interest 6.93, 1 x 40.00, in all 46.93; the tallies split the six claims: waived inv_b 44.80, to claim
    # 256.66 - 44.80 = 211.86 (5)
    own = tmp_path / "claims.csv"
    own.write_text("portal_id,reference,status,status_date,note\n,INV_B,waived,,\n")
    monkeypatch.setenv("INVOICING_CLAIM_STATUSES_PATH", str(own))
    conn = duckdb.connect()
    _load(conn)
    build_models(conn, as_of=D)
    assert conn.execute(
        "select claim_eur, letter_invoice_count, letter_open_amount, letter_interest_amount, letter_indemnities_eur, "
        "letter_total from marts.late_payment_claims_by_customer where customer_id = 'b1'").fetchall() == [
        (dec("131.73"), 1, dec("0.00"), dec("6.93"), dec("40.00"), dec("46.93"))]
    assert conn.execute("select label, invoice_count, claim_eur from marts.late_payment_claim_tallies "
                        "where tally = 'status' order by label").fetchall() == [
        ("to claim", 5, dec("211.86")), ("waived", 1, dec("44.80"))]
    conn.close()
