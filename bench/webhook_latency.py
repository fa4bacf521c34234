"""Change-to-mart latency of the doorbell path: API writes in a sandbox -> hints -> applying runs -> readers.

    .venv/bin/python bench/webhook_latency.py [--changes 200] [--scale 500] [--paths follow,dagster]

For each applying path, a fresh seeded sandbox (the real service's 10 requests/s per IP) is built into a new
warehouse (sync, models, readers' copy), then changed `--changes` times at mixed rates (single changes a
random 5-35 s apart, and a burst of 50 at once after every 16 of them: `--mix office`, the default; `--mix busy`:
0.5-3 s apart and a burst after 40) by its application user (harness/hinted_changes.py: the
changes an event announces). Hints come through the real receiver (`--hints receiver`, the default): the
sandbox delivers every event over HTTP to `invoicing-warehouse webhooks serve` (its own process, 127.0.0.1),
which spools them; `--hints listener` feeds the spool from the sandbox's in-process event listener instead
(invoicing_warehouse/demo/hint_feed.py). The listener always records each write's time for the latency.
The paths:
- `follow`: `invoicing-warehouse sync --follow` as a separate process;
- `dagster`: a real `dagster-daemon run` on the project's definitions, with the hints sensor started
  (`dagster sensor start`); its instance queues runs per warehouse as dagster.yaml does, dequeued every
  `--dequeue-s` seconds; every run is its own process (Dagster's default run launcher), or with
  `--runs-in-daemon` inside the daemon (Dagster's in-memory launcher: the smoke run's, no process per run).
Printed per path: latency p50/p95/max from the API write to the change visible in the readers' copy through
`connect_reader` (harness/latency_watch.py), mismatches of the raw tables and marts against the sandbox, API
requests per change, and what polling would cost: a no-change incremental sync's requests, times the polls
of the same period every minute, and at the interval that would give the same p95 freshness.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))

from harness.hinted_changes import HintedMutator  # noqa: E402
from harness.latency_watch import VisibilityWatch  # noqa: E402
from harness.marts_truth import compare_marts  # noqa: E402
from harness.receiver_process import ReceiverProcess  # noqa: E402
from harness.regular_build import regular_build  # noqa: E402
from harness.sync_process import COMMAND, Workspace  # noqa: E402
from harness.warehouse_truth import compare_raw_tables  # noqa: E402
from invoicing_sandbox.config import SandboxConfig  # noqa: E402
from invoicing_sandbox.server import SandboxServer  # noqa: E402
from invoicing_warehouse.demo.hint_feed import ListenerFeed  # noqa: E402
from invoicing_warehouse.engine.readers import connect_reader  # noqa: E402
from invoicing_warehouse.engine.target import WarehouseTarget  # noqa: E402
from pipelines.invoicing.webhooks.hint_events import EVENTS  # noqa: E402
from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_path  # noqa: E402

BURST = 50
DRAIN_S = 180.0
START_S = 180.0
DAGSTER = Path(sys.executable).with_name("dagster")
DAEMON = Path(sys.executable).with_name("dagster-daemon")


# --mix: (seconds between two single changes, low and high; singles before each burst of BURST)
MIXES = {
    "office": ((5.0, 35.0), 16),  # a portal at work: a change every 20 s on average, a burst every ~5 min
    "busy": ((0.5, 3.0), 40),  # a change every 1.75 s on average: where polling wins (break-even printed)
}


def plan(changes: int, seed: int, mix: str = "office") -> list[tuple[float, int]]:
    """(pause before, changes at once): singles spaced as `mix` says, a burst of BURST after so many singles."""
    (low, high), singles_per_burst = MIXES[mix]
    rng, steps, left, singles = random.Random(f"plan-{seed}"), [], changes, 0
    while left > 0:
        if singles >= singles_per_burst and left >= BURST:
            steps.append((rng.uniform(low, high), BURST))
            left, singles = left - BURST, 0
        else:
            steps.append((rng.uniform(low, high), 1))
            left, singles = left - 1, singles + 1
    return steps


def build(sandbox: SandboxServer, warehouse: Path, rate_limit_per_s: float) -> int:
    """The regular build (sync, every model, readers' copy), paced at the sandbox's limit (0: unpaced); returns
    a no-change sync's request count."""
    regular_build(sandbox, warehouse, rate_limit_per_s=rate_limit_per_s)
    return regular_build(sandbox, warehouse, rate_limit_per_s=rate_limit_per_s).total_requests


class Applier:
    """A separate applying process (its own session, so that stopping it ends its children too)."""

    def __init__(self, path: str, workspace: Workspace, env: dict[str, str], args: argparse.Namespace) -> None:
        self.path, self.workspace, self.env, self.args = path, workspace, env, args
        self.log = workspace.root / f"{path}.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        """Starts the process; for `follow`, waits until its first sync is done."""
        if self.path == "follow":
            command = [*COMMAND, "sync", "--warehouse", str(self.workspace.warehouse), "--follow",
                       "--poll-s", str(self.args.poll_s), "--max-seconds", "3600"]
            cwd = self.workspace.cwd
        else:
            command, cwd = self._dagster(), PROJECT_ROOT
        with self.log.open("w") as log:
            self.process = subprocess.Popen(command, env=self.env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        deadline = time.monotonic() + START_S
        ready = "following webhook hints" if self.path == "follow" else "SensorDaemon"
        while ready not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.path} did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.5)

    def _dagster(self) -> list[str]:
        home = Path(self.env["DAGSTER_HOME"])
        home.mkdir(parents=True, exist_ok=True)
        (home / "dagster.yaml").write_text(
            "run_coordinator:\n  module: dagster.core.run_coordinator\n  class: QueuedRunCoordinator\n"
            f"  config:\n    dequeue_interval_seconds: {self.args.dequeue_s}\n    tag_concurrency_limits:\n"
            "      - key: invoicing-warehouse/warehouse\n        value:\n          applyLimitPerUniqueValue: true\n"
            "        limit: 1\ntelemetry:\n  enabled: false\n"
            + ("run_launcher:\n  module: dagster._core.launcher.sync_in_memory_run_launcher\n"
               "  class: SyncInMemoryRunLauncher\n" if self.args.runs_in_daemon else ""))
        subprocess.run([str(DAGSTER), "sensor", "start", "apply_hints_when_pending", "-w", "workspace.yaml"],
                       env=self.env, cwd=PROJECT_ROOT, check=True, capture_output=True, timeout=START_S)
        return [str(DAEMON), "run", "-w", "workspace.yaml"]

    def stop(self) -> None:
        """Ctrl-C for `follow` (a clean stop), SIGTERM to the daemon's process group; bounded waits."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGINT if self.path == "follow" else signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


# the options of a path's run that another script (bench/firm_size.py) may not take, with webhook_latency's defaults
PATH_DEFAULTS = {"hints": "receiver", "linger_s": None, "standby": False, "slowest": 0, "runs_in_daemon": False}


def with_path_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """`args` with PATH_DEFAULTS for each option it lacks (run_path reads them all)."""
    for name, value in PATH_DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, value)
    return args


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))]


