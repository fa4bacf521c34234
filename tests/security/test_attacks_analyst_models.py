"""Issue 41, point 1: the analysts' models of security review 2 (C1, critical; H1, high) and test review 2's F14,
replayed as the review ran them: a models folder written by someone who can write only that folder.

Each row builds the hand-computed portal of tests/sql/model_fixture.py, publishes it once (the readers' copy
owes 3129.50: tests/sql/test_receivables_marts.py), then runs the review's payload through `models
--models-dir` (or the dashboard's Freshness checks) and asserts the answer now (refused, naming the rule) and
that nothing was lost: the warehouse and the readers' copy hold what they held, no file was written, no
database attached. The DuckLake rows use the session's real PostgreSQL (tests/conftest.py `lake`).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb
import psycopg2
import pytest

from invoicing_warehouse.cli import main
from invoicing_warehouse.engine.connection import connect
from invoicing_warehouse.engine.sql_runner import ModelDefinitionError
from invoicing_warehouse.engine.target import CATALOG_ENV, DATA_PATH_ENV, ENGINE_ENV, LAKE_NAME, PASSWORD_ENV
from invoicing_warehouse.runs.gate import build_and_publish
from tests.sql.model_fixture import load_fixture  # on the path by tests/security/conftest.py

AS_OF = date(2026, 1, 31)
OPEN_TOTAL = "3129.50"  # 699.50 + 380.00 + 850.00 + 140.00 + 1000.00 + 60.00, the fixture's open receivables

FRONT = "-- ---\n-- description: {what}\n-- grain: {grain}\n{tests}-- ---\n"


def _model(folder: Path, stem: str, sql: str, grain: str = "[portal_id]", tests: str = "") -> Path:
    folder.mkdir(exist_ok=True)
    (folder / f"{stem}.sql").write_text(FRONT.format(what="an analyst's model.", grain=grain, tests=tests) + sql)
    return folder


def _scalar(path: Path, sql: str):
    with duckdb.connect(str(path), read_only=True) as conn:
        return conn.execute(sql).fetchone()[0]


def _figures(path: Path) -> tuple:
    """What a reader would see: the open total, the raw customers, the analyst's tables."""
    return (str(_scalar(path, "select sum(open_amount) from marts.receivables")),
            _scalar(path, "select count(*) from invoicing_raw.customers"),
            _scalar(path, "select count(*) from information_schema.tables where table_schema = 'analyst'"))


@pytest.fixture()
def published(published_fixture) -> Path:
    """A warehouse built and published as of AS_OF (the readers' copy beside it)."""
    path = published_fixture(AS_OF)
    assert _figures(path.with_name("warehouse.read.duckdb"))[0] == OPEN_TOTAL
    return path


@pytest.fixture()
def published_refused(published_fixture_once) -> Path:
    """The same, shared by the rows whose payload is refused before the warehouse is opened."""
    return published_fixture_once(AS_OF)


def _models(warehouse: Path, folder: Path) -> int:
    return main(["models", "--warehouse", str(warehouse), "--as-of", AS_OF.isoformat(), "--models-dir", str(folder)])


def _nothing_lost(warehouse: Path, before: dict[Path, tuple]) -> None:
    for path, figures in before.items():
        assert _figures(path) == figures, path


def _before(warehouse: Path) -> dict[Path, tuple]:
    return {path: _figures(path) for path in (warehouse, warehouse.with_name("warehouse.read.duckdb"))}


# ------------------------------------------------------------------------------------------- C1: names into SQL

GRAIN_HOOK = ("""['portal_id" from analyst.inj; update marts.receivables set open_amount = 0; """
              """select 1 where false --']""")


def test_c1_a_grain_entry_that_zeroed_open_amount_is_refused_and_the_copy_keeps_its_figures(
        published, tmp_path, capsys):
    # review 2, C1.1: the gate's keys_unique pasted this grain into its SQL, inside the build's transaction:
    # `models` exited 0 and the readers' copy owed 0.00
    folder = _model(tmp_path / "m", "inj", "select 'default' as portal_id", grain=GRAIN_HOOK)
    before = _before(published)
    assert _models(published, folder) == 1
    err = capsys.readouterr().err
    assert "inj.sql: grain column" in err and "[a-z_][a-z0-9_]*" in err
    _nothing_lost(published, before)
    assert before[published.with_name("warehouse.read.duckdb")][0] == OPEN_TOTAL


