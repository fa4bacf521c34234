"""Side by side: this project's pipeline against dlt's generic `rest_api` source, and against the limit.

    .venv/bin/python bench/compare_generic.py [--scale 100000] [--repeats 3]
                                              [--scenarios full,incremental,mutating]

Starts a sandbox per repeat (same seed and scale for both contenders), and on it runs, one contender after
the other, each in a child process of its own (so the client never shares an interpreter with the server):

- `full`: a first full sync into an empty DuckDB file;
- `incremental`: an incremental sync after 1% of the records changed (the same changes for both);
- `mutating`: a full sync into a new file while the sandbox mutates records at 5 changes/s, then one quiet
  incremental sync.

Requests and 429s are counted by the server (`sb.stats`). After each sync every raw table is compared by id
with the sandbox's records (`harness/warehouse_truth.py`, by id). The limit of each scenario is the minimum number of
requests the data needs divided by the rate limit. Each finished row is appended to a JSON-lines file under
`bench/out/` at once, so an interrupted long run keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from multiprocessing import get_context
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere: the project's packages must import
    sys.path.insert(0, str(ROOT))

from bench import ground_truth  # noqa: E402
from bench.contenders import CONTENDERS, run_contender  # noqa: E402
from harness.warehouse_truth import check_warehouse  # noqa: E402

SCENARIOS = ("full", "incremental", "mutating")
# A generous bound per sync so that a stuck contender cannot hang the benchmark for ever.
SYNC_TIMEOUT_S = 3 * 3600


@dataclass
class Row:
    """One timed sync of one contender, with what the server counted and what the warehouse holds."""

    scenario: str
    contender: str
    repeat: int
    scale: int
    wall_s: float
    requests: int
    rate_limited: int
    missing: int
    duplicated: int
    stale: int
    unexpected: int
    min_requests: int
    rate_limit_per_s: int
    error: str | None = None
    load_avg_1m: float = 0.0  # the machine's load right after the sync: other work may have shared the cores
    tables: dict = field(default_factory=dict)
    client: dict = field(default_factory=dict)

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.wall_s if self.wall_s else 0.0

    @property
    def min_time_s(self) -> float:
        # `--rate-limit 0` (a smoke run): no limit, so no minimum time to compare with
        return self.min_requests / self.rate_limit_per_s if self.rate_limit_per_s else 0.0

    @property
    def ratio(self) -> float:
        return self.wall_s / self.min_time_s if self.min_time_s else float("nan")


def machine() -> str:
    """Cores, memory and Python of this machine, for the results file."""
    memory_gib = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gib = int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return (f"{os.cpu_count()} cores, {memory_gib:.1f} GiB, {platform.platform()}, "
            f"Python {platform.python_version()}")


def format_table(rows: list[Row]) -> str:
    """The results as a Markdown table (also readable on a terminal)."""
    head = (
        "| scenario | contender | repeat | wall s | requests | req/s | 429s | missing | duplicated | stale "
        "| extra | min requests | min time s | ratio to limit |"
    )
    lines = [head, "|" + "---|" * 14]
    for row in rows:
        if row.error:
            lines.append(f"| {row.scenario} | {row.contender} | {row.repeat} | FAILED: {row.error[:160]} |")
            continue
        lines.append(
            f"| {row.scenario} | {row.contender} | {row.repeat} | {row.wall_s:.1f} | {row.requests} "
            f"| {row.requests_per_s:.2f} | {row.rate_limited} | {row.missing} | {row.duplicated} "
            f"| {row.stale} "
            f"| {row.unexpected} | {row.min_requests} | {row.min_time_s:.1f} | {row.ratio:.2f} |"
        )
    return "\n".join(lines)


def change_records(sb, steps: int, seed: int, per_second: float = 0) -> None:
    """Makes `steps` changes the way the application's users do (the sandbox's mutator, one step each).
    `per_second` > 0 spreads them in the sandbox's time (its clock moves a second after every `per_second`
    steps) instead of the few real seconds they take: hundreds of records then no longer share one
    `lastUpdate` second, which the pipeline reads as a group (it never skips into one) and offset paging
    does not care about."""
    from invoicing_sandbox.mutator import Mutator

    mutator = Mutator(sb.portal, 1.0, seed)  # never started: no background thread, only these steps
    for step in range(1, steps + 1):
        mutator.step()
        if per_second > 0 and step % max(1, round(per_second)) == 0:
            sb.clock.advance(timedelta(seconds=1))


def summarize(rows: list[Row]) -> str:
    """Medians over the repeats per scenario and contender; correctness figures are the worst repeat."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        if not row.error:
            groups.setdefault((row.scenario, row.contender), []).append(row)
    lines = [
        "| scenario | contender | runs | median wall s | median requests | median req/s | 429s (all runs) "
        "| worst missing | worst duplicated | worst stale | min time s | median ratio to limit |",
        "|" + "---|" * 12,
    ]
    for (scenario, contender), group in groups.items():
        lines.append(
            f"| {scenario} | {contender} | {len(group)} | {median(r.wall_s for r in group):.1f} "
            f"| {median(r.requests for r in group):.0f} | {median(r.requests_per_s for r in group):.2f} "
            f"| {sum(r.rate_limited for r in group)} | {max(r.missing for r in group)} "
            f"| {max(r.duplicated for r in group)} | {max(r.stale for r in group)} "
            f"| {median(r.min_time_s for r in group):.1f} | {median(r.ratio for r in group):.2f} |"
        )
    return "\n".join(lines)


