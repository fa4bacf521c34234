"""An analyst's own folder of models (`models --models-dir`, INVOICING_MODELS_DIR) and `models --select`:
built after the product's, judged by the same gate, and a broken one loses nothing."""

from pathlib import Path

import duckdb

from invoicing_warehouse.cli import main

FRONT = "-- ---\n-- description: {what}\n-- materialized: {materialized}\n-- grain: [{grain}]\n-- ---\n"
AS_OF = ["--as-of", "2026-01-31"]


def _model(folder: Path, name: str, grain: str, sql: str, materialized: str = "table") -> Path:
    folder.mkdir(exist_ok=True)
    front = FRONT.format(what=f"the {name}.", grain=grain, materialized=materialized)
    (folder / f"{name}.sql").write_text(front + sql)
    return folder


def _scalar(path: Path, sql: str):
    conn = duckdb.connect(str(path), read_only=True)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def _readers(warehouse: Path) -> Path:
    return warehouse.with_name("warehouse.read.duckdb")


def test_a_broken_analyst_model_is_named_and_loses_nothing(warehouse, tmp_path, capsys):
    assert main(["models", "--warehouse", str(warehouse), *AS_OF]) == 0
    # a later build as of another date, with an analyst model that fails (division of a varchar)
    folder = _model(tmp_path / "mine", "broken", "portal_id",
                    "select portal_id, customer_id / 2 as x from marts.receivables")
    assert main(["models", "--warehouse", str(warehouse), "--as-of", "2026-01-10", "--models-dir", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "model analyst.broken (" in err and "broken.sql) failed" in err and "nothing was replaced" in err
    for path in (warehouse, _readers(warehouse)):  # the marts of D stay, in the warehouse and the readers' copy
        assert _scalar(path, "select count(*) from marts.receivables where as_of_date = '2026-01-31'") == 6
        assert _scalar(path, "select count(*) from information_schema.tables where table_schema = 'analyst'") == 0


def test_an_analyst_model_failing_its_grain_is_held_back_by_the_gate(warehouse, tmp_path, capsys):
    # one row per invoice, declared one row per customer: inv1, inv2 and inv3b are all c1's. A view: an analyst's
    # views are figures too, checked as tables are
    folder = _model(tmp_path / "mine", "by_customer", "portal_id, customer_id",
                    "select portal_id, customer_id, invoice_id from marts.receivables", materialized="view")
    assert main(["models", "--warehouse", str(warehouse), *AS_OF, "--models-dir", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "blocking check failed, nothing published: keys_unique on analyst.by_customer" in err
    assert "default, c1" in err
    assert not _readers(warehouse).exists()  # nothing was ever published
    assert _scalar(warehouse, "select count(*) from information_schema.tables where table_schema = 'marts'") == 0


def test_the_setting_names_the_folder_and_select_name_plus_builds_it_and_what_is_downstream(
        warehouse, tmp_path, monkeypatch, capsys):
    folder = _model(tmp_path / "mine", "open_total", "portal_id",
                    "select portal_id, sum(open_amount) as open_amount from marts.receivables group by portal_id")
    monkeypatch.setenv("INVOICING_MODELS_DIR", str(folder))  # read by the CLI and by Dagster alike
    assert main(["models", "--warehouse", str(warehouse), *AS_OF]) == 0
    # 699.50 + 380.00 + 850.00 + 140.00 + 1000.00 + 60.00 (tests/sql/test_receivables_marts.py)
    assert str(_scalar(_readers(warehouse), "select open_amount from analyst.open_total")) == "3129.50"
    from assets.models import build_model_assets

    deps = {key.to_user_string(): {d.to_user_string() for d in a.asset_deps[key]}
            for a in build_model_assets() for key in a.keys}
    assert deps["analyst/open_total"] == {"marts/receivables"}
    capsys.readouterr()
    assert main(["models", "--warehouse", str(warehouse), *AS_OF, "--select", "receivables+"]) == 0
    built = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    # marts.receivables, the marts built on it (expected_payments before cash_outlook and expected_payment_bases,
    # receivables_by_customer before dso and overdue_customers, dso before payment_behaviour; payment_terms_report
    # reads receivables for the invoices issued, payment_terms_table reads payment_terms_report; the Receivables
    # page's receivables_aging, and receivables_summary after overdue_customers), yours
    assert built == ["marts.receivables", "marts.expected_payments", "marts.payment_terms_report",
                     "marts.receivables_aging", "marts.receivables_by_customer", "marts.cash_outlook", "marts.dso",
                     "marts.expected_payment_bases", "marts.overdue_customers", "marts.payment_terms_table",
                     "marts.payment_behaviour", "marts.receivables_summary", "analyst.open_total"]
    assert main(["models", "--warehouse", str(warehouse), *AS_OF, "--select", "dso"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("  ")] == [
        "marts.dso"]


def test_select_an_unknown_name_is_a_clear_error_before_anything_is_built(warehouse, capsys):
    assert main(["models", "--warehouse", str(warehouse), *AS_OF, "--select", "recievables+"]) == 1
    err = capsys.readouterr().err
    assert "unknown model(s): recievables" in err and "receivables" in err
    assert _scalar(warehouse, "select count(*) from information_schema.tables where table_schema = 'marts'") == 0
