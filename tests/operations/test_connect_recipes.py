"""docs/connect.md's SQL, run as a reader would (issue 44, point 7): the readers' copy read by a separate DuckDB
instance while a sync process writes the warehouse (the warehouse itself is locked meanwhile, the copy is not),
and a DuckLake read at its last published snapshot through the documented ATTACH, on a real PostgreSQL catalog.
The truth is what the product's own reader (`connect_reader`) sees of the same publication."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.readers import connect_reader
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish
from pipelines.invoicing.load.sync import make_pipeline, run_sync

DOC = Path(__file__).resolve().parents[2] / "docs" / "connect.md"
TOP_TEN = ("select customer_name, total_open, overdue_amount from marts.receivables_by_customer "
           "order by total_open desc limit 10")


def recipe(name: str, **values: object) -> list[str]:
    """The statements of the fenced block ```sql recipe=<name> of docs/connect.md, placeholders filled in."""
    found = re.search(rf"```sql recipe={re.escape(name)}\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert found, f"docs/connect.md has no recipe {name}"
    text = "\n".join(line for line in found.group(1).splitlines() if not line.lstrip().startswith("--"))
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value).replace("'", "''"))
    assert "{" not in text, text
    return [statement.strip() for statement in text.split(";") if statement.strip()]


def run_recipe(connection: duckdb.DuckDBPyConnection, statements: list[str]) -> list[tuple]:
    """Runs the statements; the last one's rows."""
    rows: list[tuple] = []
    for statement in statements:
        rows = connection.execute(statement).fetchall()
    return rows


def test_the_readers_copy_recipe_reads_the_publication_while_a_sync_writes(tmp_path):
    with SandboxServer(SandboxConfig(seed=45, scale=40, rate_limit_per_s=0)) as sandbox:
        warehouse = tmp_path / "warehouse.duckdb"
        run_sync(make_pipeline(warehouse), base_url=sandbox.base_url, client_id=sandbox.client_id,
                 client_secret=sandbox.client_secret, rate_limit_per_s=0)
        target = WarehouseTarget.duckdb_file(warehouse)
        assert build_and_publish(target, note="recipes").published
        with connect_reader(target) as reader:
            expected = reader.execute(TOP_TEN).fetchall()
        assert expected
        sandbox.config.latency_ms = 60  # a sync slow enough to be read beside
        env = {**os.environ, "SOURCES__INVOICING__BASE_URL": sandbox.base_url,
               "SOURCES__INVOICING__CLIENT_ID": sandbox.client_id,
               "SOURCES__INVOICING__CLIENT_SECRET": sandbox.client_secret}
        writer = subprocess.Popen([sys.executable, "-m", "invoicing_warehouse", "sync", "--warehouse", str(warehouse),
                                   "--full-refresh", "--rate-limit", "0"], cwd=tmp_path, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        reads = []
        try:
            deadline = time.monotonic() + 120
            while writer.poll() is None and time.monotonic() < deadline:
                with duckdb.connect() as analyst:  # a separate instance, as the CLI or a BI tool would be
                    reads.append(run_recipe(analyst, recipe("readers-copy",
                                                            readers_copy=default_snapshot_path(warehouse))))
                time.sleep(0.05)
            code = writer.wait(timeout=60)
        finally:
            if writer.poll() is None:
                writer.kill()
                writer.wait(timeout=60)
    assert code == 0  # the readers never blocked the sync
    assert len(reads) >= 3, "the sync ended before the reads: they did not happen beside a writer"
    # every read saw a whole publication: the one before the sync, or the sync's own (the same data, refreshed)
    assert all(rows == expected for rows in reads)


def test_the_lake_recipes_read_the_last_published_snapshot(lake, postgres_cluster, tmp_path):
    from invoicing_warehouse.engine.connection import connect

    with SandboxServer(SandboxConfig(seed=46, scale=30, rate_limit_per_s=0)) as sandbox:
        run_sync(make_pipeline(lake), base_url=sandbox.base_url, client_id=sandbox.client_id,
                 client_secret=sandbox.client_secret, rate_limit_per_s=0)
    assert build_and_publish(lake, note="recipes").published
    with connect_reader(lake) as reader:
        expected = reader.execute("select count(*), sum(total_open) from marts.receivables_by_customer").fetchall()
    with connect(lake) as writer:  # a later, unpublished change: a reader of the latest snapshot would see it
        writer.execute("delete from marts.receivables_by_customer")
    assert lake.catalog is not None
    catalog, data_path = lake.catalog.libpq(), lake.data_location()
    with duckdb.connect() as analyst:
        for extension in ("ducklake", "postgres"):
            analyst.execute(f"load {extension}")
        analyst.execute(f"create temporary secret (type postgres, password '{postgres_cluster.password}')")
        ((published,),) = run_recipe(analyst, recipe("lake-published-snapshot", catalog=catalog,
                                                     data_path=data_path))
        rows = run_recipe(analyst, recipe("lake-at-snapshot", catalog=catalog, data_path=data_path,
                                          published=published))
    assert rows == expected and expected[0][0] > 0
