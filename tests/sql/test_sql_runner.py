"""The SQL runner: discovery, dependencies parsed from SQL, order, cycles, atomic rebuild, as-of variable."""

from datetime import date
from pathlib import Path

import duckdb
import pytest

from invoicing_warehouse.engine.sql_references import parse_references
from invoicing_warehouse.engine.sql_runner import (
    SQL_DIR,
    MissingRawTableError,
    ModelDefinitionError,
    build_model,
    build_models,
    discover_models,
)


def _write(root: Path, key: str, sql: str) -> None:
    """Writes model `key` under `root`, with a front matter (a leading `-- materialized: view` line becomes its
    `materialized` key)."""
    schema, name = key.split(".")
    (root / schema).mkdir(parents=True, exist_ok=True)
    materialized = "view" if sql.startswith("-- materialized: view\n") else "table"
    body = sql.removeprefix("-- materialized: view\n")
    front = f"-- ---\n-- description: test model {key}.\n-- materialized: {materialized}\n-- grain: []\n-- ---\n"
    (root / schema / f"{name}.sql").write_text(front + body)


def test_references_ignore_comments_strings_columns_and_unknown_schemas():
    sql = """
    -- reads marts.commented_out
    /* and staging.block_commented */
    with a as (select * from staging.stg_a), b as (select * from invoicing_raw.documents__lines)
    select a.id, 'marts.in_a_string' as s, information_schema.x from a join marts.other on a.id = other.id
    join STAGING.Upper_Case u using (id)
    """
    refs = parse_references(sql, ["staging", "marts", "invoicing_raw"])
    assert refs == {"staging.stg_a", "invoicing_raw.documents__lines", "marts.other", "staging.upper_case"}


def test_references_come_from_parsing_where_a_regular_expression_is_fooled():
    """Each of these fooled the regular expression the runner used before sqlglot (kept here as the witness)."""
    import re

    old_pattern = re.compile(r"(?<![\w.\"])([a-z_][a-z0-9_]*)\s*\.\s*([a-z_][a-z0-9_]*)(?![\w.(])", re.IGNORECASE)
    sql = """
    with receivables as (select 1 as invoice_id)   -- a CTE named like the mart marts.receivables
    select staging.amount,                          -- a column of the alias `staging`, not a table
           $$ from marts.dso $$ as note             -- a dollar-quoted string
    from receivables
    join (select 2 as amount) as staging on true
    join "marts"."cash_outlook" as c on true        -- quoted names are still a table
    """
    assert parse_references(sql, ["staging", "marts"]) == {"marts.cash_outlook"}
    # the regex (comments stripped as it did) takes the alias's column and the string for tables, misses the quoted
    stripped = re.sub(r"--[^\n]*", " ", sql)
    regex_found = {f"{a}.{b}".lower() for a, b in old_pattern.findall(stripped)}
    assert {"staging.amount", "marts.dso"} <= regex_found and "marts.cash_outlook" not in regex_found


def test_sql_that_does_not_parse_is_a_clear_error_naming_the_file(tmp_path):
    _write(tmp_path, "marts.broken", "select from from where")
    with pytest.raises(ModelDefinitionError, match=r"broken\.sql: SQL does not parse"):
        discover_models(tmp_path)


def test_a_model_without_front_matter_is_a_clear_error(tmp_path):
    (tmp_path / "marts").mkdir()
    (tmp_path / "marts" / "bare.sql").write_text("-- a model\nselect 1 as x\n")
    with pytest.raises(ModelDefinitionError, match=r"bare\.sql: no front matter"):
        discover_models(tmp_path)


def test_every_product_model_declares_a_description_and_a_grain_that_holds_on_the_fixture(at_d):
    """The grain each front matter states is unique and never null on the hand-built fixture (views included:
    a wrong grain there is documentation that lies)."""
    from invoicing_warehouse.runs.checks import duplicate_keys

    models = discover_models()
    assert len(models) == 50  # 12 staging, 9 intermediate, 26 marts, 3 reference
    for model in models:
        assert model.manifest.description and not model.manifest.description.startswith("--"), model.key
        if model.manifest.grain:
            assert duplicate_keys(at_d, model.key, model.manifest.grain)[0] == 0, model.key
        else:
            assert at_d.execute(f"select count(*) from {model.key}").fetchone()[0] <= 1, model.key
    grains = {m.key: m.manifest.grain for m in models}
    assert grains["marts.receivables"] == ("portal_id", "invoice_id")
    assert grains["marts.dso"] == ("portal_id",)


