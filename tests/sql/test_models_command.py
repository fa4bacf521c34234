"""`invoicing-warehouse models`: exit codes, output, and its as-of date."""

from datetime import date

import duckdb
import pytest
from model_fixture import load_fixture

from invoicing_warehouse.cli import main
from invoicing_warehouse.engine.sql_runner import today_in_portal_zone


def test_builds_every_model_and_prints_rows_and_time(warehouse, capsys):
    assert main(["models", "--warehouse", str(warehouse), "--as-of", "2026-01-31"]) == 0
    out = capsys.readouterr().out
    assert "as of 2026-01-31" in out
    # 6 receivables rows as of D (see test_receivables_marts.py), 2 overdue customers
    assert any(line.split()[:2] == ["marts.receivables", "6"] for line in out.splitlines())
    assert any(line.split()[:2] == ["marts.overdue_customers", "2"] for line in out.splitlines())
    # 12 staging, 9 intermediate (with the fiscal year and customer types), 26 marts (with the two D441-6 tables and
    # the 8 that hold the dashboard's own figures), 3 reference (the ECB rate seed, the claim statuses, the legal
    # interest rates)
    assert "built 50 models" in out
    conn = duckdb.connect(str(warehouse), read_only=True)
    assert conn.execute("select distinct as_of_date from marts.receivables").fetchall() == [
        (date(2026, 1, 31),)
    ]
    conn.close()
    # readers get the new marts through the published snapshot, opened read-only beside the warehouse
    snapshot = warehouse.with_name("warehouse.read.duckdb")
    assert f"readers' snapshot: {snapshot}" in out
    reader = duckdb.connect(str(snapshot), read_only=True)
    assert reader.execute("select count(*) from marts.receivables").fetchone() == (6,)
    reader.close()


def test_as_of_a_past_date(warehouse, capsys):
    assert main(["models", "--warehouse", str(warehouse), "--as-of", "2026-01-10"]) == 0
    conn = duckdb.connect(str(warehouse), read_only=True)
    # as of 2026-01-10 only Alpha is late (test_receivables_marts.py)
    assert conn.execute("select customer_id from marts.overdue_customers").fetchall() == [("c1",)]
    conn.close()


def test_a_missing_warehouse_is_exit_1_and_is_not_created(tmp_path, capsys):
    path = tmp_path / "absent.duckdb"
    assert main(["models", "--warehouse", str(path)]) == 1
    err = capsys.readouterr().err
    assert "does not exist" in err and "invoicing-warehouse sync" in err
    assert not path.exists()


def test_a_missing_raw_table_is_exit_1_naming_it(tmp_path, capsys):
    path = tmp_path / "partial.duckdb"
    conn = duckdb.connect(str(path))
    load_fixture(conn)
    conn.execute("drop table invoicing_raw.transaction_usages")
    conn.close()
    assert main(["models", "--warehouse", str(path)]) == 1
    err = capsys.readouterr().err
    assert "invoicing_raw.transaction_usages" in err and "run `invoicing-warehouse sync` first" in err


def test_a_bad_date_is_a_usage_error(warehouse, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "--warehouse", str(warehouse), "--as-of", "31/01/2026"])
    assert exit_info.value.code == 2
    assert "not a date (YYYY-MM-DD)" in capsys.readouterr().err


def test_a_locked_warehouse_is_exit_1(warehouse, capsys):
    # the same process holding a read-write connection with another configuration makes connect() fail
    holder = duckdb.connect(str(warehouse), config={"access_mode": "READ_ONLY"})
    try:
        assert main(["models", "--warehouse", str(warehouse)]) == 1
        assert "cannot open warehouse" in capsys.readouterr().err
    finally:
        holder.close()


def test_the_default_report_date_is_today_in_portal_zone(warehouse, capsys):
    assert main(["models", "--warehouse", str(warehouse)]) == 0
    conn = duckdb.connect(str(warehouse), read_only=True)
    assert conn.execute("select distinct as_of_date from marts.receivables").fetchall() == [(today_in_portal_zone(),)]
    conn.close()
    assert f"as of {today_in_portal_zone().isoformat()}" in capsys.readouterr().out