def run_path(path: str, args: argparse.Namespace) -> bool:
    """One applying path end to end; prints its figures; True when every change arrived and all is exact."""
    root = Path(tempfile.mkdtemp(prefix=f"webhook-latency-{path}-"))
    workspace = Workspace(root)
    config = SandboxConfig(seed=args.seed, scale=args.scale, rate_limit_per_s=args.rate_limit, latency_ms=0)
    with SandboxServer(config) as sandbox:
        poll_cost = build(sandbox, workspace.warehouse, args.rate_limit)
        env = workspace.env(sandbox.base_url, sandbox.client_id, sandbox.client_secret,
                            INVOICING_WAREHOUSE_PATH=str(workspace.warehouse), DAGSTER_HOME=str(root / "dagster_home"),
                            INVOICING_HINTS_SENSOR_INTERVAL_S=str(args.sensor_interval_s),
                            **({"INVOICING_HINTS_LINGER_S": str(args.linger_s)} if args.linger_s is not None else {}),
                            **({"INVOICING_HINTS_STANDBY": "1"} if args.standby else {}))
        through_receiver = args.hints == "receiver"
        # the receiver refuses tokens under 32 characters (pipelines/invoicing/hook_urls.py): 43 random ones
        receiver = ReceiverProcess(workspace.warehouse, secrets.token_urlsafe(32)) if through_receiver else None
        if receiver is not None:
            sandbox.portal.create("webhooks", {"url": receiver.url(), "events": sorted(EVENTS)})
        feed = ListenerFeed(sandbox.portal, spool_path(workspace.warehouse), record_only=through_receiver).start()
        watch = VisibilityWatch(workspace.warehouse, feed).start()
        applier = Applier(path, workspace, env, args)
        try:
            applier.start()
            before, started, started_wall = sandbox.stats["requests"], time.monotonic(), time.time()
            mutator = HintedMutator(sandbox.portal, 0, seed=args.seed)
            made, bursts = 0, []
            for pause, count in plan(args.changes, args.seed, args.mix):
                time.sleep(pause)
                begun = time.time()
                made += sum(kind != "none" for kind in mutator.steps(count))
                if count > 1:
                    bursts.append((begun, time.time()))
            arrived = watch.wait_all_visible(DRAIN_S)
            elapsed, requests = time.monotonic() - started, sandbox.stats["requests"] - before
        finally:
            applier.stop()
            feed.stop()
            watch.stop()
            if receiver is not None:
                receiver.stop()
        with HintSpool(spool_path(workspace.warehouse)) as spool:
            pending = spool.pending_count()
        reader = connect_reader(WarehouseTarget.duckdb_file(workspace.warehouse))
        try:
            raw, marts = compare_raw_tables(reader, sandbox.portal), compare_marts(reader, sandbox)
        finally:
            reader.close()
    ok = _print(path, args, made, len(feed.writes), watch, arrived, pending, raw, marts, requests, elapsed,
                poll_cost, root)
    _print_split(watch, bursts)
    _print_slowest(watch, started_wall, args.slowest)
    if path == "dagster":
        _print_dagster_runs(Path(env["DAGSTER_HOME"]))
    return ok


