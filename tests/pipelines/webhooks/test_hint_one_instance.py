"""A hint run keeps one DuckDB instance of the warehouse file from its load to its publication
(invoicing_warehouse/engine/connection.one_instance): the file is free again once the run ends, and dlt's load inside it
leaves the models the time zone every fresh connection of the process has."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
from hint_support import apply, raw_value, scheduled_sync

from invoicing_warehouse.engine.connection import one_instance
from invoicing_warehouse.engine.target import WarehouseTarget
from pipelines.invoicing.webhooks.hint_spool import Hint, HintSpool

ROOT = Path(__file__).resolve().parents[3]

# In a process whose zone is Asia/Tokyo: a dlt load into the warehouse inside one_instance (dlt sets the instance's
# global TimeZone to UTC on each connection it opens), then the TimeZone a new connection of the file sees, with
# and without `restore_settings()`.
_DLT_LOAD = textwrap.dedent("""
    import sys
    import duckdb
    from pipelines.invoicing.load.sync import make_pipeline
    from invoicing_warehouse.engine.connection import one_instance
    from invoicing_warehouse.engine.target import WarehouseTarget

    target = WarehouseTarget.duckdb_file(sys.argv[1])
    duckdb.connect(sys.argv[1]).close()  # the file exists: one_instance holds only an existing warehouse
    with one_instance(target) as held:
        make_pipeline(target, "default").run([{"id": "a"}], table_name="probe")
        loaded = duckdb.connect(sys.argv[1]).execute("select current_setting('TimeZone')").fetchone()[0]
        if sys.argv[2] == "restore":
            held.restore_settings()
        after = duckdb.connect(sys.argv[1]).execute("select current_setting('TimeZone')").fetchone()[0]
    print(loaded, after)
""")


def _time_zones_after_a_load(tmp_path: Path, restore: str) -> list[str]:
    environment = {**os.environ, "TZ": "Asia/Tokyo", "DLT_DATA_DIR": str(tmp_path / "dlt")}
    done = subprocess.run([sys.executable, "-c", _DLT_LOAD, str(tmp_path / f"{restore}.duckdb"), restore],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=environment, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_the_models_after_a_load_see_the_process_time_zone(tmp_path):
    # the premise: dlt's load does set the shared instance's zone (else restoring would prove nothing)
    assert _time_zones_after_a_load(tmp_path, "keep") == ["UTC", "UTC"]
    assert _time_zones_after_a_load(tmp_path, "restore") == ["UTC", "Asia/Tokyo"]


def test_the_instance_is_shared_inside_and_released_after(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(warehouse)).close()
    with one_instance(WarehouseTarget.duckdb_file(warehouse)):
        first, second = duckdb.connect(str(warehouse)), duckdb.connect(str(warehouse))
        first.execute("attach ':memory:' as shared_probe")  # attachments belong to the instance
        assert "shared_probe" in {row[0] for row in second.execute("select database_name from duckdb_databases()")
                                  .fetchall()}
        first.close()
        second.close()
    # released: a read-only open of the same file in this process needs every read-write connection closed
    with duckdb.connect(str(warehouse), read_only=True) as reader:
        assert reader.execute("select 1").fetchone() == (1,)


def test_a_hint_run_leaves_the_file_free_for_another_process(sandbox, tmp_path):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    customer = next(c for c in sandbox.portal.snapshot("customers") if not c.get("deleted"))
    sandbox.portal.update("customers", customer["id"], {"name": "One Instance SARL"})
    with HintSpool.for_warehouse(warehouse) as spool:
        spool.append("one-instance", Hint("default", "customers", customer["id"], "customer.updated"))
    run = apply(sandbox, warehouse)
    assert run.published and run.acknowledged == 1, run.line()
    assert raw_value(warehouse, "customers", customer["id"], "name") == "One Instance SARL"
    # another process writes the file right after the run: nothing of the run holds it any more
    script = "import duckdb, sys; duckdb.connect(sys.argv[1]).execute('create table after_run as select 1 as x')"
    done = subprocess.run([sys.executable, "-c", script, warehouse], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
