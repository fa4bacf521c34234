"""A dashboard in a separate process: queries a DuckDB file's marts in a loop, read-only.

Run as `python tests/support/marts_reader.py DB_PATH STOP_FILE [--hold] [--max-seconds N]`.
Each iteration prints one JSON line: `{"t": epoch seconds, "ok": true, "customers": n, "total_open": "x"}`
or `{"t": ..., "ok": false, "error": "..."}`. Without `--hold` it opens a fresh read-only
connection per query (a dashboard refresh); with `--hold` it keeps one connection for the whole
loop (an analyst's open notebook). It stops when STOP_FILE exists or after `--max-seconds`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import duckdb

QUERY = "select count(*), coalesce(sum(total_open), 0) from marts.receivables_by_customer"


def main(argv: list[str] | None = None) -> int:
    """Runs the read loop; exit code 0 (errors are reported per line, not by the exit code)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("database")
    parser.add_argument("stop_file")
    parser.add_argument("--hold", action="store_true")
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--pause", type=float, default=0.02)
    args = parser.parse_args(argv)
    started = time.monotonic()
    held = None
    while not Path(args.stop_file).exists() and time.monotonic() - started < args.max_seconds:
        moment = round(time.time(), 3)
        try:
            if args.hold:
                held = held or duckdb.connect(args.database, read_only=True)
                customers, total = held.execute(QUERY).fetchone()
            else:
                with duckdb.connect(args.database, read_only=True) as connection:
                    customers, total = connection.execute(QUERY).fetchone()
            print(json.dumps({"t": moment, "ok": True, "customers": customers, "total_open": str(total)}))
        except duckdb.Error as error:
            print(json.dumps({"t": moment, "ok": False, "error": str(error)[:300]}))
        sys.stdout.flush()
        time.sleep(args.pause)
    if held is not None:
        held.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