def read_rows(path: Path) -> list[Row]:
    """The rows a run appended to its JSON-lines file (also of a run that was interrupted)."""
    names = set(Row.__dataclass_fields__)
    rows = []
    for line in path.read_text().splitlines():
        if line.strip():
            rows.append(Row(**{key: value for key, value in json.loads(line).items() if key in names}))
    return rows


class Bench:
    """Runs the scenarios of one repeat on one sandbox and records a row per contender and sync."""

    def __init__(self, args: argparse.Namespace, out_dir: Path, results_path: Path) -> None:
        self.args = args
        self.out_dir = out_dir
        self.results_path = results_path
        self.rows: list[Row] = []
        # The supplier documents' status histories cost one request per supplier document (about 25,000 at
        # scale 100,000): --without-events leaves them out, for both contenders alike.
        excluded = {ground_truth.EVENTS_RESOURCE} if args.without_events else set()
        self.resources = [name for name in ground_truth.ALL_RESOURCES if name not in excluded]

    def snapshot(self, sb) -> dict[str, list[dict]]:
        """The sandbox's records of the compared resources."""
        return ground_truth.snapshot_all(sb, self.resources)

    def timed_sync(self, sb, scenario: str, contender: str, repeat: int, db_path: Path, full: bool,
                   min_requests: int, mutating: bool = False) -> Row:
        """Runs one sync in a child process, counts its requests on the server, checks the warehouse.

        With `mutating`, background writes run during the sync and stop as soon as it ends, before the check.
        """
        work_dir = db_path.with_suffix(".dlt")
        db_path.parent.mkdir(parents=True, exist_ok=True)
        # the pipeline keeps dlt's working directory beside its file (`.<stem>.dlt`),
        # the generic one in work_dir
        pipeline_dir = db_path.parent / f".{db_path.stem}.dlt"
        if full:
            for stale_path in (db_path, db_path.with_suffix(".duckdb.wal"), work_dir, pipeline_dir):
                if stale_path.is_dir():
                    shutil.rmtree(stale_path)
                elif stale_path.exists():
                    stale_path.unlink()
        before = dict(sb.stats)
        if mutating:
            sb.start_mutations(self.args.mutations_per_s)
        error, result = None, {}
        with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
            future = pool.submit(run_contender, contender, sb.base_url, sb.client_id, sb.client_secret,
                                 str(db_path), str(work_dir), full, list(self.resources), self.args.rate_limit)
            try:
                result = future.result(timeout=SYNC_TIMEOUT_S)
            except Exception as exc:  # a failing contender is a result too: report it and go on
                # dlt wraps the cause in several layers: its last line names the resource and the status
                error = f"{type(exc).__name__}: " + " / ".join(str(exc).strip().splitlines()[-2:])
            finally:
                if mutating:
                    sb.stop_mutations()
        after = dict(sb.stats)
        checks = [] if error else check_warehouse(db_path, self.snapshot(sb))
        row = Row(
            scenario=scenario, contender=contender, repeat=repeat, scale=self.args.scale,
            wall_s=result.get("wall_s", 0.0),
            requests=after.get("requests", 0) - before.get("requests", 0),
            rate_limited=after.get("rate_limited", 0) - before.get("rate_limited", 0),
            missing=sum(c.missing for c in checks), duplicated=sum(c.duplicated for c in checks),
            stale=sum(c.stale for c in checks), unexpected=sum(c.unexpected for c in checks),
            min_requests=min_requests, rate_limit_per_s=self.args.rate_limit, error=error,
            load_avg_1m=os.getloadavg()[0],
            tables={c.table: asdict(c) for c in checks}, client=result.get("client", {}),
        )
        self.record(row)
        return row

    def record(self, row: Row) -> None:
        """Keeps the row, prints it, and appends it to the JSON-lines file at once."""
        self.rows.append(row)
        print(format_table([row]).splitlines()[-1], flush=True)
        with self.results_path.open("a") as out:
            out.write(json.dumps({**asdict(row), "requests_per_s": row.requests_per_s,
                                  "min_time_s": row.min_time_s, "ratio": row.ratio}) + "\n")

    def settle(self) -> None:
        """Waits out the contenders' lag behind server time, so that the last changes are in their window."""
        time.sleep(self.args.settle_s)

    def run_repeat(self, repeat: int) -> None:
        """Every selected scenario, every contender, on one freshly started sandbox."""
        # Imported up front, all of them: a module imported late could come from a newer tree than the rest.
        import invoicing_sandbox.mutator  # noqa: F401
        from invoicing_sandbox.config import SandboxConfig
        from invoicing_sandbox.server import SandboxServer

        args = self.args
        config = SandboxConfig(seed=args.seed, scale=args.scale, latency_ms=args.latency_ms,
                               rate_limit_per_s=args.rate_limit, max_page_size=100)
        # Alternate who goes first, so that neither always meets a warmer server.
        order = list(args.contenders) if repeat % 2 else list(reversed(args.contenders))
        started = time.monotonic()
        with SandboxServer(config) as sb:
            print(f"# repeat {repeat}: sandbox up in {time.monotonic() - started:.1f} s at {sb.base_url}",
                  flush=True)
            base = self.out_dir / f"r{repeat}"
            truth = self.snapshot(sb)
            print(f"# records: {ground_truth.describe(truth)}", flush=True)
            if "full" in args.scenarios or "incremental" in args.scenarios:
                need = ground_truth.minimum_requests(truth)
                for name in order:
                    self.timed_sync(sb, "full", name, repeat, base / f"{name}.duckdb", True, need)
            if "incremental" in args.scenarios:
                self.guarded("incremental", lambda: self.run_incremental(sb, repeat, order, base, truth))
            if "mutating" in args.scenarios:
                for name in order:
                    db_path = base / f"{name}-mutating.duckdb"
                    # bound now: `guarded` runs it at once, but a loop variable read later would be the last one
                    self.guarded("mutating",
                                 lambda name=name, db_path=db_path: self.run_mutating(sb, name, repeat, db_path))

    def guarded(self, scenario: str, run) -> None:
        """Runs one scenario; a failure of the harness or the sandbox is printed, and the next one runs."""
        try:
            run()
        except Exception as exc:  # one broken scenario must not throw away a long run's other figures
            print(f"# {scenario}: FAILED in the harness or the sandbox: {type(exc).__name__}: {exc}",
                  flush=True)

    def run_incremental(self, sb, repeat: int, order: list[str], base: Path, truth: dict) -> None:
        """1% of the records change, then each contender runs an incremental sync."""
        args = self.args
        steps = max(1, math.ceil(args.changed_share * ground_truth.record_count(truth)))
        change_records(sb, steps, args.seed, args.changes_per_s)
        self.settle()
        changed_truth = self.snapshot(sb)
        need = ground_truth.minimum_requests(changed_truth, since=truth)
        spread = (f" over {steps / args.changes_per_s:.0f} s of the sandbox's time" if args.changes_per_s > 0
                  else " at once")
        print(f"# incremental: {steps} mutator steps{spread} changed "
              f"{ground_truth.changed_count(changed_truth, truth)} records", flush=True)
        for name in order:
            self.timed_sync(sb, "incremental", name, repeat, base / f"{name}.duckdb", False, need)

    def run_mutating(self, sb, name: str, repeat: int, db_path: Path) -> None:
        """A full sync under background writes, then one quiet incremental sync."""
        start_truth = self.snapshot(sb)
        self.timed_sync(sb, "mutating: full", name, repeat, db_path, True,
                        ground_truth.minimum_requests(start_truth), mutating=True)
        self.settle()
        end_truth = self.snapshot(sb)
        self.timed_sync(sb, "mutating: quiet incremental", name, repeat, db_path, False,
                        ground_truth.minimum_requests(end_truth, since=start_truth))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (defaults: the issue's scenario, 100,000 documents at 100 ms latency)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=100_000, help="about this many documents")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--rate-limit", type=int, default=10,
                        help="requests/s the sandbox allows, and the pipeline's pacing (0: no limit, for a smoke run)")
    parser.add_argument("--changed-share", type=float, default=0.01, help="share of records changed")
    parser.add_argument("--changes-per-s", type=float, default=0.0,
                        help="incremental: spread the changes at this rate in the sandbox's time (default: at once)")
    parser.add_argument("--mutations-per-s", type=float, default=5.0)
    parser.add_argument("--settle-s", type=float, default=12.0,
                        help="pause after changes, longer than the pipeline's safety lag behind server time")
    parser.add_argument("--without-events", action="store_true",
                        help="leave out supplier_document_events (one request per supplier document)")
    parser.add_argument("--summarize", type=Path, metavar="ROWS_JSONL",
                        help="print the tables of an earlier (maybe interrupted) run's rows.jsonl and exit")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = parser.parse_args(argv)
    args.scenarios = [s for s in args.scenarios.split(",") if s]
    args.contenders = [c for c in args.contenders.split(",") if c]
    unknown = set(args.scenarios) - set(SCENARIOS) | set(args.contenders) - set(CONTENDERS)
    if unknown:
        parser.error(f"unknown scenario or contender: {sorted(unknown)}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark and prints the table; returns 0 (a benchmark reports, it does not judge)."""
    args = parse_args(argv)
    if args.summarize:
        rows = read_rows(args.summarize)
        print(format_table(rows) + "\n\n" + summarize(rows))
        return 0
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out_dir = args.out / f"compare-{stamp}"
    out_dir.mkdir(parents=True, exist_ok=True)
    results_path = out_dir / "rows.jsonl"
    command = "python bench/compare_generic.py " + " ".join(argv if argv is not None else sys.argv[1:])
    header = f"# {stamp} | {machine()}\n# command: {command}\n# rows: {results_path}"
    print(header, flush=True)
    bench = Bench(args, out_dir, results_path)
    for repeat in range(1, args.repeats + 1):
        bench.run_repeat(repeat)
    table = format_table(bench.rows) + "\n\n" + summarize(bench.rows)
    print("\n" + table, flush=True)
    (out_dir / "table.md").write_text(header + "\n\n" + table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