def _print_dagster_runs(home: Path) -> None:
    """Where an applying run's time goes, from the instance's own records: queued (the sensor's request to the
    queue's launch), starting (launch to the run's process executing), working (to the run's end), and the API
    requests of each set of hints applied (from the op's log lines: a run that stays applies several)."""
    from dagster import DagsterEventType, DagsterInstance
    from dagster._core.instance.ref import InstanceRef

    phases: dict[str, list[float]] = {"queued": [], "starting": [], "working": []}
    requests: list[int] = []
    with DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        records = instance.get_run_records()
        for record in records:
            entries = instance.all_logs(record.dagster_run.run_id)
            marks = {entry.dagster_event.event_type: entry.timestamp for entry in entries
                     if entry.dagster_event is not None}
            launched, began = marks.get(DagsterEventType.RUN_STARTING), marks.get(DagsterEventType.RUN_START)
            ended = marks.get(DagsterEventType.RUN_SUCCESS) or marks.get(DagsterEventType.RUN_FAILURE)
            if launched is None or began is None or ended is None:
                continue
            phases["queued"].append(launched - record.create_timestamp.timestamp())
            phases["starting"].append(began - launched)
            phases["working"].append(ended - began)
            for entry in entries:
                found = re.search(r"(\d+) requests", entry.user_message or "")
                if entry.dagster_event is None and found:
                    requests.append(int(found.group(1)))
    # a run without its three marks (launched, started, ended) is counted but left out of the phases: a run that
    # stays may still be applying when the daemon stops at the end (the smoke's runs inside the daemon ended so)
    summary = ", ".join(f"{name} p50 {statistics.median(values):.1f} s (max {max(values):.1f} s)"
                        for name, values in phases.items() if values) or "no run with all its phases recorded"
    print(f"  dagster runs: {len(records)} ({len(phases['working'])} with their phases); {summary}; API requests "
          f"per set of hints p50 {statistics.median(requests) if requests else float('nan'):.0f}, "
          f"total {sum(requests)}")


def _print_slowest(watch: VisibilityWatch, started_wall: float, count: int) -> None:
    """The `count` slowest events: when their write came (seconds into the changes), what it was, its latency
    (where a tail comes from: a cold first run, a set waiting behind another)."""
    for write, latency in sorted(watch.seen, key=lambda seen: -seen[1])[:count]:
        print(f"  slow: {latency:.1f} s, written at +{write.at - started_wall:.1f} s, {write.event} {write.resource}")


def _print_split(watch: VisibilityWatch, bursts: list[tuple[float, float]]) -> None:
    """p50/p95 of the writes made one at a time and of those made in bursts (at 10 requests/s, a burst of
    50 changes needs several seconds of GETs whatever the path)."""
    in_burst = [lat for write, lat in watch.seen if any(a <= write.at <= b for a, b in bursts)]
    single = [lat for write, lat in watch.seen if not any(a <= write.at <= b for a, b in bursts)]
    for name, values in (("single changes", single), ("changes in bursts of 50", in_burst)):
        if values:
            print(f"  {name}: {len(values)} events, p50 {statistics.median(values):.1f} s, "
                  f"p95 {percentile(values, 0.95):.1f} s, max {max(values):.1f} s")


