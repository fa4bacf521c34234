"""The files readers take away from the marts, one writer per format: CSV (decimal point, what a program re-reads
exactly), CSV for French spreadsheets (`;`, decimal comma, UTF-8 BOM), xlsx (typed cells: numbers as numbers,
dates as dates, one sheet per table) and Parquet. The dashboard's downloads and `invoicing-warehouse export`
both write through here, so a file is the same whichever door it came from.

Names, e-mails and references come from third parties (security review M5): a CSV text cell a spreadsheet
would run as a formula is written with a leading `'`; an xlsx text cell is stored as a string cell, which no
spreadsheet runs, so it keeps its exact text, except the control characters the xlsx format cannot hold
(security review 2, L4: a name ending in `\x0b` failed the whole export): each becomes CONTROL_REPLACEMENT,
so the cell shows that a character was there rather than silently losing it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pandas as pd

from invoicing_warehouse.engine.column_labels import labelled

CSV = "csv"
FRENCH_CSV = "csv-fr"
XLSX = "xlsx"
PARQUET = "parquet"
# what a file of each format is called and served as
EXTENSIONS = {CSV: "csv", FRENCH_CSV: "csv", XLSX: "xlsx", PARQUET: "parquet"}
MIME_TYPES = {
    CSV: "text/csv",
    FRENCH_CSV: "text/csv",
    XLSX: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    PARQUET: "application/vnd.apache.parquet",
}
# A text cell starting with one of these is run as a formula by Excel, LibreOffice or Google Sheets (OWASP,
# "CSV Injection"): `=HYPERLINK(...)` in a supplier's name would become a live link, or worse, on opening.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
UTF8_BOM = "\ufeff"
# XML 1.0 refuses these C0 controls (tab, newline and carriage return are allowed): openpyxl's
# ILLEGAL_CHARACTERS_RE, written out here so the rule does not hang on a private name of openpyxl's
XLSX_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
CONTROL_REPLACEMENT = "\ufffd"  # the Unicode replacement character: visible, and refused by no format
# Excel's limit on a sheet's name, and the characters it refuses there
SHEET_NAME_LENGTH = 31
SHEET_NAME_FORBIDDEN = str.maketrans({c: "_" for c in "[]:*?/\\"})


def neutralised(value: Any) -> Any:
    """A text cell that a spreadsheet would run, prefixed with `'` so that it shows as the text it is; every
    other value as it is: amounts (Decimal, float, int, negative ones included), dates and text that starts
    with anything else keep their exact raw value."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _neutralised_frame(frame: pd.DataFrame) -> pd.DataFrame:
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column].dtype):
            safe[column] = safe[column].map(neutralised)
    return safe


def to_csv(frame: pd.DataFrame) -> bytes:
    """The frame's raw values as UTF-8 CSV (decimal point, ISO dates): what a spreadsheet re-reads exactly,
    with text cells that would run as formulas neutralised (security review M5). Only text is touched, cell
    by cell: a negative amount stays a number."""
    # RFC 4180's CRLF: Python's csv module then quotes a cell holding a bare CR too (with "\n" it would not, and a
    # spreadsheet would start a new row inside the cell, where a formula is no longer first-character-checked)
    return _neutralised_frame(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def _decimal_comma(value: Any) -> Any:
    # pandas' `decimal=","` touches float columns only; the marts' amounts arrive as Decimal objects
    if isinstance(value, bool) or not isinstance(value, (Decimal, float)):
        return value
    if isinstance(value, float) and pd.isna(value):
        return value
    text = format(value if isinstance(value, Decimal) else Decimal(repr(value)), "f")
    return text.replace(".", ",")


def to_french_csv(frame: pd.DataFrame) -> bytes:
    """The frame as a French spreadsheet opens it on a double click: `;` between cells, a decimal comma in
    amounts, ISO dates, UTF-8 with a byte-order mark (without one Excel reads the file as Windows-1252 and
    mangles accents), CRLF rows; text cells that would run as formulas neutralised as in `to_csv`."""
    safe = _neutralised_frame(frame)
    for column in safe.columns:
        safe[column] = safe[column].map(_decimal_comma) if safe[column].dtype == object else safe[column]
    text = safe.to_csv(index=False, sep=";", decimal=",", lineterminator="\r\n")
    return (UTF8_BOM + text).encode("utf-8")


def xlsx_text(text: str) -> str:
    """`text` with each control character xlsx cannot hold replaced by CONTROL_REPLACEMENT."""
    return XLSX_ILLEGAL.sub(CONTROL_REPLACEMENT, text)


def _xlsx_value(value: Any) -> Any:
    if isinstance(value, str):
        return xlsx_text(value)
    if value is None or value is pd.NaT or (isinstance(value, float) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, datetime) and value.tzinfo is not None:
        # xlsx has no time zone: the instant in UTC, which the column's header says
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def sheet_name(name: str) -> str:
    """`name` as Excel accepts a sheet's name (31 characters, none of `[]:*?/\\`)."""
    return name.translate(SHEET_NAME_FORBIDDEN)[:SHEET_NAME_LENGTH] or "sheet"


def to_xlsx(sheets: Mapping[str, pd.DataFrame]) -> bytes:
    """An xlsx workbook with one sheet per frame (named by its key): a header row of the column names, then
    typed cells: amounts as numbers (a Decimal exactly as it is), dates as dates (`yyyy-mm-dd`), times in UTC,
    booleans as booleans, text as string cells (never run as a formula)."""
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell

    workbook = Workbook(write_only=True)
    for name, frame in sheets.items():
        sheet = workbook.create_sheet(sheet_name(name))
        sheet.freeze_panes = "A2"
        sheet.append([xlsx_text(str(column)) for column in frame.columns])
        for row in frame.itertuples(index=False):
            cells = []
            for raw in row:
                value = _xlsx_value(raw)
                cell = WriteOnlyCell(sheet, value)
                if isinstance(value, str):
                    cell.data_type = "s"  # openpyxl would store `=...` as a formula
                elif isinstance(value, datetime):
                    cell.number_format = "yyyy-mm-dd hh:mm:ss"
                elif isinstance(value, date):
                    cell.number_format = "yyyy-mm-dd"
                cells.append(cell)
            sheet.append(cells)
    if not sheets:
        workbook.create_sheet("empty")
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def to_parquet(frame: pd.DataFrame) -> bytes:
    """The frame as Parquet: amounts as decimals (their exact value), dates as dates, text as text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), buffer)
    return buffer.getvalue()


def write(frame: pd.DataFrame, file_format: str, name: str = "table", language: str | None = None) -> bytes:
    """The frame in `file_format` (CSV, FRENCH_CSV, XLSX: one sheet called `name`, PARQUET). With a `language`
    (`fr`, `en`), the files made for people (FRENCH_CSV, XLSX) head their columns with the labels in that
    language (invoicing_warehouse/engine/column_labels.py); CSV and Parquet, which programs re-read, keep the marts'
    names."""
    if file_format == CSV:
        return to_csv(frame)
    if file_format == FRENCH_CSV:
        return to_french_csv(frame if language is None else labelled(frame, language))
    if file_format == XLSX:
        return to_xlsx({name: frame if language is None else labelled(frame, language)})
    if file_format == PARQUET:
        return to_parquet(frame)
    raise ValueError(f"unknown file format {file_format!r}: one of {', '.join(EXTENSIONS)}")

