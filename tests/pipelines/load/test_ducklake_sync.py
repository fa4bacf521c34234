"""The extraction into a DuckLake (PostgreSQL catalog started by the session, local data folder), over real
HTTP against sandboxes: exact after a full and an incremental sync, readers that see whole runs only while a
sync writes, and two portals' pipelines loading one lake at the same time.

The truth is the sandbox's own records (harness/warehouse_truth.py), read through the engine's connection.
"""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import duckdb
import pytest

from harness.warehouse_truth import compare_raw_tables, mismatches
from invoicing_sandbox.mutator import Mutator
from invoicing_warehouse.engine.connection import connect, current_snapshot
from invoicing_warehouse.engine.readers import connect_reader, publish
from invoicing_warehouse.engine.target import WarehouseTarget
from tests.pipelines.sandbox_syncs import quiet, sync

COUNTED = ("customers", "documents", "documents__lines", "transactions", "transaction_usages",
           "supplier_documents")


def counts(connection) -> tuple[int, ...]:
    """Row counts of COUNTED, in one statement: one snapshot of the lake."""
    union = " union all ".join(
        f"select {n} as k, count(*) as c from invoicing_raw.\"{t}\"" for n, t in enumerate(COUNTED))
    return tuple(c for _, c in sorted(connection.execute(union).fetchall()))


def test_full_and_incremental_syncs_into_ducklake_are_exact(start_sandbox, lake):
    sandbox = start_sandbox(seed=4, scale=200)
    report = sync(sandbox, lake)
    comparison = compare_raw_tables(lake, sandbox.portal)
    assert comparison.mismatches == [], comparison.summary()
    assert comparison.records_by_table["documents"] == len(sandbox.portal.snapshot("documents")) > 50
    assert report.rows["documents"] == len(sandbox.portal.snapshot("documents"))

    portal = sandbox.portal
    item = portal.snapshot("items")[0]
    portal.update("items", item["id"], {"price": 12.34, "name": "Renamed item"})
    created = portal.create("customers", {"name": "New Customer SARL", "email": "new@example.com"})
    Mutator(portal, 0, seed=11).step()
    quiet(sandbox)
    changed = sync(sandbox, lake)
    assert mismatches(lake, portal) == []
    assert changed.rows["items"] == 1  # incremental: only what changed was loaded
    with connect(lake, read_only=True) as connection:
        assert connection.execute("select price from invoicing_raw.items where id = ?",
                                  [item["id"]]).fetchone() == (Decimal("12.34"),)
        assert connection.execute("select count(*) from invoicing_raw.customers where id = ?",
                                  [created["id"]]).fetchone() == (1,)


def test_a_reader_open_during_the_writes_sees_only_whole_runs(start_sandbox, lake):
    # The second run rebuilds every table (full refresh: drop, then one page per resource per load), so the
    # lake passes through many half-loaded snapshots; readers must see the first run or the second, whole.
    sandbox = start_sandbox(seed=6, scale=60, latency_ms=10)
    sync(sandbox, lake)
    publish(lake, "first run")
    with connect(lake, read_only=True) as probe:
        before = counts(probe)
        first_published = current_snapshot(probe)
    mutator = Mutator(sandbox.portal, 0, seed=12)
    for _ in range(60):
        mutator.step()
    quiet(sandbox)

    seen: list[tuple[int, ...]] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def read_loop() -> None:
        try:
            with connect_reader(lake) as held:  # an analyst's notebook, open across both runs
                while not stop.is_set():
                    with connect_reader(lake) as fresh:  # a dashboard's refresh: the last published run
                        seen.append(counts(fresh))
                    seen.append(counts(held))
                    time.sleep(0.1)  # a dashboard's pace; keeps the writer's threads their share
        except BaseException as error:  # noqa: BLE001 - reported by the test below
            errors.append(error)

    thread = threading.Thread(target=read_loop)
    thread.start()
    try:
        sync(sandbox, lake, full_refresh=True, chunk_pages=2)
        publish(lake, "second run")
        published = after_run(lake)
        deadline = time.monotonic() + 30  # until a dashboard's refresh (even places in `seen`) sees it
        while time.monotonic() < deadline and seen[0::2][-1:] != [published]:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not errors, errors
    with connect(lake, read_only=True) as probe:
        after = counts(probe)
        last = current_snapshot(probe)
        # what a reader of the latest snapshot could have seen: the states between the two publications
        between = {counts_at(probe, version) for version in range(first_published + 1, last)}
    assert before != after, "the second run changed nothing: the test would prove little"
    assert between - {before, after}, "no half-loaded snapshot: the test would prove little"
    assert seen and set(seen) <= {before, after}, sorted(set(seen) - {before, after})[:3]
    assert before in seen and after in seen
    assert set(seen[1::2]) == {before}  # the notebook (odd places) stays on the run it opened at, whole
    assert mismatches(lake, sandbox.portal) == []


def after_run(lake: WarehouseTarget) -> tuple[int, ...]:
    """The counts of the latest snapshot."""
    with connect(lake, read_only=True) as probe:
        return counts(probe)


def counts_at(connection, version: int) -> tuple[int, ...] | str:
    """`counts` as of snapshot `version`; `missing` when a table did not exist then (dropped, not yet
    recreated: a reader would have got an error)."""
    try:
        union = " union all ".join(
            f"select {n} as k, count(*) as c from invoicing_raw.\"{t}\" AT (VERSION => {version})"
            for n, t in enumerate(COUNTED))
        return tuple(c for _, c in sorted(connection.execute(union).fetchall()))
    except duckdb.Error:
        return "missing"


