"""The Banque de France payment-terms observatory's published figures, for the Benchmarks page: a data file with
its source beside each figure (`payment_terms_observatory.csv`, shipped; `INVOICING_PAYMENT_BENCHMARKS_FILE`
names another of the same columns), and the company size they are read for (`INVOICING_COMPANY_SIZE`, default
`PME`; docs/settings.md).

The file's columns: `company_size` (`micro`, `PME`, `ETI`, `GE`, or `all` for every size), `measure`
(`customer_terms_dso`: customer payment terms in days of sales; `supplier_terms`: in days of purchases;
`average_lateness`: days paid after the due date), `value_days`, `figure_year` (the year the figure describes),
`report` (the report that published it), `source`, `note`. For each measure the page shows the size's own figure
when the file has one, else the figure for all sizes, saying which.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from invoicing_warehouse.engine.environment.kinds import SettingError
from invoicing_warehouse.engine.environment.reader import environment
from invoicing_warehouse.engine.environment.run_settings import COMPANY_SIZE, PAYMENT_BENCHMARKS_FILE

SHIPPED_FILE = Path(__file__).with_name("payment_terms_observatory.csv")
FILE_SETTING = PAYMENT_BENCHMARKS_FILE.name
SIZE_SETTING = COMPANY_SIZE.name
DEFAULT_SIZE = "PME"
SIZES = ("micro", "PME", "ETI", "GE")
ALL_SIZES = "all"
MEASURES = ("customer_terms_dso", "supplier_terms", "average_lateness")
COLUMNS = ("company_size", "measure", "value_days", "figure_year", "report", "source", "note")
# a benchmarks file is a few dozen lines; anything longer is not one (and is not read whole)
MAX_ROWS = 1000
MAX_BYTES = 1_000_000


class BenchmarksFileError(ValueError):
    """The benchmarks file or the company size setting cannot be used; the message names which and why."""


@dataclass(frozen=True)
class Benchmark:
    """One published figure and where it comes from."""

    company_size: str
    measure: str
    value_days: Decimal
    figure_year: int
    report: str
    source: str
    note: str


def company_size(environ: dict[str, str] | None = None) -> str:
    """The company size the portal is compared with: INVOICING_COMPANY_SIZE (case-free), default PME."""
    try:
        return environment(environ).value(COMPANY_SIZE)
    except SettingError as error:
        raise BenchmarksFileError(str(error)) from None


def benchmarks_file(environ: dict[str, str] | None = None) -> Path:
    """The data file read: INVOICING_PAYMENT_BENCHMARKS_FILE when set, else the shipped one."""
    value = environment(environ).text(PAYMENT_BENCHMARKS_FILE)
    return Path(value) if value else SHIPPED_FILE


def load_benchmarks(path: Path) -> list[Benchmark]:
    """Every row of the benchmarks file `path`; raises BenchmarksFileError naming the file and the line."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise BenchmarksFileError(f"{path}: larger than {MAX_BYTES} bytes, not a benchmarks file")
        text = path.read_text(encoding="utf-8")
    except OSError as problem:
        raise BenchmarksFileError(f"{path}: cannot be read ({problem.strerror})") from None
    reader = csv.DictReader(text.splitlines())
    missing = [column for column in COLUMNS if column not in (reader.fieldnames or [])]
    if missing:
        raise BenchmarksFileError(f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(COLUMNS)})")
    rows: list[Benchmark] = []
    for line, record in enumerate(reader, start=2):
        if len(rows) >= MAX_ROWS:
            raise BenchmarksFileError(f"{path}: more than {MAX_ROWS} rows, not a benchmarks file")
        rows.append(_benchmark(path, line, record))
    return rows


def _benchmark(path: Path, line: int, record: dict[str, str]) -> Benchmark:
    size, measure = (record["company_size"] or "").strip(), (record["measure"] or "").strip()
    if size not in (*SIZES, ALL_SIZES):
        raise BenchmarksFileError(f"{path}, line {line}: company_size {size!r} is not one of "
                                  f"{', '.join((*SIZES, ALL_SIZES))}")
    if measure not in MEASURES:
        raise BenchmarksFileError(f"{path}, line {line}: measure {measure!r} is not one of {', '.join(MEASURES)}")
    try:
        value = Decimal(record["value_days"].strip())
        year = int(record["figure_year"].strip())
    except (InvalidOperation, ValueError, AttributeError):
        raise BenchmarksFileError(f"{path}, line {line}: value_days and figure_year must be numbers") from None
    if not (record["report"] or "").strip() or not (record["source"] or "").strip():
        raise BenchmarksFileError(f"{path}, line {line}: a figure needs its report and its source")
    return Benchmark(size, measure, value, year, record["report"].strip(), record["source"].strip(),
                     (record["note"] or "").strip())


def benchmarks_for(rows: list[Benchmark], size: str) -> dict[str, Benchmark]:
    """Per measure, the figure for `size` when the file has one, else the one for all sizes (the most recent
    figure year first); a measure with neither is absent."""
    chosen: dict[str, Benchmark] = {}
    for measure in MEASURES:
        for wanted in (size, ALL_SIZES):
            candidates = [row for row in rows if row.measure == measure and row.company_size == wanted]
            if candidates:
                chosen[measure] = max(candidates, key=lambda row: row.figure_year)
                break
    return chosen
