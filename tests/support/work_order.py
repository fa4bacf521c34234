"""How the parallel phase of `scripts/test` hands test files to its workers (pytest-xdist).

xdist's `--dist loadfile` keeps a file whole on one worker (its module fixtures built once, its tests in their
order) but hands files out by their number of tests, most first: the sandbox's files of many fast tests came
first and the few long DuckLake, Dagster and crash files last, so one worker ran them alone at the end while
the other had stopped. `HeaviestFirst` hands out the files that measured longest first (longest processing
time first: the classic bound for splitting jobs over machines), then the others in their collection order,
and keeps the dashboard's files together: they share one dashboard process, one demo warehouse and one
browser per worker, built once instead of twice.

`HEAVIEST` lists files by their measured time on a fresh clone, longest first. A stale list costs time, never
correctness; refresh it from a run's JUnit report with
`python -m tests.support.work_order report.xml` (the report of `scripts/test --junitxml=report.xml`).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from xml.etree import ElementTree

from xdist.scheduler import LoadScopeScheduling

DASHBOARD = "tests/invoicing_warehouse/dashboard/"
# files whose tests share nothing (no module fixture: each starts a subprocess of its own): every test is a unit
# of its own, so that the bench scripts' smoke runs (about 200 s in all, issue 40 point 6) spread over the workers
# instead of making one worker's queue the whole run's length
SPLIT_BY_TEST: tuple[str, ...] = ("tests/bench/test_bench_smoke.py",)

# measured on a fresh clone of main, 2026-11-26, one process (seconds of setup, call and teardown)
HEAVIEST: tuple[str, ...] = (
    # issue 40, point 6, added by hand: every bench/ script's smoke in the default run, 18 runs in one file (their
    # times: bench/RESULTS.md, "The benchmarks' smoke runs"); the longest file, so it starts first
    "tests/bench/test_bench_smoke.py",
    # 150 s (issue 31 added the aged balances, Trends, Portals and export tests)
    "tests/invoicing_warehouse/dashboard/",
    "tests/pipelines/load/test_invoicing_sync.py",  # 107 s
    "tests/pipelines/load/test_ducklake_sync.py",  # 102 s
    "tests/reliability/test_clock_lead_under_faults.py",  # 70 s
    "tests/reliability/test_secret_leaks.py",  # 67 s
    "tests/pipelines/read/test_invoicing_tie_groups.py",  # 63 s
    "tests/pipelines/read/test_paging_not_honoured.py",  # 58 s (issue 40 adds about 30 s: F16, mutations on)
    "tests/reliability/test_list_fails_alone.py",  # about 50 s (issue 40, added by hand: 88 s on a loaded machine)
    "tests/invoicing_warehouse/engine/test_ducklake_models.py",  # 56 s
    "tests/pipelines/load/test_portals_sync.py",  # 55 s
    "tests/pipelines/load/test_invoicing_resilience.py",  # 55 s
    "tests/pipelines/webhooks/test_sync_follow.py",  # 55 s
    "tests/reliability/test_chaos_runs.py",  # 53 s
    "tests/sql/test_contract_rows.py",  # 49 s
    "tests/security/test_attacks_config.py",  # 48 s (added by hand from its own run, issue 30)
    "tests/test_house_rules.py",  # 46 s
    "tests/reliability/test_host_budget.py",  # 43 s
    "tests/dagster_project/test_materialize.py",  # 42 s
    "tests/pipelines/read/test_invoicing_records.py",  # 41 s
    "tests/invoicing_warehouse/engine/test_ducklake_s3.py",  # about 40 s (issue 33, added by hand from its own run)
    "tests/sql/test_month_end_carry_over.py",  # issue 40, added by hand (see its run in bench/RESULTS.md)
    "tests/sql/test_month_end_trends.py",  # about 30 s (issue 31, added by hand)
    "tests/pipelines/read/test_page_size_per_list.py",  # 40 s
    "tests/reliability/test_sigkill_crash_safety.py",  # 37 s
    "tests/pipelines/test_invoicing_capabilities.py",  # 35 s
    "tests/reliability/test_gate_paths.py",  # 34 s
    "tests/dagster_project/test_partial_sync_run.py",  # about 25 s (issue 40, added by hand: 41 s on a loaded machine)
    "tests/pipelines/webhooks/test_hint_windows.py",  # 30 s
    "tests/dagster_project/test_webserver.py",  # 28 s
    "tests/dagster_project/test_demo.py",  # 27 s
    "tests/pipelines/webhooks/test_hint_payments.py",  # 27 s
    "tests/pipelines/load/test_ducklake_hints.py",  # 26 s
    "tests/reliability/test_concurrent_portals.py",  # 25 s
    "tests/security/test_attacks_local.py",  # 24 s (added by hand, issue 30)
    "tests/sql/test_currency_against_sandbox.py",  # 24 s
    "tests/reliability/test_no_change_sync.py",  # 23 s
    "tests/test_packaging.py",  # 22 s
    "tests/pipelines/webhooks/test_hint_linger.py",  # 22 s
    "tests/pipelines/read/test_derived_changes.py",  # 22 s
    "tests/security/test_attacks_webhooks.py",  # 20 s (added by hand, issue 30)
    "tests/pipelines/webhooks/test_hint_loss.py",  # 19 s
    "tests/pipelines/webhooks/test_hint_ordering.py",  # 18 s
    "tests/reliability/test_bad_input_table.py",  # 18 s
    "tests/pipelines/webhooks/test_hint_crash.py",  # 18 s
    "tests/sql/test_receivables_contract_gaps.py",  # 17 s
    "tests/reliability/test_readers_during_writes.py",  # 16 s
    "tests/sql/test_refunds_against_sandbox.py",  # 12 s
    "tests/sql/test_models_against_sandbox.py",  # 11 s
    "tests/pipelines/webhooks/test_spool_across_hosts.py",  # about 10 s (issue 33, added by hand)
    "tests/dagster_project/test_runs_across_hosts.py",  # about 9 s (issue 33, added by hand)
    "tests/pipelines/http/test_database_budget_settings.py",  # about 9 s (issue 33, added by hand)
)


def work_unit(nodeid: str) -> str:
    """The unit a worker runs whole: the test file, the dashboard's directory, or one test of a file in
    SPLIT_BY_TEST."""
    path = nodeid.split("::", 1)[0]
    if path in SPLIT_BY_TEST:
        return nodeid
    return DASHBOARD if path.startswith(DASHBOARD) else path


def _unit_rank(unit: str) -> int:
    file = unit.split("::", 1)[0]  # a split file's tests keep its rank
    return HEAVIEST.index(file) if file in HEAVIEST else len(HEAVIEST)


class HeaviestFirst(LoadScopeScheduling):
    """xdist's scope scheduling with `work_unit` as the scope, the heaviest units handed out first.

    Only the queue of units is reordered: the workers' collections stay as collected, because xdist sends a
    worker the positions of its tests in its own collection (reordering a collection would run other tests
    than the unit's, splitting files across workers)."""

    def schedule(self) -> None:
        """The first distribution (xdist's, with the units queued heaviest first); later calls are xdist's."""
        assert self.collection_is_completed
        if self.collection is not None:
            super().schedule()
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = list(next(iter(self.registered_collections.values())))
        if not self.collection:
            return
        units: dict[str, dict[str, bool]] = {}
        for nodeid in self.collection:
            units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
        for unit in sorted(units, key=_unit_rank):  # stable: the others keep their collection order
            self.workqueue[unit] = units[unit]
        for _ in range(max(0, len(self.nodes) - len(self.workqueue))):
            unused, _assigned = self.assigned_work.popitem()
            unused.shutdown()
        for node in self.nodes:
            self._assign_work_unit(node)
        for node in self.nodes:
            self._reschedule(node)
        if not self.workqueue:
            for node in self.nodes:
                node.shutdown()

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)


def heaviest_from_junit(report: str, count: int = 40) -> list[tuple[str, float]]:
    """The `count` work units of a JUnit report that took longest (setup, call and teardown), with seconds."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/")
        # classname is `tests.invoicing_warehouse.dashboard.test_x` for module-level tests, plus `.Class` for methods
        parts = path.split("/")
        while parts and not parts[-1].startswith("test_"):
            parts.pop()
        unit = work_unit("/".join(parts) + ".py")
        seconds[unit] += float(case.get("time", "0"))
    return sorted(seconds.items(), key=lambda item: -item[1])[:count]


if __name__ == "__main__":
    for unit, spent in heaviest_from_junit(sys.argv[1]):
        print(f'    "{unit}",  # {spent:.0f} s')
