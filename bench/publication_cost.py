"""Benchmark (issue 16, point 4): what publishing the readers' snapshot costs after a small run, by size.

    .venv/bin/python bench/publication_cost.py [--documents 10000 100000 1000000] [--runs 5]

For each size it generates the raw tables the way bench/models_build.py does and builds every model. Then
`--runs` small runs, each like a webhook-driven run: 5 documents merged (new versions, new lines), 1 marked
deleted, every model rebuilt (not timed), then `publish_snapshot` (checkpoint, copy of the whole file, fsync,
atomic rename), timed. Each publication is checked: every relation of the snapshot holds the warehouse's rows.
It prints the median and max publication time, the file size and the copy rate, and the time of a typical
mart query (aging of `marts.receivables`) through the readers' copy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import duckdb  # noqa: E402

from bench.models_build import generate_raw_tables  # noqa: E402
from harness.warehouse_changes import merge_documents, snapshot_differences, tombstone_documents  # noqa: E402
from invoicing_warehouse.engine.publish import connect_reader, publish_snapshot  # noqa: E402
from invoicing_warehouse.engine.sql_runner import build_models  # noqa: E402

AS_OF = date(2026, 1, 31)
AGING = ("select aging_bucket, count(*), sum(open_amount) from marts.receivables "
         "group by aging_bucket order by min(coalesce(days_past_due, 0))")


def query_seconds(connection: duckdb.DuckDBPyConnection, repeat: int = 5) -> float:
    """Best time of the aging query over `repeat` runs."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        connection.execute(AGING).fetchall()
        best = min(best, time.perf_counter() - started)
    return best


def measure(documents: int, runs: int, folder: Path) -> None:
    """Generates a warehouse of `documents`, then times publications after small runs; prints one line."""
    warehouse = folder / "warehouse.duckdb"
    connection = duckdb.connect(str(warehouse))
    generate_raw_tables(connection, documents, AS_OF)
    build_models(connection, as_of=AS_OF)
    connection.close()
    snapshot = publish_snapshot(warehouse)
    seconds = []
    for run in range(runs):
        connection = duckdb.connect(str(warehouse))
        ids = [r[0] for r in connection.execute(
            f"select id from invoicing_raw.documents using sample 6 rows (reservoir, {run + 7})").fetchall()]
        merge_documents(connection, ids[:5], f"{2000000000 + run}.5")
        tombstone_documents(connection, ids[5:], f"2026-01-30 10:00:0{run % 10}+00")
        build_models(connection, as_of=AS_OF)
        connection.close()
        started = time.perf_counter()
        publish_snapshot(warehouse)
        seconds.append(time.perf_counter() - started)
        wrong = snapshot_differences(warehouse, snapshot)
        if wrong:
            raise AssertionError(f"snapshot differs from the warehouse in {sorted(wrong)}")
    with connect_reader(snapshot) as reader:
        query = query_seconds(reader)
    size_mib = snapshot.stat().st_size / 2**20
    median = statistics.median(seconds)
    print(f"{documents:>10,} documents | file {size_mib:7.1f} MiB | publication after a small run: median "
          f"{median:6.3f} s, max {max(seconds):6.3f} s ({size_mib / median:6.0f} MiB/s) | aging query through "
          f"the readers' copy {query * 1000:6.1f} ms", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Measures every size asked; prints one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    for documents in args.documents:
        with tempfile.TemporaryDirectory() as tmp:
            measure(documents, args.runs, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
