"""A contractual penalty rate checked against its legal floor, three times the legal interest rate (c. com.
L441-10 II: terms of sale "ne peu[ven]t toutefois fixer un taux inférieur à trois fois le taux d'intérêt légal"),
on hand-made invoices, every figure worked out by hand below.

The legal interest rates, "all other cases" (the creditor is a business), from the arrêtés (sources in
invoicing_warehouse/engine/seeds/README.md): second half of 2025 2.76 % (arrêté of 19 June 2025) -> floor 3 x 2.76 =
8.28 %; first half of 2026 2.62 % (arrêté of 15 December 2025) -> floor 3 x 2.62 = 7.86 %.

Report date D = 2026-01-31. Terms of sale (INVOICING_PENALTY_RATES_BY_CUSTOMER): c1 8 %, g1 12 %; l1 has none
and no portal rate is set (the legal default, ECB + 10). Interest of a line = amount
x rate x days / 36500, rounded to the cent per line.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import duckdb
import pandas as pd
import pytest
from model_fixture import fetch, midnight

from harness.model_raw_tables import create_raw_tables, insert
from invoicing_warehouse.dashboard.payment_law_queries import claims as claims_page
from invoicing_warehouse.dashboard.payment_law_queries import claims_by_customer
from invoicing_warehouse.engine.sql_runner import build_models

D = date(2026, 1, 31)
dec = Decimal
BELOW = "contractual rate below 3 x the legal interest rate (L441-10 II)"
UNKNOWN = "legal interest rate unknown: contractual rate not checked"


def _invoice(doc_id: str, customer: str, amount: str) -> dict:
    # every invoice: emitted 2025-11-21, due 2025-12-21, open on D (late 12-22..01-31: 10 days in 2025, 31 in 2026)
    return {"id": doc_id, "customer_id": customer, "type": "INVOICE", "status": "VALIDATED",
            "reference": doc_id.upper(), "emit_date": midnight("2025-11-21"), "due_date": midnight("2025-12-21"),
            "amount_vat_net": amount, "amount_vat": amount, "version": "1.0", "last_update": "2025-11-21T08:00:00Z"}


@pytest.fixture()
def portal(monkeypatch) -> duckdb.DuckDBPyConnection:
    monkeypatch.setenv("INVOICING_PENALTY_RATES_BY_CUSTOMER", "c1=8,g1=12")
    conn = duckdb.connect()
    create_raw_tables(conn)
    insert(conn, "customers", [{"id": "c1", "name": "Cabinet", "siret": "12345678900011"},
                               {"id": "g1", "name": "Garage", "siret": "12345678900012"},
                               {"id": "l1", "name": "Librairie", "siret": "12345678900013"}])
    insert(conn, "documents", [_invoice("inv_c", "c1", "1000.00"), _invoice("inv_g", "g1", "500.00"),
                               _invoice("inv_l", "l1", "200.00")])
    yield conn
    conn.close()


def test_a_contractual_rate_below_three_times_the_legal_rate_is_flagged_with_the_interest_at_the_floor(portal):
    build_models(portal, as_of=D)
    lines = portal.execute(
        "select invoice_id, half_year_start, interest_rate_percent, legal_floor_percent, is_below_legal_floor,"
        " interest_amount, interest_amount_at_legal_floor from marts.late_payment_interest_periods"
        " order by invoice_id, period_start").fetchall()
    assert lines == [
        # inv_c at c1's 8 %: 2025-12-22..12-31, 10 days: 1000 x 8 x 10 / 36500 = 2.1918 -> 2.19; below the
        # floor 8.28 %: at the floor 1000 x 8.28 x 10 / 36500 = 2.2685 -> 2.27
        ("inv_c", date(2025, 7, 1), dec("8.0000"), dec("8.2800"), True, dec("2.19"), dec("2.27")),
        # 2026-01-01..01-31, 31 days: 1000 x 8 x 31 / 36500 = 6.7945 -> 6.79; 8 >= 7.86: above the floor
        ("inv_c", date(2026, 1, 1), dec("8.0000"), dec("7.8600"), False, dec("6.79"), None),
        # inv_g at its own 12 % (above both floors): 500 x 12 x 10 / 36500 = 1.6438 -> 1.64;
        # 500 x 12 x 31 / 36500 = 5.0959 -> 5.10
        ("inv_g", date(2025, 7, 1), dec("12.0000"), dec("8.2800"), False, dec("1.64"), None),
        ("inv_g", date(2026, 1, 1), dec("12.0000"), dec("7.8600"), False, dec("5.10"), None),
        # inv_l, the legal default: ECB 2.15 % (in force on 1 July 2025 and 1 January 2026) + 10 = 12.15 %, not a
        # term of sale, so never below the floor: 200 x 12.15 x 10 / 36500 = 0.6658 -> 0.67;
        # 200 x 12.15 x 31 / 36500 = 2.0638 -> 2.06
        ("inv_l", date(2025, 7, 1), dec("12.1500"), dec("8.2800"), False, dec("0.67"), None),
        ("inv_l", date(2026, 1, 1), dec("12.1500"), dec("7.8600"), False, dec("2.06"), None),
    ]
    claims = {row["invoice_id"]: row for row in fetch(portal, "select * from marts.late_payment_claims")}
    assert {i: (c["rate_basis"], c["interest_eur"], c["is_rate_below_legal_floor"], c["rate_flag"],
                c["interest_amount_at_legal_floor"]) for i, c in claims.items()} == {
        # the claim keeps the contractual figure (2.19 + 6.79 = 8.98), flagged, with the lines at the floor where
        # below it and as they are elsewhere: 2.27 + 6.79 = 9.06
        "inv_c": ("contractual", dec("8.98"), True, BELOW, dec("9.06")),
        "inv_g": ("contractual", dec("6.74"), False, None, None),  # 1.64 + 5.10
        "inv_l": ("legal: ECB + 10, L441-10 II", dec("2.73"), False, None, None),  # 0.67 + 2.06
    }
    # what the page warns of: 1 claim below its floor, 8.98 at the contractual rate (in the totals), 9.06 at the
    # floor; none unchecked. The by-customer list flags Cabinet only.
    page = claims_page(portal, "default")
    assert (page.below_floor, page.floor_unchecked_count) == ((1, dec("8.98"), dec("9.06")), 0)
    flags = claims_by_customer(portal, "default").set_index("customer_id")["rate_flag"]
    assert {customer: None if pd.isna(flag) else flag for customer, flag in flags.items()} == {
        "c1": BELOW, "g1": None, "l1": None}


def test_a_half_year_the_legal_table_lacks_leaves_the_rate_unchecked_and_says_so(portal, tmp_path, monkeypatch):
    # a table of one's own holding the second half of 2025 only: the first half of 2026 has no floor, so inv_g's
    # 12 % is not checked there (flagged), while inv_c's 8 % is below 2025's 8.28 % (that flag wins); the
    # legal default is never a term of sale and is not flagged
    own = tmp_path / "legal rates.csv"
    own.write_text("half_year_start,individuals_rate_percent,other_cases_rate_percent,source\n"
                   "2025-07-01,6.65,2.76,arrêté of 2025-06-19\n")
    monkeypatch.setenv("INVOICING_LEGAL_INTEREST_RATES_PATH", str(own))
    build_models(portal, as_of=D)
    assert portal.execute(
        "select invoice_id, half_year_start, legal_floor_percent, is_below_legal_floor"
        " from marts.late_payment_interest_periods where invoice_id = 'inv_g' order by period_start").fetchall() == [
        ("inv_g", date(2025, 7, 1), dec("8.2800"), False), ("inv_g", date(2026, 1, 1), None, None)]
    assert portal.execute("select invoice_id, rate_flag, is_rate_below_legal_floor from marts.late_payment_claims"
                          " order by invoice_id").fetchall() == [
        ("inv_c", BELOW, True), ("inv_g", UNKNOWN, False), ("inv_l", None, False)]
    assert claims_page(portal, "default").floor_unchecked_count == 1  # inv_g: the page says its rate is unchecked
    # a file without checked_on reads as well: the table says nothing of when it was checked
    assert portal.execute("select distinct table_checked_on from reference.legal_interest_rates").fetchall() == [
        (None,)]


@pytest.mark.parametrize(("content", "message"), [
    ("half_year_start,individuals_rate_percent,other_cases_rate_percent,source\n2025-03-01,6.65,2.76,x\n",
     "line 2: a half-year starting on 1 January or 1 July"),
    (("half_year_start,individuals_rate_percent,other_cases_rate_percent,source\n2025-07-01,6.65,2.76,x\n"
      "2025-07-01,6.65,2.76,x\n"), "line 3: a half-year starting on 1 January or 1 July, listed once"),
    ("half_year_start,individuals_rate_percent,other_cases_rate_percent,source\n2025-07-01,6.65,deux,x\n",
     "line 2: .*two rates from 0 to 100"),
    ("half_year_start,rate_percent,source\n2025-07-01,2.76,x\n", "no column individuals_rate_percent"),
])
def test_a_legal_rate_table_the_floor_cannot_use_stops_the_build_naming_the_line(portal, tmp_path, monkeypatch,
                                                                               content, message):
    from invoicing_warehouse.engine.seed_files import SeedFileError

    own = tmp_path / "legal.csv"
    own.write_text(content)
    monkeypatch.setenv("INVOICING_LEGAL_INTEREST_RATES_PATH", str(own))
    with pytest.raises(SeedFileError, match=f"legal.csv.*{message}"):
        build_models(portal, as_of=D)


def test_the_shipped_legal_rates_are_the_arretes_and_stop_before_the_unpublished_half_year(portal):
    # "other cases" rates of the arrêtés (seeds/README.md lists the pages): 2024 H1 5.07, H2 4.92; 2025 H1 3.71,
    # H2 2.76; 2026 H1 2.62. No arrêté for the second half of 2026 was found (checked 2026-12-02): no row, so a
    # contractual rate of that half-year is flagged unchecked rather than taken as valid
    build_models(portal, as_of=D)
    assert portal.execute(
        "select half_year_start, individuals_rate_percent, other_cases_rate_percent from reference.legal_interest_rates"
        " where half_year_start >= '2024-01-01' order by 1").fetchall() == [
        (date(2024, 1, 1), dec("8.0100"), dec("5.0700")), (date(2024, 7, 1), dec("8.1600"), dec("4.9200")),
        (date(2025, 1, 1), dec("7.2100"), dec("3.7100")), (date(2025, 7, 1), dec("6.6500"), dec("2.7600")),
        (date(2026, 1, 1), dec("6.6700"), dec("2.6200")),
    ]
    assert portal.execute("select distinct table_checked_on from reference.legal_interest_rates").fetchall() == [
        (date(2026, 12, 2),)]
