"""One spool, two stores (spool_stores.py): the same scenario played on the SQLite file and on PostgreSQL (the
session's real server) gives the same transcript, outcome by outcome, and the transcript is the one written
here by hand from the spool's documented rules (hint_spool.py, dead_letters.py). The SQLite store's behaviour
is pinned by the older tests of this folder; this shows the PostgreSQL store keeps every one of those rules.
"""

from __future__ import annotations

from invoicing_warehouse.engine.target import parse_catalog_dsn
from pipelines.invoicing.webhooks.dead_letters import counts_by_portal, read_dead_letters
from pipelines.invoicing.webhooks.hint_spool import (
    COLLAPSED,
    DEAD,
    PORTAL_MISMATCH,
    REPLAYED,
    SPOOLED,
    WHOLE_RESOURCE,
    Hint,
    HintSpool,
)
from pipelines.invoicing.webhooks.spool_stores import PostgresSpool

BOUND = 3  # pending hints per portal before a flood collapses into the resource's re-read hint
T0 = 1_700_000_000.0


def _hint(portal: str, record: str, event: str = "document.updated", resource: str = "documents") -> Hint:
    return Hint(portal, resource, record, event)


def _scenario(location) -> list:
    """Every rule of the spool exercised once; returns what each step answered (times left out)."""
    said: list = []
    with HintSpool(location, max_pending_per_portal=BOUND) as spool:
        said.append(spool.receive("d1", _hint("acme", "r1"), T0))
        said.append(spool.receive("d1", _hint("acme", "r1"), T0 + 1))  # the same delivery again
        said.append(spool.receive("d2", _hint("acme", "r1", "document.deleted"), T0 + 2))  # same record, newer
        said.append(spool.receive("d3", _hint("acme", "r2"), T0 + 3))
        said.append(spool.receive("d4", _hint("acme", "r3"), T0 + 4))
        said.append(spool.receive("d5", _hint("acme", "r4"), T0 + 5))  # over the bound: the re-read hint
        said.append(spool.receive("d6", _hint("acme", "r5"), T0 + 6))  # collapses into the same one
        said.append(spool.receive("d7", _hint("beta", "r1", resource="customers"), T0 + 7))
        spool.learn_portal("acme", "64f0c0ffee0000000000abcd")
        said.append(spool.receive("d8", _hint("acme", "r9"), T0 + 8, api_portal_id="somebody-else"))
        # learnt: a delivery from outside (the receiver's rule) must name it (review 2, M1)
        said.append(spool.receive("d8-bare", _hint("acme", "r9"), T0 + 8, must_name_portal=True))
        said.append(spool.api_portal_id("acme"))
        pending = spool.pending(now=T0 + 100)
        said.append([(h.portal_id, h.resource, h.record_id, h.event, h.sequence) for h in pending])
        said.append(spool.last_sequence())
        # r2 fails hopelessly: dead at once; a later delivery for it only counts
        [r2] = [h for h in pending if h.record_id == "r2"]
        said.append(spool.set_aside([(r2, "HTTP 422", True)]))
        said.append(spool.receive("d9", _hint("acme", "r2"), T0 + 9))
        said.append([(d.record_id, d.attempts, d.last_error, d.deliveries_since) for d in spool.dead_letters()])
        # r1 delivered again after it was read: its acknowledgement leaves it pending
        said.append(spool.receive("d10", _hint("acme", "r1", "document.updated"), T0 + 10))
        said.append(spool.acknowledge([h for h in pending if (h.portal_id, h.record_id) in (("acme", "r1"), ("acme",
                                                                                                             "r3"))]))
        said.append(spool.acknowledge_resource("acme", "documents", through_sequence=pending[0].sequence))
        said.append(sorted((h.portal_id, h.record_id, h.sequence) for h in spool.pending(now=T0 + 100)))
        said.append((spool.pending_count(), spool.pending_count("acme")))
    said.append(counts_by_portal(location))
    total, letters = read_dead_letters(location)
    said.append((total, [letter.record_id for letter in letters]))
    return said


def test_the_postgresql_store_answers_as_the_file_and_as_the_rules_say(postgres_cluster, tmp_path):
    database = postgres_cluster.create_database("spool_stores_transcript")
    in_file = _scenario(tmp_path / "w.hints.sqlite")
    in_postgres = _scenario(PostgresSpool(parse_catalog_dsn(database, postgres_cluster.password)))
    assert in_postgres == in_file
    # and both are the documented behaviour, step by step
    assert in_file == [
        SPOOLED, REPLAYED, SPOOLED, SPOOLED, SPOOLED, COLLAPSED, COLLAPSED, SPOOLED, PORTAL_MISMATCH, PORTAL_MISMATCH,
        "64f0c0ffee0000000000abcd",
        [("acme", "documents", WHOLE_RESOURCE, "document.updated", 6),  # re-read hints first, then by sequence
         ("acme", "documents", "r1", "document.deleted", 2), ("acme", "documents", "r2", "document.updated", 3),
         ("acme", "documents", "r3", "document.updated", 4), ("beta", "customers", "r1", "document.updated", 7)],
        7,
        1, DEAD, [("r2", 1, "HTTP 422", 1)],
        SPOOLED, 1,  # r3 only: r1 came again (sequence 8 now)
        1,  # the re-read hint (sequence 6 <= 6); r1's newer delivery (8) stays
        [("acme", "r1", 8), ("beta", "r1", 7)],
        (2, 1),
        ({"acme": 1, "beta": 1}, {"acme": 1}),
        (1, ["r2"]),
    ]
