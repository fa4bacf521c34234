"""Two portals in one warehouse whose ids collide (two sandboxes of the same seed, one of them changed through
its API before the sync): every mart read per portal equals that portal's own truth (the API's figures,
harness/marts_truth.py, and the sandbox's own invoices and owed supplier documents), and no row mixes portals."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import duckdb
import httpx

from harness.marts_truth import compare_marts, sandbox_payables
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.sql_runner import build_models
from pipelines.invoicing.load.sync import make_pipeline, run_sync

SEED, SCALE = 7, 100
START = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
MARTS = ("receivables", "receivables_by_customer", "overdue_customers", "supplier_payables",
         "payables_by_supplier", "payables_schedule")


def open_invoices(sb: SandboxServer) -> dict[str, Decimal]:
    """invoice id -> remaining, for the sandbox's open invoices (what marts.receivables lists as of today)."""
    return {d["id"]: Decimal(str(d["remaining"])) for d in sb.portal.snapshot("documents")
            if d["type"] == "INVOICE" and d["subtype"] in (None, "DEPOSIT") and d["status"] == "VALIDATED"
            and d["remaining"] > 0}


def pay_some(sb: SandboxServer, invoice_ids: list[str]) -> None:
    """Pays these invoices in full through the API: the second portal's figures then differ from the first's."""
    headers = {"Authorization": f"Bearer {sb.token('read write')}"}
    with httpx.Client(base_url=sb.base_url + "/", headers=headers, timeout=10.0, trust_env=False) as api:
        for invoice_id in invoice_ids:
            api.post(f"documents/{invoice_id}/payment", json={}).raise_for_status()


def test_marts_per_portal_equal_each_portal_s_truth_and_never_mix(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    config = SandboxConfig(seed=SEED, scale=SCALE, rate_limit_per_s=0)
    beta_clock = Clock(fixed=START)
    with SandboxServer(config, clock=Clock(fixed=START)) as acme, SandboxServer(config, clock=beta_clock) as beta:
        assert open_invoices(acme) == open_invoices(beta)  # same seed: the same ids and figures
        # the 4 most recent (ids grow with time): invoices not yet due, so that beta keeps its overdue
        # customers (the realistic demo data has few overdue invoices, issue 17) and every mart has both portals
        paid = sorted(open_invoices(beta))[-4:]
        pay_some(beta, paid)
        beta_clock.advance(timedelta(minutes=1))  # past the windows' lag: the payments are synced
        truth = {"acme": acme, "beta": beta}
        assert open_invoices(acme).keys() - open_invoices(beta).keys() == set(paid)
        for name, sb in truth.items():
            run_sync(make_pipeline(warehouse, name), base_url=sb.base_url, client_id=sb.client_id,
                     client_secret=sb.client_secret, rate_limit_per_s=0)
        with duckdb.connect(str(warehouse)) as conn:
            build_models(conn, as_of=START.date())
            for name, sb in truth.items():
                result = compare_marts(conn, sb, portal_id=name)
                assert result.mismatches == [], (name, result.summary())
                receivables = dict(conn.execute(
                    "select invoice_id, open_amount from marts.receivables where portal_id = ?", [name]).fetchall())
                assert receivables == open_invoices(sb), name
                payables = conn.execute(
                    "select supplier_document_id, supplier_id, approval_state, amount_due, due_date "
                    "from marts.supplier_payables where portal_id = ?", [name]).fetchall()
                assert {row[0]: row[1:] for row in payables} == sandbox_payables(sb, START.date())
                assert payables, "no payable: the comparison would prove little"
            # the colliding ids: both portals hold the same supplier documents, each once per portal
            for mart in MARTS:
                portals = {row[0] for row in conn.execute(f"select distinct portal_id from marts.{mart}").fetchall()}
                assert portals == {"acme", "beta"}, mart
            schedule = conn.execute("select portal_id, sum(total_amount), max(cumulative_amount) "
                                    "from marts.payables_schedule group by 1").fetchall()
            for _, total, cumulative in schedule:  # the running total restarts per portal
                assert total == cumulative
            per_portal_open = dict(conn.execute(
                "select portal_id, sum(total_open) from marts.receivables_by_customer group by 1").fetchall())
            assert per_portal_open["acme"] - per_portal_open["beta"] == sum(open_invoices(acme)[i] for i in paid)
