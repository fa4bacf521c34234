"""The sandbox delivering to the real receiver over HTTP: every write's event becomes a hint, compared with
the sandbox's own record of its deliveries (`invoicing_sandbox.webhooks.deliveries`), with and without delivery faults
(loss: the hints are exactly those of the deliveries sent; duplicates: one hint; reordering, delay and
bursts: nothing lost)."""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
from collections.abc import Iterator

from harness.receiver_process import wait_until
from invoicing_sandbox.command import add_arguments, config_from
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.mutator import Mutator
from invoicing_sandbox.server import SandboxServer
from pipelines.invoicing.webhooks.hint_events import EVENTS, hint_for_event
from tests.invoicing_sandbox.conftest import client_for, created, small_config
from tests.support.webhook_receiver import ServedReceiver, serving_receiver

CHANGES = 80  # realistic writes of the sandbox's application user: every kind of event


@contextlib.contextmanager
def delivering(tmp_path, **faults) -> Iterator[tuple[SandboxServer, ServedReceiver]]:
    """A sandbox (seeded faults) whose one subscription, to every event, is the receiver's URL."""
    server = SandboxServer(small_config(**faults)).start()
    try:
        with serving_receiver(tmp_path) as served:
            with client_for(server) as client:
                created(client.post("/webhooks", json={"url": served.url(), "events": sorted(EVENTS)}), 200)
            yield server, served
    finally:
        server.stop()


def _write_and_settle(server: SandboxServer, changes: int = CHANGES) -> list:
    """Makes `changes` writes, waits (bounded) until every delivery was sent or lost; the deliveries."""
    mutator = Mutator(server.portal, 0, seed=5)
    for _ in range(changes):
        mutator.step()

    def settled() -> bool:
        deliveries = list(server.webhooks.deliveries)
        return server.webhooks.idle() and all(d.delivered or d.lost for d in deliveries)

    assert wait_until(settled, timeout_s=60), [(d.event, d.attempts) for d in server.webhooks.deliveries
                                               if not (d.delivered or d.lost)]
    deliveries = list(server.webhooks.deliveries)
    assert len(deliveries) >= changes * 0.8  # most writes fire an event (some fire two)
    return deliveries


def _key(delivery) -> tuple[str, str]:
    hint = hint_for_event("default", delivery.event, delivery.envelope["event"]["data"])
    return hint.resource, hint.record_id


def _spooled(served: ServedReceiver) -> set[tuple[str, str]]:
    return {(h.resource, h.record_id) for h in served.pending()}


def _arrival_order(served: ServedReceiver) -> list[str]:
    with contextlib.closing(sqlite3.connect(served.spool_path)) as connection:
        return [row[0] for row in connection.execute("select delivery_id from deliveries order by rowid")]


def test_every_write_becomes_a_hint_with_its_newest_event(tmp_path):
    with delivering(tmp_path) as (server, served):
        deliveries = _write_and_settle(server)
        newest = {_key(d): d.event for d in deliveries}  # write order = delivery order without faults
        assert {h.portal_id for h in served.pending()} == {"default"}
        assert {(h.resource, h.record_id): h.event for h in served.pending()} == newest
        assert len({resource for resource, _ in newest}) >= 4
        assert _arrival_order(served) == [d.id for d in deliveries]
        assert served.receiver.counts["spooled"] == len(deliveries)
        assert server.stats["webhook_lost"] == server.stats["webhook_duplicated"] == 0


def test_lost_deliveries_are_exactly_the_missing_hints(tmp_path):
    with delivering(tmp_path, webhook_loss_rate=0.3) as (server, served):
        deliveries = _write_and_settle(server)
        lost = [d for d in deliveries if d.lost]
        sent = [d for d in deliveries if not d.lost]
        assert server.stats["webhook_lost"] == len(lost)
        assert 0.1 * len(deliveries) < len(lost) < 0.5 * len(deliveries)  # ~30 %, seeded dice
        assert all(d.attempts == [] for d in lost) and all(d.delivered for d in sent)
        assert _spooled(served) == {_key(d) for d in sent}
        assert {_key(d) for d in lost} - {_key(d) for d in sent}  # some records were announced only by a lost one
        assert sorted(_arrival_order(served)) == sorted(d.id for d in sent)


def test_duplicated_deliveries_yield_one_hint(tmp_path):
    with delivering(tmp_path, webhook_duplicate_rate=0.5) as (server, served):
        deliveries = _write_and_settle(server)
        duplicated = [d for d in deliveries if d.duplicates]
        assert server.stats["webhook_duplicated"] == len(duplicated) > 0
        assert all(record["status"] == 200 for d in duplicated for record in d.duplicates)
        assert served.receiver.counts["replayed"] == len(duplicated)
        assert served.receiver.counts["spooled"] == len(deliveries)
        assert _spooled(served) == {_key(d) for d in deliveries}
        assert _arrival_order(served) == [d.id for d in deliveries]  # each id once, in order


def test_reordered_delayed_and_burst_deliveries_lose_nothing(tmp_path):
    faults = {"webhook_reorder_rate": 0.3, "webhook_reorder_depth": 3, "webhook_delay_ms": 5,
              "webhook_delay_jitter_ms": 20, "webhook_burst_size": 6, "webhook_hold_max_ms": 300}
    with delivering(tmp_path, **faults) as (server, served):
        deliveries = _write_and_settle(server)
        assert server.stats["webhook_reordered"] > 0 and server.stats["webhook_bursts"] > 0
        assert server.stats["webhook_delayed"] == len(deliveries)
        assert all(d.delivered for d in deliveries)
        arrived = _arrival_order(served)
        assert sorted(arrived) == sorted(d.id for d in deliveries)
        assert arrived != [d.id for d in deliveries]  # reordered indeed
        assert _spooled(served) == {_key(d) for d in deliveries}


def test_the_sandbox_command_sets_every_delivery_fault_and_leaves_them_off_by_default():
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    names = ("webhook_loss_rate", "webhook_duplicate_rate", "webhook_reorder_rate", "webhook_reorder_depth",
             "webhook_delay_ms", "webhook_delay_jitter_ms", "webhook_burst_size", "webhook_hold_max_ms")
    defaults = config_from(parser.parse_args([]))
    assert {n: getattr(defaults, n) for n in names} == {n: getattr(SandboxConfig(), n) for n in names}
    assert defaults.webhook_loss_rate == defaults.webhook_duplicate_rate == defaults.webhook_reorder_rate == 0
    assert defaults.webhook_delay_ms == defaults.webhook_delay_jitter_ms == defaults.webhook_burst_size == 0
    given = config_from(parser.parse_args([
        "--webhook-loss-rate", "0.1", "--webhook-duplicate-rate", "0.2", "--webhook-reorder-rate", "0.3",
        "--webhook-reorder-depth", "4", "--webhook-delay-ms", "50", "--webhook-delay-jitter-ms", "25",
        "--webhook-burst-size", "10", "--webhook-hold-max-ms", "2000"]))
    assert [getattr(given, n) for n in names] == [0.1, 0.2, 0.3, 4, 50.0, 25.0, 10, 2000.0]
