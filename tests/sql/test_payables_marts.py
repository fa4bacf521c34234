"""marts.supplier_payables, marts.payables_by_supplier, marts.payables_schedule on the hand-built portal.

Supplier documents (model_fixture.py), D = 2026-01-31 (Sat), P = 2026-01-10 (Sat):
  sd1 S1 invoice 1200.00 approved, issued 2026-01-05, due 2026-02-04 (Wed, week of Mon 02-02)
  sd2 S1 invoice  600.00 approved, issued 2025-11-20, due 2025-12-20
  sd3 S1 creditNote 120.00 approved, issued 2026-01-10, due 2026-01-31 (week of Mon 01-26): counts -120.00
  sd4 S2 invoice  360.00 paid on 2026-01-20 (history: created approved 01-02, declarePayment 01-20), due 01-25
  sd5 S2 invoice  480.00 toApprove, issued 2026-01-25, due 2026-02-24 (Tue, week of Mon 02-23)
  sd6 S2 invoice   90.00 disputed on 2026-01-15 (history: created approved 01-03), due 2026-01-09
  sd7 S2 invoice  240.00 approved, issued 2026-01-20, no due date
  sd8 S2 invoice  150.00 paid, payment date 2026-01-15, no history, due 2026-01-14 (Wed, week of Mon 01-12)
  sd9 S2 approved 999.00 but deleted upstream (_deleted_at)
  sd10 S2 invoice 1500.50 approved, issued 2026-01-28, due 2026-03-02 (a Monday)

Every received bill is owed (sql/README.md, "Payables"): approved, awaiting approval (toApprove) and disputed
ones alike, told apart by approval_state; refused and paid ones are not.
"""

from datetime import date
from decimal import Decimal

import duckdb
from model_fixture import D, load_fixture

from harness.model_raw_tables import insert
from invoicing_warehouse.dashboard.queries import payables as payables_page
from invoicing_warehouse.engine.sql_runner import build_models

# Expected rows stay one tuple per row, so each can be read beside its arithmetic.
# fmt: off

dec = Decimal


PAYABLE_COLUMNS = (
    "supplier_document_id, supplier_id, supplier_name, reference, document_type, issue_date, due_date, "
    "amount_incl_tax, amount_due, days_until_due, days_past_due, aging_bucket, is_overdue, approval_state"
)


def _payables(conn) -> dict[str, tuple]:
    return {
        r[0]: r[1:] for r in conn.execute(f"select {PAYABLE_COLUMNS} from marts.supplier_payables").fetchall()
    }


def test_supplier_payables_as_of_d(at_d):
    assert _payables(at_d) == {
        "sd1": ("s1", "Fournil SA", "FA-1", "invoice", date(2026, 1, 5), date(2026, 2, 4), dec("1200.00"),
                dec("1200.00"), 4, -4, "current", False, "approved"),
        # Dec 20 -> Jan 31 = 11 + 31 = 42 days past due
        "sd2": ("s1", "Fournil SA", "FA-2", "invoice", date(2025, 11, 20), date(2025, 12, 20), dec("600.00"),
                dec("600.00"), -42, 42, "31-60", True, "approved"),
        # due on D: not overdue; a credit note lowers what is owed
        "sd3": ("s1", "Fournil SA", "AV-3", "creditNote", date(2026, 1, 10), date(2026, 1, 31), dec("120.00"),
                dec("-120.00"), 0, 0, "current", False, "approved"),
        # received, not yet approved: owed all the same; Jan 31 -> Feb 24 = 24 days to go
        "sd5": ("s2", "Gros SARL", "G-5", "invoice", date(2026, 1, 25), date(2026, 2, 24), dec("480.00"),
                dec("480.00"), 24, -24, "current", False, "awaiting_approval"),
        # disputed on 2026-01-15: owed until settled; Jan 9 -> Jan 31 = 22 days past due
        "sd6": ("s2", "Gros SARL", "G-6", "invoice", date(2026, 1, 3), date(2026, 1, 9), dec("90.00"),
                dec("90.00"), -22, 22, "1-30", True, "disputed"),
        # no due date served: the legal default of L441-10 I, issue date + 30 days = 02-19, 19 days to go
        "sd7": ("s2", "Gros SARL", "G-7", "invoice", date(2026, 1, 20), date(2026, 2, 19), dec("240.00"),
                dec("240.00"), 19, -19, "current", False, "approved"),
        "sd10": ("s2", "Gros SARL", "G-10", "invoice", date(2026, 1, 28), date(2026, 3, 2), dec("1500.50"),
                 dec("1500.50"), 30, -30, "current", False, "approved"),
        # absent: sd4, sd8 (paid), sd9 (deleted upstream)
    }


