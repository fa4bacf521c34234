"""The file writers (invoicing_warehouse/engine/table_files.py), in process: each file read back by an independent
reader (the csv module, openpyxl, pyarrow) gives the frame's exact values."""

from __future__ import annotations

import csv
import io
from datetime import UTC, date, datetime
from decimal import Decimal

import pandas as pd
import pyarrow.parquet as pq
from openpyxl import load_workbook

from invoicing_warehouse.engine.table_files import sheet_name, to_csv, to_french_csv, to_parquet, to_xlsx

FRAME = pd.DataFrame.from_records(
    [
        ("=HYPERLINK(\"http://x\")", Decimal("1234.50"), date(2026, 1, 31), 3, True,
         datetime(2026, 1, 31, 22, 30, tzinfo=UTC)),
        ("Dupont; fils", Decimal("-0.05"), None, 0, False, None),
    ],
    columns=["customer_name", "open_amount", "due_date", "invoice_count", "overdue", "loaded_at"],
)


def test_french_csv_has_a_bom_semicolons_and_decimal_commas():
    data = to_french_csv(FRAME)
    assert data.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig")), delimiter=";"))
    assert rows[0] == list(FRAME.columns)
    assert rows[1][:4] == ["'=HYPERLINK(\"http://x\")", "1234,50", "2026-01-31", "3"]
    assert rows[2][:4] == ["Dupont; fils", "-0,05", "", "0"]  # the `;` inside a name is quoted, not a new cell
    assert data.count(b"\r\n") == 3


def test_xlsx_cells_are_typed_and_text_is_never_a_formula():
    sheet = load_workbook(io.BytesIO(to_xlsx({"aged/balance": FRAME})))["aged_balance"]
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0] == tuple(FRAME.columns)
    name, amount, due, count, overdue, loaded = rows[1]
    assert name == "=HYPERLINK(\"http://x\")" and sheet["A2"].data_type == "s"
    assert (Decimal(str(amount)), due, count, overdue) == (Decimal("1234.50"), datetime(2026, 1, 31), 3, True)
    assert sheet["B2"].data_type == "n" and sheet["C2"].is_date
    assert loaded == datetime(2026, 1, 31, 22, 30)
    assert rows[2][1:3] == (-0.05, None)


def test_csv_and_parquet_keep_the_raw_values():
    rows = list(csv.DictReader(io.StringIO(to_csv(FRAME).decode())))
    assert [(r["open_amount"], r["due_date"]) for r in rows] == [("1234.50", "2026-01-31"), ("-0.05", "")]
    table = pq.read_table(io.BytesIO(to_parquet(FRAME)))
    assert table.column("open_amount").to_pylist() == [Decimal("1234.50"), Decimal("-0.05")]
    assert table.column("due_date").to_pylist() == [date(2026, 1, 31), None]


def test_sheet_names_are_what_excel_accepts():
    assert sheet_name("a" * 40 + "?") == "a" * 31
    assert sheet_name("x[1]:y") == "x_1__y"
