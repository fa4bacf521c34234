"""One gate before readers, on every path that publishes figures (invoicing_warehouse/runs/gate.py): when a blocking
check fails, nothing reaches the readers' copy (its bytes are unchanged), the command exits 1 naming the check and the
figures it protects, and the gate's state carries what the dashboard's banner says. A read that may be incomplete holds
back the marts built on it, and only those. One report date per build.

The failure is a real one: a raw row duplicated in the warehouse (as a broken merge would leave it), which
would count an invoice twice in every receivables figure. The truth for "nothing published" is the readers'
copy's own bytes, taken before the failing run.
"""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.cli import main
from invoicing_warehouse.dashboard.gate_banner import banner_lines, flag_lines
from invoicing_warehouse.dashboard.source import Source, Unavailable
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish, record_reads
from invoicing_warehouse.runs.gate_state import load
from invoicing_warehouse.runs.hints import apply_pending, spool_for
from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.webhooks.hint_spool import Hint
from tests.support.fixture_factory import copied_warehouse, point_at, synced_warehouse

DUPLICATE = "insert into invoicing_raw.documents select * from invoicing_raw.documents order by id limit 1"
UNDO_DUPLICATE = ("delete from invoicing_raw.documents where rowid = (select max(rowid) from invoicing_raw.documents "
                  "where id = (select min(id) from invoicing_raw.documents))")


pytestmark = pytest.mark.sandbox(seed=23, scale=40, rate_limit_per_s=0)  # the module's `shared_sandbox`


@pytest.fixture(scope="module")
def base(shared_sandbox, tmp_path_factory) -> Path:
    """A warehouse synced from the sandbox, every model built and published (the regular path)."""
    return synced_warehouse(tmp_path_factory.mktemp("gate-base"), shared_sandbox)


@pytest.fixture
def warehouse(base, tmp_path, shared_sandbox, monkeypatch) -> Path:
    """A copy of the base warehouse, its readers' copy and gate state, for one test; the CLI pointed at the
    sandbox."""
    point_at(monkeypatch, shared_sandbox)
    return copied_warehouse(base, tmp_path)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _execute(warehouse: Path, sql: str) -> None:
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(sql)


def _marts(warehouse: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def _held_by_duplicate(warehouse: Path, err: str) -> None:
    """The gate held the build: the message names the check and the figures, the state and banner say so."""
    assert "ids_unique on invoicing_raw.documents" in err, err
    assert "marts.receivables" in err and "nothing published" in err, err
    state = load(WarehouseTarget.duckdb_file(warehouse))
    # a duplicated document also looks like two live versions of one chain: that check fails too
    failures = {(f["check"], f["relation"]): f for f in state.failures}
    assert ("ids_unique", "invoicing_raw.documents") in failures, state.failures
    assert "marts.receivables" in failures[("ids_unique", "invoicing_raw.documents")]["protects"]
    banner = banner_lines(WarehouseTarget.duckdb_file(warehouse))
    assert any("ids_unique" in line and "marts.receivables" in line for line in banner), banner


def test_models_publishes_nothing_when_a_blocking_check_fails_and_exits_1(warehouse, capsys):
    copy = default_snapshot_path(warehouse)
    published, marts_before = _digest(copy), _marts(warehouse, "select * from marts.receivables order by all")
    _execute(warehouse, DUPLICATE)
    assert main(["models", "--warehouse", str(warehouse)]) == 1
    _held_by_duplicate(warehouse, capsys.readouterr().err)
    assert _digest(copy) == published  # readers keep the last good copy
    # the build was one transaction, rolled back: the warehouse's marts are the last good ones too
    assert _marts(warehouse, "select * from marts.receivables order by all") == marts_before
    # once the data is right again, the next build publishes and the banner goes
    _execute(warehouse, UNDO_DUPLICATE)
    assert main(["models", "--warehouse", str(warehouse)]) == 0
    assert _digest(copy) != published
    assert banner_lines(WarehouseTarget.duckdb_file(warehouse)) == []


def test_sync_publishes_nothing_when_a_blocking_check_fails_and_exits_1(warehouse, shared_sandbox, capsys):
    copy = default_snapshot_path(warehouse)
    published = _digest(copy)
    _execute(warehouse, DUPLICATE)
    shared_sandbox.portal.create("customers", {"name": "Gate SARL"})  # a change, so the sync has something to publish
    shared_sandbox.clock.advance(timedelta(seconds=30))
    assert main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0"]) == 1
    captured = capsys.readouterr()
    _held_by_duplicate(warehouse, captured.err)
    assert "readers keep the last good figures" in captured.out
    assert _digest(copy) == published


def test_sync_follow_publishes_nothing_when_a_blocking_check_fails_and_exits_1(warehouse, shared_sandbox, capsys):
    copy = default_snapshot_path(warehouse)
    published = _digest(copy)
    _execute(warehouse, DUPLICATE)
    shared_sandbox.portal.create("customers", {"name": "Followed SARL"})
    shared_sandbox.clock.advance(timedelta(seconds=30))
    code = main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0", "--follow", "--max-seconds", "0.5",
                 "--poll-s", "0.2"])
    assert code == 1
    _held_by_duplicate(warehouse, capsys.readouterr().err)
    assert _digest(copy) == published


