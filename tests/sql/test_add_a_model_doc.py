"""docs/add-a-model.md, done exactly as written: its SQL copied from the page into a folder of one's own, built
with `models --models-dir`, its grain check passed, its figures those worked out by hand from the fixture."""

import re
from decimal import Decimal
from pathlib import Path

import duckdb
from model_fixture import load_fixture

from invoicing_warehouse.cli import main
from invoicing_warehouse.runs.gate import run_checks

DOC = Path(__file__).resolve().parents[2] / "docs" / "add-a-model.md"
MODEL = "analyst.monthly_receivables_by_customer"


def _doc_sql() -> tuple[str, str]:
    """(the file name the page gives, the page's one ```sql block holding a front matter)."""
    text = DOC.read_text(encoding="utf-8")
    (name,) = set(re.findall(r"~/finance-models/(\w+\.sql)", text))
    (sql,) = [block for block in re.findall(r"```sql\n(.*?)```", text, re.DOTALL) if block.startswith("-- ---")]
    return name, sql


def test_the_walk_through_builds_the_model_with_its_grain_checked_and_right_figures(tmp_path, capsys):
    warehouse = tmp_path / "warehouse.duckdb"
    conn = duckdb.connect(str(warehouse))
    load_fixture(conn)
    conn.close()
    folder = tmp_path / "finance-models"
    folder.mkdir()
    name, sql = _doc_sql()
    (folder / name).write_text(sql)

    assert main(["models", "--warehouse", str(warehouse), "--as-of", "2026-01-31", "--models-dir", str(folder)]) == 0
    out = capsys.readouterr().out
    lines = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert lines[-1] == MODEL  # built after every product model
    reader = duckdb.connect(str(warehouse.with_name("warehouse.read.duckdb")), read_only=True)
    try:
        rows = reader.execute(
            f"select customer_id, emit_month::varchar, invoice_count, open_amount, overdue_amount from {MODEL} "
            "order by customer_id, emit_month").fetchall()
        # the gate ran the model's own checks on what was published: its grain, not_null and accepted_range
        results = {r.name: r for r in run_checks(reader, folder) if r.relation == MODEL}
    finally:
        reader.close()
    dec = Decimal
    # by hand from tests/sql/test_receivables_marts.py's open amounts as of 2026-01-31 (model_fixture.py):
    assert rows == [
        ("c1", "2025-11-01", 1, dec("850.00"), dec("850.00")),  # inv3b, 62 days late
        ("c1", "2025-12-01", 1, dec("699.50"), dec("699.50")),  # inv1: 1200.00 - 500.50, 31 days late
        ("c1", "2026-01-01", 1, dec("380.00"), None),  # inv2: 500.00 - 120.00, due on D: not late
        ("c2", "2026-01-01", 2, dec("1140.00"), dec("140.00")),  # inv5 140.00 (1 day late) + dep1 1000.00
        ("c3", "2025-12-01", 1, dec("60.00"), dec("60.00")),  # inv7 of the deleted customer, 21 days late
    ]
    assert set(results) == {"keys_unique", "not_null", "accepted_range"}
    assert all(r.passed and r.blocking and "note" not in r.metadata for r in results.values())
    assert results["keys_unique"].metadata["key_columns"] == ["portal_id", "customer_id", "emit_month"]
