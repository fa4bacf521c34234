"""docs/models.md is the rendering of the models' front matter, and a malformed front matter is refused."""

from pathlib import Path

import duckdb
import pytest

from invoicing_warehouse.engine.model_docs import render_models_doc
from invoicing_warehouse.engine.model_manifest import ManifestError, parse_manifest
from invoicing_warehouse.engine.sql_runner import ModelDefinitionError, build_model, discover_models

PAGE = Path(__file__).resolve().parents[2] / "docs" / "models.md"


def test_docs_models_md_is_current():
    assert PAGE.read_text(encoding="utf-8") == render_models_doc(discover_models()), (
        "docs/models.md is stale: run `python -m invoicing_warehouse.engine.model_docs > docs/models.md`")
    page = PAGE.read_text(encoding="utf-8")
    # what the front matter of receivables and cash_outlook says reaches the page
    assert "### `marts.receivables`\n\nOne row per invoice with money owed on D" in page
    # and each column of a mart, with what it holds
    assert "| `open_amount` | total − paid − settled, 0 once the invoice is `PAID`" in page
    assert "- checks: keys_unique, not_null(as_of_date), accepted_range(period_index: 0..9)" in page


@pytest.mark.parametrize(("front", "message"), [
    ("-- ---\n-- grain: [a]\n-- ---\n", "needs a `description`"),
    ("-- ---\n-- description: x\n-- ---\n", "needs a `grain`"),
    ("-- ---\n-- description: x\n-- grain: [a]\n-- materialized: ephemeral\n-- ---\n", "table or view"),
    ("-- ---\n-- description: x\n-- grain: [a]\n-- unique: [a]\n-- ---\n", "unknown front matter key"),
    ("-- ---\n-- description: x\n-- grain: [a]\n-- tests: {accepted_range: {a: 3}}\n-- ---\n", "accepted_range"),
    ("-- ---\n-- description: x\n-- grain: [a]\n", "no front matter"),  # never closed
    ("-- ---\n-- description: x\n-- grain: [a]\n-- columns: [a, b]\n-- ---\n", "columns is a mapping"),
    ("-- ---\n-- description: x\n-- grain: [a]\n-- columns: {a: ''}\n-- ---\n", "columns.a needs a description"),
    ("-- ---\n-- description: x\n-- grain: [a]\n-- columns: {\"a\\nb\": x}\n-- ---\n", "not a column name"),
])
def test_a_malformed_front_matter_is_refused_naming_the_file(front, message):
    with pytest.raises(ManifestError, match=message) as raised:
        parse_manifest(front + "select 1 as a", "m.sql")
    assert str(raised.value).startswith("m.sql: ")


def test_described_columns_keep_their_order_and_may_carry_a_legal_tables_headers():
    manifest = parse_manifest(
        '-- ---\n-- description: x\n-- grain: [a]\n-- columns:\n--   b: the b\n--   "1 à 30 jours": >-\n'
        '--     days late,\n--     folded\n--   a: the a\n-- ---\nselect 1 as a', "m.sql")
    assert manifest.columns == (("b", "the b"), ("1 à 30 jours", "days late, folded"), ("a", "the a"))
    assert manifest.column_description("1 à 30 jours") == "days late, folded"
    assert manifest.column_description("c") is None


def test_a_build_stores_the_texts_as_comments_and_refuses_a_described_column_it_does_not_build(tmp_path):
    (tmp_path / "marts").mkdir()
    model_file = tmp_path / "marts" / "m.sql"
    # a quote in a text is data, not the end of the COMMENT's literal
    model_file.write_text("-- ---\n-- description: the m's rows\n-- grain: [a]\n-- columns:\n--   a: it's a\n"
                          "--   b: \"'); drop table marts.m; --\"\n-- ---\nselect 1 as a, 2 as b\n")
    [model] = discover_models(tmp_path)
    with duckdb.connect() as conn:
        build_model(conn, model)
        assert conn.execute("select column_name, comment from duckdb_columns() where table_name = 'm' "
                            "order by column_index").fetchall() == [
            ("a", "it's a"), ("b", "'); drop table marts.m; --")]
        assert conn.execute("select comment from duckdb_tables() where table_name = 'm'").fetchone() == (
            "the m's rows",)
        model_file.write_text(model_file.read_text().replace("--   a: it's a\n", "--   c: not built\n"))
        [model] = discover_models(tmp_path)
        with pytest.raises(ModelDefinitionError, match="names column.s. the model does not build: c"):
            build_model(conn, model)