def test_two_portals_synced_at_once_into_one_lake_are_each_exact(start_sandbox, lake, postgres_cluster, tmp_path):
    # Two `invoicing-warehouse sync --portal` processes, configured for the lake by the environment only,
    # write it at the same time; the two accounts' ids collide (same seed), so only `portal_id` tells
    # their rows apart. Two pages per resource per load: many commits each, interleaved.
    from harness.sync_process import Workspace, run_sync_command

    acme, beta = start_sandbox(seed=5, scale=70), start_sandbox(seed=5, scale=70)
    item = beta.portal.snapshot("items")[0]
    beta.portal.update("items", item["id"], {"price": 77.7})  # a colliding id whose record differs
    quiet(beta)
    workspace = Workspace(tmp_path)
    (workspace.cwd / "portals.toml").write_text(
        "".join(f'[portals.{name}]\nbase_url = "{s.base_url}"\nrate_limit = 0\n\n'
                for name, s in (("acme", acme), ("beta", beta))), encoding="utf-8")
    extra = {"INVOICING_WAREHOUSE_ENGINE": "ducklake", "INVOICING_DUCKLAKE_CATALOG": lake.catalog.public(),
             "INVOICING_DUCKLAKE_DATA_PATH": str(lake.data_path),
             "INVOICING_DUCKLAKE_PASSWORD": postgres_cluster.password}
    for name, sandbox in (("acme", acme), ("beta", beta)):
        extra[f"SOURCES__INVOICING__PORTALS__{name.upper()}__CLIENT_ID"] = sandbox.client_id
        extra[f"SOURCES__INVOICING__PORTALS__{name.upper()}__CLIENT_SECRET"] = sandbox.client_secret
    env = workspace.env(acme.base_url, acme.client_id, acme.client_secret, **extra)
    connect(lake).close()  # the catalog is created once, before the writers start

    def both_at_once(*options: str) -> None:
        results, spans = {}, {}

        def run(name: str) -> None:
            started = time.monotonic()
            results[name] = run_sync_command(workspace, env, "--portal", name, "--chunk-pages", "2", *options,
                                             timeout=400)
            spans[name] = (started, time.monotonic())

        threads = [threading.Thread(target=run, args=(name,)) for name in ("acme", "beta")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=420)
        for name in ("acme", "beta"):
            assert results[name].returncode == 0, (name, results[name].output[-3000:])
            assert postgres_cluster.password not in results[name].output
        assert spans["acme"][0] < spans["beta"][1] and spans["beta"][0] < spans["acme"][1]  # they overlapped
        assert mismatches(lake, acme.portal, portal_id="acme") == []
        assert mismatches(lake, beta.portal, portal_id="beta") == []

    both_at_once()  # first runs: both create, then merge into, the same tables
    for seed, sandbox in ((31, acme), (32, beta)):  # then both update and tombstone rows of the same tables
        mutator = Mutator(sandbox.portal, 0, seed=seed)
        for _ in range(40):
            mutator.step()
        quiet(sandbox)
    # --reconcile: the mutator deletes drafts, which only a full scan sees (as on a DuckDB file)
    both_at_once("--reconcile")
    with connect(lake, read_only=True) as con:
        documents = dict(con.execute(
            "select portal_id, count(*) from invoicing_raw.documents where _deleted_at is null group by 1"
        ).fetchall())
        prices = dict(con.execute("select portal_id, price from invoicing_raw.items where id = ?",
                                  [item["id"]]).fetchall())
        loads = con.execute("select count(*) from invoicing_raw._dlt_loads").fetchone()[0]
    assert documents == {"acme": len(acme.portal.snapshot("documents")),
                         "beta": len(beta.portal.snapshot("documents"))}
    assert float(prices["beta"]) == 77.7 and float(prices["acme"]) != 77.7
    assert loads >= 4  # several commits per writer


def test_a_wrong_catalog_password_is_a_clear_error_that_does_not_show_it(lake):
    from invoicing_warehouse.engine.connection import WarehouseUnavailable

    wrong = WarehouseTarget.ducklake(lake.catalog.public(), lake.data_path, password="not-the-Password-42")
    with pytest.raises(WarehouseUnavailable) as refused:
        connect(wrong)
    message = str(refused.value)
    assert "password authentication failed" in message and lake.catalog.public() in message
    assert "not-the-Password-42" not in message


def test_the_dagster_resource_opens_the_lake_the_environment_chooses(lake, postgres_cluster, monkeypatch):
    from assets.resources import WarehouseResource
    from invoicing_warehouse.engine.target import CATALOG_ENV, DATA_PATH_ENV, ENGINE_ENV, PASSWORD_ENV

    with connect(lake) as writer:
        writer.execute("create schema if not exists marts")
        writer.execute("create table marts.probe as select 42 as answer")
    for name, value in ((ENGINE_ENV, "ducklake"), (CATALOG_ENV, lake.catalog.public()),
                        (DATA_PATH_ENV, str(lake.data_path)), (PASSWORD_ENV, postgres_cluster.password)):
        monkeypatch.setenv(name, value)
    resource = WarehouseResource(path="not-used.duckdb")
    assert resource.target() == lake
    with resource.connect(read_only=True) as connection:
        assert connection.execute("select answer from marts.probe").fetchall() == [(42,)]


def test_without_postgresql_the_lake_tests_fail_saying_how_to_install_it(monkeypatch):
    from harness import postgres_cluster as cluster

    monkeypatch.setattr(cluster, "DEBIAN_BINARIES", "/nonexistent/postgresql/*/bin")
    monkeypatch.setattr(cluster.shutil, "which", lambda _name: None)
    with pytest.raises(cluster.PostgresMissing, match="apt-get install -y postgresql"):
        cluster.PostgresCluster().start()
