"""The marts that hold the dashboard's own figures (issue 43 point 5): marts.payables_summary, payables_weeks,
receivables_summary, receivables_aging and expected_payment_bases, on the hand-built portal (model_fixture.py;
the supplier documents are described in test_payables_marts.py), with the arithmetic beside each figure.

D = 2026-01-31 is a Saturday: its week runs Monday 01-26 to Sunday 02-01, and the eighth week ends on Sunday
03-22 (01-26 + 55 days). P = 2026-01-10 is a Saturday too: week 01-05 to 01-11, eighth week ending 03-01.
"""

from datetime import date
from decimal import Decimal

import duckdb
from model_fixture import D, load_fixture

from harness.model_raw_tables import insert
from invoicing_warehouse.engine.sql_runner import build_models

# Expected rows stay one tuple per row, so each can be read beside its arithmetic.
# fmt: off

dec = Decimal

SUMMARY_COLUMNS = (
    "as_of_date, week_start, week_end, horizon_end, past_due, due_this_week, due_next_weeks, undated, total_due, "
    "approved, awaiting_approval, disputed, document_count"
)
AGED_PAYABLES = (
    "aged_supplier_count, aged_due_current, aged_due_1_30, aged_due_31_60, aged_due_61_90, aged_due_90_plus, "
    "aged_total_due"
)


def test_payables_summary_as_of_d(at_d):
    assert at_d.execute(f"select {SUMMARY_COLUMNS}, portal_id from marts.payables_summary").fetchall() == [(
        date(2026, 1, 31), date(2026, 1, 26), date(2026, 2, 1), date(2026, 3, 22),
        # past due: sd2 600.00 (due 12-20); sd6 90.00 is past due too but disputed, on hold: not here
        dec("600.00"),
        # due from D (01-31) to Sunday 02-01: sd3, the credit note due on D, -120.00
        dec("-120.00"),
        # due 01-31 .. 03-22: sd3 -120.00 + sd1 1200.00 (02-04) + sd7 240.00 (assumed 02-19) + sd5 480.00 (02-24)
        # + sd10 1500.50 (03-02) = 3300.50
        dec("3300.50"),
        dec("0.00"),  # sd7 has no due date served, but the legal default stands in: nothing is undated
        # 1200.00 + 600.00 - 120.00 + 480.00 + 90.00 + 240.00 + 1500.50 = 3990.50
        dec("3990.50"),
        # approved: 3990.50 - 480.00 (sd5 awaiting approval) - 90.00 (sd6 disputed) = 3420.50
        dec("3420.50"), dec("480.00"), dec("90.00"),
        7,  # sd1, sd2, sd3, sd5, sd6, sd7, sd10
        "default",
    )]
    # by supplier (test_payables_marts.py): current S1 1080.00 + S2 2220.50 = 3300.50; 1-30 S2 90.00;
    # 31-60 S1 600.00; total 1680.00 + 2310.50 = 3990.50, the total above
    assert at_d.execute(f"select {AGED_PAYABLES} from marts.payables_summary").fetchall() == [
        (2, dec("3300.50"), dec("90.00"), dec("600.00"), dec("0.00"), dec("0.00"), dec("3990.50"))]


def test_payables_summary_as_of_a_past_date(at_p):
    assert at_p.execute(f"select {SUMMARY_COLUMNS} from marts.payables_summary").fetchall() == [(
        date(2026, 1, 10), date(2026, 1, 5), date(2026, 1, 11), date(2026, 3, 1),
        # on P sd6 was still approved (disputed on 01-15): past due sd2 600.00 + sd6 90.00 = 690.00
        dec("690.00"),
        dec("0.00"),  # nothing due on 01-10 or 01-11
        # due 01-10 .. 03-01: sd8 150.00 (01-14) + sd4 360.00 (01-25) + sd3 -120.00 (01-31) + sd1 1200.00 (02-04)
        dec("1590.00"),
        dec("0.00"),
        # 1680.00 (S1) + 600.00 (S2) = 2280.00, all approved on P
        dec("2280.00"), dec("2280.00"), dec("0.00"), dec("0.00"),
        6,  # sd1, sd2, sd3, sd4, sd6, sd8
    )]