def test_supplier_payables_as_of_a_past_date_use_the_status_history(at_p):
    assert _payables(at_p) == {
        "sd1": ("s1", "Fournil SA", "FA-1", "invoice", date(2026, 1, 5), date(2026, 2, 4), dec("1200.00"),
                dec("1200.00"), 25, -25, "current", False, "approved"),
        # Dec 20 -> Jan 10 = 21 days
        "sd2": ("s1", "Fournil SA", "FA-2", "invoice", date(2025, 11, 20), date(2025, 12, 20), dec("600.00"),
                dec("600.00"), -21, 21, "1-30", True, "approved"),
        # issued on P itself: included
        "sd3": ("s1", "Fournil SA", "AV-3", "creditNote", date(2026, 1, 10), date(2026, 1, 31), dec("120.00"),
                dec("-120.00"), 21, -21, "current", False, "approved"),
        # paid on 2026-01-20, after P: the history says approved on P
        "sd4": ("s2", "Gros SARL", "G-4", "invoice", date(2026, 1, 2), date(2026, 1, 25), dec("360.00"),
                dec("360.00"), 15, -15, "current", False, "approved"),
        # disputed on 2026-01-15, after P: approved on P, and 1 day past due (Jan 9)
        "sd6": ("s2", "Gros SARL", "G-6", "invoice", date(2026, 1, 3), date(2026, 1, 9), dec("90.00"),
                dec("90.00"), -1, 1, "1-30", True, "approved"),
        # no history, paid with payment date 2026-01-15 > P: approved on P
        "sd8": ("s2", "Gros SARL", "G-8", "invoice", date(2025, 12, 15), date(2026, 1, 14), dec("150.00"),
                dec("150.00"), 4, -4, "current", False, "approved"),
        # absent: sd5, sd7 and sd10 (issued after P), sd9
    }


BY_SUPPLIER_COLUMNS = (
    "supplier_id, supplier_name, legal_identifier, due_current, due_1_30, due_31_60, due_61_90, due_90_plus, "
    "total_due, overdue_amount, overdue_document_count, document_count, oldest_due_date, next_due_date, "
    "approved_due, awaiting_approval_due, disputed_due, awaiting_approval_document_count, disputed_document_count"
)


def _by_supplier(conn) -> dict[str, tuple]:
    rows = conn.execute(f"select {BY_SUPPLIER_COLUMNS} from marts.payables_by_supplier").fetchall()
    return {r[0]: r[1:] for r in rows}


def test_payables_by_supplier_as_of_d(at_d):
    assert _by_supplier(at_d) == {
        # current 1200.00 - 120.00 = 1080.00; 31-60 600.00; total 1680.00; next due: sd3 on Jan 31
        "s1": ("Fournil SA", "11111111100011", dec("1080.00"), dec("0.00"), dec("600.00"), dec("0.00"),
               dec("0.00"), dec("1680.00"), dec("600.00"), 1, 3, date(2025, 12, 20), date(2026, 1, 31),
               dec("1680.00"), dec("0.00"), dec("0.00"), 0, 0),
        # current 240.00 + 1500.50 + 480.00 (sd5) = 2220.50; 1-30 90.00 (sd6); total 2310.50, of which approved
        # 240.00 + 1500.50 = 1740.50, awaiting approval 480.00, disputed 90.00; oldest due sd6 on Jan 9, next sd5
        # on Feb 19 (sd7, its due date assumed: issue date 01-20 + 30 days, L441-10 I)
        "s2": ("Gros SARL", "22222222200022", dec("2220.50"), dec("90.00"), dec("0.00"), dec("0.00"),
               dec("0.00"), dec("2310.50"), dec("90.00"), 1, 4, date(2026, 1, 9), date(2026, 2, 19),
               dec("1740.50"), dec("480.00"), dec("90.00"), 1, 1),
    }


