"""A DuckLake whose data path is object storage (`s3://bucket/prefix/`): the session's S3-compatible server
(moto's, real HTTP on 127.0.0.1) holds the Parquet files, the session's PostgreSQL the catalog.

One lake for the module, its steps in order: acme's first sync (every table: the models need them all), exact
and published; then beta's first load and acme's second load at once into the same tables (each exact against
its sandbox's own records) while a dashboard refreshes: it sees none of the two loads or all of them; the files
are in the bucket and none on local disk; time travel reads the lake back as it was before; the models built and
published are what the dashboard's source reads; the upkeep deletes old files from the bucket. Credentials come
the standard way (the AWS variables). The time budget: three syncs, two of them of three tables only.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from harness.warehouse_truth import mismatches
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.connection import connect, current_snapshot
from invoicing_warehouse.engine.readers import connect_reader, publish, published_snapshot
from invoicing_warehouse.engine.sql_runner import build_models
from invoicing_warehouse.engine.target import (
    CATALOG_ENV,
    DATA_PATH_ENV,
    ENGINE_ENV,
    LAKE_NAME,
    PASSWORD_ENV,
    STATE_DIR_ENV,
    WarehouseTarget,
)
from pipelines.invoicing.load.sync import make_pipeline, run_sync
from tests.pipelines.sandbox_syncs import quiet

BUCKET = "invoicing-lake-tests"
PREFIX = "firm-a/lake/"
PORTALS = ("acme", "beta")
# the loads at once: the tables the sandbox's mutator changes most (documents with their lines and messages)
COUNTED = ["customers", "documents", "transactions"]


@pytest.fixture(scope="module")
def s3_lake(s3_server, postgres_cluster, tmp_path_factory):
    """The module's lake on `s3://invoicing-lake-tests/firm-a/lake/`, configured by the environment only (the
    AWS variables, the lake's), as an operator would; its local state folder in a temporary folder."""
    s3_server.create_bucket(BUCKET)
    state_dir = tmp_path_factory.mktemp("s3-lake-state")
    dsn = postgres_cluster.create_database("lake_on_s3")
    environment = {**s3_server.environ(), ENGINE_ENV: "ducklake", CATALOG_ENV: dsn,
                   DATA_PATH_ENV: f"s3://{BUCKET}/{PREFIX}", PASSWORD_ENV: postgres_cluster.password,
                   STATE_DIR_ENV: str(state_dir)}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in environment.items():
            patch.setenv(name, value)
        yield WarehouseTarget.ducklake(dsn, f"s3://{BUCKET}/{PREFIX}", password=postgres_cluster.password,
                                       state_dir=state_dir)


@pytest.fixture(scope="module")
def sandboxes(module_sandbox_factory):
    """Two portals' sandboxes whose ids collide (same seed): only `portal_id` tells their rows apart."""
    started = {name: module_sandbox_factory(seed=5, scale=15, rate_limit_per_s=0, latency_ms=0, real_date=True)
               for name in PORTALS}
    customer = started["beta"].portal.snapshot("customers")[0]
    # a colliding id whose record differs
    started["beta"].portal.update("customers", customer["id"], {"name": "Beta's own customer"})
    for sandbox in started.values():
        quiet(sandbox)  # after the update: the next sync's window holds it
    return started


def sync_portal(lake: WarehouseTarget, sandbox: SandboxServer, portal: str, **options):
    """One portal's sync into the lake (its own dlt pipeline, as `sync --portal` runs it): a commit per table
    and more, so another reader could see it half way."""
    return run_sync(make_pipeline(lake, portal), base_url=sandbox.base_url, client_id=sandbox.client_id,
                    client_secret=sandbox.client_secret, rate_limit_per_s=0, **options)


def portal_rows(connection, portal: str, version: int | None = None) -> tuple[int, ...]:
    """The portal's live row counts of the raw tables its changes touch, in one statement (one snapshot): the
    latest, or as of snapshot `version`."""
    at = f" at (version => {int(version)})" if version is not None else ""
    union = " union all ".join(
        f"select {n} as k, count(*) from invoicing_raw.\"{table}\"{at} where portal_id = ? and _deleted_at is null"
        for n, table in enumerate(COUNTED))
    rows = connection.execute(union, [portal] * len(COUNTED)).fetchall()
    return tuple(c for _, c in sorted(rows))