def test_c1_a_file_name_that_deleted_raw_customers_is_refused_and_writes_nothing(published, tmp_path, capsys,
                                                                                 monkeypatch):
    # review 2, C1.3: the stem was pasted bare after `create or replace table analyst.`
    monkeypatch.chdir(tmp_path)
    stem = ("x as select 'default' as portal_id; copy (select 1) to 'fname_probe.csv'; "
            "delete from invoicing_raw.customers; commit; create or replace table analyst.y")
    folder = _model(tmp_path / "m", stem, "select 'default' as portal_id")
    before = _before(published)
    assert before[published][1] == 5
    assert _models(published, folder) == 1
    assert "model file name" in capsys.readouterr().err
    _nothing_lost(published, before)
    assert not (tmp_path / "fname_probe.csv").exists()


@pytest.mark.parametrize("body", [
    "select 'default' as portal_id; copy (select 42) to '{probe}'",
    "copy (select 42) to '{probe}'",
    "select 'default' as portal_id; attach '{probe}' as planted",
    "attach '{probe}' as planted",
    "load '{probe}'",
    "select 'default' as portal_id; load '{probe}'",
])
def test_c1_copy_attach_and_load_in_a_model_file_are_refused_before_anything_runs(published_refused, tmp_path,
                                                                                 capsys, body):
    published = published_refused
    # a model is exactly one SELECT, as DuckDB itself splits and types the file
    probe = tmp_path / "probe.duckdb_extension"
    folder = _model(tmp_path / "m", "hook", body.format(probe=probe))
    before = _before(published)
    assert _models(published, folder) == 1
    err = capsys.readouterr().err
    assert "hook.sql: a model is exactly one SELECT statement" in err
    _nothing_lost(published, before)
    assert not probe.exists()


@pytest.mark.parametrize(("grain", "tests", "answer"), [
    # test review 2, F14: a quote in a name, YAML anchors and aliases, a huge list, bounds that are not numbers
    ('[\'portal_id"\']', "", "grain column"),
    ("[Portal_ID]", "", "grain column"),
    ("[portal_id]", "-- tests:\n--   not_null: ['x\" is null) from marts.receivables; --']\n", "not_null column"),
    ("[portal_id]", "-- tests:\n--   accepted_range: {'n\"; drop table marts.receivables; --': {min: 0}}\n",
     "accepted_range column"),
    ("[portal_id]", "-- tests:\n--   accepted_range: {n: {min: '0 or true) ; delete from marts.receivables --'}}\n",
     "bounds must be numbers"),
    ("[portal_id]", "-- tests:\n--   accepted_range: {n: {max: .nan}}\n", "bounds must be numbers"),
    ("[portal_id]", "-- tests:\n--   accepted_range: {n: {max: true}}\n", "bounds must be numbers"),
    ("&a [portal_id, *a]", "", "grain column"),
    ("[" + ", ".join(f"c{i}" for i in range(65)) + "]", "", "more than 64"),
    ("[portal_id]", "-- date_only:\n--   - {raw: 'documents.x\" is null or true; --', field: x}\n", "date_only raw"),
])
def test_f14_hostile_front_matter_is_refused_naming_the_rule(published_refused, tmp_path, capsys, grain, tests,
                                                           answer):
    published = published_refused
    folder = _model(tmp_path / "m", "hostile", "select 'default' as portal_id, 1 as n", grain=grain, tests=tests)
    before = _before(published)
    assert _models(published, folder) == 1
    err = capsys.readouterr().err
    assert "hostile.sql" in err and answer in err, err
    _nothing_lost(published, before)


def test_f14_a_declared_column_the_model_does_not_build_is_refused(published, tmp_path, capsys):
    folder = _model(tmp_path / "m", "named", "select 'default' as portal_id", grain="[portal_id, customer_id]")
    before = _before(published)
    assert _models(published, folder) == 1
    assert "names column(s) the model does not build: customer_id" in capsys.readouterr().err
    _nothing_lost(published, before)


