"""A firm's size: many portals in one warehouse, a full build and publication, then changes to one portal through
the doorbell path (issue 45, point 5).

    .venv/bin/python bench/firm_size.py [--portals 50] [--documents 20000] [--changes 80] [--mix busy]
                                        [--paths follow,dagster] [--scale 500]

For each applying path, the warehouse of bench/webhook_latency.py (a seeded sandbox portal, `default`, synced
through the API at `--scale`) receives `--portals - 1` more portals of `--documents` documents each, generated
straight into the raw tables (bench/models_build.py's generator, one portal made once and copied under other
portal and record ids: `firm-01`, ...). Then:
- the gate's whole publication, `invoicing-warehouse models --as-of <the sandbox's date>` in its own process
  (every model, every check, the month-end trend, the readers' copy): wall, CPU and peak memory (its rusage);
- the doorbell stream of bench/webhook_latency.py against the sandbox portal (the real receiver, `sync --follow`
  or Dagster): p95 from the API write to the readers' copy, and what each applying run cost (the hint run's
  line: load, models, checks, publication), with the exactness against the sandbox.
The other portals' rows are not compared with any service (none serves them); the sandbox's are.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import duckdb

PROJECT_ROOT = Path(__file__).resolve().parents[1]
for entry in (PROJECT_ROOT, PROJECT_ROOT / "bench"):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

import webhook_latency  # noqa: E402
from models_build import generate_raw_tables  # noqa: E402

from harness.regular_build import report_date_of  # noqa: E402
from harness.sync_process import COMMAND  # noqa: E402

# the dlt row ids and the record ids of a copied portal must not meet the template's (a child row names its parent
# by _dlt_id); ids of 24 hex digits keep that form, the 9th-10th digits (always 00 in the generator) made the copy's
_DLT_IDS = ("_dlt_id", "_dlt_parent_id", "_dlt_root_id")
_NOT_RECORD_IDS = ("portal_id", "api_portal_id", "_dlt_load_id", *_DLT_IDS)
_HINT_RUN = re.compile(r"hints \S+: (\d+) applied in ([\d.]+) s: .* (\d+) models rebuilt")


def _copy_expression(column: str, data_type: str) -> str:
    quoted = f'"{column}"'
    if column == "portal_id":
        return "printf('firm-%02d', k)"
    if column in _DLT_IDS:
        return f"printf('f%02d-', k) || {quoted}"
    if data_type == "VARCHAR" and (column == "id" or column.endswith("_id")) and column not in _NOT_RECORD_IDS:
        return (f"case when length({quoted}) = 24 then substr({quoted}, 1, 8) || printf('%02x', k) || "
                f"substr({quoted}, 11) else printf('f%02d-', k) || {quoted} end")
    return quoted


def add_firm_portals(warehouse: Path, portals: int, documents: int, today: date) -> dict[str, int]:
    """Adds `portals` portals (`firm-01`...) of `documents` documents each to the warehouse's raw tables, under
    its last dlt load id; returns {raw table: rows added}. The warehouse must be closed by every other process."""
    template = duckdb.connect()
    try:
        generate_raw_tables(template, documents, today)
        template.execute(f"attach '{warehouse}' as wh")
        load_id = template.execute("select max(load_id) from wh.invoicing_raw._dlt_loads").fetchone()[0]
        added: dict[str, int] = {}
        for (table,) in template.execute(
                "select table_name from information_schema.tables where table_catalog = 'memory' "
                "and table_schema = 'invoicing_raw' order by 1").fetchall():
            target = template.execute(
                "select column_name, data_type from information_schema.columns where table_catalog = 'wh' "
                "and table_schema = 'invoicing_raw' and table_name = ? order by ordinal_position", [table]).fetchall()
            if not target:
                continue  # the synced portal has no such table (dlt makes one only for a record)
            source = {name for (name,) in template.execute(
                "select column_name from information_schema.columns where table_catalog = 'memory' "
                "and table_schema = 'invoicing_raw' and table_name = ?", [table]).fetchall()}
            chosen = [(name, kind) for name, kind in target if name in source or name == "portal_id"]
            names = ", ".join(f'"{name}"' for name, _ in chosen)
            values = ", ".join("?" if name == "_dlt_load_id" else _copy_expression(name, kind)
                               for name, kind in chosen)
            template.execute(f'insert into wh.invoicing_raw."{table}" ({names}) select {values} '
                             f'from memory.invoicing_raw."{table}", range(1, {portals + 1}) as p(k)',
                             [load_id] * sum(name == "_dlt_load_id" for name, _ in chosen))
            [(one_portal,)] = template.execute(f'select count(*) from memory.invoicing_raw."{table}"').fetchall()
            added[table] = one_portal * portals
        template.execute("checkpoint wh")
        return added
    finally:
        template.close()


def timed_models(warehouse: Path, as_of: date, env: dict[str, str] | None = None) -> tuple[float, float, float, str]:
    """`invoicing-warehouse models --as-of` in its own process: (wall s, CPU s, peak memory MiB, its output)."""
    log = warehouse.with_name("models.log")
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen([*COMMAND, "models", "--warehouse", str(warehouse), "--as-of", as_of.isoformat()],
                                   stdout=out, stderr=subprocess.STDOUT, env=env)
        # wait4, not wait: the process's own CPU time and peak resident memory
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall, output = time.monotonic() - started, log.read_text(errors="replace")
    if process.returncode != 0:
        raise RuntimeError(f"models exited {process.returncode}:\n{output[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, output


class FirmBuild:
    """webhook_latency's `build`, followed by the firm's other portals and a timed full publication."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.warehouses: list[Path] = []

    def __call__(self, sandbox, warehouse: Path, rate_limit_per_s: float) -> int:
        poll_cost = _regular_build(sandbox, warehouse, rate_limit_per_s)
        today = report_date_of(sandbox) or date.today()
        started = time.monotonic()
        added = add_firm_portals(warehouse, self.args.portals - 1, self.args.documents, today)
        print(f"\n# {time.strftime('%H:%M:%S')} load {_load()}: {self.args.portals - 1} portals x "
              f"{self.args.documents:,} documents generated in {time.monotonic() - started:.1f} s "
              f"({added.get('documents', 0):,} document rows; the sandbox portal's beside them), "
              f"file {warehouse.stat().st_size / 2**20:.0f} MiB", flush=True)
        wall, cpu, peak, _ = timed_models(warehouse, today)
        snapshot = warehouse.with_name(warehouse.stem + ".read.duckdb")
        print(f"full models and publication (`models --as-of {today}`): {wall:.1f} s wall, {cpu:.1f} s CPU, "
              f"peak memory {peak:.0f} MiB; readers' copy {snapshot.stat().st_size / 2**20:.0f} MiB "
              f"(load {_load()})", flush=True)
        if self.args.gate_runs:
            gate_costs(warehouse, today, self.args.gate_runs)
        self.warehouses.append(warehouse)
        return poll_cost


