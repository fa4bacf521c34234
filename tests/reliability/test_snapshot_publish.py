"""Issue 7, point 5, the mechanism: readers open a published snapshot, never the warehouse.

`invoicing_warehouse/engine/publish.py` checkpoints the warehouse, copies it beside the snapshot, fsyncs and
renames it onto `warehouse.read.duckdb`. These tests show the DuckDB behaviour that makes it
necessary (a second process is refused a file a writer holds; a held read-only connection blocks the
next writer) and that the snapshot removes both failures. The end-to-end test with a real sync and
reader processes is in test_readers_during_writes.py.
"""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from invoicing_warehouse.engine.publish import connect_reader, default_snapshot_path, publish_snapshot


def _open_in_other_process(path: Path, read_only: bool) -> subprocess.CompletedProcess:
    code = f"import duckdb; duckdb.connect({str(path)!r}, read_only={read_only}).execute('select 1')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_why_readers_need_a_snapshot(tmp_path):
    """The failure the mechanism avoids, in both directions (facts of DuckDB 1.5, asserted)."""
    warehouse = tmp_path / "warehouse.duckdb"
    writer = duckdb.connect(str(warehouse))
    writer.execute(
        "create schema marts; create table marts.receivables_by_customer as select 1.5 as total_open"
    )
    refused = _open_in_other_process(warehouse, read_only=True)
    assert refused.returncode != 0 and "lock" in refused.stderr.lower()
    writer.close()

    publish_snapshot(warehouse)
    snapshot = default_snapshot_path(warehouse)
    assert snapshot == tmp_path / "warehouse.read.duckdb"
    with connect_reader(snapshot) as reader:
        # While a reader holds the snapshot, the writer still opens, changes and republishes.
        writer = duckdb.connect(str(warehouse))
        writer.execute("update marts.receivables_by_customer set total_open = 2.5")
        writer.close()
        publish_snapshot(warehouse)
        assert reader.execute("select total_open from marts.receivables_by_customer").fetchone()[
            0
        ] == Decimal("1.5")
    with connect_reader(snapshot) as reader:
        assert reader.execute("select total_open from marts.receivables_by_customer").fetchone()[
            0
        ] == Decimal("2.5")
    # A reader of the warehouse itself (not the snapshot) would block the next run's writer.
    with duckdb.connect(str(warehouse), read_only=True):
        blocked = _open_in_other_process(warehouse, read_only=False)
    assert blocked.returncode != 0 and "lock" in blocked.stderr.lower()
    assert not list(tmp_path.glob(".*.tmp")), "publish left a temporary file behind"


def test_publish_refuses_while_another_process_writes(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(warehouse)).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(warehouse)!r}); "
            "print('open', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(RuntimeError, match="another process is writing"):
            publish_snapshot(warehouse)
    finally:
        holder.kill()
        holder.wait(timeout=10)
    assert not default_snapshot_path(warehouse).exists()


def test_publish_of_a_missing_warehouse_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        publish_snapshot(tmp_path / "nowhere.duckdb")


def test_snapshot_holds_changes_still_in_the_wal(tmp_path):
    """A committed change that only the WAL holds yet must be in the snapshot (hence the checkpoint)."""
    warehouse = tmp_path / "warehouse.duckdb"
    writer = duckdb.connect(str(warehouse))
    writer.execute("set checkpoint_threshold = '1GB'")
    writer.execute("create table t as select range as i from range(1000)")
    writer.close()
    writer = duckdb.connect(str(warehouse))
    writer.execute("set checkpoint_threshold = '1GB'")
    writer.execute("insert into t select 5000")
    snapshot = publish_snapshot(warehouse, tmp_path / "elsewhere" / "read.duckdb")
    writer.close()
    with connect_reader(snapshot) as reader:
        assert reader.execute("select count(*), max(i) from t").fetchone() == (1001, 5000)