def test_a_hint_run_publishes_nothing_when_a_blocking_check_fails(warehouse, shared_sandbox):
    copy = default_snapshot_path(warehouse)
    published = _digest(copy)
    _execute(warehouse, DUPLICATE)
    customer = shared_sandbox.portal.create("customers", {"name": "Hinted SARL"})
    shared_sandbox.clock.advance(timedelta(seconds=30))
    target = WarehouseTarget.duckdb_file(warehouse)
    with spool_for(target) as spool:
        spool.append("delivery-1", Hint("default", "customers", customer["id"], "customer.created"))
    run = apply_pending(target, Portal("default"), rate_limit_per_s=0,
                        settings=ApiSettings(shared_sandbox.base_url, shared_sandbox.client_id,
                                             shared_sandbox.client_secret))
    assert run.load is not None and run.load.rows.get("customers") == 1  # the record itself was loaded
    assert run.published is None and run.gate is not None
    assert "ids_unique" in [f.name for f in run.gate.failures]
    assert "nothing published" in run.line()
    assert _digest(copy) == published
    assert load(target).failures


def test_an_as_of_build_that_fails_shows_the_failures_instead_of_figures(warehouse):
    # the readers' copy itself holds the duplicate (published before a check existed, or by hand)
    _execute(default_snapshot_path(warehouse), DUPLICATE)
    with pytest.raises(Unavailable) as shown:
        Source(warehouse).build_as_of(date(2026, 1, 31))
    assert "No figures as of 2026-01-31" in str(shown.value)
    assert "ids_unique on invoicing_raw.documents" in str(shown.value)


def test_a_degraded_read_holds_the_marts_built_on_it_and_only_those(warehouse, shared_sandbox, capsys):
    target = WarehouseTarget.duckdb_file(warehouse)
    past = shared_sandbox.clock.today().date() - timedelta(days=7)  # a date the portal has figures for
    assert main(["models", "--warehouse", str(warehouse), "--as-of", past.isoformat()]) == 0
    capsys.readouterr()
    record_reads(target, "default", ["supplier_documents: answered in one page that may be incomplete"],
                 full_read=False)
    assert main(["models", "--warehouse", str(warehouse)]) == 1  # as of today
    err = capsys.readouterr().err
    assert "marts.supplier_payables" in err and "supplier_documents read incomplete" in err
    reader = Source(warehouse).connect()
    try:
        dates = dict(reader.execute(
            "select 'cash outlook', max(as_of_date) from marts.cash_outlook "
            "union all select 'dso', max(as_of_date) from marts.dso").fetchall())
    finally:
        reader.close()
    assert dates["cash outlook"] == past  # it reads the payables: held at its last good figures
    assert dates["dso"] not in (past, None)  # receivables only: rebuilt, as of today
    assert any("supplier_payables keeps its last good figures" in line for line in banner_lines(target))
    # an incremental clean read cannot bring back what was skipped; a full read can
    record_reads(target, "default", [], full_read=False)
    assert main(["models", "--warehouse", str(warehouse)]) == 1
    record_reads(target, "default", [], full_read=True)
    assert main(["models", "--warehouse", str(warehouse)]) == 0
    assert banner_lines(target) == []


def test_a_partial_build_after_a_build_of_another_date_rebuilds_every_mart(warehouse):
    target = WarehouseTarget.duckdb_file(warehouse)
    past = date(2026, 1, 31)
    assert build_and_publish(target, note="past", as_of=past).ok
    today = date(2026, 3, 2)
    outcome = build_and_publish(target, note="a hint run", as_of=today,
                                select=["staging.stg_invoicing__customers"])
    assert outcome.ok
    assert "marts.supplier_payables" in outcome.models  # not only what the hint touched
    dates = _marts(warehouse, "select distinct as_of_date from marts.supplier_payables "
                              "union select distinct as_of_date from marts.dso")
    assert dates == [(today,)]
    # the same date again: only what was asked is rebuilt
    again = build_and_publish(target, note="a hint run", as_of=today, select=["staging.stg_invoicing__customers"])
    assert list(again.models) == ["staging.stg_invoicing__customers"]