def _payables_bill(doc_id: str, due: str, status: str = "approved", amount: str = "10.00") -> dict:
    return {"id": doc_id, "supplier_id": "s1", "reference": doc_id.upper(), "type": "invoice", "status": status,
            "issue_date": "2026-01-20T00:00:00Z", "due_date": f"{due}T00:00:00Z", "amount_vat": amount,
            "currency": "EUR", "last_update": "2026-01-20T10:00:00Z"}


def test_the_week_bounds_are_the_report_dates_own_and_hold_their_last_day():
    # on D (Sat 01-31): due Sunday 02-01 is this week, Monday 02-02 is not; the eighth week ends Sunday 03-22,
    # so 03-22 is within it and 03-23 is not; a disputed bill due this week is due this week all the same
    conn = duckdb.connect()
    load_fixture(conn)
    insert(conn, "supplier_documents", [
        _payables_bill("x1", "2026-02-01", amount="1.00"),
        _payables_bill("x2", "2026-02-02", amount="2.00"),
        _payables_bill("x3", "2026-03-22", amount="4.00"),
        _payables_bill("x4", "2026-03-23", amount="8.00"),
        _payables_bill("x5", "2026-02-01", status="disputed", amount="16.00"),
    ])
    build_models(conn, as_of=D)
    this_week = {row[0] for row in conn.execute(
        "select supplier_document_id from marts.supplier_payables where is_due_this_week").fetchall()}
    assert this_week == {"sd3", "x1", "x5"}
    # -120.00 (sd3) + 1.00 (x1) + 16.00 (x5) = -103.00; next weeks: 3300.50 + 1.00 + 2.00 + 4.00 + 16.00 = 3323.50
    assert conn.execute("select due_this_week, due_next_weeks from marts.payables_summary").fetchall() == [
        (dec("-103.00"), dec("3323.50"))]
    conn.close()


def test_payables_weeks_as_of_d_hold_the_eight_weeks_empty_ones_included(at_d):
    rows = at_d.execute(
        "select week_number, week_start, week_end, overdue_amount, falling_due_amount, total_amount, "
        "awaiting_approval_amount, disputed_amount, document_count from marts.payables_weeks order by week_start"
    ).fetchall()
    assert rows == [
        # week of D: overdue sd2 600.00, sd3 -120.00 due on D, sd6 90.00 disputed: 600.00 - 120.00 + 90.00 = 570.00
        (1, date(2026, 1, 26), date(2026, 2, 1), dec("600.00"), dec("-120.00"), dec("570.00"), dec("0.00"),
         dec("90.00"), 3),
        (2, date(2026, 2, 2), date(2026, 2, 8), dec("0.00"), dec("1200.00"), dec("1200.00"), dec("0.00"),
         dec("0.00"), 1),  # sd1 due 02-04
        (3, date(2026, 2, 9), date(2026, 2, 15), dec("0.00"), dec("0.00"), dec("0.00"), dec("0.00"),
         dec("0.00"), 0),  # nothing due: shown all the same
        (4, date(2026, 2, 16), date(2026, 2, 22), dec("0.00"), dec("240.00"), dec("240.00"), dec("0.00"),
         dec("0.00"), 1),  # sd7, assumed due 02-19
        (5, date(2026, 2, 23), date(2026, 3, 1), dec("0.00"), dec("480.00"), dec("480.00"), dec("480.00"),
         dec("0.00"), 1),  # sd5 awaiting approval, due 02-24
        (6, date(2026, 3, 2), date(2026, 3, 8), dec("0.00"), dec("1500.50"), dec("1500.50"), dec("0.00"),
         dec("0.00"), 1),  # sd10 due 03-02
        (7, date(2026, 3, 9), date(2026, 3, 15), dec("0.00"), dec("0.00"), dec("0.00"), dec("0.00"),
         dec("0.00"), 0),
        (8, date(2026, 3, 16), date(2026, 3, 22), dec("0.00"), dec("0.00"), dec("0.00"), dec("0.00"),
         dec("0.00"), 0),
    ]


