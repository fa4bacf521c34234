"""`invoicing-warehouse export`, in process, on the session's demo warehouse: each format read back with its own
reader (DuckDB's Parquet reader, the csv module, openpyxl) equals the marts of the readers' copy read directly;
a past date equals the models built as of it by the engine's runner on a copy; a held warehouse is refused."""

from __future__ import annotations

import csv
import io
import shutil
from datetime import timedelta
from decimal import Decimal

import duckdb
import pandas as pd
from openpyxl import load_workbook

from invoicing_warehouse.cli import main
from invoicing_warehouse.engine.column_labels import labelled
from invoicing_warehouse.engine.sql_runner import build_models
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish


def _truth(database) -> dict[str, tuple[int, dict[str, Decimal]]]:
    """Per mart: its row count and the sum of each decimal column, read with DuckDB."""
    with duckdb.connect(str(database), read_only=True) as connection:
        columns = connection.execute(
            "select table_name, column_name from information_schema.columns where table_schema = 'marts' "
            "and data_type like 'DECIMAL%' order by table_name, ordinal_position").fetchall()
        # every mart but the month-end trend the gate publishes beside them for the Trends page
        # (invoicing_warehouse/runs/month_end_trends.py): a table of twelve dates, not a model the export builds as of
        # one date
        marts = [row[0] for row in connection.execute(
            "select table_name from information_schema.tables where table_schema = 'marts' "
            "and table_name <> 'month_end_trends'").fetchall()]
        truth = {}
        for mart in marts:
            decimals = [column for table, column in columns if table == mart]
            # quoted: the D441-6 tables carry the legal model's French column names ("0 jour (indicatif)")
            sums_sql = "".join(f', coalesce(sum("{c}"), 0)' for c in decimals)
            sums = connection.execute(f"select count(*) {sums_sql} from marts.{mart}").fetchone()
            truth[mart] = (sums[0], dict(zip(decimals, sums[1:], strict=True)))
    return truth


def _read_back(rows: list[dict[str, object]], decimals: dict[str, Decimal], to_decimal) -> tuple[int, dict]:
    # each value read at its column's scale (the sum's: cents for money, 4 places for a share such as late_share)
    return len(rows), {column: sum((to_decimal(row[column], -total.as_tuple().exponent) for row in rows), Decimal(0))
                       for column, total in decimals.items()}


def _number(text, places: int) -> Decimal:
    # xlsx holds floats (1234.5600000000002), the CSVs text with a decimal point or comma
    return Decimal(0) if text in ("", None) else Decimal(str(text).replace(",",
                                                                           ".")).quantize(Decimal(1).scaleb(-places))


def _headers(database, language: str) -> dict[str, dict[str, str]]:
    """Per mart: each column's header in the files made for people (xlsx, csv-fr), in `language`."""
    with duckdb.connect(str(database), read_only=True) as connection:
        columns = connection.execute("select table_name, column_name from information_schema.columns "
                                     "where table_schema = 'marts' order by table_name, ordinal_position").fetchall()
    by_mart: dict[str, list[str]] = {}
    for mart, column in columns:
        by_mart.setdefault(mart, []).append(column)
    return {mart: dict(zip(names, labelled(pd.DataFrame(columns=names), language).columns, strict=True))
            for mart, names in by_mart.items()}


def _labelled_sums(sums: dict[str, Decimal], headers: dict[str, str]) -> dict[str, Decimal]:
    return {headers[column]: total for column, total in sums.items()}


def test_export_writes_every_mart_in_each_format_equal_to_the_marts(dashboard, tmp_path, capsys, monkeypatch):
    # unset: the demo's figures are in euros, a French portal: the files for people carry French headers
    monkeypatch.delenv("INVOICING_LANGUAGE", raising=False)
    truth = _truth(dashboard.snapshot)
    headers = _headers(dashboard.snapshot, "fr")
    assert {"receivables", "dso", "payables_by_supplier"} <= set(truth) and truth["receivables"][0] > 20
    for file_format in ("parquet", "csv", "csv-fr", "xlsx"):
        out = tmp_path / file_format
        assert main(["export", "--warehouse", str(dashboard.warehouse), "--as-of", dashboard.as_of.isoformat(),
                     "--format", file_format, "--out", str(out)]) == 0, capsys.readouterr().err
        if file_format == "xlsx":
            workbook = load_workbook(out / f"marts_{dashboard.as_of.isoformat()}.xlsx", read_only=True)
            assert sorted(workbook.sheetnames) == sorted(truth)
            # the D441-6 table as the legal model labels it (arrêté of 20 March 2017), ready for the management report
            header = next(workbook["payment_terms_table"].iter_rows(values_only=True))
            assert {"Ligne", "0 jour (indicatif)", "1 à 30 jours", "31 à 60 jours", "61 à 90 jours", "91 jours et plus",
                    "Total (1 jour et plus)", "Précisions"} <= set(header)
            receivables = next(workbook["receivables"].iter_rows(values_only=True))
            assert {"Référence", "Restant dû", "Total TTC"} <= set(receivables) and "open_amount" not in receivables
        for mart, (count, sums) in truth.items():
            if file_format == "parquet":
                with duckdb.connect() as reader:
                    cursor = reader.execute(f"select * from read_parquet('{out / mart}.parquet')")
                    names = [c[0] for c in cursor.description]
                    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
                assert _read_back(rows, sums, lambda v, _: v or Decimal(0)) == (count, sums), mart
            elif file_format == "xlsx":
                header, *values = list(workbook[mart].iter_rows(values_only=True))
                rows = [dict(zip(header, row, strict=True)) for row in values]
                labelled_sums = _labelled_sums(sums, headers[mart])
                assert _read_back(rows, labelled_sums, _number) == (count, labelled_sums), mart
            else:
                data = (out / f"{mart}.csv").read_bytes()
                french = file_format == "csv-fr"
                assert data.startswith(b"\xef\xbb\xbf") == french
                rows = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig")), delimiter=";" if french else ","))
                expected = _labelled_sums(sums, headers[mart]) if french else sums
                assert _read_back(rows, expected, _number) == (count, expected), mart