def test_a_failing_check_that_does_not_block_publishes_and_flags_the_figures(warehouse, capsys):
    _execute(warehouse, "update invoicing_raw.documents set subtype = 'WRITE_OFF' "
                        "where id = (select min(id) from invoicing_raw.documents where type = 'INVOICE')")
    copy = default_snapshot_path(warehouse)
    published = _digest(copy)
    assert main(["models", "--warehouse", str(warehouse)]) == 0
    assert "published, but flagged: document_subtypes_known" in capsys.readouterr().err
    assert _digest(copy) != published
    flags = flag_lines(WarehouseTarget.duckdb_file(warehouse))
    assert len(flags) == 1 and "WRITE_OFF" in flags[0] and "marts.receivables" in flags[0], flags


def test_an_unknown_supplier_spelling_is_published_flagged_on_the_payables(warehouse, capsys):
    # audit F12: a credit-note type the product cannot read ("AVOIR") would count as a bill owed
    _execute(warehouse, "update invoicing_raw.supplier_documents set type = 'AVOIR' "
                        "where id = (select min(id) from invoicing_raw.supplier_documents)")
    assert main(["models", "--warehouse", str(warehouse)]) == 0
    flags = flag_lines(WarehouseTarget.duckdb_file(warehouse))
    assert any("supplier_document_values_known" in line and "type AVOIR" in line
               and "marts.supplier_payables" in line for line in flags), flags


def test_a_field_the_server_did_not_serve_is_flagged_on_the_cli_path_too(warehouse, capsys):
    # fields_served ran in Dagster alone: a `models` or `sync` user saw receivables built on invoices whose
    # emitDate the server never sent, with no flag. The truth: one validated invoice's emitDate made absent.
    _execute(warehouse, "update invoicing_raw.documents set _absent_fields = 'emitDate' "
                        "where id = (select min(id) from invoicing_raw.documents where type = 'INVOICE' "
                        "and status <> 'DRAFT')")
    assert main(["models", "--warehouse", str(warehouse)]) == 0
    assert "published, but flagged: fields_served" in capsys.readouterr().err
    flags = flag_lines(WarehouseTarget.duckdb_file(warehouse))
    assert any("fields_served on invoicing_raw.documents" in line and "documents.emitDate not served on 1 row(s)"
               in line and "(worst: ERROR)" in line and "marts.receivables" in line for line in flags), flags


def test_a_supplier_list_read_incompletely_holds_the_payables_and_publishes_the_receivables(tmp_path, monkeypatch,
                                                                                            capsys):
    """End to end: a server whose supplier documents refuse `limit`/`skip` (answered with one default page of
    20) never gets its payables published, while the receivables are, and equal the API's own figures."""
    from dataclasses import replace

    from harness.marts_truth import compare_marts
    from invoicing_sandbox.contract import ContractProfile

    warehouse = tmp_path / "warehouse.duckdb"
    profile = replace(ContractProfile.default(), paging_params_refused_on=("supplier_documents",))
    with SandboxServer(SandboxConfig(seed=23, scale=150, rate_limit_per_s=0, contract=profile)) as sb:
        assert len(sb.portal.snapshot("supplier_documents")) > 20  # more than one default page
        for name, value in (("BASE_URL", sb.base_url), ("CLIENT_ID", sb.client_id),
                            ("CLIENT_SECRET", sb.client_secret)):
            monkeypatch.setenv(f"SOURCES__INVOICING__{name}", value)
        assert main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0"]) == 1
        assert main(["models", "--warehouse", str(warehouse)]) == 1
        err = capsys.readouterr().err
        assert "marts.supplier_payables" in err and "supplier_documents read incomplete" in err, err
        reader = Source(warehouse).connect()  # the dashboard opens the copy: the receivables are there
        try:
            published = {row[0] for row in reader.execute(
                "select table_name from information_schema.tables where table_schema = 'marts'").fetchall()}
            truth = compare_marts(reader, sb)
        finally:
            reader.close()
    assert "receivables" in published and "dso" in published
    assert not {"supplier_payables", "payables_by_supplier", "payables_schedule", "cash_outlook"} & published
    assert truth.mismatches == [], truth.summary()


def test_writers_recording_their_reads_at_once_lose_none(tmp_path):
    """A DuckLake takes one writer per portal at once: each records its reads in the one gate state."""
    import threading

    target = WarehouseTarget.duckdb_file(tmp_path / "warehouse.duckdb")
    portals = [f"p{index}" for index in range(6)]

    def record(portal: str) -> None:
        for round_ in range(15):
            record_reads(target, portal, [f"supplier_documents: round {round_}"], full_read=False)

    threads = [threading.Thread(target=record, args=(portal,)) for portal in portals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    reads = load(target).degraded_reads
    assert sorted(reads) == sorted(f"{portal}/supplier_documents" for portal in portals)
    assert {read.notes[0] for read in reads.values()} == {"supplier_documents: round 14"}
