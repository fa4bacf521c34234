"""WarehouseFiles owns the names of the files beside a warehouse or a lake, and every module that uses one asks
it: the expected paths are written out by hand (docs/architecture.md, docs/settings.md)."""

from __future__ import annotations

from pathlib import Path

from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.engine.warehouse_files import WarehouseFiles


def test_the_files_beside_a_duckdb_file(tmp_path):
    target = WarehouseTarget.duckdb_file(tmp_path / "data" / "warehouse.duckdb")
    files = target.files()
    data = (tmp_path / "data").resolve()
    assert files == WarehouseFiles.beside(target.path)
    assert files.readers_copy == data / "warehouse.read.duckdb"
    assert files.gate_state == data / "warehouse.gate.json"
    assert files.runs_log == data / "warehouse.runs.json"
    assert files.hints_spool == data / "warehouse.hints.sqlite"
    assert files.unpublished_marker == data / ".warehouse.duckdb.unpublished"
    assert files.demo_marker == data / "warehouse.duckdb.demo"
    assert files.dlt_work_dir == data / ".warehouse.dlt"


def test_the_files_beside_a_lake(tmp_path):
    folder = tmp_path / "lake.parquet"
    target = WarehouseTarget.ducklake("postgresql://u@localhost:5432/lakedb", folder)
    # named after the folder's stem, beside it; dlt's folder keeps the whole name (a lake's folder has no suffix)
    assert target.files().gate_state == tmp_path.resolve() / "lake.gate.json"
    assert target.files().runs_log == tmp_path.resolve() / "lake.runs.json"
    assert target.work_dir() == tmp_path.resolve() / ".lake.parquet.dlt"
    on_storage = WarehouseTarget.ducklake("postgresql://u@localhost:5432/lakedb", "s3://bucket/firm/",
                                          state_dir=tmp_path / "state")
    assert on_storage.files().gate_state == (tmp_path / "state").resolve() / "lakedb" / "lake.gate.json"


def test_every_module_asks_warehouse_files(tmp_path):
    from invoicing_warehouse.demo.command import demo_marker
    from invoicing_warehouse.engine.publish import default_snapshot_path, unpublished_mark
    from invoicing_warehouse.runs.gate_state import state_path
    from invoicing_warehouse.runs.run_log import log_path
    from pipelines.invoicing.webhooks.hint_spool import spool_path

    warehouse = Path("data/warehouse.duckdb")
    target = WarehouseTarget.duckdb_file(warehouse)
    files = target.files()
    assert (default_snapshot_path(warehouse), unpublished_mark(warehouse), spool_path(warehouse),
            demo_marker(warehouse)) == (Path("data/warehouse.read.duckdb"), Path("data/.warehouse.duckdb.unpublished"),
                                        Path("data/warehouse.hints.sqlite"), Path("data/warehouse.duckdb.demo"))
    assert (state_path(target), log_path(target)) == (files.gate_state, files.runs_log)
    assert state_path(target).name == "warehouse.gate.json" and log_path(target).name == "warehouse.runs.json"
