"""The demo's headline figures through the product's own marts equal the independent computation from the
sandbox's records (harness/demo_figures.py): the default demo portal (seed 1, demo scale) synced over HTTP,
the models built as of the sandbox's today, then `marts.receivables`, `marts.overdue_customers` and
`marts.supplier_payables` give the same counts and amounts to the cent, inside issue 17's ranges."""

from datetime import UTC, datetime

import duckdb

from harness.demo_figures import demo_figures
from invoicing_warehouse.demo import DEFAULT_SCALE
from pipelines.invoicing.sync import make_pipeline, run_sync
from sandbox.clock import Clock
from sandbox.config import SandboxConfig
from sandbox.server import SandboxServer
from warehouse_engine.sql_runner import build_models

NOW = datetime(2026, 11, 24, 9, 30, tzinfo=UTC)  # the day tests/sandbox/test_demo_calibration.py checks


def test_demo_marts_give_the_independent_figures(tmp_path):
    clock = Clock(fixed=NOW)
    warehouse = tmp_path / "warehouse.duckdb"
    with SandboxServer(SandboxConfig(seed=1, scale=DEFAULT_SCALE, rate_limit_per_s=0), clock=clock) as sb:
        run_sync(
            make_pipeline(warehouse),
            base_url=sb.base_url,
            client_id=sb.client_id,
            client_secret=sb.client_secret,
            rate_limit_per_s=1000.0,
        )
        truth = demo_figures(sb.portal, clock.today().date())
    with duckdb.connect(str(warehouse)) as conn:
        build_models(conn, as_of=clock.today().date())
        owing, open_total, over_90 = conn.execute(
            "select count(distinct customer_id), sum(open_amount),"
            " coalesce(sum(open_amount) filter (where aging_bucket = '90+'), 0) from marts.receivables"
        ).fetchone()
        overdue = conn.execute("select count(*) from marts.overdue_customers").fetchone()[0]
        payables, past_due = conn.execute(
            "select count(*), count(*) filter (where is_overdue) from marts.supplier_payables"
        ).fetchone()
    assert (owing, overdue) == (truth.customers_with_open, truth.overdue_customers), truth.summary()
    assert (open_total, over_90) == (truth.open_total, truth.open_over_90_days), truth.summary()
    assert (payables, past_due) == (truth.payables, truth.payables_past_due), truth.summary()
    assert 0.15 <= overdue / owing <= 0.35, truth.summary()
    assert over_90 / open_total <= 0.10, truth.summary()
    assert past_due / payables <= 0.25, truth.summary()