def test_c1_the_dashboard_freshness_checks_never_run_a_hook_from_the_models_folder(published, tmp_path,
                                                                                 monkeypatch):
    # review 2, C1.4: with INVOICING_MODELS_DIR set, the Freshness page re-ran the grain hook on the readers' copy
    from invoicing_warehouse.dashboard.freshness import checks

    probe = tmp_path / "freshness_probe.csv"
    # YAML doubles a quote inside a quoted string: the SQL reads `copy (select 1) to '<probe>'`
    hook = f"""['portal_id" from analyst.inj; copy (select 1) to ''{probe}''; select 1 where false --']"""
    folder = _model(tmp_path / "m", "inj", "select 'default' as portal_id", grain=hook)
    monkeypatch.setenv("INVOICING_MODELS_DIR", str(folder))
    readers = published.with_name("warehouse.read.duckdb")
    before = _figures(readers)
    with duckdb.connect(str(readers), read_only=True) as conn, pytest.raises(ModelDefinitionError,
                                                                              match="grain column"):
        checks(conn)
    assert not probe.exists()
    assert _figures(readers) == before


# --------------------------------------------------------------------------------- H1: a SELECT that reads files


def test_h1_read_text_of_a_private_env_file_and_etc_passwd_never_reach_the_readers_copy(published, tmp_path,
                                                                                      capsys):
    env_file = tmp_path / "invoicing.env"
    env_file.write_text("INVOICING_DUCKLAKE_PASSWORD=pw-DO-NOT-LEAK\nAWS_SECRET_ACCESS_KEY=aws-DO-NOT-LEAK\n")
    env_file.chmod(0o600)
    for stem, source in (("env_leak", str(env_file)), ("passwd_leak", "/etc/passwd")):
        folder = _model(tmp_path / stem, stem,
                        f"select 'default' as portal_id, (select content from read_text('{source}')) as leaked")
        before = _before(published)
        assert _models(published, folder) == 1
        err = capsys.readouterr().err
        assert f"model analyst.{stem}" in err and "file system operations are disabled" in err
        assert "DO-NOT-LEAK" not in err and "root:" not in err
        _nothing_lost(published, before)
    glob_folder = _model(tmp_path / "glob", "home_files", "select 'default' as portal_id, count(*) as n "
                                                          "from glob('~/*')")
    assert _models(published, glob_folder) == 1
    assert "file system operations are disabled" in capsys.readouterr().err


def test_h1_an_analyst_table_whose_file_is_gone_is_dropped_from_the_readers_copy(published, tmp_path):
    # review 2, H1: after a later `models` without --models-dir, analyst.leak was still published
    folder = _model(tmp_path / "m", "leak", "select 'default' as portal_id, 'was published' as note")
    _model(folder, "kept", "select 'default' as portal_id, 1 as n")
    readers = published.with_name("warehouse.read.duckdb")
    assert _models(published, folder) == 0
    assert _scalar(readers, "select note from analyst.leak") == "was published"
    (folder / "leak.sql").unlink()
    assert _models(published, folder) == 0
    tables = "select string_agg(table_name, ',' order by table_name) from information_schema.tables " \
             "where table_schema = 'analyst'"
    assert _scalar(readers, tables) == "kept"
    assert main(["models", "--warehouse", str(published), "--as-of", AS_OF.isoformat()]) == 0
    assert _scalar(readers, tables) is None
    assert _scalar(published, tables) is None
    assert str(_scalar(readers, "select sum(open_amount) from marts.receivables")) == OPEN_TOTAL


def test_h1_an_analyst_model_still_reads_the_product_and_its_own_earlier_models(published, tmp_path):
    # the sandbox takes nothing an honest model needs: product marts, raw tables, the report date, other analyst
    # models, all as the build sees them
    folder = _model(tmp_path / "m", "open_total", "select portal_id, sum(open_amount) as open_amount, "
                    "getvariable('as_of_date') as as_of from marts.receivables group by portal_id")
    _model(folder, "open_share", "select t.portal_id, t.open_amount / (select count(*) from invoicing_raw.customers) "
                                 "as per_customer from analyst.open_total t")
    assert _models(published, folder) == 0
    readers = published.with_name("warehouse.read.duckdb")
    assert str(_scalar(readers, "select open_amount from analyst.open_total")) == OPEN_TOTAL
    assert _scalar(readers, "select as_of from analyst.open_total") == AS_OF
    assert round(float(_scalar(readers, "select per_customer from analyst.open_share")), 2) == round(3129.50 / 5, 2)


