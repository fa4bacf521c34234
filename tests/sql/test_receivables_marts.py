"""marts.receivables, marts.receivables_by_customer, marts.overdue_customers on the hand-built portal.

Every expected figure below is worked out by hand from model_fixture.py's docstring.
"""

from datetime import date
from decimal import Decimal

from model_fixture import D, P, fetch

# Expected rows stay one tuple per row, so each can be read beside its arithmetic.
# fmt: off

RECEIVABLE_COLUMNS = (
    "invoice_id, reference, is_deposit, customer_id, customer_name, emit_date, due_date, total_incl_tax, "
    "paid_by_payments, settled_by_credit_notes, open_amount, days_past_due, aging_bucket, is_overdue, "
    "next_reminder_template"
)


def _receivables(conn) -> dict[str, tuple]:
    rows = conn.execute(f"select {RECEIVABLE_COLUMNS} from marts.receivables").fetchall()
    return {row[0]: row[1:] for row in rows}


def test_receivables_as_of_d(at_d):
    dec = Decimal
    assert _receivables(at_d) == {
        # 1200.00 - (300.00 + 200.50) = 699.50; 2026-01-31 - 2025-12-31 = 31 days -> 31-60; only a STANDARD mail
        "inv1": ("F-1", False, "c1", "Alpha", date(2025, 12, 1), date(2025, 12, 31), dec("1200.00"),
                 dec("500.50"), dec("0.00"), dec("699.50"), 31, "31-60", True, "RELAUNCH1"),
        # due on D: 0 days, not late; 500.00 - 120.00 credit note = 380.00; due within 0-7 days -> PRELAUNCH
        "inv2": ("F-2", False, "c1", "Alpha", date(2026, 1, 5), date(2026, 1, 31), dec("500.00"), dec("0.00"),
                 dec("120.00"), dec("380.00"), 0, "current", False, "PRELAUNCH"),
        # the live version 1.1 (850.00), not the CANCELED 1.0 (800.00); 1 + 31 + 30 = 62 days (Nov 30 -> Jan 31);
        # RELAUNCH1 already sent on 2026-01-20 -> RELAUNCH2
        "inv3b": ("F-3", False, "c1", "Alpha", date(2025, 11, 1), date(2025, 11, 30), dec("850.00"),
                  dec("0.00"), dec("0.00"), dec("850.00"), 62, "61-90", True, "RELAUNCH2"),
        # due the day before D: 1 day late; 300.00 - 160.00 (rest of the 400.00 overpayment on F-4) = 140.00
        "inv5": ("F-5", False, "c2", "Beta", date(2026, 1, 3), date(2026, 1, 30), dec("300.00"),
                 dec("160.00"), dec("0.00"), dec("140.00"), 1, "1-30", True, "RELAUNCH1"),
        # deposit invoice counts; due 2026-02-05: -5 days -> current, within 7 days -> PRELAUNCH
        "dep1": ("AC-1", True, "c2", "Beta", date(2026, 1, 20), date(2026, 2, 5), dec("1000.00"), dec("0.00"),
                 dec("0.00"), dec("1000.00"), -5, "current", False, "PRELAUNCH"),
        # soft-deleted customer's invoice is still a receivable: Jan 10 -> Jan 31 = 21 days
        "inv7": ("F-7", False, "c3", "Gamma", date(2025, 12, 10), date(2026, 1, 10), dec("60.00"),
                 dec("0.00"), dec("0.00"), dec("60.00"), 21, "1-30", True, "RELAUNCH1"),
        # absent: inv3 (CANCELED), cn1/cn2 (credit notes), pf1 (proforma), dr1/dr2 (drafts), q1 (quotation),
        # del1 (_deleted_at), inv4 (fully paid: 240.00 - 240.00 = 0)
    }


