"""A burst of hints on one resource is read as a narrow window of its list (a page for many records), not a
GET per record; every hinted record the window does not hold is still fetched by id, so the warehouse ends
exact either way. Compared with the sandbox's own records (harness/warehouse_truth.py) and its request count."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hint_support import apply, quiet, scheduled_sync

from harness.warehouse_truth import mismatches
from invoicing_sandbox.contract import ContractProfile
from pipelines.invoicing.webhooks.hint_apply import WINDOW_MARGIN_S, WINDOW_READ_MIN_IDS
from pipelines.invoicing.webhooks.hint_spool import Hint, HintSpool, spool_path

BURST = 20
REFUSING = replace(ContractProfile.default(), window_params_refused_on=("suppliers", "supplier_documents"))


def _new_customers(sandbox, warehouse: str, count: int) -> list[str]:
    """Creates `count` customers and spools a hint for each; returns their ids."""
    ids = []
    with HintSpool(spool_path(warehouse)) as spool:
        for n in range(count):
            ids.append(sandbox.portal.create("customers", {"name": f"Burst client {n:02d}"})["id"])
            spool.append(f"burst-{n}", Hint("default", "customers", ids[-1], "customer.created"))
    return ids


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_burst_is_read_by_a_window_page_not_a_get_per_record(contract, tmp_path, sandbox_factory):
    warehouse = str(tmp_path / "warehouse.duckdb")
    sandbox = _sandbox(sandbox_factory, ContractProfile.named(contract))
    scheduled_sync(sandbox, warehouse)
    _new_customers(sandbox, warehouse, BURST)
    run = apply(sandbox, warehouse)
    assert (run.load.windowed, run.load.fetched, run.acknowledged) == (BURST, 0, BURST)
    assert run.load.requests <= 3, run.line()  # a token, a page (and at most one more), where GETs made 20
    quiet(sandbox)
    assert mismatches(warehouse, sandbox.portal, tables=("customers",), contract=contract) == []


def test_records_changed_before_the_window_are_fetched_by_id(sandbox, tmp_path):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(sandbox, warehouse)
    # a window that misses the changes: here the server's clock runs far ahead of ours (the window is placed
    # on ours until the server answered); in production, deliveries retried long after their changes
    sandbox.clock.advance(timedelta(seconds=10 * WINDOW_MARGIN_S))
    customers = _new_customers(sandbox, warehouse, WINDOW_READ_MIN_IDS + 2)
    run = apply(sandbox, warehouse)
    assert (run.load.windowed, run.load.fetched) == (0, len(customers)), run.line()
    quiet(sandbox)
    assert mismatches(warehouse, sandbox.portal, tables=("customers",)) == []


def _sandbox(sandbox_factory, contract: ContractProfile):
    """A seeded sandbox serving `contract`, past the windows' lag (the factory stops it). On the machine's date,
    whatever the run's: a window is placed on this machine's clock until the server has answered, so a server
    days ahead (a moved date) has every record fetched by id, which is this file's other case; the records
    these tests read are their own, created whatever the date."""
    server = sandbox_factory(seed=16, scale=40, rate_limit_per_s=0, latency_ms=0, contract=contract,
                             real_date=True)
    quiet(server)
    return server


@pytest.fixture
def refusing_sandbox(sandbox_factory):
    """A sandbox whose supplier lists answer 400 to window parameters (as the strict profile's do)."""
    return _sandbox(sandbox_factory, REFUSING)


def test_a_list_the_sync_found_refusing_windows_is_fetched_by_id_without_a_refused_request(refusing_sandbox, tmp_path):
    warehouse = str(tmp_path / "warehouse.duckdb")
    scheduled_sync(refusing_sandbox, warehouse)
    portal = refusing_sandbox.portal
    suppliers = [s["id"] for s in portal.snapshot("suppliers") if not s.get("deleted")][:WINDOW_READ_MIN_IDS]
    with HintSpool(spool_path(warehouse)) as spool:
        for n, supplier_id in enumerate(suppliers):
            portal.update("suppliers", supplier_id, {"name": f"Fournisseur {n}"})
            spool.append(f"s-{n}", Hint("default", "suppliers", supplier_id, "supplier.updated"))
    run = apply(refusing_sandbox, warehouse)
    assert (run.load.windowed, run.load.fetched) == (0, len(suppliers)), run.line()
    assert run.load.requests == len(suppliers), run.line()  # the GETs (the sync's token kept): no refused list
    quiet(refusing_sandbox)
    assert mismatches(warehouse, portal, tables=("suppliers",), contract=REFUSING) == []
