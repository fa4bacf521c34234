"""marts.dso and marts.cash_outlook on the hand-built portal (model_fixture.py).

Every expected figure below is worked out by hand from model_fixture.py's docstring and the supplier
documents of test_payables_marts.py (D = Saturday 2026-01-31, P = Saturday 2026-01-10).
"""

from datetime import date
from decimal import Decimal

from model_fixture import D, P

dec = Decimal
# fmt: off

DSO_COLUMNS = (
    "as_of_date, window_start, window_end, open_receivables, overdue_receivables, open_invoice_count, "
    "unapplied_credit_notes, unapplied_payments, credit_deducted, credit_balances_owed, net_receivables, "
    "invoiced_last_90_days, invoice_count_last_90_days, credit_notes_last_90_days, credit_note_count_last_90_days, "
    "net_sales_last_90_days, net_sales_last_12_months, dso_days, net_dso_days, count_back_dso_days, "
    "annual_dso_days_360, portal_id"
)
OUTLOOK_COLUMNS = (
    "period_index, period_label, week_start, week_end, expected_inflows, expected_outflows, net_flow, "
    "cumulative_net, receivable_count, payable_count, open_receivables, credit_deducted, credit_balances_owed, "
    "disputed_outflows"
)


def test_dso_as_of_d(at_d):
    # window 2025-11-03 .. 2026-01-31 (90 days): inv1 1200 + inv2 500 + inv4 240 (PAID counts: it was sold)
    # + inv5 300 + dep1 1000 + inv7 60 = 3300.00 over 6 invoices; inv3b (emitted 2025-11-01) is outside;
    # open: 699.50 + 380 + 850 + 140 + 1000 + 60 = 3129.50, overdue 699.50 + 850 + 140 + 60 = 1749.50;
    # credit notes emitted in the window: CN1 120 (2026-01-15) + CN2 50 (2026-01-12) = 170, net sales 3130.00;
    # headline (gross): 3129.50 / 3300 x 90 = 85.35 -> 85.4.
    # net: unapplied on D: C2's CN2 50 (CN1 went in full on INV2) and T4's 75 - 25 refunded = 50, both C2's, who
    # owes 1140: 100 deducted, nothing owed back; 3129.50 - 100 = 3029.50; 3029.50 / 3130 x 90 = 87.11 -> 87.1.
    # count-back: January (31 days) INV2 500 + INV4 240 + INV5 300 + DEP1 1000 = 2040 -> 1089.50 left; December
    # (31 days) INV1 1200 + INV7 60 = 1260 covers it: 31 + 1089.50 / 1260 x 31 = 57.805 -> 57.8.
    # annual: 2025-02-01..2026-01-31 sales 3300 + INV3B 850 = 4150 - 170 = 3980; 3029.50 / 3980 x 360 = 274.0
    assert at_d.execute(f"select {DSO_COLUMNS} from marts.dso").fetchall() == [
        (D, date(2025, 11, 3), D, dec("3129.50"), dec("1749.50"), 6, dec("50.00"), dec("50.00"), dec("100.00"),
         dec("0.00"), dec("3029.50"), dec("3300.00"), 6, dec("170.00"), 2, dec("3130.00"), dec("3980.00"),
         dec("85.4"), dec("87.1"), dec("57.8"), dec("274.0"), "default"),
    ]


def test_dso_as_of_a_past_date(at_p):
    # window 2025-10-13 .. 2026-01-10: inv1 1200 + inv2 500 + inv3b 850 + inv4 240 + inv5 300 + inv7 60 = 3150;
    # dep1 (2026-01-20) not yet; open on P: 900 + 500 + 850 + 240 + 300 + 60 = 2850, overdue 900 + 850 = 1750;
    # no credit note emitted yet (CN1 01-15, CN2 01-12), no payment unused: nothing to net;
    # 2850 / 3150 x 90 = 81.43 -> 81.4 both gross and net.
    # count-back: 12-11..01-10 (31 days) INV2 500 + INV4 240 + INV5 300 = 1040 -> 1810 left; 11-11..12-10 (30 days)
    # INV1 1200 + INV7 60 = 1260 -> 550 left; 10-11..11-10 (31 days) INV3B 850: 31 + 30 + 550 / 850 x 31 = 81.06
    # annual: 2025-01-11..2026-01-10 sales 3150; 2850 / 3150 x 360 = 325.7
    assert at_p.execute(f"select {DSO_COLUMNS} from marts.dso").fetchall() == [
        (P, date(2025, 10, 13), P, dec("2850.00"), dec("1750.00"), 6, dec("0.00"), dec("0.00"), dec("0.00"),
         dec("0.00"), dec("2850.00"), dec("3150.00"), 6, dec("0.00"), 0, dec("3150.00"), dec("3150.00"),
         dec("81.4"), dec("81.4"), dec("81.1"), dec("325.7"), "default"),
    ]


def _outlook(conn) -> list[tuple]:
    return conn.execute(f"select {OUTLOOK_COLUMNS} from marts.cash_outlook order by period_index").fetchall()