# ------------------------------------------------------------------------------------------------ the DuckLake


def _catalog_tables(lake) -> set[str]:
    with psycopg2.connect(lake.catalog.public(), password=lake.catalog.password) as pg, pg.cursor() as cursor:
        cursor.execute("select table_schema || '.' || table_name from information_schema.tables "
                       "where table_schema not in ('pg_catalog', 'information_schema')")
        return {row[0] for row in cursor.fetchall()}


def test_c1_h1_on_a_ducklake_a_model_cannot_reach_the_postgresql_catalog(lake, tmp_path):
    # review 2, C1.2 and H1: the lake's writer had the catalog attached (postgres_execute, postgres_query as its
    # owner) and allowed unsigned extensions; a model now runs where no catalog and no extension exist
    with connect(lake) as conn:
        load_fixture(conn)
    outcome = build_and_publish(lake, note="first", as_of=AS_OF)
    assert outcome.ok and outcome.published
    catalog_before = _catalog_tables(lake)
    metadata = f"__ducklake_metadata_{LAKE_NAME}"
    payloads = {
        "writes_catalog": f"select * from postgres_execute('{metadata}', "
                          "'create table public.written_by_analyst_model(x int)')",
        "reads_catalog": f"select * from postgres_query('{metadata}', "
                         "'select current_user, usesuper from pg_user')",
        "reads_lake_data": f"select count(*) as n from read_parquet('{tmp_path / 'lake-data'}/**/*.parquet')",
    }
    for stem, sql in payloads.items():
        folder = _model(tmp_path / stem, stem, sql, grain="[]")
        with pytest.raises(duckdb.Error,
                           match=f"model analyst.{stem} .*(is not in the catalog|disabled|does not exist)"):
            build_and_publish(lake, note="attack", as_of=AS_OF, models_dir=folder)
    assert _catalog_tables(lake) == catalog_before
    assert not any("written_by_analyst_model" in table for table in catalog_before)
    with connect(lake) as conn:
        assert str(conn.execute("select sum(open_amount) from marts.receivables").fetchone()[0]) == OPEN_TOTAL
        assert conn.execute("select count(*) from information_schema.tables where table_schema = 'analyst' "
                            "and table_catalog = current_database()").fetchone()[0] == 0


def test_an_analyst_model_on_a_ducklake_is_built_and_published_as_on_a_file(lake, tmp_path, monkeypatch):
    with connect(lake) as conn:
        load_fixture(conn)
    folder = _model(tmp_path / "m", "open_total",
                    "select portal_id, sum(open_amount) as open_amount from marts.receivables group by portal_id")
    for name, value in ((ENGINE_ENV, "ducklake"), (CATALOG_ENV, lake.catalog.public()),
                        (DATA_PATH_ENV, str(lake.data_path)), (PASSWORD_ENV, lake.catalog.password)):
        monkeypatch.setenv(name, value)
    assert main(["models", "--as-of", AS_OF.isoformat(), "--models-dir", str(folder)]) == 0
    with connect(lake) as conn:
        assert str(conn.execute("select open_amount from analyst.open_total").fetchone()[0]) == OPEN_TOTAL


def test_h1_the_publication_after_a_dagster_run_drops_an_analyst_table_whose_file_is_gone(published, tmp_path):
    # Dagster builds each model as an asset and publishes through publish_checked (dagster_project/sensors.py),
    # not build_models: the stale table is dropped there too
    from invoicing_warehouse.engine.target import WarehouseTarget
    from invoicing_warehouse.runs.gate import publish_checked

    folder = _model(tmp_path / "m", "leak", "select 'default' as portal_id, 'was published' as note")
    assert _models(published, folder) == 0
    readers = published.with_name("warehouse.read.duckdb")
    assert _scalar(readers, "select note from analyst.leak") == "was published"
    outcome = publish_checked(WarehouseTarget.duckdb_file(published), note="dagster run", as_of=AS_OF)
    assert outcome.published and not outcome.failures
    assert _scalar(readers, "select count(*) from information_schema.tables where table_schema = 'analyst'") == 0
    assert str(_scalar(readers, "select sum(open_amount) from marts.receivables")) == OPEN_TOTAL


