"""The hints spool: replay guard, one pending hint per record, acknowledgement that keeps newer arrivals,
appends from another process while a reader holds the spool open, and a new spool opened by several at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from contextlib import closing

from pipelines.invoicing.webhooks.hint_spool import Hint, HintSpool, spool_path


def _hint(record_id: str, event: str = "document.updated", resource: str = "documents") -> Hint:
    return Hint("default", resource, record_id, event)


def test_spool_sits_beside_the_warehouse(tmp_path):
    assert spool_path(tmp_path / "warehouse.duckdb") == tmp_path / "warehouse.hints.sqlite"


def test_a_replayed_delivery_spools_nothing(tmp_path):
    with HintSpool(tmp_path / "s.sqlite") as spool:
        assert spool.append("d1", _hint("A"), received_at=100.0)
        assert not spool.append("d1", _hint("B"), received_at=101.0)
        assert [(h.record_id, h.received_at) for h in spool.pending()] == [("A", 100.0)]


def test_a_flood_keeps_one_hint_per_record_with_the_newest_event(tmp_path):
    with HintSpool(tmp_path / "s.sqlite") as spool:
        for n in range(50):
            spool.append(f"d{n}", _hint("A", "document.updated"), received_at=100.0 + n)
        spool.append("d50", _hint("A", "document.deleted"), received_at=200.0)
        spool.append("d51", _hint("A", resource="customers", event="customer.updated"), received_at=201.0)
        pending = spool.pending()
        assert spool.pending_count() == 2
        by_resource = {h.resource: h for h in pending}
        # received_at stays the first arrival: the latency of the oldest unapplied change
        assert by_resource["documents"].event == "document.deleted"
        assert by_resource["documents"].received_at == 100.0
        assert by_resource["customers"].event == "customer.updated"


def test_acknowledging_keeps_a_hint_delivered_again_after_it_was_read(tmp_path):
    with HintSpool(tmp_path / "s.sqlite") as spool:
        spool.append("d1", _hint("A"))
        spool.append("d2", _hint("B"))
        read = spool.pending()
        spool.append("d3", _hint("A"))  # A changes again while the run fetches it
        assert spool.acknowledge(read) == 1
        assert [h.record_id for h in spool.pending()] == ["A"]


def test_pending_filters_by_portal(tmp_path):
    with HintSpool(tmp_path / "s.sqlite") as spool:
        spool.append("d1", Hint("acme", "customers", "C1", "customer.updated"))
        spool.append("d2", Hint("beta", "customers", "C1", "customer.updated"))
        assert [h.portal_id for h in spool.pending("beta")] == ["beta"]
        assert spool.pending_count() == 2


def test_another_process_appends_while_this_one_reads(tmp_path):
    path = tmp_path / "s.sqlite"
    with HintSpool(path) as spool:
        assert spool.pending() == []
        child = (
            "import sys; from pipelines.invoicing.webhooks.hint_spool import Hint, HintSpool\n"
            "with HintSpool(sys.argv[1]) as s:\n"
            "    for n in range(20): s.append(f'd{n}', Hint('default', 'items', f'I{n}', 'product.updated'))\n"
        )
        subprocess.run([sys.executable, "-c", child, str(path)], check=True, timeout=60)
        assert sorted(h.record_id for h in spool.pending()) == sorted(f"I{n}" for n in range(20))


def test_several_connections_opening_a_new_spool_at_once_all_open_it(tmp_path):
    # The receiver and an applying run often create the spool together; the switch to WAL must wait for the
    # other, not fail. Without the wait this lost about 2 % of the opens (9 of 400 here).
    rounds, openers = 100, 4
    failures: list[str] = []
    opened: list[int] = []

    def open_spool(path, barrier: threading.Barrier) -> None:
        barrier.wait(timeout=60)
        try:
            with HintSpool(path) as spool:
                opened.append(spool.pending_count())
        except sqlite3.OperationalError as error:
            failures.append(str(error))

    for round_number in range(rounds):
        barrier = threading.Barrier(openers)
        threads = [threading.Thread(target=open_spool, args=(tmp_path / f"{round_number}.sqlite", barrier))
                   for _ in range(openers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    assert failures == []
    assert opened == [0] * (rounds * openers)
    with closing(sqlite3.connect(tmp_path / "0.sqlite")) as reader:  # SQLite's own word, not the spool's
        assert reader.execute("pragma journal_mode").fetchone()[0] == "wal"