def _week(n: int, monday: date, sunday: date, inflows, outflows, net, cumulative, receivables, payables,
          open_receivables=None, credit_deducted="0", credit_owed="0", disputed="0"):
    return (n, f"week {n}", monday, sunday, dec(inflows), dec(outflows), dec(net), dec(cumulative), receivables,
            payables, dec(open_receivables or inflows), dec(credit_deducted), dec(credit_owed), dec(disputed))


def test_cash_outlook_as_of_d(at_d):
    # D's week starts Monday 2026-01-26. in (open): past due inv1 699.50 + inv3b 850 + inv5 140 + inv7 60 = 1749.50;
    # inv2 380 due on D itself (week 1); dep1 1000 due 02-05 (week 2). C2 holds CN2 50 unapplied and T4's 50 unused
    # (75 - 25 refunded): 100 deducted from C2's oldest due invoice, inv5 (140 -> 40): past due inflows 1649.50.
    # out: sd2 600 past due (approved); the disputed sd6 90 (due 01-09) is on hold, outside the outflows; sd3 credit
    # note -120 due on D (week 1); sd1 1200 due 02-04 (week 2); sd7 240 without a due date, issued 01-20: due
    # 01-20 + 30 = 02-19 (L441-10 I, week 4); sd5 480 awaiting approval due 02-24 (week 5); sd10 1500.50 due 03-02
    # (week 6). no customer's credit exceeds what it owes: nothing owed back.
    assert _outlook(at_d) == [
        (0, "past due", None, None, dec("1649.50"), dec("600.00"), dec("1049.50"), dec("1049.50"), 4, 1,
         dec("1749.50"), dec("100.00"), dec("0"), dec("90.00")),
        _week(1, date(2026, 1, 26), date(2026, 2, 1), "380.00", "-120.00", "500.00", "1549.50", 1, 1),
        _week(2, date(2026, 2, 2), date(2026, 2, 8), "1000.00", "1200.00", "-200.00", "1349.50", 1, 1),
        _week(3, date(2026, 2, 9), date(2026, 2, 15), "0", "0", "0", "1349.50", 0, 0),
        _week(4, date(2026, 2, 16), date(2026, 2, 22), "0", "240.00", "-240.00", "1109.50", 0, 1),
        _week(5, date(2026, 2, 23), date(2026, 3, 1), "0", "480.00", "-480.00", "629.50", 0, 1),
        _week(6, date(2026, 3, 2), date(2026, 3, 8), "0", "1500.50", "-1500.50", "-871.00", 0, 1),
        _week(7, date(2026, 3, 9), date(2026, 3, 15), "0", "0", "0", "-871.00", 0, 0),
        _week(8, date(2026, 3, 16), date(2026, 3, 22), "0", "0", "0", "-871.00", 0, 0),
        (9, "later", None, None, dec("0"), dec("0"), dec("0"), dec("-871.00"), 0, 0, dec("0"), dec("0"), dec("0"),
         dec("0")),
    ]


def test_cash_outlook_as_of_a_past_date(at_p):
    # P's week starts Monday 2026-01-05. in: past due inv1 900 + inv3b 850; inv7 60 due on P (week 1); inv5 300
    # and inv2 500 due 01-30/01-31 (week 4); inv4 240 due 02-15 (week 6); no credit note nor unused payment yet.
    # out: sd2 600 + sd6 90 past due (sd6 not yet disputed on P); sd8 150 due 01-14 (week 2); sd4 360 due 01-25
    # (week 3); sd3 -120 due 01-31 (week 4); sd1 1200 (week 5); sd7 is issued after P.
    assert _outlook(at_p) == [
        (0, "past due", None, None, dec("1750.00"), dec("690.00"), dec("1060.00"), dec("1060.00"), 2, 2,
         dec("1750.00"), dec("0"), dec("0"), dec("0")),
        _week(1, date(2026, 1, 5), date(2026, 1, 11), "60.00", "0", "60.00", "1120.00", 1, 0),
        _week(2, date(2026, 1, 12), date(2026, 1, 18), "0", "150.00", "-150.00", "970.00", 0, 1),
        _week(3, date(2026, 1, 19), date(2026, 1, 25), "0", "360.00", "-360.00", "610.00", 0, 1),
        _week(4, date(2026, 1, 26), date(2026, 2, 1), "800.00", "-120.00", "920.00", "1530.00", 2, 1),
        _week(5, date(2026, 2, 2), date(2026, 2, 8), "0", "1200.00", "-1200.00", "330.00", 0, 1),
        _week(6, date(2026, 2, 9), date(2026, 2, 15), "240.00", "0", "240.00", "570.00", 1, 0),
        _week(7, date(2026, 2, 16), date(2026, 2, 22), "0", "0", "0", "570.00", 0, 0),
        _week(8, date(2026, 2, 23), date(2026, 3, 1), "0", "0", "0", "570.00", 0, 0),
        (9, "later", None, None, dec("0"), dec("0"), dec("0"), dec("570.00"), 0, 0, dec("0"), dec("0"), dec("0"),
         dec("0")),
    ]
