"""Each page of the dashboard, in Chromium, shows the marts of the readers' copy: read directly here with
DuckDB, they are the truth the displayed figures must equal (to the cent)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import duckdb
from dashboard_browser import eventually, metric, open_page, parse_eur, screenshot, table_rows

from invoicing_warehouse.dashboard.queries import DISPLAY_ROWS


def _rows(dashboard, sql: str, parameters=None) -> list[tuple]:
    with duckdb.connect(str(dashboard.snapshot), read_only=True) as connection:
        return connection.execute(sql, parameters or []).fetchall()


def test_receivables_page_equals_the_marts(dashboard, page, screenshots):
    open_page(page, dashboard.url, "", "overdue_customers")  # the default page is served at /
    [(open_total, overdue, dso)] = _rows(dashboard,
                                         "select open_receivables, overdue_receivables, dso_days from marts.dso")
    # marts.dso's open total is itself checked against the receivables, invoice by invoice
    assert _rows(dashboard, "select sum(open_amount) from marts.receivables") == [(open_total,)]
    assert parse_eur(metric(page, "Total open")) == open_total
    assert parse_eur(metric(page, "Overdue")) == overdue
    assert metric(page, "DSO (days)") == f"{dso:.1f}".replace(".", ",")

    aging = dict(_rows(dashboard, "select aging_bucket, sum(open_amount) from marts.receivables group by 1"))
    shown = table_rows(page, "aging", ["aging_bucket", "open_amount"])
    assert [bucket for bucket, _ in shown] == ["current", "1-30", "31-60", "61-90", "90+"]
    assert {bucket: parse_eur(amount) for bucket, amount in shown} == {
        bucket: aging.get(bucket, Decimal(0)) for bucket, _ in shown
    }

    overdue_list = _rows(
        dashboard,
        "select customer_reference, overdue_amount, next_reminder_template from marts.overdue_customers "
        "order by overdue_amount desc, customer_name, customer_id limit 20",
    )
    assert len(overdue_list) > 0, "no overdue customer: the list would prove little"
    shown = table_rows(page, "overdue_customers", ["customer_reference", "overdue_amount", "next_reminder_template"])
    assert [(ref, parse_eur(amount), template or None) for ref, amount, template in shown] == overdue_list
    assert metric(page, "Overdue customers") == str(_rows(dashboard,
                                                          "select count(*) from marts.overdue_customers")[0][0])

    # drill-down: the customer chosen by default (the most overdue) and then the third one of the list
    customers = _rows(
        dashboard,
        "select customer_id, coalesce(customer_name, customer_id), total_open from marts.receivables_by_customer "
        "where total_open > 0 order by overdue_amount desc, total_open desc, 2, customer_id",
    )
    for index in (0, 2):
        customer_id, name, _ = customers[index]
        if index:
            page.locator('[data-testid="stSelectbox"]').filter(has_text="Customer (those owing money").click()
            page.keyboard.type(name)  # the list opens on typing, filtered
            page.get_by_role("option").filter(has_text=f"{name} · ").first.click()
        expected = _rows(
            dashboard,
            "select reference, open_amount from marts.receivables where customer_id = ? "
            "order by due_date nulls last, reference, invoice_id",
            [customer_id],
        )
        shown = eventually(
            lambda: [(r, parse_eur(a)) for r, a in table_rows(page, "customer_invoices", ["reference", "open_amount"])],
            expected,
        )
        assert shown == expected
    screenshot(page, screenshots / "receivables.png")


def test_payables_page_equals_the_marts(dashboard, page, screenshots):
    open_page(page, dashboard.url, "payables", "payables_this_week")
    d = dashboard.as_of
    sunday = d + timedelta(days=6 - d.weekday())
    payables = _rows(
        dashboard,
        # a disputed bill is on hold: never "past due" (issue 42), whatever its age
        "select supplier_name, reference, due_date, amount_due, is_overdue and approval_state <> 'disputed' "
        "from marts.supplier_payables order by due_date, supplier_name, reference, supplier_document_id",
    )
    past_due = sum((amount for *_, amount, late in payables if late), Decimal(0))
    this_week = [(s, r, a) for s, r, due, a, _ in payables if due is not None and d <= due <= sunday]
    within_8_weeks = sum(
        (a for _, _, due, a, _ in payables if due is not None and d <= due <= sunday + timedelta(weeks=7)),
        Decimal(0),
    )
    assert any(late for *_, late in payables), "no payable past due: the check below would prove little"
    assert parse_eur(metric(page, "Past due")) == past_due
    assert parse_eur(metric(page, "Due this week")) == sum((a for *_, a in this_week), Decimal(0))
    assert parse_eur(metric(page, "Due in the next 8 weeks")) == within_8_weeks
    assert parse_eur(metric(page, "Total to pay")) == sum((p[3] for p in payables), Decimal(0))
    # every owed bill, split by approval state: the split read here, the same documents as the total
    states = dict(_rows(dashboard, "select approval_state, sum(amount_due) from marts.supplier_payables group by 1"))
    assert states.get("awaiting_approval") or states.get("disputed"), "only approved bills: the split proves little"
    for label, state in (("Approved", "approved"), ("Awaiting approval", "awaiting_approval"),
                         ("Disputed", "disputed")):
        assert parse_eur(metric(page, label)) == states.get(state, Decimal(0)), label
    shown = table_rows(page, "payables_this_week", ["supplier_name", "reference", "amount_due"])
    assert [(s, r, parse_eur(a)) for s, r, a in shown] == this_week[:DISPLAY_ROWS]  # the CSV holds them all
    shown_past_due = table_rows(page, "payables_past_due", ["reference", "amount_due"])
    assert [(r, parse_eur(a)) for r, a in shown_past_due] == [
        (r, a) for _, r, _, a, late in payables if late
    ][:DISPLAY_ROWS]
    schedule = dict(_rows(dashboard, "select week_start, total_amount from marts.payables_schedule"))
    weeks = table_rows(page, "payables_weeks", ["week_start", "total_amount"])
    assert len(weeks) == 8
    assert [parse_eur(total) for _, total in weeks] == [
        schedule.get(d - timedelta(days=d.weekday()) + timedelta(weeks=n), Decimal(0)) for n in range(8)
    ]
    suppliers = _rows(dashboard, "select supplier_name, total_due, approved_due, awaiting_approval_due, disputed_due "
                                 "from marts.payables_by_supplier order by total_due desc, supplier_name, supplier_id")
    shown = table_rows(page, "payables_by_supplier",
                       ["supplier_name", "total_due", "approved_due", "awaiting_approval_due", "disputed_due"])
    assert [(s, *map(parse_eur, amounts)) for s, *amounts in shown] == suppliers[:DISPLAY_ROWS]
    screenshot(page, screenshots / "payables.png")


def test_cash_outlook_page_equals_the_mart(dashboard, page, screenshots):
    open_page(page, dashboard.url, "cash_outlook", "cash_outlook")
    expected = _rows(
        dashboard,
        "select period_label, expected_inflows, expected_outflows, net_flow, cumulative_net "
        "from marts.cash_outlook order by period_index",
    )
    shown = table_rows(
        page, "cash_outlook", ["period_label", "expected_inflows", "expected_outflows", "net_flow", "cumulative_net"]
    )
    assert [(label, *map(parse_eur, amounts)) for label, *amounts in shown] == expected
    assert [row[0] for row in expected] == ["past due", *[f"week {n}" for n in range(1, 9)], "later"]
    screenshot(page, screenshots / "cash_outlook.png")


def test_freshness_page_shows_loads_snapshot_and_checks(dashboard, page, screenshots):
    open_page(page, dashboard.url, "freshness", "checks")  # the checks come last on the page
    counts = {
        table: _rows(dashboard, f'select count(*) from invoicing_raw."{table}"')[0][0]
        for table in ("customers", "documents", "supplier_documents", "transactions")
    }
    shown = dict(table_rows(page, "raw_tables", ["raw_table", "rows"]))
    assert {table: int(shown[table]) for table in counts} == counts
    assert counts["documents"] > 500
    checks = table_rows(page, "checks", ["check", "passed"])
    assert len(checks) > 20 and {passed for _, passed in checks} == {"yes"}
    assert page.get_by_text(f"All {len(checks)} checks pass.").count() == 1
    assert metric(page, "Snapshot published").endswith("ago")
    screenshot(page, screenshots / "freshness.png")
