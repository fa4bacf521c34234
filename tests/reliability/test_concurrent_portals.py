"""Issue 15, point 2: four sync processes, four portals, ONE host with ONE per-IP limit of 10 requests/s.

A `SandboxHost` serves four seeded portals on one port behind one limiter, as the service serves every
portal of a firm behind its per-IP limit. Four `invoicing-warehouse sync` processes run at once (each its
own warehouse file), sharing the host's rate budget. The server answers no 429, and every warehouse equals
its own portal's truth field by field (`harness/warehouse_truth.py`).

The syncs pace at 8 requests/s (`--rate-limit 8`) against the server's 10: two requests of slack per server
window for requests that a starved process sends late, or that the sandbox, a Python process on the same
busy 2-core machine as the four syncs, counts late (on that machine a run at exactly 10 met one 429 in four
runs, and at 9 one in about ten, 2026-11-25). Sharing is what the test proves: four processes pacing alone
at 8/s would send 32/s to a limit of 10 and meet hundreds of 429s. The rate at exactly 10/s is measured by
`bench/multi_portal.py` (bench/RESULTS.md).

Sharing must not starve them either. The server's own record of arrivals (every request its one limiter
counted) gives two floors: in its busiest one-second window the host served at least 6 requests (the shared
budget lets the processes reach about its pace of 8 when they all want), and from the first request to the
last at least 2 requests/s on average (a budget that made the processes wait for each other far beyond the
pace, or forever, fails; without it only the 300-s timeout bounded them). Measured on the 2-core machine:
7-8 requests in every busy window and 7.4/s on average, idle; 8 and 4.0/s with the load at 10-14.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from harness.common import quiet
from harness.multi_portal import arrival_times, sync_all
from harness.warehouse_truth import compare_raw_tables
from invoicing_sandbox.host import SandboxHost

# alone, after the parallel phase (scripts/test): processes share the host's 10 requests/s and the server counts every
# window
pytestmark = pytest.mark.serial

PORTALS = 4
RESOURCES = "customers,items,documents,suppliers"
TABLES = ("customers", "items", "documents", "suppliers")


def test_four_processes_sync_four_portals_behind_one_limit_without_a_429_and_exactly(tmp_path):
    with SandboxHost(portals=PORTALS, scale=300, seed=11) as host:
        for portal in host.portals.values():
            quiet(portal)  # past the windows' lag: all is read
        arrivals = arrival_times(host)
        runs = sync_all(host, tmp_path, tmp_path / "budget", "--resources", RESOURCES,
                        "--rate-limit", "8", timeout=300)
        refused = host.rate_limited()
        for name, run in runs.items():
            assert run.returncode == 0, f"{name}: {run.output[-2000:]}"
            assert run.throttled == 0, f"{name}: {run.output[-2000:]}"
            comparison = compare_raw_tables(run.workspace.warehouse, host.portals[name].portal, tables=TABLES)
            assert comparison.records_compared > 300
            assert not comparison.mismatches, f"{name}: {comparison.summary()}"
    assert refused == 0
    assert len({run.workspace.warehouse for run in runs.values()}) == PORTALS
    assert len(arrivals) == sum(run.requests or 0 for run in runs.values())  # each sync's own count
    busiest = max(Counter(math.floor(at) for at in arrivals).values())  # the server's windows: whole seconds
    span = arrivals[-1] - arrivals[0]
    print(f"\n{len(arrivals)} requests in {span:.2f} s ({(len(arrivals) - 1) / span:.2f}/s), busiest window {busiest}")
    assert busiest >= 6, f"at most {busiest} requests in any one-second window: the shared budget is underused"
    assert (len(arrivals) - 1) / span >= 2, f"{len(arrivals)} requests took {span:.2f} s: the budget starves"