@pytest.fixture(scope="module")
def first_publication(s3_lake, sandboxes):
    """acme's first sync into the empty lake, every table, then published: that snapshot's id."""
    sync_portal(s3_lake, sandboxes["acme"], "acme")
    publish(s3_lake, "acme's first run")
    with connect(s3_lake, read_only=True) as probe:
        return published_snapshot(probe)


def test_a_first_sync_into_a_lake_on_s3_is_exact(s3_lake, sandboxes, first_publication):
    assert mismatches(s3_lake, sandboxes["acme"].portal, portal_id="acme") == []
    with connect(s3_lake, read_only=True) as con:
        documents = con.execute("select count(*) from invoicing_raw.documents").fetchone()[0]
    assert documents == len(sandboxes["acme"].portal.snapshot("documents")) > 10


def both_rows(connection, version: int | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """`portal_rows` of acme and of beta, latest or as of `version`."""
    return portal_rows(connection, "acme", version), portal_rows(connection, "beta", version)


@pytest.fixture(scope="module")
def loads_at_once(s3_lake, sandboxes, first_publication):
    """beta's first load (three tables) and acme's second (4 changes to its customers) at once, while a
    dashboard refreshes on the published snapshot; then published. What the readers saw, the rows before and
    after, the loads' spans."""
    first = first_publication
    with connect_reader(s3_lake) as probe:
        before = both_rows(probe)
        assert current_snapshot(probe) == first
    acme = sandboxes["acme"].portal
    for n in range(3):  # acme's changes: new customers, a renamed one
        acme.create("customers", {"name": f"New Customer {n} SARL", "email": f"new{n}@example.com"})
    acme.update("customers", acme.snapshot("customers")[1]["id"], {"name": "Renamed Customer SAS"})
    quiet(sandboxes["acme"])
    seen: list[tuple] = []
    spans, stop, errors = {}, threading.Event(), []

    def read_loop() -> None:
        try:
            for _ in range(1000):  # bounded: stopped once the publication was seen
                if stop.is_set():
                    return
                with connect_reader(s3_lake) as reader:
                    seen.append(both_rows(reader))
                time.sleep(0.5)  # a dashboard's pace; leaves the loads their share of 2 cores
        except BaseException as error:  # noqa: BLE001 - reported by the tests
            errors.append(error)

    def load(name: str) -> None:
        started = time.monotonic()
        try:
            # acme's changes are all customers: its load reads that table only (the others are unchanged)
            sync_portal(s3_lake, sandboxes[name], name, resources=COUNTED if name == "beta" else ["customers"])
        except BaseException as error:  # noqa: BLE001 - reported by the tests
            errors.append((name, error))
        spans[name] = (started, time.monotonic())

    reader = threading.Thread(target=read_loop)
    reader.start()
    try:
        loads = [threading.Thread(target=load, args=(name,)) for name in PORTALS]
        for thread in loads:
            thread.start()
        for thread in loads:
            thread.join(timeout=300)
        with connect(s3_lake, read_only=True) as probe:
            after = both_rows(probe)
            last = current_snapshot(probe)
            # what a reader of the latest snapshot could have seen meanwhile: the first half-loaded state will do
            half_loaded = next((rows for rows in (rows_at(probe, version) for version in range(first + 1, last))
                                if rows not in (before, after)), None)
        publish(s3_lake, "acme's second run, beta's first")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and seen[-1:] != [after] and not errors:
            time.sleep(0.05)
    finally:
        stop.set()
        reader.join(timeout=60)
    return {"before": before, "after": after, "half_loaded": half_loaded, "seen": seen, "errors": errors,
            "spans": spans}


def rows_at(connection, version: int) -> tuple | str:
    """`both_rows` as of snapshot `version`; `missing` when a table did not exist then."""
    try:
        return both_rows(connection, version)
    except duckdb.Error:
        return "missing"


def test_two_portals_synced_at_once_into_a_lake_on_s3_are_each_exact(s3_lake, sandboxes, loads_at_once):
    assert not loads_at_once["errors"], loads_at_once["errors"]
    spans = loads_at_once["spans"]
    assert spans["acme"][0] < spans["beta"][1] and spans["beta"][0] < spans["acme"][1]  # they overlapped
    for name in PORTALS:
        assert mismatches(s3_lake, sandboxes[name].portal, tables=COUNTED, portal_id=name) == [], name
    beta_customer = sandboxes["beta"].portal.snapshot("customers")[0]["id"]
    with connect(s3_lake, read_only=True) as con:
        names = dict(con.execute("select portal_id, name from invoicing_raw.customers where id = ?",
                                 [beta_customer]).fetchall())
        loads = con.execute("select count(*) from invoicing_raw._dlt_loads").fetchone()[0]
    assert names["beta"] == "Beta's own customer" != names["acme"]  # one id, two portals' records
    assert loads >= 3  # acme's two runs, beta's one


def test_a_reader_during_two_portals_loads_sees_none_of_them_or_all_of_them(loads_at_once):
    load = loads_at_once
    before, after, seen = load["before"], load["after"], load["seen"]
    assert not load["errors"], load["errors"]
    assert before[1] == (0, 0, 0) and before[0] != after[0], "no change: the test would prove little"
    assert load["half_loaded"] is not None, "no half-loaded snapshot: the test would prove little"
    assert seen and set(seen) <= {before, after}, sorted(set(seen) - {before, after})[:3]
    assert before in seen and after in seen


def test_the_lake_files_are_in_the_bucket_and_none_on_local_disk(s3_lake, s3_server, loads_at_once,
                                                               tmp_path_factory):
    with connect(s3_lake, read_only=True) as con:
        tables = con.execute("select schema_name, table_name from duckdb_tables() where database_name = ?",
                             [LAKE_NAME]).fetchall()
        listed = {(schema, table): {path for (path,) in con.execute(
            "select data_file from ducklake_list_files(?, ?, schema => ?)", [LAKE_NAME, table, schema]).fetchall()}
            for schema, table in tables}
    in_bucket = {f"s3://{BUCKET}/{key}" for key in s3_server.keys(BUCKET)}
    documents = listed["invoicing_raw", "documents"]
    assert documents and all(path.startswith(f"s3://{BUCKET}/{PREFIX}invoicing_raw/documents/")
                             for path in documents), documents
    every_file = set().union(*listed.values())
    assert every_file <= in_bucket, sorted(every_file - in_bucket)[:3]  # every live file of every table is there
    assert all(key.endswith(".parquet") for key in in_bucket)
    # on this host: dlt's working folder in the lake's state folder, and no data file of the lake anywhere
    assert sorted(path.name for path in Path(s3_lake.state_dir).iterdir()) == [".lake.dlt"]
    names = {path.rsplit("/", 1)[-1] for path in every_file}
    for root in (Path(s3_lake.state_dir), tmp_path_factory.getbasetemp(), Path.cwd()):
        assert not [path for path in root.rglob("ducklake-*.parquet") if path.name in names], root


def test_time_travel_reads_the_lake_back_as_it_was(s3_lake, first_publication, loads_at_once):
    with connect(s3_lake, snapshot_version=first_publication) as as_of:  # the whole lake at acme's first run
        assert both_rows(as_of) == loads_at_once["before"]
        with pytest.raises(duckdb.Error):  # read-only: time travel never writes
            as_of.execute("create table invoicing_raw.nothing (x int)")
    with connect(s3_lake, read_only=True) as latest:
        assert both_rows(latest) == loads_at_once["after"]


def test_the_dashboards_source_reads_the_published_marts(s3_lake, loads_at_once, tmp_path):
    from invoicing_warehouse.dashboard.source import Source

    # the models built and published as the gate does (invoicing_warehouse/runs/gate.py, without its checks)
    with connect(s3_lake) as writer:
        build_models(writer)
    publish(s3_lake, "models built")
    with connect(s3_lake) as writer:  # then a load after the publication, which readers must not see yet
        writer.execute("update invoicing_raw.customers set name = 'Not published' where portal_id = 'acme'")
        published = published_snapshot(writer)
        receivables = sorted(writer.execute(f"select * from marts.receivables at (version => {published})"
                                            ).fetchall(), key=repr)
        customers = writer.execute(f"select count(*) from invoicing_raw.customers at (version => {published}) "
                                   "where portal_id = 'acme'").fetchone()
    assert receivables
    source = Source(warehouse=tmp_path / "unused.duckdb")  # the lake comes from the environment
    assert source.target == s3_lake and source.snapshot_key() == f"lake:{published}"
    with source.connect() as dashboard:
        assert sorted(dashboard.execute("select * from marts.receivables").fetchall(), key=repr) == receivables
        assert dashboard.execute("select count(*) from invoicing_raw.customers where portal_id = 'acme' "
                                 "and name is distinct from 'Not published'").fetchone() == customers


def test_upkeep_on_s3_expires_old_snapshots_and_deletes_their_files_from_the_bucket(s3_lake, s3_server,
                                                                                     loads_at_once):
    from invoicing_warehouse.engine.lake_maintenance import maintain

    with connect(s3_lake) as writer:  # a table rebuilt (as the marts are at each build): its first file outlived
        writer.execute("create table main.rebuilt as select range as id from range(5000)")
        writer.execute("create or replace table main.rebuilt as select range as id from range(6000)")
        # a table merged on id, as every sync does: a third of its rows deleted beside its one data file
        writer.execute("create table main.merged as select range as id from range(3000)")
        writer.execute("delete from main.merged where id % 3 = 0")
        merged_files = writer.execute("select data_file, delete_file from ducklake_list_files(?, 'merged')",
                                      [LAKE_NAME]).fetchall()
    assert len(merged_files) == 1 and merged_files[0][1] is not None
    publish(s3_lake, "a rebuild")
    # a file the catalog never recorded (a writer killed before its commit), in the lake's own folder
    orphan = f"{PREFIX}main/merged/ducklake-orphan-of-a-killed-writer.parquet"
    s3_server.client().put_object(Bucket=BUCKET, Key=orphan, Body=b"PAR1 never committed")
    with connect(s3_lake, read_only=True) as probe:
        published = published_snapshot(probe)
        snapshots = probe.execute(f"select count(*) from {LAKE_NAME}.snapshots()").fetchone()[0]
        acme, beta = portal_rows(probe, "acme", published), portal_rows(probe, "beta", published)
    keys_before = set(s3_server.keys(BUCKET))
    # a day on, with a horizon of an hour and no month-end kept: everything before the last publication may go
    report = maintain(s3_lake, horizon=timedelta(hours=1), now=datetime.now(UTC) + timedelta(days=1), month_ends=0)
    keys_after = set(s3_server.keys(BUCKET))
    assert report.expired and max(report.expired) < published and report.snapshots_before == snapshots
    # the files only expired snapshots held are deleted from the bucket itself (merged files are new ones)
    assert report.files_removed > 0 and report.orphans_removed == 1 and orphan not in keys_after
    assert len(keys_before - keys_after) == report.files_removed + report.orphans_removed
    assert report.files_rewritten >= 1  # the merged table's file, a third deleted (over REWRITE_DELETE_SHARE)
    with connect_reader(s3_lake) as reader:  # readers still read the publication, whole
        assert (portal_rows(reader, "acme"), portal_rows(reader, "beta")) == (acme, beta)
        assert reader.execute("select count(*) from marts.receivables").fetchone()[0] > 0
        assert reader.execute("select count(*) from main.rebuilt").fetchone()[0] == 6000
        # the same 2,000 rows (ids not multiples of 3, summed by hand: 4,498,500 - 1,498,500)
        assert reader.execute("select count(*), sum(id) from main.merged").fetchone() == (2000, 3_000_000)
        remaining = reader.execute(f"select count(*) from {LAKE_NAME}.snapshots()").fetchone()[0]
        live = {path for (path,) in reader.execute(
            "select data_file from ducklake_list_files(?, 'documents', schema => 'invoicing_raw')",
            [LAKE_NAME]).fetchall()}
    assert remaining < snapshots
    assert live and live <= {f"s3://{BUCKET}/{key}" for key in keys_after}
    with connect(s3_lake, read_only=True) as latest:  # the rewrite is the lake's newest snapshot: no delete file
        assert latest.execute("select count(*), sum(id) from main.merged").fetchone() == (2000, 3_000_000)
        assert [delete for _, delete in latest.execute(
            "select data_file, delete_file from ducklake_list_files(?, 'merged')", [LAKE_NAME]).fetchall()] == [None]
