"""A list fails alone (issue 40, point 3), through the CLI over real HTTP against the sandbox, on both profiles.

- One list whose every request fails (sandbox switch `failing_lists`: a 503 the client retries and gives up on,
  or a 404): the run loads the other lists, holds only the marts built on the failed one at their last good
  figures, publishes the rest and exits 3 ("partial"), naming what it held; the failed list's cursor stays
  where it was, the others' advance; the next run reads it again and heals (exit 0, every table exact).
- A subscriptions list that ignores `limit`/`skip` while its subscriptions change between requests (sandbox
  switches `paging_params_ignored_on`, `subscriptions_churn_every`, `webhooks_listed_to_read_scope`): read as
  one answer with a degraded note; it feeds no mart, so the run exits 0 and publishes.

Truth: the sandbox's own records (harness/warehouse_truth.py `mismatches`), the marts' own report dates (a held
mart keeps the date of its last good build), the readers' copy, and the dlt state the sync committed.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from harness.common import quiet
from harness.warehouse_truth import COMPARED, mismatches
from invoicing_sandbox.contract import ContractProfile
from invoicing_warehouse.cli import main
from invoicing_warehouse.dashboard.gate_banner import banner_lines
from invoicing_warehouse.dashboard.source import Source
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import failed_read_marts, held_marts, record_reads
from invoicing_warehouse.runs.gate_state import load
from pipelines.invoicing.load.sync import committed_state, make_pipeline

FAILED_TABLES = ("supplier_documents", "supplier_document_events")
OTHER_TABLES = tuple(table for table in COMPARED if table not in FAILED_TABLES)
# read from the models' SQL (sql/marts): built on the supplier documents, or not at all
PAYABLES = {"marts.supplier_payables", "marts.payables_by_supplier", "marts.payables_schedule", "marts.cash_outlook"}
RECEIVABLES = {"marts.receivables", "marts.receivables_by_customer", "marts.overdue_customers", "marts.dso",
               "marts.payment_history"}


@pytest.fixture
def cli_env(monkeypatch):
    """Points the CLI at a sandbox (its settings the dlt way, as a user sets them)."""

    def point_at(sandbox) -> None:
        monkeypatch.setenv("SOURCES__INVOICING__BASE_URL", sandbox.base_url)
        monkeypatch.setenv("SOURCES__INVOICING__CLIENT_ID", sandbox.client_id)
        monkeypatch.setenv("SOURCES__INVOICING__CLIENT_SECRET", sandbox.client_secret)

    return point_at


def _sync_and_build(warehouse: Path) -> int:
    """`sync --follow` for its first regular sync only: synced, every model built, published through the gate."""
    return main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0", "--follow", "--max-seconds", "0",
                 "--poll-s", "0.2"])


def _cursors(warehouse: Path) -> dict[str, str | None]:
    resources = committed_state(make_pipeline(warehouse)).get("resources", {})
    return {name: state.get("cursor") for name, state in resources.items()}


def _report_dates(warehouse: Path) -> dict[str, object]:
    reader = Source(warehouse).connect()
    try:
        return dict(reader.execute(
            "select 'cash_outlook', max(as_of_date) from marts.cash_outlook "
            "union all select 'dso', max(as_of_date) from marts.dso").fetchall())
    finally:
        reader.close()


@pytest.mark.parametrize(("contract", "status"), [("default", 503), ("strict", 404)])
def test_a_list_that_fails_holds_only_its_marts_publishes_the_rest_and_heals(sandbox_factory, cli_env, tmp_path,
                                                                             capsys, contract, status):
    sandbox = sandbox_factory(seed=23, scale=40, rate_limit_per_s=0, contract=ContractProfile.named(contract))
    cli_env(sandbox)
    warehouse = tmp_path / "warehouse.duckdb"
    target = WarehouseTarget.duckdb_file(warehouse)
    quiet(sandbox)
    assert main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0"]) == 0
    past = sandbox.clock.today().date() - timedelta(days=7)  # a report date the portal has figures for
    assert main(["models", "--warehouse", str(warehouse), "--as-of", past.isoformat()]) == 0
    before = _cursors(warehouse)
    capsys.readouterr()

    # a change on each side, then every request of GET /supplier-documents fails
    sandbox.portal.create("customers", {"name": "Partielle SARL"})
    tagged = sandbox.portal.snapshot("supplier_documents")[0]["id"]
    sandbox.portal.tag_supplier_document(tagged, ["read-after-the-failure"])
    sandbox.config.failing_lists = (("/supplier-documents", status),)
    quiet(sandbox)
    assert _sync_and_build(warehouse) == 3  # partial: distinct from 1 (failed, held) and 0
    err = capsys.readouterr().err
    assert "read failed since" in err and f"GET /supplier-documents: HTTP {status}" in err, err
    held = set(load(target).held_marts)
    assert f"sync: partial: {len(held)} mart(s) held" in err, err
    assert PAYABLES <= held and not held & RECEIVABLES, held
    dates = _report_dates(warehouse)  # the readers' copy
    assert dates["cash_outlook"] == past  # built on the supplier documents: its last good figures
    assert dates["dso"] not in (past, None)  # receivables only: rebuilt and published
    # the other lists were read whole (the new customer included); the failed one was not read at all
    assert mismatches(warehouse, sandbox.portal, tables=OTHER_TABLES, contract=contract) == []
    assert mismatches(warehouse, sandbox.portal, tables=("supplier_documents",), contract=contract) != []
    after = _cursors(warehouse)
    assert after["supplier_documents"] == before["supplier_documents"]  # the failed list's cursor stays
    assert after["customers"] > before["customers"]  # the others' advance

    # the server mends: the next run reads the list again, incrementally, and every figure is published
    sandbox.config.failing_lists = ()
    quiet(sandbox)
    assert _sync_and_build(warehouse) == 0
    assert mismatches(warehouse, sandbox.portal, contract=contract) == []
    assert load(target).held_marts == {} and load(target).degraded_reads == {}
    assert banner_lines(target) == []
    assert _report_dates(warehouse)["cash_outlook"] not in (past, None)


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_churning_subscriptions_list_that_ignores_paging_does_not_fail_the_run(sandbox_factory, cli_env, tmp_path,
                                                                                 capsys, contract):
    profile = replace(ContractProfile.named(contract), paging_params_ignored_on=("webhooks",),
                      subscriptions_churn_every=2, webhooks_listed_to_read_scope=True)
    sandbox = sandbox_factory(seed=23, scale=40, rate_limit_per_s=0, contract=profile)
    for number in range(25):  # more than the default page (20) that an ignored `limit` answers
        sandbox.portal.create("webhooks", {"url": f"http://127.0.0.1:9/hooks/{number}",
                                           "events": ["customer.created"], "enabled": False})
    cli_env(sandbox)
    warehouse = tmp_path / "warehouse.duckdb"
    target = WarehouseTarget.duckdb_file(warehouse)
    quiet(sandbox)
    assert _sync_and_build(warehouse) == 0
    captured = capsys.readouterr()
    assert "note: webhooks: paging not honoured" in captured.out, captured.out
    assert "readers' snapshot: " in captured.out and default_snapshot_path(warehouse).exists()
    state = load(target)
    assert "default/webhooks" in state.degraded_reads  # said, and remembered until a full read
    assert state.held_marts == {} and state.failures == []  # but it feeds no mart: nothing held
    assert mismatches(warehouse, sandbox.portal, contract=contract) == []  # every list that feeds a figure
    assert banner_lines(target) == []


def test_a_failed_read_is_held_until_a_run_reads_its_table_and_never_clears_a_doubt(tmp_path):
    target = WarehouseTarget.duckdb_file(tmp_path / "warehouse.duckdb")
    record_reads(target, "default", ["documents: paging not honoured; read as one answer"], full_read=False)
    record_reads(target, "default", [], full_read=False,
                 failed={"supplier_documents": "GET /supplier-documents: HTTP 503",
                         "documents": "GET /documents: HTTP 503"})
    state = load(target)
    assert state.degraded_reads["default/supplier_documents"].failed
    doubt = state.degraded_reads["default/documents"]
    assert not doubt.failed and len(doubt.notes) == 2  # still in doubt (a full read clears it), failure said
    held, partial = held_marts(state), set(failed_read_marts(state))
    assert PAYABLES - {"marts.cash_outlook"} <= partial and not partial & RECEIVABLES
    assert "marts.cash_outlook" not in partial  # built on the documents too: the doubt holds it as well
    assert "read failed since" in held["marts.supplier_payables"]
    # a run that reads only the customers heals nothing; another portal's run neither
    record_reads(target, "default", [], full_read=False, read=["customers"])
    record_reads(target, "acme", [], full_read=False, read=None)
    assert "default/supplier_documents" in load(target).degraded_reads
    # an incremental run that reads the list heals it (its cursor was kept); the doubt stays
    record_reads(target, "default", [], full_read=False, read=["supplier_documents", "documents"])
    assert set(load(target).degraded_reads) == {"default/documents"}