RECEIVABLES_SUMMARY = (
    "aged_customer_count, aged_open_current, aged_open_1_30, aged_open_31_60, aged_open_61_90, aged_open_90_plus, "
    "aged_total_open, overdue_customer_count, assumed_due_invoice_count, assumed_due_amount, assumed_overdue_amount"
)


def test_receivables_aging_as_of_d_holds_the_five_buckets_in_order(at_d):
    assert at_d.execute(
        "select bucket_order, aging_bucket, is_overdue, open_amount, invoice_count from marts.receivables_aging "
        "order by bucket_order").fetchall() == [
        # current: INV2 500.00 - 120.00 (CN1) = 380.00 due on D + DEP1 1000.00 due 02-05 = 1380.00
        (1, "current", False, dec("1380.00"), 2),
        # 1-30: INV5 300.00 - 160.00 = 140.00 (1 day) + INV7 60.00 (21 days) = 200.00
        (2, "1-30", True, dec("200.00"), 2),
        (3, "31-60", True, dec("699.50"), 1),  # INV1 1200.00 - 300.00 - 200.50, due 12-31: 31 days
        (4, "61-90", True, dec("850.00"), 1),  # INV3B due 11-30: 62 days
        (5, "90+", True, dec("0.00"), 0),  # empty, shown all the same
    ]


def test_receivables_summary_as_of_d(at_d):
    assert at_d.execute(f"select {RECEIVABLES_SUMMARY} from marts.receivables_summary").fetchall() == [(
        # C1 (INV1, INV2, INV3B), C2 (INV5, DEP1), C3 (INV7); the buckets of the aging above; total
        # 1380.00 + 200.00 + 699.50 + 850.00 = 3129.50
        3, dec("1380.00"), dec("200.00"), dec("699.50"), dec("850.00"), dec("0.00"), dec("3129.50"),
        2,  # C1 and C2 are overdue; C3 is soft-deleted (the LATE filter leaves it out)
        0, dec("0.00"), dec("0.00"),  # every due date served
    )]


def test_receivables_summary_counts_the_assumed_due_dates():
    # INV1 and INV5 lose their dueDate: the legal default, emit date + 30 days. INV1 (emitted 12-01) -> 12-31,
    # 31 days past due, 699.50 open; INV5 (emitted 01-03) -> 02-02, not yet due, 140.00 open.
    # assumed: 2 invoices, 699.50 + 140.00 = 839.50, of which 699.50 overdue; C2 is no longer overdue (INV5 was
    # its only overdue invoice): 1 overdue customer
    conn = duckdb.connect()
    load_fixture(conn)
    conn.execute("update invoicing_raw.documents set due_date = null, _absent_fields = 'dueDate' "
                 "where id in ('inv1', 'inv5')")
    build_models(conn, as_of=D)
    assert conn.execute("select overdue_customer_count, assumed_due_invoice_count, assumed_due_amount, "
                        "assumed_overdue_amount from marts.receivables_summary").fetchall() == [
        (1, 2, dec("839.50"), dec("699.50"))]
    conn.close()


def test_expected_payment_bases_as_of_d(at_d):
    # C2 has one invoice paid by D (INV4): fewer than 5, its invoices borrow from the portal: customer+portal,
    # INV5 140.00 + DEP1 1000.00 = 1140.00. C1 and C3 have none paid: the portal's median, INV1 699.50 + INV2
    # 380.00 + INV3B 850.00 + INV7 60.00 = 1989.50. No basis without an invoice has a row.
    assert at_d.execute("select basis, invoice_count, open_amount from marts.expected_payment_bases "
                        "order by basis").fetchall() == [
        ("customer+portal", 2, dec("1140.00")),
        ("portal", 4, dec("1989.50")),
    ]
