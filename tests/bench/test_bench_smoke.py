"""Every script in bench/ runs, at a size that takes seconds, and prints its figures (review 2, F19: scripts that no
test ran rotted unseen: the doorbell bench died on the receiver's token rule and ended in a ZeroDivisionError).

Each script runs as a person runs it (`python bench/<script> <small size>`, its own process, from the checkout's
root, its temporary files under the test's folder); the test asserts that it exited 0 and printed the lines of
its figures, never their values (the figures are the bench's to print, not a test's to judge). A script whose
exit code is its verdict (chaos.py, webhook_latency.py: 0 only when every record is exact) is held to it.
A new script in bench/ fails `test_every_bench_script_has_a_smoke_run` until it has an entry here.

Every entry runs in the default test run (issue 40, point 6): the scripts whose smallest size still took tens of
seconds (a PostgreSQL server and a lake, Dagster's daemon, a chaos seed built through the gate after every sync,
two contenders' syncs, several sync processes) have knobs that make them tiny without changing what their full
size measures: no pacing where the service's 10 requests/s only made the smoke wait (`--rate-limit 0`), fewer
timed syncs, Dagster's runs inside its daemon. Their times: bench/RESULTS.md ("The benchmarks' smoke runs").
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
# the run's bound, then SIGINT's (the script's `finally` blocks stop the servers and processes it started, in
# sessions of their own that a kill of the script would leave running), within the test's own timeout
TIMEOUT_S = 480  # the Dagster path took 325 s at a load of 25-45 (bench/RESULTS.md)
STOP_S = 60


@dataclass(frozen=True)
class Smoke:
    """A script's smallest run: its arguments (`{tmp}`: the test's folder) and the lines its figures print."""

    args: tuple[str, ...]
    prints: tuple[str, ...]  # regular expressions, each matching one line of the output
    own_tmp: bool = False  # keeps its work folder (tempfile.mkdtemp) for a person to look into: in the test's
    env: dict[str, str] = field(default_factory=dict)  # settings of its own, over the suite's


SMOKE: dict[str, Smoke] = {
    # unpaced (`--rate-limit 0`): the faults, the mutations and the gate after every sync stay; the 10 requests/s
    # of the service only made the smoke wait
    "chaos.py": Smoke(("--seeds", "1", "--scale", "20", "--incremental-syncs", "0", "--crash-seeds", "0",
                       "--no-bad-input", "--rate-limit", "0", "--workdir", "{tmp}"),
                      (r"^records compared: \d+", r"^mismatches: \d+$", r"^availability: \d+/\d+ runs",
                       r"^RESULT: all exact$")),
    "compare_generic.py": Smoke(("--scale", "20", "--repeats", "1", "--scenarios", "full", "--latency-ms", "0",
                                 "--rate-limit", "0", "--without-events", "--out", "{tmp}"),
                                (r"^\| full \| pipeline \| 1 \|", r"^\| full \| generic \| 1 \|")),
    # the browser at the tests' priority (tests/invoicing_warehouse/dashboard/chromium_at_the_tests_priority says why);
    # the trends published by the gate as a run's are (the suite turns them off): else the dashboard builds them on
    # start
    "dashboard_render.py": Smoke(("--skip-demo", "--documents", "500", "--pages", "Receivables",
                                  "--chromium", str(ROOT / "tests" / "invoicing_warehouse" / "dashboard"
                                                    / "chromium_at_the_tests_priority")),
                                 (r"Receivables +cold +[\d.]+ s", r"As-of \S+ \(models built in memory\): +[\d.]+ s"),
                                 env={"INVOICING_PUBLISH_TRENDS": "1"}),
    "demo_figures.py": Smoke(("--seeds", "1", "--scale", "50"),
                             (r"^seed 1 \S+: .*overdue customers \d+/\d+ owing.*DSO",)),
    "expected_payments_backtest.py": Smoke(("--seeds", "1", "--scale", "60", "--cuts", "30"),
                                           (r"MAE +[\d.]+ days over \d+ invoices",)),
    "incremental_fixed_costs.py": Smoke(("--scale", "30", "--runs", "1", "--latency-ms", "0", "--rate-limit", "0",
                                         "--skip-compare"),
                                        (r"^no-change sync process: median [\d.]+ s over 1 runs",)),
    # one small sync after the first (the upkeep has a snapshot to expire), no no-change sync timed: each sync into
    # the lake costs seconds of CPU
    "lake_upkeep.py": Smoke(("--syncs", "1", "--changes", "1", "--scale", "5", "--timed-syncs", "0"),
                            (r"^catalog rows +\d+ +\d+", r"^snapshots +\d+ +\d+", r"^reader open s +[\d.]+",
                             r"^readers' rows at the publication: unchanged by the upkeep")),
    # a firm: portals generated beside the sandbox's, the timed full publication, the doorbell through `follow`
    "firm_size.py": Smoke(("--portals", "3", "--documents", "300", "--changes", "2", "--scale", "30", "--paths",
                           "follow", "--gate-runs", "1"),
                          (r"^full models and publication .*: [\d.]+ s wall, [\d.]+ s CPU, peak memory \d+ MiB",
                           r"latency API write -> readers' copy: p50 [\d.]+ s, p95 [\d.]+ s",
                           r"^mismatches vs the sandbox: raw 0 over \d+ records, marts 0",
                           r"^  applying runs: \d+; each .* p95 [\d.]+ s",
                           r"^hint publication .*, every portal: median [\d.]+ s",
                           r"^hint publication .*, by portal: median [\d.]+ s"), own_tmp=True),
    "models_build.py": Smoke(("--documents", "1000"), (r"^total build time: [\d.]+ s wall.*for 1,000 documents",)),
    "multi_portal.py": Smoke(("--portals", "2", "--scale", "20", "--latency-ms", "0"),
                             (r"^requests served \d+", r"fairness max/min [\d.]+")),
    "publication_cost.py": Smoke(("--documents", "1000", "--runs", "1"),
                                 (r"1,000 documents .* publication after a small run: median +[\d.]+ s",)),
    "receiver_answers.py": Smoke(("--deliveries", "20", "--threads", "2"),
                                 (r"^one at a time +20 deliveries +p50", r"^spool: 40 hints for 40 records")),
    "sandbox_pages.py": Smoke(("--scale", "200", "--seconds", "1"),
                              (r"^pages: \d+ in [\d.]+ s = [\d.]+ pages/s", r"^server RSS: \d+ MiB")),
    "sliding_second.py": Smoke(("--processes", "2", "--requests", "5"),
                               (r"429s answered \d+ .* min 11-span [\d.]+ s",)),
    "strict_vs_default.py": Smoke(("--scale", "30",), (r"^default +\d+ +[\d.]+", r"^strict +\d+ +[\d.]+")),
    "sync_throughput.py": Smoke(("--scale", "30", "--latency-ms", "0", "--without-events"),
                                (r"incremental sync, nothing changed", r"^requests/s over the run [\d.]+")),
    # the doorbell through the real receiver and `sync --follow`, then through Dagster's daemon and sensor (its runs
    # inside the daemon: a process per run would add seconds of imports each; they stay 2 s for more hints, not 60:
    # the daemon's stop waited for the lingering run, 30 s of the smoke's 63)
    "webhook_latency.py": Smoke(("--changes", "2", "--mix", "busy", "--scale", "30", "--paths", "follow",
                                 "--rate-limit", "0"),
                                (r"latency API write -> readers' copy: p50 [\d.]+ s, p95 [\d.]+ s",
                                 r"^mismatches vs the sandbox: raw 0 over \d+ records, marts 0"), own_tmp=True),
    "webhook_latency.py --paths dagster": Smoke(
        ("--changes", "2", "--mix", "busy", "--scale", "30", "--paths", "dagster", "--rate-limit", "0",
         "--runs-in-daemon", "--linger-s", "2"),
        (r"latency API write -> readers' copy: p50 [\d.]+ s", r"^  dagster runs: \d+"),
        own_tmp=True),
}

# modules of bench/ that are no script of their own, and the module that imports them (a chain that ends at a
# script whose smoke run runs them)
LIBRARIES = {
    "contenders.py": "compare_generic.py",  # each contender's sync in its child process
    "generic_rest_api.py": "contenders.py",  # dlt's rest_api contender
    "ground_truth.py": "compare_generic.py",  # what the comparison counts as the minimum
}


def _script(entry: str) -> str:
    return entry.split()[0]


def _params() -> list:
    return [pytest.param(entry, id=entry) for entry in SMOKE]


def test_every_bench_script_has_a_smoke_run():
    files = sorted(path.name for path in BENCH.glob("*.py"))
    scripts = {_script(entry) for entry in SMOKE}
    missing = [name for name in files if name not in scripts and name not in LIBRARIES]
    assert not missing, (f"bench/{', bench/'.join(missing)}: no smoke run; add an entry to SMOKE in {__file__} "
                         "(its smallest size and the lines of its figures), or to LIBRARIES if it is no script")
    assert scripts | set(LIBRARIES) == set(files), "an entry names a script that is not in bench/"
    for name in scripts:  # a script runs as one: without its `__main__` guard, `python bench/x.py` does nothing
        assert '__name__ == "__main__"' in (BENCH / name).read_text(), f"bench/{name} is not a script"
    for library, importer in LIBRARIES.items():
        assert f"import {library.removesuffix('.py')}" in (BENCH / importer).read_text() or (
            f"bench.{library.removesuffix('.py')} import" in (BENCH / importer).read_text()), (
            f"bench/{importer} does not import bench/{library}")
        assert '__name__ == "__main__"' not in (BENCH / library).read_text(), f"bench/{library} is a script"
        chain = [library]
        while chain[-1] in LIBRARIES and len(chain) <= len(LIBRARIES):
            chain.append(LIBRARIES[chain[-1]])
        assert chain[-1] in scripts, f"bench/{library} is run by no script with a smoke run ({chain})"


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Runs the script to its end; past TIMEOUT_S, interrupts it as Ctrl-C would and fails with its output."""
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
        try:
            stdout, stderr = process.communicate(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        pytest.fail(f"{' '.join(command[1:])} still running after {TIMEOUT_S} s:\n{(stdout + stderr)[-4000:]}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@pytest.mark.timeout(TIMEOUT_S + STOP_S + 30)
@pytest.mark.parametrize("entry", _params())
def test_the_bench_script_runs_small_and_prints_its_figures(entry, tmp_path):
    smoke = SMOKE[entry]
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in smoke.args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **smoke.env}
    if smoke.own_tmp:  # (not for all: a PostgreSQL server run as `postgres` cannot enter the test's folder)
        env["TMPDIR"] = str(tmp_path)
    done = _run([sys.executable, str(BENCH / _script(entry)), *args], env)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"bench/{entry} exited {done.returncode}:\n{output[-4000:]}"
    for expected in smoke.prints:
        assert re.search(expected, done.stdout, re.MULTILINE), (
            f"bench/{entry} did not print a line matching {expected!r}:\n{output[-4000:]}")