def test_project_models_are_ordered_by_their_dependencies():
    models = discover_models()
    keys = [m.key for m in models]
    position = {k: i for i, k in enumerate(keys)}
    assert {
        "marts.receivables",
        "marts.receivables_by_customer",
        "marts.overdue_customers",
        "marts.supplier_payables",
        "marts.payables_by_supplier",
        "marts.payables_schedule",
    } <= set(keys)
    for model in models:
        for dep in model.model_dependencies:
            assert position[dep] < position[model.key], f"{dep} must come before {model.key}"
    by_key = {m.key: m for m in models}
    assert by_key["marts.overdue_customers"].depends_on >= {
        "marts.receivables",
        "marts.receivables_by_customer",
    }
    assert by_key["staging.stg_invoicing__document_lines"].raw_dependencies == {
        "invoicing_raw.documents",
        "invoicing_raw.documents__lines",
    }
    # staging reads raw only; intermediate models and marts never read raw
    for model in models:
        if model.schema in ("intermediate", "marts"):
            assert not model.raw_dependencies, model.key
    assert by_key["staging.stg_invoicing__documents"].materialized == "view"
    # the shared rules are views: each select reads the report date of its own session
    assert {m.materialized for m in models if m.schema == "intermediate"} == {"view"}
    assert by_key["marts.receivables"].materialized == "table"
    assert all(m.path.parent.parent == SQL_DIR for m in models)


def test_a_new_model_file_is_discovered_and_built_without_python_changes(tmp_path):
    _write(tmp_path, "staging.stg_numbers", "select * from invoicing_raw.numbers where n > 0;")
    _write(
        tmp_path,
        "marts.double",
        "select n * 2 as d, getvariable('as_of_date') as as_of from staging.stg_numbers",
    )
    _write(tmp_path, "marts.total", "-- materialized: view\nselect sum(d) as total from marts.double")
    keys = [m.key for m in discover_models(tmp_path)]
    assert keys == ["staging.stg_numbers", "marts.double", "marts.total"]
    conn = duckdb.connect()
    conn.execute(
        "create schema invoicing_raw; create table invoicing_raw.numbers as select range as n from range(5)"
    )
    rows = build_models(conn, as_of=date(2025, 3, 1), sql_dir=tmp_path)
    assert rows == {"staging.stg_numbers": 4, "marts.double": 4, "marts.total": 1}
    assert conn.execute("select total from marts.total").fetchone() == (20,)  # (1 + 2 + 3 + 4) * 2
    assert conn.execute("select distinct as_of from marts.double").fetchall() == [(date(2025, 3, 1),)]
    assert conn.execute(
        "select table_type from information_schema.tables where table_name = 'total'"
    ).fetchone() == ("VIEW",)
    # only the selected model, by bare name
    assert build_models(conn, as_of=date(2025, 3, 2), select=["double"], sql_dir=tmp_path) == {
        "marts.double": 4
    }
    assert conn.execute("select distinct as_of from marts.double").fetchall() == [(date(2025, 3, 2),)]


def test_a_cycle_is_a_clear_error(tmp_path):
    _write(tmp_path, "marts.a", "select * from marts.b")
    _write(tmp_path, "marts.b", "select * from marts.c")
    _write(tmp_path, "marts.c", "select * from marts.a")
    with pytest.raises(
        ModelDefinitionError,
        match=r"dependency cycle between SQL models: marts\.a -> marts\.b -> "
        r"marts\.c -> marts\.a",
    ):
        discover_models(tmp_path)


def test_no_model_at_all_is_a_clear_error(tmp_path):
    """A folder without models (an install that lost the package's SQL) must not build "0 models" and pass."""
    (tmp_path / "marts").mkdir()
    with pytest.raises(ModelDefinitionError, match="no SQL model found"):
        discover_models(tmp_path)
    with pytest.raises(ModelDefinitionError, match="no SQL model found"):
        build_models(duckdb.connect(), sql_dir=tmp_path / "absent")


