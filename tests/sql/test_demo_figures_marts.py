"""The demo's headline figures through the product's own marts equal the independent computation from the
sandbox's records (harness/demo_figures.py): the default demo portal (seed 1, demo scale) synced over HTTP,
the models built as of the sandbox's today, then `marts.receivables`, `marts.overdue_customers` and
`marts.supplier_payables` give the same counts and amounts to the cent, inside issue 17's ranges (the payables
are every owed bill, approved, awaiting approval or disputed; the past-due share is that of the approved ones,
the bills the business agreed to pay)."""

from datetime import UTC, datetime

import duckdb

from harness.demo_figures import demo_figures
from harness.demo_warehouse import build_demo_warehouse
from invoicing_warehouse.demo.command import DEFAULT_SCALE

NOW = datetime(2026, 11, 24, 9, 30, tzinfo=UTC)  # the day tests/invoicing_sandbox/test_demo_calibration.py checks


def test_demo_marts_give_the_independent_figures(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    found = {}
    as_of = build_demo_warehouse(warehouse, seed=1, scale=DEFAULT_SCALE, now=NOW,
                                 while_serving=lambda sb: found.update(truth=demo_figures(sb.portal, NOW.date())))
    truth = found["truth"]
    assert as_of == NOW.date()
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        owing, open_total, over_90 = conn.execute(
            "select count(distinct customer_id), sum(open_amount),"
            " coalesce(sum(open_amount) filter (where aging_bucket = '90+'), 0) from marts.receivables"
        ).fetchone()
        overdue = conn.execute("select count(*) from marts.overdue_customers").fetchone()[0]
        payables, past_due, approved, approved_past_due = conn.execute(
            "select count(*), count(*) filter (where is_overdue), count(*) filter (where approval_state = 'approved'),"
            " count(*) filter (where is_overdue and approval_state = 'approved') from marts.supplier_payables"
        ).fetchone()
    assert (owing, overdue) == (truth.customers_with_open, truth.overdue_customers), truth.summary()
    assert (open_total, over_90) == (truth.open_total, truth.open_over_90_days), truth.summary()
    assert (payables, past_due) == (truth.payables, truth.payables_past_due), truth.summary()
    assert (approved, approved_past_due) == (truth.approved_payables, truth.approved_payables_past_due), truth.summary()
    assert 0.15 <= overdue / owing <= 0.35, truth.summary()
    assert over_90 / open_total <= 0.10, truth.summary()
    assert approved_past_due / approved <= 0.25, truth.summary()  # disputed bills wait on purpose
