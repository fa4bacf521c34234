"""Issue 7, point 5: dashboards and analysts read the marts while a scheduled run writes.

Mechanism (invoicing_warehouse/engine/publish.py): readers open the published snapshot
`warehouse.read.duckdb` read-only, never the warehouse (why: test_snapshot_publish.py). Here a real
sync + models run writes the warehouse and publishes while two reader processes query the marts in
a loop: a dashboard opening a new read-only connection per query, an analyst holding one connection.
Neither reader fails, the writer does not fail, the dashboard sees the new figures after the
publish, and the analyst's open connection keeps its consistent old figures.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import duckdb

from harness.common import wait_until
from invoicing_warehouse.engine.publish import connect_reader, publish_snapshot
from invoicing_warehouse.engine.sql_runner import build_models
from pipelines.invoicing.load.sync import make_pipeline, run_sync

READER_SCRIPT = Path(__file__).resolve().parents[1] / "support" / "marts_reader.py"


def _start_reader(database: Path, stop_file: Path, output: Path, hold: bool) -> subprocess.Popen:
    command = [sys.executable, str(READER_SCRIPT), str(database), str(stop_file), "--max-seconds", "120"]
    if hold:
        command.append("--hold")
    with output.open("w") as sink:
        return subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, text=True)


def _lines(output: Path) -> list[dict]:
    return [json.loads(line) for line in output.read_text().splitlines() if line.startswith("{")]


def _api_total_due(sb) -> Decimal:
    return sum((Decimal(str(c["dueAmount"])) for c in sb.portal.snapshot("customers")), Decimal(0))


def test_readers_and_a_scheduled_run_never_fail_each_other(sandbox_factory, tmp_path):
    sb = sandbox_factory(seed=11, scale=40, rate_limit_per_s=0)
    warehouse = tmp_path / "warehouse.duckdb"
    credentials = dict(base_url=sb.base_url, client_id=sb.client_id, client_secret=sb.client_secret)
    today = sb.clock.today().date()

    run_sync(make_pipeline(warehouse), **credentials)
    with duckdb.connect(str(warehouse)) as connection:
        build_models(connection, as_of=today)
    snapshot = publish_snapshot(warehouse)
    with connect_reader(snapshot) as reader:
        old = reader.execute("select count(*), sum(total_open) from marts.receivables_by_customer").fetchone()
    assert Decimal(str(old[1])) == _api_total_due(sb)

    # Change the receivables upstream (payments, new invoices...) until the API's total moves.
    old_total = _api_total_due(sb)
    sb.start_mutations(40.0)
    deadline = time.monotonic() + 20
    while _api_total_due(sb) == old_total and time.monotonic() < deadline:
        time.sleep(0.2)
    sb.stop_mutations()
    new_total = _api_total_due(sb)
    assert new_total != old_total, "the mutator never changed a receivable within 20 s"
    sb.config.clock_offset_s = 30.0  # the next frozen window must cover the mutations

    stop_file = tmp_path / "stop"
    outputs = {name: tmp_path / f"{name}.jsonl" for name in ("dashboard", "analyst")}
    readers = {
        name: _start_reader(snapshot, stop_file, outputs[name], hold=name == "analyst") for name in outputs
    }
    try:
        assert wait_until(lambda: all(_lines(path) for path in outputs.values()), 60, 0.05), "readers did not start"
        write_started = time.time()
        run_sync(make_pipeline(warehouse), **credentials)
        with duckdb.connect(str(warehouse)) as connection:
            build_models(connection, as_of=today)
        write_ended = time.time()
        publish_snapshot(warehouse)
        dashboard_updated = wait_until(
            lambda: any(
                Decimal(line.get("total_open", "0")) == new_total for line in _lines(outputs["dashboard"])
            ),
            30,
            0.05,
        )
        # The analyst keeps querying its open connection a little longer after the publish.
        count = len(_lines(outputs["analyst"]))
        wait_until(lambda: len(_lines(outputs["analyst"])) > count + 2, 10, 0.05)
    finally:
        stop_file.touch()
        for process in readers.values():
            process.wait(timeout=60)
    results = {name: _lines(path) for name, path in outputs.items()}
    for name, lines in results.items():
        errors = [line for line in lines if not line["ok"]]
        assert lines and not errors, f"{name} reader failed {len(errors)} times: {errors[:3]}"
        during = [line for line in lines if write_started <= line["t"] <= write_ended]
        assert during, f"{name} made no query while the run was writing"
        totals = {Decimal(line["total_open"]) for line in lines}
        assert totals <= {old_total, new_total}, f"{name} saw a half-written state: {totals}"
    assert dashboard_updated and Decimal(results["dashboard"][-1]["total_open"]) == new_total, (
        "the dashboard never saw the new figures"
    )
    assert {Decimal(line["total_open"]) for line in results["analyst"]} == {old_total}, (
        "the analyst's open connection should keep its consistent old snapshot"
    )
    print(
        f"\nreaders during writes ({write_ended - write_started:.1f} s of sync + models): dashboard "
        f"{len(results['dashboard'])} queries, analyst {len(results['analyst'])} queries, 0 errors; "
        f"total_open {old_total} -> {new_total}"
    )