def test_receivables_as_of_a_past_date_ignore_later_payments_credits_and_mails(at_p):
    dec = Decimal
    assert _receivables(at_p) == {
        # only T1 (2025-12-15) counts; T2 is dated 2026-01-20: 1200.00 - 300.00 = 900.00; Dec 31 -> Jan 10 = 10
        "inv1": ("F-1", False, "c1", "Alpha", date(2025, 12, 1), date(2025, 12, 31), dec("1200.00"),
                 dec("300.00"), dec("0.00"), dec("900.00"), 10, "1-30", True, "RELAUNCH1"),
        # the credit note is dated 2026-01-15, after P: 500.00 open; Jan 31 is 21 days away -> STANDARD
        "inv2": ("F-2", False, "c1", "Alpha", date(2026, 1, 5), date(2026, 1, 31), dec("500.00"), dec("0.00"),
                 dec("0.00"), dec("500.00"), -21, "current", False, "STANDARD"),
        # Nov 30 -> Jan 10 = 41 days; the RELAUNCH1 mail of 2026-01-20 was not sent yet -> RELAUNCH1
        "inv3b": ("F-3", False, "c1", "Alpha", date(2025, 11, 1), date(2025, 11, 30), dec("850.00"),
                  dec("0.00"), dec("0.00"), dec("850.00"), 41, "31-60", True, "RELAUNCH1"),
        # PAID today, but its payment (2026-01-25) is after P: 240.00 open; Feb 15 is 36 days away
        "inv4": ("F-4", False, "c2", "Beta", date(2026, 1, 2), date(2026, 2, 15), dec("240.00"), dec("0.00"),
                 dec("0.00"), dec("240.00"), -36, "current", False, "STANDARD"),
        "inv5": ("F-5", False, "c2", "Beta", date(2026, 1, 3), date(2026, 1, 30), dec("300.00"), dec("0.00"),
                 dec("0.00"), dec("300.00"), -20, "current", False, "STANDARD"),
        # due on P itself: 0 days, not late, PRELAUNCH
        "inv7": ("F-7", False, "c3", "Gamma", date(2025, 12, 10), date(2026, 1, 10), dec("60.00"),
                 dec("0.00"), dec("0.00"), dec("60.00"), 0, "current", False, "PRELAUNCH"),
        # absent: dep1, emitted 2026-01-20, after P
    }


BY_CUSTOMER_COLUMNS = (
    "customer_id, customer_name, is_deleted, open_current, open_1_30, open_31_60, open_61_90, open_90_plus, "
    "total_open, overdue_amount, overdue_invoice_count, open_invoice_count, oldest_due_date, last_payment_date, "
    "unapplied_payments, unapplied_credit_notes"
)


def _by_customer(conn) -> dict[str, tuple]:
    rows = conn.execute(f"select {BY_CUSTOMER_COLUMNS} from marts.receivables_by_customer").fetchall()
    return {row[0]: row[1:] for row in rows}


def test_receivables_by_customer_as_of_d(at_d):
    dec = Decimal
    assert _by_customer(at_d) == {
        # current 380.00 (F-2); 31-60 699.50 (F-1); 61-90 850.00 (F-3); total 1929.50 = the API's dueAmount;
        # overdue 699.50 + 850.00 = 1549.50 over 2 invoices; T1 and T2 fully used: no unapplied payment;
        # CN1 120.00 applied for 120.00: no unapplied credit
        "c1": ("Alpha", False, dec("380.00"), dec("0.00"), dec("699.50"), dec("850.00"), dec("0.00"),
               dec("1929.50"), dec("1549.50"), 2, 3, date(2025, 11, 30), date(2026, 1, 20), dec("0.00"),
               dec("0.00")),
        # current 1000.00 (AC-1); 1-30 140.00 (F-5); total 1140.00; T3 400.00 - 240.00 - 160.00 = 0;
        # T4 75.00 - 0 used - 25.00 refunded = 50.00 unapplied; free credit note CN2 50.00 unapplied
        "c2": ("Beta", False, dec("1000.00"), dec("140.00"), dec("0.00"), dec("0.00"), dec("0.00"),
               dec("1140.00"), dec("140.00"), 1, 2, date(2026, 1, 30), date(2026, 1, 28), dec("50.00"),
               dec("50.00")),
        "c3": ("Gamma", True, dec("0.00"), dec("60.00"), dec("0.00"), dec("0.00"), dec("0.00"), dec("60.00"),
               dec("60.00"), 1, 1, date(2026, 1, 10), None, dec("0.00"), dec("0.00")),
        # absent: c4 (_deleted_at), c5 (nothing owed, nothing unapplied)
    }