def test_the_models_are_the_checkouts_top_level_sql_folder():
    # in a checkout (and an editable install) the models are read where they are written; an installed wheel
    # ships them as invoicing_warehouse/sql/ (tests/test_packaging.py)
    assert SQL_DIR == Path(__file__).resolve().parents[2] / "sql"
    assert len(discover_models()) == len(list(SQL_DIR.glob("*/*.sql"))) > 0


def test_a_reference_to_a_missing_model_is_a_clear_error(tmp_path):
    _write(tmp_path, "marts.a", "select * from staging.nowhere")
    _write(tmp_path, "staging.b", "select 1")
    with pytest.raises(ModelDefinitionError, match=r"references staging\.nowhere, which has no SQL file"):
        discover_models(tmp_path)


def test_missing_raw_tables_are_named_before_anything_is_built(tmp_path):
    _write(
        tmp_path, "staging.s", "select * from invoicing_raw.customers join invoicing_raw.documents using (id)"
    )
    conn = duckdb.connect()
    conn.execute("create schema invoicing_raw; create table invoicing_raw.customers (id varchar)")
    with pytest.raises(
        MissingRawTableError, match=r"invoicing_raw\.documents.*run `invoicing-warehouse sync` first"
    ):
        build_models(conn, sql_dir=tmp_path)
    assert conn.execute(
        "select count(*) from information_schema.schemata where schema_name = 'staging'"
    ).fetchone() == (0,)


def test_a_failing_model_leaves_the_previous_tables_in_place(tmp_path):
    _write(tmp_path, "marts.first", "select 1 as version")
    _write(tmp_path, "marts.second", "select version from marts.first")
    conn = duckdb.connect()
    build_models(conn, sql_dir=tmp_path)
    _write(tmp_path, "marts.first", "select 2 as version")
    _write(tmp_path, "marts.second", "select version / 0 + no_such_column from marts.first")
    with pytest.raises(duckdb.Error, match=r"model marts\.second \(.*second\.sql\) failed"):
        build_models(conn, sql_dir=tmp_path)
    # the whole rebuild was one transaction: marts.first was not replaced either
    assert conn.execute("select version from marts.first").fetchone() == (1,)


def test_build_model_switches_a_table_to_a_view(tmp_path):
    _write(tmp_path, "marts.m", "select 1 as x")
    conn = duckdb.connect()
    build_models(conn, sql_dir=tmp_path)
    _write(tmp_path, "marts.m", "-- materialized: view\nselect 2 as x")
    (model,) = discover_models(tmp_path)
    assert build_model(conn, model, date(2026, 1, 1)) == 1
    assert conn.execute("select x from marts.m").fetchone() == (2,)


def test_an_unknown_selected_model_is_an_error(tmp_path):
    _write(tmp_path, "marts.m", "select 1 as x")
    with pytest.raises(ModelDefinitionError, match="unknown model"):
        build_models(duckdb.connect(), select=["marts.nope"], sql_dir=tmp_path)


def test_missing_raw_tables_after_a_sync_get_another_hint(tmp_path):
    _write(tmp_path, "staging.s", "select * from invoicing_raw.documents__messages")
    conn = duckdb.connect()
    conn.execute("create schema invoicing_raw; create table invoicing_raw._dlt_loads (load_id varchar)")
    with pytest.raises(MissingRawTableError, match=r"documents__messages; a sync has run, so the portal"):
        build_models(conn, sql_dir=tmp_path)


def test_selection_name_plus_is_the_model_and_every_model_downstream():
    from invoicing_warehouse.engine.model_selection import UnknownModelError, resolve_selection

    models = discover_models()
    # read from the marts' SQL: the payables marts, the cash outlook and the D441-6 tables read supplier_payables;
    # the Payables page's summary reads it and payables_by_supplier, its weeks read payables_schedule
    assert set(resolve_selection(models, ["supplier_payables+"])) == {
        "marts.supplier_payables", "marts.payables_by_supplier", "marts.payables_schedule", "marts.cash_outlook",
        "marts.payment_terms_report", "marts.payment_terms_table", "marts.payables_summary", "marts.payables_weeks"}
    assert resolve_selection(models, ["marts.dso"]) == ["marts.dso"]
    # names are case-free; of the marts only payment_behaviour reads dso (its SQL)
    assert resolve_selection(models, ["DSO+"]) == ["marts.dso", "marts.payment_behaviour"]
    with pytest.raises(UnknownModelError, match=r"unknown model\(s\): dos \(known: "):
        resolve_selection(models, ["dos+"])
