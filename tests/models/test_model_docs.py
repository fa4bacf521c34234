"""docs/models.md is the rendering of the models' front matter, and a malformed front matter is refused."""

from pathlib import Path

import pytest

from warehouse_engine.model_docs import render_models_doc
from warehouse_engine.model_manifest import ManifestError, parse_manifest
from warehouse_engine.sql_runner import discover_models

PAGE = Path(__file__).resolve().parents[2] / "docs" / "models.md"


def test_docs_models_md_is_current():
    assert PAGE.read_text(encoding="utf-8") == render_models_doc(discover_models()), (
        "docs/models.md is stale: run `python -m warehouse_engine.model_docs > docs/models.md`")
    page = PAGE.read_text(encoding="utf-8")
    # what the front matter of receivables and cash_outlook says reaches the page
    assert "### `marts.receivables`\n\none row per invoice with money still owed" in page
    assert "- checks: keys_unique, not_null(as_of_date), accepted_range(period_index: 0..9)" in page


@pytest.mark.parametrize(("front", "message"), [
    ("-- ---\n-- grain: [a]\n-- ---\n", "needs a `description`"),
    ("-- ---\n-- description: x\n-- ---\n", "needs a `grain`"),
    ("-- ---\n-- description: x\n-- grain: [a]\n-- materialized: ephemeral\n-- ---\n", "table or view"),
    ("-- ---\n-- description: x\n-- grain: [a]\n-- unique: [a]\n-- ---\n", "unknown front matter key"),
    ("-- ---\n-- description: x\n-- grain: [a]\n-- tests: {accepted_range: {a: 3}}\n-- ---\n", "accepted_range"),
    ("-- ---\n-- description: x\n-- grain: [a]\n", "no front matter"),  # never closed
])
def test_a_malformed_front_matter_is_refused_naming_the_file(front, message):
    with pytest.raises(ManifestError, match=message) as raised:
        parse_manifest(front + "select 1 as a", "m.sql")
    assert str(raised.value).startswith("m.sql: ")
