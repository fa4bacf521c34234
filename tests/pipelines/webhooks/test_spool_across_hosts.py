"""Hints any host can serve (issue 33, point 3): the receiver on one "host", the applying run on another, sharing
no file, only the DuckLake's PostgreSQL catalog database (the session's real PostgreSQL), deliveries over real HTTP.

Each side is its own process in its own working directory, configured as a deployment is (the lake's settings in
the environment); nothing tells them where the spool is but `spool_location_for`. The truth is read apart from the
spool's code: the test's own psycopg2 connection on `invoicing_hints.hints` after each answer, and the delivery ids
the receiver answered 200. Kills are SIGKILL, from outside, at the worst moments: the receiver right after its
answers, the applying run after it read the hints and before it acknowledged them.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import psycopg2
import pytest

from harness.receiver_process import ReceiverProcess
from invoicing_warehouse.engine.target import parse_catalog_dsn
from tests.support.webhook_receiver import envelope

TOKEN = "tok-" + "h5Vw" * 8
# The applying host's side: what invoicing_warehouse/runs/hints.apply_pending does with the spool, around the
# warehouse's work: read the portal's pending hints, (load, build, publish), then acknowledge the ones read. It says
# what it read and waits for a line before acknowledging, so the test can deliver meanwhile, or kill it there.
APPLYING_SIDE = """
import json, sys
from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_location_for
from invoicing_warehouse.engine.target import target_from_env
location = spool_location_for(target_from_env())  # as invoicing_warehouse/runs/hints.spool_for finds it
print(json.dumps({"spool": str(location)}), flush=True)
with HintSpool(location) as spool:
    hints = spool.pending("default")
    print(json.dumps({"read": sorted(h.record_id for h in hints)}), flush=True)
    sys.stdin.readline()  # the warehouse's load, build and publication happen here
    print(json.dumps({"acknowledged": spool.acknowledge(hints)}), flush=True)
"""


@pytest.fixture(scope="module")
def two_hosts(postgres_cluster, tmp_path_factory):
    """The catalog database and the environment of each host (its own working directory and lake data path)."""
    dsn = postgres_cluster.create_database("spool_two_hosts")
    hosts = {}
    for name in ("host-a", "host-b"):
        folder = tmp_path_factory.mktemp(name)
        hosts[name] = (folder, {"INVOICING_WAREHOUSE_ENGINE": "ducklake", "INVOICING_DUCKLAKE_CATALOG": dsn,
                                "INVOICING_DUCKLAKE_DATA_PATH": str(folder / "lake-data"),
                                "INVOICING_DUCKLAKE_PASSWORD": postgres_cluster.password})
    return dsn, postgres_cluster.password, hosts


def _pending_in_postgres(dsn: str, password: str) -> dict[str, int]:
    """record id -> sequence of the pending hints, read with a connection of the test's own."""
    parts = parse_catalog_dsn(dsn)
    connection = psycopg2.connect(host=parts.host, port=parts.port, user=parts.user, dbname=parts.database,
                                  password=password)
    with contextlib.closing(connection), connection.cursor() as cursor:
        cursor.execute("select record_id, sequence from invoicing_hints.hints where portal_id = 'default'")
        return {str(record): int(sequence) for record, sequence in cursor.fetchall()}


class ApplyingRun:
    """The applying host's process (APPLYING_SIDE) in its own working directory."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("INVOICING_")}
        environment.update(env, PYTHONUNBUFFERED="1",
                           PYTHONPATH=str(Path(__file__).resolve().parents[3]))
        self.process = subprocess.Popen([sys.executable, "-c", APPLYING_SIDE], cwd=folder, env=environment,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.spool = self._line()["spool"]
        self.read = self._line()["read"]

    def _line(self) -> dict:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(15)
            raise AssertionError(f"the applying run ended: {self.process.stderr.read() if self.process.stderr else ''}")
        return json.loads(line)

    def acknowledge(self) -> int:
        """Lets it acknowledge what it read; returns how many it removed."""
        assert self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        removed = int(self._line()["acknowledged"])
        assert self.process.wait(15) == 0
        return removed

    def kill(self) -> int:
        """SIGKILL before it acknowledged."""
        self.process.kill()
        return self.process.wait(15)


def test_hints_received_on_one_host_are_applied_on_another_through_postgresql(two_hosts):
    dsn, password, hosts = two_hosts
    (folder_a, env_a), (folder_b, env_b) = hosts["host-a"], hosts["host-b"]
    answered: list[str] = []
    receiver = ReceiverProcess(folder_a / "warehouse.duckdb", TOKEN, env=env_a)
    try:
        with httpx.Client(timeout=30.0, trust_env=False) as http:
            for n in range(12):
                record = f"{n:024x}"
                answer = http.post(receiver.url(), json=envelope(f"delivery-{n}", record_id=record))
                assert answer.status_code == 200 and answer.json() == {"status": "spooled"}, answer.text
                # 200 only once stored: the hint is committed when the answer arrives, for any other connection
                assert record in _pending_in_postgres(dsn, password)
                answered.append(record)
            assert "(schema invoicing_hints)" in receiver.output and password not in receiver.output

            # host B reads them, is killed before acknowledging: every hint stays pending
            killed = ApplyingRun(folder_b, env_b)
            assert killed.spool == f"{parse_catalog_dsn(dsn).public()} (schema invoicing_hints)"  # no password
            assert killed.read == sorted(answered)
            assert killed.kill() == -9
            assert sorted(_pending_in_postgres(dsn, password)) == sorted(answered)

            # host B applies again while a record is delivered anew: that record stays pending
            applying = ApplyingRun(folder_b, env_b)
            assert applying.read == sorted(answered)
            replay = http.post(receiver.url(), json=envelope("delivery-3", record_id=answered[3]))
            assert replay.json() == {"status": "replayed"}  # the delivery ids live in PostgreSQL too
            again = http.post(receiver.url(), json=envelope("delivery-new", record_id=answered[5]))
            assert again.status_code == 200 and again.json() == {"status": "spooled"}
            before = _pending_in_postgres(dsn, password)
            assert applying.acknowledge() == len(answered) - 1
            last = http.post(receiver.url(), json=envelope("delivery-last", record_id="f" * 24))
            assert last.json() == {"status": "spooled"}
    finally:
        assert receiver.kill() == -9  # right after its last answer: no graceful shutdown
    # the newer delivery of record 5 waits for the next run, and the last answer survived the kill
    assert _pending_in_postgres(dsn, password) == {answered[5]: before[answered[5]], "f" * 24: before[answered[5]] + 1}
