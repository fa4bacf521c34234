"""Hints set aside (pipelines/invoicing/webhooks/dead_letters.py): a failed hint waits its retry delay, dies at
its third attempt (at once when its id is no record id), a later delivery of a dead record spools nothing, and
the dead letters show on the dashboard's Freshness page and in the Dagster check `no_dead_hints` (WARN).
Expected values are the module's documented rules (3 attempts, 60 s then 120 s), counted by hand."""

from __future__ import annotations

import sqlite3
import time

from dagster import AssetCheckSeverity, AssetKey, AssetSelection, AssetSpec, Definitions, define_asset_job
from streamlit.testing.v1 import AppTest

from assets.checks import DEAD_HINTS_CHECK_NAME, raw_no_dead_hints
from assets.resources import WarehouseResource
from pipelines.invoicing.webhooks.dead_letters import read_dead_letters
from pipelines.invoicing.webhooks.hint_spool import DEAD, Hint, HintSpool, spool_path

FORGED = Hint("default", "customers", "bad-id-0001", "customer.updated")
GENUINE = Hint("default", "customers", "0123456789abcdef01234567", "customer.updated")


def test_a_failed_hint_waits_then_dies_at_its_third_attempt_and_stays_dead(tmp_path):
    with HintSpool(tmp_path / "s.sqlite") as spool:
        spool.append("d1", FORGED, received_at=1000.0)
        spool.append("d2", GENUINE, received_at=1000.0)
        [forged] = [h for h in spool.pending(now=2000.0) if h.record_id == FORGED.record_id]
        assert spool.set_aside([(forged, "GET /customers/{id}: HTTP 422", False)]) == 0
        now = time.time()
        # the first retry waits 60 s: only the genuine hint is due now, both are due 61 s later
        assert [h.record_id for h in spool.pending()] == [GENUINE.record_id]
        assert {h.record_id for h in spool.pending(now=now + 61)} == {FORGED.record_id, GENUINE.record_id}
        assert spool.set_aside([(forged, "again", False)]) == 0
        assert [h.attempts for h in spool.pending(now=now + 10_000) if h.record_id == FORGED.record_id] == [2]
        assert spool.set_aside([(forged, "GET /customers/{id}: HTTP 422", False)]) == 1  # the third: dead
        assert [h.record_id for h in spool.pending(now=now + 10_000)] == [GENUINE.record_id]
        [letter] = spool.dead_letters()
        assert (letter.record_id, letter.attempts, letter.last_error, letter.received_at) == (
            FORGED.record_id, 3, "GET /customers/{id}: HTTP 422", 1000.0)
        # kept dead: a later delivery of the record is counted, not spooled
        assert spool.receive("d3", FORGED) == DEAD
        assert [h.record_id for h in spool.pending(now=now + 10_000)] == [GENUINE.record_id]
        assert spool.dead_letters()[0].deliveries_since == 1
        # an id that is no record id dies at its first failure
        spool.append("d4", Hint("default", "customers", "../../me", "customer.updated"))
        [odd] = [h for h in spool.pending() if h.record_id == "../../me"]
        assert spool.set_aside([(odd, "not a record id", True)]) == 1
    total, letters = read_dead_letters(tmp_path / "s.sqlite")
    assert (total, {letter.record_id for letter in letters}) == (2, {FORGED.record_id, "../../me"})


def test_a_spool_made_before_dead_letters_opens_and_keeps_its_hints(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as old:  # the schema of the spool before this change
        old.executescript("create table hints (portal_id text not null, resource text not null, record_id text "
                          "not null, event text not null, received_at real not null, sequence integer not null, "
                          "primary key (portal_id, resource, record_id));"
                          "insert into hints values ('default', 'customers', 'c1', 'customer.updated', 5.0, 1);")
    old.close()
    assert read_dead_letters(path) == (0, [])  # read-only: no table yet, nothing created
    with HintSpool(path) as spool:
        assert [(h.record_id, h.attempts) for h in spool.pending()] == [("c1", 0)]
    assert not (tmp_path / "absent.sqlite").exists() and read_dead_letters(tmp_path / "absent.sqlite") == (0, [])
    assert not (tmp_path / "absent.sqlite").exists()


def _dead_spool_beside(warehouse) -> None:
    with HintSpool(spool_path(warehouse)) as spool:
        spool.append("d1", FORGED)
        [hint] = spool.pending()
        spool.set_aside([(hint, "GET /customers/{id}: the answer is not the record asked for", True)])


def test_the_dagster_check_warns_on_the_dead_letters_table_only(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    resource = WarehouseResource(path=str(warehouse))
    keys = [AssetKey(["invoicing_raw", table]) for table in ("customers", "documents", "items", "suppliers",
                                                               "supplier_documents")]
    job = define_asset_job("dead_only", selection=AssetSelection.checks(raw_no_dead_hints))
    defs = Definitions(assets=[AssetSpec(key) for key in keys], asset_checks=[raw_no_dead_hints], jobs=[job],
                       resources={"warehouse": resource})

    def evaluations() -> dict:
        result = defs.resolve_job_def("dead_only").execute_in_process(raise_on_error=False)
        return {e.asset_key.path[-1]: e for e in result.get_asset_check_evaluations()
                if e.check_name == DEAD_HINTS_CHECK_NAME}

    before = evaluations()
    assert set(before) == {key.path[-1] for key in keys} and all(e.passed for e in before.values())
    _dead_spool_beside(warehouse)
    after = evaluations()
    assert {table for table, e in after.items() if not e.passed} == {"customers"}
    assert after["customers"].severity == AssetCheckSeverity.WARN
    assert FORGED.record_id in after["customers"].description


def _section(warehouse: str) -> None:
    from datetime import date

    from invoicing_warehouse.dashboard.cache import View
    from invoicing_warehouse.dashboard.formatting import FRENCH
    from invoicing_warehouse.dashboard.screens.freshness import dead_hints_section
    from invoicing_warehouse.dashboard.widgets import PageContext
    from invoicing_warehouse.engine.target import WarehouseTarget

    dead_hints_section(WarehouseTarget.duckdb_file(warehouse),
                       PageContext(View(warehouse, "k", None, "default"), date(2026, 11, 26), FRENCH))


def test_the_freshness_page_shows_the_dead_letters(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    empty = AppTest.from_function(_section, args=(str(warehouse),), default_timeout=60)
    empty.run()
    assert not empty.exception and [s.value for s in empty.success] == ["No webhook hint is kept dead."]
    _dead_spool_beside(warehouse)
    shown = AppTest.from_function(_section, args=(str(warehouse),), default_timeout=60)
    shown.run()
    assert not shown.exception, shown.exception
    [warning] = [w.value for w in shown.warning]
    assert warning.startswith("1 webhook hint(s) kept dead")
    page = "".join(str(element.value) for element in shown.get("html"))
    assert FORGED.record_id in page and "the answer is not the record asked for" in page