def test_export_of_a_past_date_equals_the_models_built_as_of_it(dashboard, tmp_path, capsys):
    past = dashboard.as_of - timedelta(days=30)
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(dashboard.snapshot, copy)
    with duckdb.connect(str(copy)) as connection:
        build_models(connection, as_of=past)
    truth = _truth(copy)
    assert main(["export", "--warehouse", str(dashboard.warehouse), "--as-of", past.isoformat(), "--format",
                 "parquet", "--out", str(tmp_path / "out")]) == 0, capsys.readouterr().err
    with duckdb.connect(str(copy), read_only=True) as connection:
        for mart in truth:
            # every row, both ways: what the file has and the mart has not, and the other way round
            difference = connection.execute(
                f"select count(*) from ((select * from read_parquet('{tmp_path / 'out' / mart}.parquet') "
                f"except all select * from marts.{mart}) union all (select * from marts.{mart} except all "
                f"select * from read_parquet('{tmp_path / 'out' / mart}.parquet')))").fetchone()
            assert difference == (0,), mart
    assert truth["receivables"][1]["open_amount"] != _truth(dashboard.snapshot)["receivables"][1]["open_amount"]


def test_export_refuses_while_a_blocking_check_holds_the_figures(dashboard, tmp_path, capsys):
    warehouse = tmp_path / "warehouse.duckdb"
    shutil.copyfile(dashboard.warehouse, warehouse)
    shutil.copyfile(dashboard.snapshot, warehouse.with_name("warehouse.read.duckdb"))
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute("insert into invoicing_raw.documents "
                           "select * from invoicing_raw.documents order by id limit 1")
    held = build_and_publish(WarehouseTarget.duckdb_file(warehouse), note="held", as_of=dashboard.as_of)
    assert held.failures and held.published is None
    out = tmp_path / "out"
    assert main(["export", "--warehouse", str(warehouse), "--format", "xlsx", "--out", str(out)]) == 1
    error = capsys.readouterr().err
    assert "held back by the gate" in error and "ids_unique on invoicing_raw.documents" in error, error
    assert not out.exists()


def test_export_headers_follow_the_language_setting_and_refuse_an_unknown_one(dashboard, tmp_path, capsys,
                                                                               monkeypatch):
    monkeypatch.setenv("INVOICING_LANGUAGE", "en")
    assert main(["export", "--warehouse", str(dashboard.warehouse), "--as-of", dashboard.as_of.isoformat(),
                 "--format", "csv-fr", "--out", str(tmp_path / "en")]) == 0, capsys.readouterr().err
    header = (tmp_path / "en" / "receivables.csv").read_text(encoding="utf-8-sig").splitlines()[0].split(";")
    assert {"Reference", "Open", "Total incl. tax"} <= set(header) and "open_amount" not in header
    # the legal model's labels are the same in English
    assert (tmp_path / "en" / "payment_terms_table.csv").read_text(encoding="utf-8-sig").splitlines()[0].count(
        "0 jour (indicatif)") == 1
    assert main(["export", "--warehouse", str(dashboard.warehouse), "--as-of", dashboard.as_of.isoformat(),
                 "--format", "csv", "--out", str(tmp_path / "plain")]) == 0
    assert "open_amount" in (tmp_path / "plain" / "receivables.csv").read_text().splitlines()[0].split(",")
    monkeypatch.setenv("INVOICING_LANGUAGE", "de")
    capsys.readouterr()
    assert main(["export", "--warehouse", str(dashboard.warehouse), "--as-of", dashboard.as_of.isoformat(),
                 "--format", "xlsx", "--out", str(tmp_path / "de")]) == 1
    assert "INVOICING_LANGUAGE=de: not a language the product speaks (fr or en)" in capsys.readouterr().err
    assert not (tmp_path / "de").exists()