def _print(path, args, made, writes, watch, arrived, pending, raw, marts, requests, elapsed, poll_cost, root) -> bool:
    lat = watch.latencies
    p95 = percentile(lat, 0.95) if lat else float("nan")
    polls_minute = elapsed / 60.0 * poll_cost
    polls_same = elapsed / max(p95, 1.0) * poll_cost
    print(f"\n== path {path}, hints via {args.hints}, mix {args.mix}: {made} changes ({writes} events) "
          f"over {elapsed:.0f} s, scale {args.scale}, {args.rate_limit:g} requests/s; work dir {root}")
    if lat:
        print(f"latency API write -> readers' copy: p50 {statistics.median(lat):.1f} s, p95 {p95:.1f} s, "
              f"max {max(lat):.1f} s over {len(lat)} events ({watch.superseded} created and deleted between "
              f"runs: nothing to see; {len(watch.outstanding)} never visible)")
    print(f"mismatches vs the sandbox: raw {len(raw.mismatches)} over {raw.records_compared} records, "
          f"marts {len(marts.mismatches)}; hints pending at the end {pending}")
    for line in (raw.mismatches + marts.mismatches)[:10]:
        print(f"  {line}")
    print(f"API requests: {requests} ({requests / max(made, 1):.2f} per change)")
    print(f"polling instead: a no-change sync costs {poll_cost} requests; every minute over {elapsed:.0f} s: "
          f"{polls_minute:.0f} requests (freshness about 60 s + a sync); every {p95:.1f} s (this p95): "
          f"{polls_same:.0f} requests, {polls_same / max(requests, 1):.1f}x this path's")
    per_change = requests / max(made, 1)
    per_minute_same = 60.0 / max(p95, 1.0) * poll_cost
    print(f"polling at this freshness costs {per_minute_same:.0f} requests/min whatever changes; this path "
          f"{per_change:.2f} per change: 10x fewer up to {per_minute_same / per_change / 10:.1f} changes/min, "
          f"break-even at {per_minute_same / per_change:.1f} changes/min (this run: {made / elapsed * 60:.0f}/min)")
    return arrived and not raw.mismatches and not marts.mismatches and pending == 0


def main(argv: list[str] | None = None) -> int:
    """Runs the chosen paths; exit code 0 when every path delivered every change exactly."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=200)
    parser.add_argument("--scale", type=int, default=500)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--rate-limit", type=float, default=10.0,
                        help="the sandbox's requests/s per IP, and the first build's pacing (0: neither limits)")
    parser.add_argument("--paths", default="follow,dagster")
    parser.add_argument("--mix", choices=sorted(MIXES), default="office",
                        help="how the changes are spaced (office: a change every ~20 s and a burst of 50 every "
                             "~5 min; busy: a change every ~1.75 s and a burst after 40)")
    parser.add_argument("--hints", choices=("receiver", "listener"), default="receiver",
                        help="how hints reach the spool (default: deliveries to the real receiver over HTTP)")
    parser.add_argument("--poll-s", type=float, default=1.0, help="sync --follow's poll interval")
    parser.add_argument("--sensor-interval-s", type=int, default=3, help="the hints sensor's minimum interval")
    parser.add_argument("--slowest", type=int, default=0, help="print the N slowest events, with when they came")
    parser.add_argument("--linger-s", type=float, default=None,
                        help="INVOICING_HINTS_LINGER_S of the applying runs (default: the product's); a stopping "
                             "daemon waits for the run inside it to end, so the smoke run keeps it short")
    parser.add_argument("--standby", action="store_true",
                        help="INVOICING_HINTS_STANDBY: Dagster keeps a hints run of the portal waiting before any hint")
    parser.add_argument("--dequeue-s", type=int, default=1, help="the Dagster run queue's dequeue interval")
    parser.add_argument("--runs-in-daemon", action="store_true",
                        help="Dagster's runs inside the daemon, not a process each (the smoke run's: seconds less a "
                             "run; not what a deployment does)")
    args = parser.parse_args(argv)
    results = [run_path(path.strip(), args) for path in args.paths.split(",") if path.strip()]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