def test_payables_by_supplier_as_of_a_past_date(at_p):
    assert _by_supplier(at_p) == {
        "s1": ("Fournil SA", "11111111100011", dec("1080.00"), dec("600.00"), dec("0.00"), dec("0.00"),
               dec("0.00"), dec("1680.00"), dec("600.00"), 1, 3, date(2025, 12, 20), date(2026, 1, 31),
               dec("1680.00"), dec("0.00"), dec("0.00"), 0, 0),
        # current 360.00 + 150.00 = 510.00; 1-30 90.00; total 600.00; next due sd8 on Jan 14; sd6 was still
        # approved on P (disputed on Jan 15)
        "s2": ("Gros SARL", "22222222200022", dec("510.00"), dec("90.00"), dec("0.00"), dec("0.00"),
               dec("0.00"), dec("600.00"), dec("90.00"), 1, 3, date(2026, 1, 9), date(2026, 1, 14),
               dec("600.00"), dec("0.00"), dec("0.00"), 0, 0),
    }


SCHEDULE_COLUMNS = (
    "week_start, week_end, overdue_amount, undated_amount, falling_due_amount, total_amount, document_count, "
    "cumulative_amount, awaiting_approval_amount, disputed_amount"
)


def test_payables_schedule_as_of_d(at_d):
    rows = at_d.execute(
        f"select {SCHEDULE_COLUMNS} from marts.payables_schedule order by week_start"
    ).fetchall()
    assert rows == [
        # week of D (Mon 01-26): overdue sd2 600.00; sd6 90.00 disputed, past due but on hold (disputed only);
        # sd3 -120.00 due on D -> 570.00
        (date(2026, 1, 26), date(2026, 2, 1), dec("600.00"), dec("0.00"), dec("-120.00"), dec("570.00"), 3,
         dec("570.00"), dec("0.00"), dec("90.00")),
        (date(2026, 2, 2), date(2026, 2, 8), dec("0.00"), dec("0.00"), dec("1200.00"), dec("1200.00"), 1,
         dec("1770.00"), dec("0.00"), dec("0.00")),
        # sd7 without a due date: issue date 01-20 + 30 days = Thursday 02-19 (L441-10 I, assumed)
        (date(2026, 2, 16), date(2026, 2, 22), dec("0.00"), dec("0.00"), dec("240.00"), dec("240.00"), 1,
         dec("2010.00"), dec("0.00"), dec("0.00")),
        # sd5 (awaiting approval) due Tuesday 02-24
        (date(2026, 2, 23), date(2026, 3, 1), dec("0.00"), dec("0.00"), dec("480.00"), dec("480.00"), 1,
         dec("2490.00"), dec("480.00"), dec("0.00")),
        # 2490.00 + 1500.50 = 3990.50 = 1680.00 + 2310.50
        (date(2026, 3, 2), date(2026, 3, 8), dec("0.00"), dec("0.00"), dec("1500.50"), dec("1500.50"), 1,
         dec("3990.50"), dec("0.00"), dec("0.00")),
    ]


def test_payables_schedule_as_of_a_past_date(at_p):
    rows = at_p.execute(
        f"select {SCHEDULE_COLUMNS} from marts.payables_schedule order by week_start"
    ).fetchall()
    assert rows == [
        # week of P (Mon 01-05): overdue sd2 600.00 + sd6 90.00
        (date(2026, 1, 5), date(2026, 1, 11), dec("690.00"), dec("0.00"), dec("0.00"), dec("690.00"), 2,
         dec("690.00"), dec("0.00"), dec("0.00")),
        (date(2026, 1, 12), date(2026, 1, 18), dec("0.00"), dec("0.00"), dec("150.00"), dec("150.00"), 1,
         dec("840.00"), dec("0.00"), dec("0.00")),
        # sd4 due Sunday 01-25 belongs to the week of Monday 01-19
        (date(2026, 1, 19), date(2026, 1, 25), dec("0.00"), dec("0.00"), dec("360.00"), dec("360.00"), 1,
         dec("1200.00"), dec("0.00"), dec("0.00")),
        (date(2026, 1, 26), date(2026, 2, 1), dec("0.00"), dec("0.00"), dec("-120.00"), dec("-120.00"), 1,
         dec("1080.00"), dec("0.00"), dec("0.00")),
        # 1080.00 + 1200.00 = 2280.00 = 1680.00 + 600.00
        (date(2026, 2, 2), date(2026, 2, 8), dec("0.00"), dec("0.00"), dec("1200.00"), dec("1200.00"), 1,
         dec("2280.00"), dec("0.00"), dec("0.00")),
    ]


