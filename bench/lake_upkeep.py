"""Benchmark (issue 33, point 5): a DuckLake's catalog and files after many small syncs, before and after upkeep.

    .venv/bin/python bench/lake_upkeep.py [--syncs 40] [--changes 3] [--scale 30] [--s3] [--timed-syncs 3]

A throwaway PostgreSQL (the catalog) and a sandbox portal; the lake's data in a temporary folder, or with `--s3`
in a bucket of a throwaway S3-compatible server (harness/s3_server.py). One first sync, then `--syncs` small
ones, each after `--changes` changes of the portal (the sandbox's mutator) and each published, as a portal's
15-minute runs would be. Then it measures, before and after `maintain` (run as if a week and a day had passed,
so the default horizon lets every snapshot but the last publication's expire; month-ends kept as by default):

- the catalog's size: the rows of every `ducklake_*` table of the lake's metadata schema in PostgreSQL (what
  grows with every commit), the snapshots among them;
- the data files: live ones (`ducklake_data_file` rows without an end snapshot), and every file on disk or in
  the bucket (the expired snapshots' files remain until upkeep deletes them);
- a no-change sync's time (best of `--timed-syncs`, three by default; 0 leaves it out), and a reader's time to
  open the published snapshot (median of five).

It checks that the upkeep changed no figure: every raw table's rows at the publication, just before and after it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.common import quiet
from harness.postgres_cluster import PostgresCluster
from harness.s3_server import S3Server
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.mutator import Mutator
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.connection import give_catalog_password, open_lake_instance
from invoicing_warehouse.engine.lake_maintenance import DEFAULT_HORIZON, maintain
from invoicing_warehouse.engine.readers import connect_reader, publish
from invoicing_warehouse.engine.target import LAKE_NAME, WarehouseTarget
from pipelines.invoicing.load.sync import make_pipeline, run_sync


def catalog_rows(target: WarehouseTarget) -> dict[str, int]:
    """Rows of each `ducklake_*` table of the lake's catalog (its schema in PostgreSQL), by table."""
    assert target.catalog is not None
    connection = open_lake_instance()
    try:
        give_catalog_password(connection, target)
        libpq = target.catalog.libpq().replace("'", "''")
        connection.execute(f"attach '{libpq}' as catalog (type postgres, read_only)")
        tables = [name for (name,) in connection.execute(
            "select table_name from duckdb_tables() where database_name = 'catalog' and schema_name = ? "
            "and table_name like 'ducklake%'", [LAKE_NAME]).fetchall()]
        return {name: connection.execute(f'select count(*) from catalog.{LAKE_NAME}."{name}"').fetchall()[0][0]
                for name in tables}
    finally:
        connection.close()


def stored_files(target: WarehouseTarget, server: S3Server | None) -> int:
    """Every data file stored: in the bucket, or under the data folder."""
    if server is not None:
        assert target.data_url is not None
        bucket = target.data_url.split("/")[2]
        return len(server.keys(bucket))
    assert target.data_path is not None
    return sum(1 for path in Path(target.data_path).rglob("*.parquet") if path.is_file())


def published_rows(target: WarehouseTarget) -> dict[str, list[str]]:
    """Every raw table's rows as readers see them (the last publication), each as a sorted list of text."""
    with connect_reader(target) as reader:
        tables = [name for (name,) in reader.execute(
            "select table_name from duckdb_tables() where database_name = ? and schema_name = 'invoicing_raw'",
            [LAKE_NAME]).fetchall()]
        return {name: sorted(map(repr, reader.execute(f'select * from invoicing_raw."{name}"').fetchall()))
                for name in tables}


def figures(target: WarehouseTarget, server: S3Server | None, sync, timed_syncs: int = 3) -> dict[str, float]:
    """The catalog's rows, snapshots, files, a no-change sync's best time of `timed_syncs`, a reader's open
    time."""
    rows = catalog_rows(target)
    no_change = []
    for _ in range(timed_syncs):
        started = time.perf_counter()
        sync()
        no_change.append(time.perf_counter() - started)
    if no_change:
        publish(target, "bench: no-change syncs")
    opened = []
    for _ in range(5):
        started = time.perf_counter()
        connect_reader(target).close()
        opened.append(time.perf_counter() - started)
    found = {"catalog rows": sum(rows.values()), "snapshots": rows.get("ducklake_snapshot", 0),
             "live data files": rows.get("ducklake_data_file", 0), "files stored": stored_files(target, server),
             **({"no-change sync s": min(no_change)} if no_change else {}),
             "reader open s": statistics.median(opened)}
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--syncs", type=int, default=40)
    parser.add_argument("--changes", type=int, default=3)
    parser.add_argument("--scale", type=int, default=30)
    parser.add_argument("--s3", action="store_true", help="the lake's data in an S3-compatible server's bucket")
    parser.add_argument("--timed-syncs", type=int, default=3,
                        help="no-change syncs timed before and after the upkeep, the best one shown (0: none, "
                             "for a smoke run)")
    args = parser.parse_args()
    if args.timed_syncs < 0:
        parser.error("--timed-syncs: 0 or more")
    with tempfile.TemporaryDirectory(prefix="lake-upkeep-") as folder, PostgresCluster() as cluster:
        server = S3Server().start() if args.s3 else None
        try:
            data: str | Path = Path(folder) / "lake-data"
            if server is not None:
                os.environ.update(server.environ())
                data = server.create_bucket("lake-upkeep-bench") + "lake/"
            target = WarehouseTarget.ducklake(cluster.dsn, data, password=cluster.password,
                                              state_dir=Path(folder) / "state")
            run(args, target, server)
        finally:
            if server is not None:
                server.stop()
    return 0


def run(args: argparse.Namespace, target: WarehouseTarget, server: S3Server | None) -> None:
    """The syncs, the figures before, the upkeep, the figures after; prints them."""
    with SandboxServer(SandboxConfig(seed=9, scale=args.scale, rate_limit_per_s=0, latency_ms=0)) as sandbox:
        quiet(sandbox)

        def sync() -> None:
            run_sync(make_pipeline(target), base_url=sandbox.base_url, client_id=sandbox.client_id,
                     client_secret=sandbox.client_secret, rate_limit_per_s=0)

        started = time.perf_counter()
        sync()
        publish(target, "bench: first sync")
        mutator = Mutator(sandbox.portal, 0, seed=10)
        for _ in range(args.syncs):
            for _ in range(args.changes):
                mutator.step()
            quiet(sandbox)
            sync()
            publish(target, "bench: a small sync")
        print(f"{args.syncs + 1} syncs ({args.changes} changes each) in {time.perf_counter() - started:.0f} s; "
              f"data {target.data_location()}", flush=True)
        before = figures(target, server, sync, args.timed_syncs)
        truth = published_rows(target)
        started = time.perf_counter()
        report = maintain(target, now=datetime.now(UTC) + DEFAULT_HORIZON + timedelta(days=1))
        upkeep_s = time.perf_counter() - started
        assert published_rows(target) == truth, "the upkeep changed what readers see"
        print(f"upkeep ({upkeep_s:.1f} s): {report.line()}")
        after = figures(target, server, sync, args.timed_syncs)
        print(f"{'':18} {'before':>10} {'after':>10}")
        for name, value in before.items():
            shown = (f"{value:>10.2f} {after[name]:>10.2f}" if name.endswith(" s")
                     else f"{int(value):>10} {int(after[name]):>10}")
            print(f"{name:18} {shown}")
        print("readers' rows at the publication: unchanged by the upkeep")


if __name__ == "__main__":
    raise SystemExit(main())
