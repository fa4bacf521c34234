"""The suite's own scheduler (tests/support/work_order.py, test-review-2 F21): `HeaviestFirst` is built on private
members of pytest-xdist's `LoadScopeScheduling`, so a real two-worker run checks it: the heaviest file is handed
out first, and every file runs whole, in its order, on one worker, but a file named in SPLIT_BY_TEST, whose
tests go out one by one, to every worker. Plain `--dist loadfile` hands the files out
in collection order, where the heavy file (named last) comes last: this run fails without `HeaviestFirst`."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
# collected in this order
FILES = ("test_a.py", "test_b.py", "test_c.py", "test_d.py", "test_y_split.py", "test_z_heavy.py")
HEAVY = "test_z_heavy.py"
SPLIT = "test_y_split.py"  # independent tests: each its own unit, ranked as heavy as its file
TESTS_PER_FILE = 3

CONFTEST = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})

import tests.support.work_order as work_order

work_order.HEAVIEST = ({SPLIT!r}, {HEAVY!r})  # this run's measured list: the split file, then the heavy one
work_order.SPLIT_BY_TEST = ({SPLIT!r},)


def pytest_xdist_make_scheduler(config, log):
    return work_order.HeaviestFirst(config, log)
"""

TEST_FILE = """
import os
import time


def _log(name):
    # one line per test start, appended whole (O_APPEND): which worker ran which test, in the order they ran
    with open(os.environ["WORK_ORDER_LOG"], "a") as log:
        log.write(f"{{os.environ['PYTEST_XDIST_WORKER']}} {{__name__}} {{name}}\\n")
    time.sleep({pause})

""" + "".join(f"\ndef test_{n}():\n    _log('test_{n}')\n" for n in range(TESTS_PER_FILE))


def test_the_heaviest_file_goes_first_and_every_file_stays_whole_and_in_order(pytester, monkeypatch, tmp_path):
    log = tmp_path / "order.log"
    monkeypatch.setenv("WORK_ORDER_LOG", str(log))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only xdist: the run starts three processes
    pytester.makeconftest(CONFTEST)
    for name in FILES:
        pytester.makepyfile(**{name[:-3]: TEST_FILE.format(pause=0.3 if name in (HEAVY, SPLIT) else 0.05)})
    result = pytester.runpytest_subprocess("-p", "xdist.plugin", "-n", "2", "--dist", "loadfile", "-p",
                                           "no:cacheprovider")
    result.assert_outcomes(passed=len(FILES) * TESTS_PER_FILE)

    runs = [line.split() for line in log.read_text().splitlines()]
    assert len(runs) == len(FILES) * TESTS_PER_FILE
    by_worker: dict[str, list[tuple[str, str]]] = defaultdict(list)
    workers_of: dict[str, set[str]] = defaultdict(set)
    for worker, module, test in runs:
        by_worker[worker].append((module, test))
        workers_of[module].add(worker)
    # the split file's tests, handed out first, one to each worker
    assert len(workers_of.pop(SPLIT[:-3])) == 2, dict(by_worker)
    # whole: each other file on one worker; in order: its tests one after the other, as written
    assert all(len(workers) == 1 for workers in workers_of.values()), dict(workers_of)
    for started in by_worker.values():
        modules = [module for module, _ in started]
        for module in set(modules) - {SPLIT[:-3]}:
            first = modules.index(module)
            assert started[first:first + TESTS_PER_FILE] == [(module, f"test_{n}") for n in range(TESTS_PER_FILE)], \
                started
    # heaviest first: after the split file's tests, the heavy file is the first thing its worker ran
    (heavy_worker,) = workers_of[HEAVY[:-3]]
    unsplit = [run for run in by_worker[heavy_worker] if run[0] != SPLIT[:-3]]
    assert unsplit[0] == (HEAVY[:-3], "test_0"), dict(by_worker)