def test_receivables_by_customer_as_of_a_past_date(at_p):
    dec = Decimal
    assert _by_customer(at_p) == {
        # current 500.00; 1-30 900.00; 31-60 850.00; total 2250.00; overdue 900.00 + 850.00 = 1750.00;
        # last payment T1 2025-12-15 23:30 UTC = 2025-12-16 00:30 in Paris, the portal's calendar; CN1 not
        # emitted yet
        "c1": ("Alpha", False, dec("500.00"), dec("900.00"), dec("850.00"), dec("0.00"), dec("0.00"),
               dec("2250.00"), dec("1750.00"), 2, 3, date(2025, 11, 30), date(2025, 12, 16), dec("0.00"),
               dec("0.00")),
        # 240.00 + 300.00 = 540.00 current, nothing late; no payment, no credit note yet (CN2 2026-01-12)
        "c2": ("Beta", False, dec("540.00"), dec("0.00"), dec("0.00"), dec("0.00"), dec("0.00"),
               dec("540.00"), dec("0.00"), 0, 2, date(2026, 1, 30), None, dec("0.00"), dec("0.00")),
        "c3": ("Gamma", True, dec("60.00"), dec("0.00"), dec("0.00"), dec("0.00"), dec("0.00"), dec("60.00"),
               dec("0.00"), 0, 1, date(2026, 1, 10), None, dec("0.00"), dec("0.00")),
    }


def test_open_totals_equal_the_api_due_amount_and_remaining_as_of_today(at_d):
    # D is the fixture's "today": the API's own figures (dueAmount, remaining) are the independent truth
    mismatches = fetch(
        at_d,
        """
        select c.customer_id, c.api_due_amount, coalesce(r.total_open, 0) as total_open
        from staging.stg_invoicing__customers c
        left join marts.receivables_by_customer r using (customer_id)
        where c.api_due_amount <> coalesce(r.total_open, 0)
    """,
    )
    assert mismatches == []
    assert (
        fetch(
            at_d,
            """
        select r.invoice_id from marts.receivables r join staging.stg_invoicing__documents d
            on d.document_id = r.invoice_id where r.open_amount <> d.api_remaining
    """,
        )
        == []
    )


OVERDUE_COLUMNS = (
    "customer_id, customer_name, email, phone, overdue_amount, overdue_invoice_count, total_open, "
    "oldest_overdue_invoice_id, oldest_overdue_reference, oldest_due_date, oldest_days_past_due, "
    "last_payment_date, next_reminder_template"
)


def test_overdue_customers_as_of_d(at_d):
    dec = Decimal
    rows = at_d.execute(f"select {OVERDUE_COLUMNS} from marts.overdue_customers order by customer_id").fetchall()
    assert rows == [
        # mobile before landline; oldest late invoice F-3 (due Nov 30, 62 days), already reminded -> RELAUNCH2
        ("c1", "Alpha", "pay@alpha.test", "0611111111", dec("1549.50"), 2, dec("1929.50"), "inv3b", "F-3",
         date(2025, 11, 30), 62, date(2026, 1, 20), "RELAUNCH2"),
        # no mobile: the landline; F-5 due yesterday is late (1 day), never reminded -> RELAUNCH1
        ("c2", "Beta", "compta@beta.test", "0122222222", dec("140.00"), 1, dec("1140.00"), "inv5", "F-5",
         date(2026, 1, 30), 1, date(2026, 1, 28), "RELAUNCH1"),
        # c3 has a late invoice but is deleted: the API's LATE filter ignores deleted customers
    ]


def test_overdue_customers_as_of_a_past_date(at_p):
    dec = Decimal
    rows = at_p.execute(f"select {OVERDUE_COLUMNS} from marts.overdue_customers order by customer_id").fetchall()
    assert rows == [
        # 900.00 + 850.00; the reminder of 2026-01-20 is after P -> RELAUNCH1; c2 had nothing late on P;
        # last payment T1 on 2025-12-16 in Paris (23:30 UTC on the 15th)
        ("c1", "Alpha", "pay@alpha.test", "0611111111", dec("1750.00"), 2, dec("2250.00"), "inv3b", "F-3",
         date(2025, 11, 30), 41, date(2025, 12, 16), "RELAUNCH1"),
    ]


def test_as_of_date_is_a_column_of_every_row(at_d, at_p):
    for conn, day in ((at_d, D), (at_p, P)):
        for mart in ("receivables", "receivables_by_customer", "overdue_customers"):
            assert {
                r[0] for r in conn.execute(f"select distinct as_of_date from marts.{mart}").fetchall()
            } == {day}
