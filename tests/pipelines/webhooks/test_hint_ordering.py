"""Newest `lastUpdate` wins: a fetched record older than the warehouse's row never replaces it (a hand-made
stale row), and duplicated, replayed and reordered deliveries never make a row go backwards."""

from __future__ import annotations

import random
from datetime import timedelta

import duckdb
from hint_support import apply, quiet, raw_value, scheduled_sync

from harness.warehouse_truth import mismatches
from pipelines.invoicing.webhooks.hint_spool import Hint, HintSpool, spool_path


def test_a_record_older_than_the_warehouse_row_is_not_loaded(sandbox, tmp_path):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    customer = sandbox.portal.snapshot("customers")[0]
    # the warehouse holds a newer version than the API serves (as if a later change had been applied first)
    with duckdb.connect(warehouse) as connection:
        connection.execute("update invoicing_raw.customers set name = 'newer', "
                           "last_update = last_update + interval 1 day where id = ?", [customer["id"]])
    with HintSpool.for_warehouse(warehouse) as spool:
        spool.append("late-delivery", Hint("default", "customers", customer["id"], "customer.updated"))
    run = apply(sandbox, warehouse)
    assert (run.load.fetched, run.load.stale, run.acknowledged) == (1, 1, 1)
    with duckdb.connect(warehouse, read_only=True) as connection:
        assert connection.execute("select name from invoicing_raw.customers where id = ?",
                                  [customer["id"]]).fetchone()[0] == "newer"


def test_duplicates_and_reordering_never_move_a_row_backwards(sandbox, tmp_path):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    portal, rng = sandbox.portal, random.Random(16)
    customers = [c["id"] for c in portal.snapshot("customers") if not c.get("deleted")][:4]
    seen: dict[str, list] = {c: [] for c in customers}
    deliveries: list[tuple[str, Hint]] = []
    with HintSpool(spool_path(warehouse)) as spool:
        for round_ in range(3):
            for n, customer_id in enumerate(customers):
                sandbox.clock.advance(timedelta(seconds=1))  # each change its own lastUpdate second
                portal.update("customers", customer_id, {"phone": f"+33 1 00 00 {round_:02d} {n:02d}"})
                deliveries.append((f"r{round_}-{n}", Hint("default", "customers", customer_id, "customer.updated")))
            # this round's deliveries plus replays of earlier ones, in shuffled order
            batch = deliveries[-len(customers):] + rng.sample(deliveries, min(3, len(deliveries)))
            rng.shuffle(batch)
            for delivery_id, hint in batch:
                spool.append(delivery_id, hint)
            apply(sandbox, warehouse)
            for customer_id in customers:
                seen[customer_id].append(raw_value(warehouse, "customers", customer_id, "last_update"))
    for customer_id, versions in seen.items():
        assert versions == sorted(versions) and len(set(versions)) == 3, (customer_id, versions)
    quiet(sandbox)
    assert mismatches(warehouse, portal, tables=("customers",)) == []
    with HintSpool(spool_path(warehouse)) as spool:
        assert spool.pending_count() == 0
