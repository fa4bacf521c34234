"""Issue 33, point 2: one rate budget per egress IP across hosts, kept in PostgreSQL.

Real processes (`harness/egress_race.py`) that share no file (each its own HOME, XDG_RUNTIME_DIR and
INVOICING_RATE_BUDGET_DIR) and one budget database of the session's real PostgreSQL, each a product
`InvoicingClient` GETting `/me` from a real `SandboxHost` over HTTP. The truths are the server's own: its 429
count, and the arrival time (and source address) of every request its limiter counted, read against its fixed
windows or any one-second span.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import psycopg2
import pytest

from harness.egress_race import await_line, prepare, private_env, race, start, stop
from harness.network_namespaces import NamespacesUnavailable, TwoHosts
from invoicing_sandbox.host import SandboxHost
from pipelines.invoicing.http.host_budget import host_key

# alone, after the parallel phase (scripts/test): the pace is measured against the machine's clock
pytestmark = pytest.mark.serial

REQUESTS = 9  # per racer, the token request aside
RACERS = 3


@pytest.fixture(scope="module")
def budget_db(postgres_cluster) -> dict[str, str]:
    """One budget database: its URL over TCP (with the password apart) and over the Unix socket (the way a
    process in another network namespace reaches it: the socket's folder is the same file system)."""
    postgres_cluster.create_database("rate_budget")
    return {
        "tcp": f"postgresql://{postgres_cluster.user}@127.0.0.1:{postgres_cluster.port}/rate_budget",
        "socket": f"postgresql://{postgres_cluster.user}@/rate_budget?host={postgres_cluster.root}"
                  f"&port={postgres_cluster.port}",
        "password": postgres_cluster.password,
    }


def record_arrivals(host: SandboxHost) -> list[tuple[float, str]]:
    """From now on, (time.monotonic(), source address) of every request the host's limiter counts."""
    arrivals: list[tuple[float, str]] = []
    hit = host.limiter.hit

    def counted(client_ip: str):
        arrivals.append((time.monotonic(), client_ip))
        return hit(client_ip)

    host.limiter.hit = counted  # type: ignore[method-assign]
    return arrivals


@pytest.fixture(scope="module")
def racers_folder(tmp_path_factory) -> Path:
    """The folder of the racers' own folders (one each: HOME, runtime, budget, cache)."""
    return tmp_path_factory.mktemp("racers")


@pytest.fixture(scope="module")
def root_racers(racers_folder, budget_db):
    """Racer processes of this machine's network, each in its own folders, serving the module's races."""
    processes = [start("race", private_env(racers_folder / f"r{i}", budget_db["tcp"],
                                           INVOICING_RATE_BUDGET_PASSWORD=budget_db["password"]))
                 for i in range(1, RACERS + 1)]
    yield processes
    stop(processes)


def run_race(host: SandboxHost, racers, requests: int = REQUESTS):
    """Racer i GETs `/me` of portal p(i+1) `requests` times, all at once; their reports."""
    for racer, portal in zip(racers, host.portals.values(), strict=False):
        prepare(racer, portal.base_url, portal.client_id, portal.client_secret, requests)
    return race(racers[:len(host.portals)])


def most_in_one_second(times: list[float]) -> int:
    """The most arrivals in any span of one second (a sliding window over the sorted times)."""
    times = sorted(times)
    most, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= 1.0:
            first += 1
        most = max(most, last - first + 1)
    return most


def budget_rows(budget_db: dict[str, str]) -> dict[tuple[str, str], int]:
    """(egress, API host) -> grants recorded, read from the budget's table."""
    connection = psycopg2.connect(budget_db["tcp"], password=budget_db["password"])
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT egress, api_host, state -> 'state' -> 'seq' FROM invoicing_rate_budget")
            return {(egress, api_host): int(seq or 0) for egress, api_host, seq in cursor.fetchall()}
    finally:
        connection.close()


def test_processes_sharing_no_file_share_one_budget_in_postgresql(root_racers, racers_folder, budget_db):
    with SandboxHost(portals=RACERS, scale=20) as host:
        arrivals = record_arrivals(host)
        results = run_race(host, root_racers)
        refused, served = host.rate_limited(), host.requests()
        key = host_key(host.portals["p1"].base_url)
    assert refused == 0 and sum(r.throttled for r in results) == 0
    assert served == len(arrivals) == RACERS * (REQUESTS + 1)  # each racer's token request counts too
    times = [at for at, _ in arrivals]
    assert max(Counter(math.floor(at) for at in times).values()) <= 10  # the sandbox's windows: whole seconds
    rate = (len(times) - 1) / (times[-1] - times[0])
    print(f"\n{len(times)} requests from {RACERS} processes in {times[-1] - times[0]:.2f} s: {rate:.2f}/s")
    # <= 10/s: never more than 10 in any one second (three processes pacing alone would send 30/s; the mean over
    # 30 requests can pass 10/s by the first burst of 10); and used: at the safe pace (9/s) the 30 requests
    # take about 3.3 s; 2 s of slack for a loaded machine (7.8/s was seen at load 30), a starved budget takes longer
    assert most_in_one_second(times) <= 10
    assert times[-1] - times[0] <= len(times) / 9 + 2, f"{len(times)} requests took {times[-1] - times[0]:.2f} s"
    # the one budget was the database's row (every grant in it), not a file of each process
    assert budget_rows(budget_db)[("127.0.0.1", key)] >= len(times)
    assert not [path for i in range(1, RACERS + 1) for path in (racers_folder / f"r{i}" / "budget").iterdir()]


def test_a_sliding_second_server_sees_at_most_ten_in_any_second(root_racers):
    with SandboxHost(portals=RACERS, scale=20, rate_limit_mode="sliding") as host:
        arrivals = record_arrivals(host)
        results = run_race(host, root_racers)
        refused = host.rate_limited()
    assert refused == 0 and sum(r.throttled for r in results) == 0
    times = [at for at, _ in arrivals]
    assert len(times) == RACERS * (REQUESTS + 1)
    assert most_in_one_second(times) <= 10  # recomputed from the arrivals, apart from the sandbox's own log


def test_a_process_killed_while_holding_the_budget_leaves_the_others_going(tmp_path, root_racers, budget_db):
    with SandboxHost(portals=2, scale=20) as host:
        holder = start("hold", private_env(tmp_path / "holder", budget_db["tcp"],
                                           INVOICING_RATE_BUDGET_PASSWORD=budget_db["password"]),
                       host.portals["p1"].base_url)
        killer = threading.Timer(1.0, holder.send_signal, args=(signal.SIGKILL,))
        try:
            await_line(holder, "held")  # it holds the row's lock, one reservation made
            began = time.monotonic()
            killer.start()  # SIGKILL a second from now: meanwhile the racers wait on the row
            results = run_race(host, root_racers)
            wall = time.monotonic() - began
        finally:
            killer.cancel()
            stop([holder])
        refused = host.rate_limited()
    assert holder.returncode == -signal.SIGKILL
    assert refused == 0 and all(r.requests == REQUESTS + 1 for r in results)
    # they waited while it held the row, and went on at the pace once it died (22 requests: about 2.2 s at
    # 10/s): PostgreSQL rolls back a transaction whose connection closed, and the row is free
    assert max(r.seconds for r in results) >= 0.5
    assert wall <= 1.0 + 2 * (REQUESTS + 1) / 10 + 4, f"{wall:.1f} s: the dead process held the budget"


@pytest.mark.changes_network
def test_two_hosts_with_two_addresses_each_get_their_own_ten_per_second(tmp_path, budget_db):
    try:
        hosts = TwoHosts().open()
    except NamespacesUnavailable as missing:
        pytest.fail(f"{missing}: this test runs as root, as CI does", pytrace=False)
    racers = []
    try:
        for netns in hosts.names:  # two processes per host, each in its own folders; the database over its socket
            racers += [start("race", private_env(tmp_path / f"{netns}-{i}", budget_db["socket"]), netns=netns)
                       for i in (1, 2)]
        with SandboxHost(portals=4, scale=20, host=hosts.server_address) as host:
            arrivals = record_arrivals(host)
            results = run_race(host, racers, requests=11)
            refused = host.rate_limited()
    finally:
        stop(racers)
        hosts.close()
    assert refused == 0 and sum(r.throttled for r in results) == 0
    assert [r.egress for r in results] == [hosts.addresses[0]] * 2 + [hosts.addresses[1]] * 2
    by_address: dict[str, list[float]] = defaultdict(list)
    for at, address in arrivals:
        by_address[address].append(at)
    assert sorted(by_address) == sorted(hosts.addresses) and all(len(t) == 2 * 12 for t in by_address.values())
    for times in by_address.values():
        assert max(Counter(math.floor(at) for at in times).values()) <= 10
    times = sorted(at for at, _ in arrivals)
    rate = (len(times) - 1) / (times[-1] - times[0])
    print(f"\n{len(times)} requests from two hosts in {times[-1] - times[0]:.2f} s: {rate:.2f}/s")
    assert rate >= 15.0  # two budgets of 10/s: one shared budget could not pass 10/s
    assert {egress for egress, _ in budget_rows(budget_db)} >= set(hosts.addresses)