SANDBOX_ATTEMPTS = (
    "copy (select 1) to '{folder}/copied.csv'",
    "attach '{folder}/attached.duckdb' as planted",
    "load '{folder}/pwn.duckdb_extension'",
    "install httpfs",
    "set enable_external_access = true",
    "set allow_unsigned_extensions = true",
    "insert into product.marts.receivables (invoice_id) values ('forged')",
    "select * from read_text('/etc/passwd')",
    "select * from glob('{folder}/*')",
)


def test_c1_h1_the_sandbox_itself_refuses_what_the_one_select_rule_already_keeps_out(published_refused, tmp_path):
    # a second wall: were a statement to slip past the parser's check, the instance it would run on refuses it
    from invoicing_warehouse.engine.analyst_sandbox import open_sandbox

    inputs = tmp_path / "inputs.duckdb"
    with duckdb.connect(str(inputs)) as copy:
        copy.execute(f"attach '{published_refused.with_name('warehouse.read.duckdb')}' as readers (read_only)")
        copy.execute("create schema marts")
        copy.execute("create table marts.receivables as select * from readers.marts.receivables")
    sandbox = open_sandbox(inputs, ["marts.receivables"])
    try:
        assert str(sandbox.execute("select sum(open_amount) from marts.receivables").fetchone()[0]) == OPEN_TOTAL
        accepted = []
        for statement in SANDBOX_ATTEMPTS:
            try:
                sandbox.execute(statement.format(folder=tmp_path))
                accepted.append(statement)
            except duckdb.Error:
                pass
        assert accepted == []
        settings = dict(sandbox.execute(
            "select name, value from duckdb_settings() where name in ('enable_external_access', "
            "'lock_configuration', 'allow_unsigned_extensions', 'allow_community_extensions', "
            "'autoinstall_known_extensions', 'autoload_known_extensions', 'allow_persistent_secrets')").fetchall())
        assert settings == {"enable_external_access": "false", "lock_configuration": "true",
                            "allow_unsigned_extensions": "false", "allow_community_extensions": "false",
                            "autoinstall_known_extensions": "false", "autoload_known_extensions": "false",
                            "allow_persistent_secrets": "false"}
        assert sandbox.execute("select count(*) from duckdb_secrets()").fetchone()[0] == 0
        assert sorted(row[0] for row in sandbox.execute("select database_name from duckdb_databases() "
                                                        "where not internal").fetchall()) == ["memory", "product"]
        assert str(sandbox.execute("select sum(open_amount) from marts.receivables").fetchone()[0]) == OPEN_TOTAL
    finally:
        sandbox.close()
    assert not (tmp_path / "copied.csv").exists() and not (tmp_path / "attached.duckdb").exists()


def test_h1_the_dashboard_as_of_build_never_runs_the_analyst_models(published, tmp_path, monkeypatch):
    # the dashboard's (and export's) other report dates build the product's models over the readers' copy
    # (invoicing_warehouse/runs/as_of.py): an analyst's folder named by INVOICING_MODELS_DIR is not run there at all
    from invoicing_warehouse.runs.as_of import attached, marts_as_of

    env_file = tmp_path / "invoicing.env"
    env_file.write_text("INVOICING_DUCKLAKE_PASSWORD=pw-DO-NOT-LEAK\n")
    env_file.chmod(0o600)
    folder = _model(tmp_path / "m", "env_leak",
                    f"select 'default' as portal_id, (select content from read_text('{env_file}')) as leaked")
    monkeypatch.setenv("INVOICING_MODELS_DIR", str(folder))
    readers = published.with_name("warehouse.read.duckdb")
    before = _figures(readers)
    reader = attached(readers)
    try:
        built = marts_as_of(reader, date(2026, 1, 15), {})
        built.close()
        analyst = reader.execute("select count(*) from duckdb_tables() where schema_name = 'analyst'").fetchone()[0]
    finally:
        reader.close()
    assert analyst == 0
    assert _figures(readers) == before