def test_a_document_without_amount_vat_counts_amount_plus_vat():
    conn = duckdb.connect()
    load_fixture(conn)
    insert(
        conn,
        "supplier_documents",
        [
            {
                "id": "sd11",
                "supplier_id": "s1",
                "reference": "FA-11",
                "type": "invoice",
                "status": "approved",
                "issue_date": "2026-01-20T00:00:00Z",
                "due_date": "2026-02-04T00:00:00Z",
                "amount": "100.00",
                "vat": "20.00",
                "last_update": "2026-01-20T10:00:00Z",
            },
            {
                "id": "sd12",
                "supplier_id": "s1",
                "reference": "FA-12",
                "type": "invoice",
                "status": "approved",
                "issue_date": "2026-01-20T00:00:00Z",
                "due_date": "2026-02-04T00:00:00Z",
                "last_update": "2026-01-20T10:00:00Z",
            },
        ],
    )
    build_models(conn, as_of=D)
    rows = conn.execute("""select supplier_document_id, amount_incl_tax, amount_due from marts.supplier_payables
                           where supplier_document_id in ('sd11', 'sd12') order by 1""").fetchall()
    # 100.00 + 20.00 = 120.00; no amount at all: listed, counting 0
    assert rows == [("sd11", dec("120.00"), dec("120.00")), ("sd12", None, dec("0.00"))]
    # S1: 1680.00 (test_payables_by_supplier_as_of_d) + 120.00; week of 02-02: 1200.00 + 120.00
    assert conn.execute(
        "select total_due, document_count from marts.payables_by_supplier where supplier_id = 's1'"
    ).fetchone() == (dec("1800.00"), 5)
    assert conn.execute(
        "select total_amount from marts.payables_schedule where week_start = date '2026-02-02'"
    ).fetchone() == (dec("1320.00"),)
    conn.close()


def test_the_payables_page_figures_split_the_total_by_approval_state(at_d):
    # dashboard.queries.payables, what the Payables page shows, on the fixture as of D: approved S1 1680.00 +
    # S2 1740.50 = 3420.50; awaiting approval sd5 480.00; disputed sd6 90.00; total 3990.50 (the schedule's)
    figures = payables_page(at_d, "default")
    assert (figures.total, figures.approved, figures.awaiting_approval, figures.disputed) == (
        dec("3990.50"), dec("3420.50"), dec("480.00"), dec("90.00")
    )
    assert list(figures.by_supplier.rows["awaiting_approval_due"]) == [dec("480.00"), dec("0.00")]


def test_a_late_supplier_bill_without_a_due_date_is_due_30_days_after_issue_and_flagged():
    # sd13 S1 invoice 720.00 approved, issued 2025-11-20, no due date served: L441-10 I's default, issue date + 30
    # days = 12-20 (10 days of November + 20), assumed; on D = 2026-01-31 it is 11 + 31 = 42 days past due, 31-60,
    # as the customer side treats an invoice without a due date, never "current" for want of a date.
    # The received side of the D441-6 table then holds in 31-60 sd2 (600.00, due 12-20, 42 days) and sd13: 2 bills,
    # 1320.00, 1 with an assumed due date (row (C) says "legal" for it).
    conn = duckdb.connect()
    load_fixture(conn)
    insert(conn, "supplier_documents", [{
        "id": "sd13", "supplier_id": "s1", "reference": "FA-13", "type": "invoice", "status": "approved",
        "issue_date": "2025-11-20T00:00:00Z", "amount": "600.00", "amount_vat": "720.00",
        "last_update": "2025-11-20T10:00:00Z"}])
    build_models(conn, as_of=D)
    assert conn.execute(
        "select due_date, is_due_date_assumed, days_past_due, aging_bucket, is_overdue, amount_due"
        " from marts.supplier_payables where supplier_document_id = 'sd13'").fetchall() == [
        (date(2025, 12, 20), True, 42, "31-60", True, dec("720.00"))]
    assert conn.execute(
        "select invoice_count, amount_incl_tax, assumed_due_date_count from marts.payment_terms_report"
        " where side = 'received' and delay_bucket = '31-60'").fetchall() == [(2, dec("1320.00"), 1)]
    conn.close()