_regular_build = webhook_latency.build
# what a hint about a document and its payments makes stale (invoicing_warehouse/runs/hints.py: the models downstream of
# them)
HINTED_TABLES = ("documents", "transactions", "transaction_usages")


def gate_costs(warehouse: Path, as_of: date, runs: int) -> None:
    """A hint run's publication (the models downstream of a document and its payments, every check, the
    month-end trend carried over, the readers' copy) through the gate, alternately for every portal and for the
    sandbox's portal only (invoicing_warehouse/engine/portal_builds.py), `runs` times each, in this process."""
    from invoicing_warehouse.engine.names import DEFAULT_PORTAL
    from invoicing_warehouse.engine.sql_runner import downstream_models
    from invoicing_warehouse.engine.target import WarehouseTarget
    from invoicing_warehouse.runs.gate import build_and_publish

    target, select = WarehouseTarget.duckdb_file(warehouse), downstream_models(HINTED_TABLES)
    seconds: dict[str, list[float]] = {"every portal": [], "by portal": []}
    for _ in range(runs):
        for mode, portals in (("every portal", None), ("by portal", [DEFAULT_PORTAL])):
            started = time.monotonic()
            outcome = build_and_publish(target, note=f"bench {mode}", as_of=as_of, select=select, portals=portals)
            seconds[mode].append(time.monotonic() - started)
            if not outcome.ok:
                raise RuntimeError("; ".join(outcome.lines()))
    for mode, values in seconds.items():
        print(f"hint publication ({len(select)} models, checks, trend, copy), {mode}: median "
              f"{statistics.median(values):.1f} s, max {max(values):.1f} s over {runs} runs (load {_load()})",
              flush=True)


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def print_run_costs(warehouse: Path) -> None:
    """The applying runs' own times (the `hints ...: N applied in X s` lines of the follow log), when there."""
    log = warehouse.parent / "follow.log"
    if not log.exists():
        return
    runs = [(int(h), float(s), int(m)) for h, s, m in _HINT_RUN.findall(log.read_text(errors="replace"))]
    if runs:
        seconds = [s for _, s, _ in runs]
        print(f"  applying runs: {len(runs)}; each (load, models, checks, publication) p50 "
              f"{statistics.median(seconds):.1f} s, p95 {webhook_latency.percentile(seconds, 0.95):.1f} s, max "
              f"{max(seconds):.1f} s; hints per run p50 {statistics.median(h for h, _, _ in runs):.0f}; models "
              f"rebuilt per run p50 {statistics.median(m for _, _, m in runs):.0f}")


def main(argv: list[str] | None = None) -> int:
    """Runs the chosen paths at the firm's size; exit code 0 when every path delivered every change exactly."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--portals", type=int, default=50, help="portals in the warehouse, the sandbox's included")
    parser.add_argument("--documents", type=int, default=20_000, help="documents of each generated portal")
    parser.add_argument("--changes", type=int, default=80)
    parser.add_argument("--scale", type=int, default=500, help="the sandbox portal's scale")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--rate-limit", type=float, default=10.0)
    parser.add_argument("--paths", default="follow,dagster")
    parser.add_argument("--mix", choices=sorted(webhook_latency.MIXES), default="busy")
    parser.add_argument("--gate-runs", type=int, default=3,
                        help="hint publications timed in this process, for every portal and by portal (0: none)")
    parser.add_argument("--poll-s", type=float, default=1.0)
    parser.add_argument("--sensor-interval-s", type=int, default=3)
    parser.add_argument("--dequeue-s", type=int, default=1)
    args = webhook_latency.with_path_defaults(parser.parse_args(argv))
    if args.portals < 1:
        parser.error("--portals counts the sandbox's portal: at least 1")
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} UTC, load {_load()}, {os.cpu_count()} cores: {args.portals} "
          f"portals ({args.portals - 1} x {args.documents:,} documents generated + the sandbox's at scale "
          f"{args.scale}), {args.changes} changes, mix {args.mix}", flush=True)
    firm = FirmBuild(args)
    webhook_latency.build = firm
    results = []
    for path in (p.strip() for p in args.paths.split(",") if p.strip()):
        results.append(webhook_latency.run_path(path, args))
        print_run_costs(firm.warehouses[-1])
        print(f"  (load at the end {_load()})", flush=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
