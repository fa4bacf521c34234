"""The SQL models on a DuckLake (PostgreSQL catalog started by the session): unchanged SQL, the same rows as
on a DuckDB file synced from the same sandbox, the marts equal to the API's own figures, and last month's
report read back through time travel equal to the as-of models built back then."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

import duckdb

from harness.marts_truth import compare_marts
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.mutator import Mutator
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.cli import models_command
from invoicing_warehouse.engine.connection import connect, current_snapshot
from invoicing_warehouse.engine.sql_runner import build_models
from invoicing_warehouse.engine.target import CATALOG_ENV, DATA_PATH_ENV, ENGINE_ENV, LAKE_NAME, PASSWORD_ENV
from pipelines.invoicing.load.sync import make_pipeline, run_sync

START = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
MODEL_SCHEMAS = ("staging", "intermediate", "marts", "reference")


def credentials(sb: SandboxServer) -> dict:
    return {"base_url": sb.base_url, "client_id": sb.client_id, "client_secret": sb.client_secret,
            "rate_limit_per_s": 0}


def relations(connection: duckdb.DuckDBPyConnection, schemas=MODEL_SCHEMAS) -> list[str]:
    """`schema.name` of every table and view the models made."""
    marks = ", ".join("?" * len(schemas))
    return sorted(f"{s}.{t}" for s, t in connection.execute(
        f"select table_schema, table_name from information_schema.tables where table_schema in ({marks})",
        list(schemas)).fetchall())


def contents(connection: duckdb.DuckDBPyConnection, names: list[str], at: str = "") -> dict[str, list[str]]:
    """Every row of each relation, as sorted text (`at`: a time-travel clause such as `AT (VERSION => 3)`)."""
    return {name: sorted(map(repr, connection.execute(f"select * from {name} {at}").fetchall()))
            for name in names}


def test_models_build_on_ducklake_and_equal_the_same_models_on_a_duckdb_file(lake, tmp_path):
    clock = Clock(fixed=START)
    as_of = clock.today().date()
    # seed 14 owes 13 open receivables on START at this scale (seed 3 owed only 4 after the demo data's
    # recalibration): enough rows of the key mart for "lake equals file" to mean something
    with SandboxServer(SandboxConfig(seed=14, scale=120, rate_limit_per_s=0), clock=clock) as sb:
        run_sync(make_pipeline(tmp_path / "warehouse.duckdb"), **credentials(sb))
        run_sync(make_pipeline(lake), **credentials(sb))
        with duckdb.connect(str(tmp_path / "warehouse.duckdb")) as on_file:
            built_on_file = build_models(on_file, as_of=as_of)
            names = relations(on_file)
            expected = contents(on_file, names)
        with connect(lake) as on_lake:
            built_on_lake = build_models(on_lake, as_of=as_of)
            assert relations(on_lake) == names
            actual = contents(on_lake, names)
            truth = compare_marts(on_lake, sb)  # the API's own dueAmount and LATE list
    assert built_on_lake == built_on_file
    assert built_on_lake["marts.receivables"] > 10 and built_on_lake["marts.supplier_payables"] > 0
    assert len(names) == len(built_on_file) > 15
    different = [name for name in names if actual[name] != expected[name]]
    assert different == [], different
    assert truth.mismatches == [], truth.summary()


def test_an_as_of_query_through_time_travel_equals_the_as_of_models_built_then(lake, postgres_cluster,
                                                                             monkeypatch, capsys):
    clock = Clock(fixed=START)
    with SandboxServer(SandboxConfig(seed=5, scale=120, rate_limit_per_s=0), clock=clock) as sb:
        run_sync(make_pipeline(lake), **credentials(sb))
        # the month-end report, as of D1, by `invoicing-warehouse models --as-of D1` configured for the lake
        for name, value in ((ENGINE_ENV, "ducklake"), (CATALOG_ENV, lake.catalog.public()),
                            (DATA_PATH_ENV, str(lake.data_path)), (PASSWORD_ENV, postgres_cluster.password)):
            monkeypatch.setenv(name, value)
        parser = argparse.ArgumentParser()
        models_command.add_arguments(parser)  # the command's own arguments and defaults
        assert models_command.run(parser.parse_args(["--as-of", clock.today().date().isoformat()])) == 0
        printed = capsys.readouterr()
        assert lake.catalog.public() in printed.out and postgres_cluster.password not in printed.out + printed.err
        with connect(lake) as writer:
            assert compare_marts(writer, sb).mismatches == []  # right against the API when it was built
            marts = relations(writer, ("marts",))
            month_end = contents(writer, marts)
            version = current_snapshot(writer)
            moment = writer.execute(f"select snapshot_time from {LAKE_NAME}.snapshots() where snapshot_id = ?",
                                    [version]).fetchone()[0]
        # a month of business: new invoices, payments, edits; then the next sync and report
        mutator = Mutator(sb.portal, 0, seed=9)
        for _ in range(200):
            mutator.step()
        clock.advance(timedelta(days=23))
        run_sync(make_pipeline(lake), **credentials(sb))
        with connect(lake) as writer:
            build_models(writer, as_of=clock.today().date())
            assert contents(writer, marts) != month_end, "nothing changed: time travel would prove little"
            by_version = contents(writer, marts, f"AT (VERSION => {version})")
            by_time = contents(writer, marts, f"AT (TIMESTAMP => TIMESTAMPTZ '{moment.isoformat()}')")
    assert by_version == month_end
    assert by_time == month_end
    with connect(lake, snapshot_version=version) as then:  # the whole warehouse as it was, read-only
        assert contents(then, marts) == month_end
        assert {row[0] for row in then.execute("select distinct as_of_date from marts.receivables").fetchall()} \
            == {START.date()}


def test_a_blocking_check_that_fails_publishes_no_lake_snapshot(lake):
    from invoicing_warehouse.engine.readers import connect_reader, published_snapshot
    from invoicing_warehouse.runs.gate import build_and_publish

    clock = Clock(fixed=START)
    with SandboxServer(SandboxConfig(seed=7, scale=40, rate_limit_per_s=0), clock=clock) as sb:
        run_sync(make_pipeline(lake), **credentials(sb))
    assert build_and_publish(lake, note="first", as_of=clock.today().date()).published
    with connect(lake) as connection:
        before = published_snapshot(connection)
        (documents,) = connection.execute("select count(*) from invoicing_raw.documents").fetchone()
        connection.execute("insert into invoicing_raw.documents "
                           "select * from invoicing_raw.documents order by id limit 1")
    held = build_and_publish(lake, note="held", as_of=clock.today().date())
    assert held.published is None and "ids_unique" in [f.name for f in held.failures]
    with connect(lake) as connection:
        assert published_snapshot(connection) == before  # readers stay on the last good snapshot
    with connect_reader(lake) as reader:
        assert reader.execute("select count(*) from invoicing_raw.documents").fetchone() == (documents,)
