"""`invoicing-warehouse export`: the marts as of a date written to files, one per mart (xlsx: one sheet per mart),
from the readers' copy only (the warehouse file may be held by a writer), through the gate's rules: while a
blocking check holds figures back, or a mart rests on a read that may be incomplete, nothing is written and the
command exits 1 naming why (what the dashboard's banner says). Each file is written under a fresh name then
renamed (invoicing_warehouse/engine/private_files.py: a planted symbolic link is replaced, never written through), into
a folder no other user may write. The report date of the published marts is read
from the copy as it is; another date builds the same models in memory (invoicing_warehouse/runs/as_of.py), as the
dashboard does.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import duckdb
import pandas as pd

from invoicing_warehouse.cli.models_command import as_of_date
from invoicing_warehouse.engine.column_labels import labelled
from invoicing_warehouse.engine.connection import WarehouseUnavailable
from invoicing_warehouse.engine.names import DEFAULT_WAREHOUSE_PATH, MARTS_SCHEMA
from invoicing_warehouse.engine.private_files import UnsafeFolderError, check_owned_folder, write_private_file
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.readers import connect_reader
from invoicing_warehouse.engine.report_language import LanguageSettingError, report_language
from invoicing_warehouse.engine.sql_runner import today_in_portal_zone
from invoicing_warehouse.engine.table_files import CSV, EXTENSIONS, FRENCH_CSV, PARQUET, XLSX, to_xlsx, write
from invoicing_warehouse.engine.target import WarehouseConfigError, WarehouseTarget, target_from_env
from invoicing_warehouse.runs.as_of import AsOfRefused, attached, every_mart, marts_as_of
from invoicing_warehouse.runs.gate import held_marts
from invoicing_warehouse.runs.gate_state import GateState, GateStateError
from invoicing_warehouse.runs.gate_state import load as load_gate_state

FORMATS = (PARQUET, XLSX, CSV, FRENCH_CSV)
# an xlsx sheet holds 1,048,576 rows, the header included: a longer mart would be cut without a word
XLSX_MAX_ROWS = 1_048_575


class ExportRefused(RuntimeError):
    """Nothing can be exported; the message says why and what to do."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declares `--as-of`, `--format`, `--out` and `--warehouse`."""
    parser.add_argument("--as-of", type=as_of_date, default=None, metavar="DATE",
                        help="report date, YYYY-MM-DD (default: today in the portal's time zone, Europe/Paris)")
    parser.add_argument("--format", choices=FORMATS, default=CSV,
                        help="parquet, xlsx (one workbook, a sheet per mart), csv, or csv-fr (`;`, decimal comma, "
                             "BOM: French spreadsheets); default csv")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="folder to write into (default: exports/<date> beside the warehouse)")
    parser.add_argument("--warehouse", type=Path, default=Path(DEFAULT_WAREHOUSE_PATH), metavar="PATH",
                        help=f"DuckDB warehouse file whose readers' copy is read (default: {DEFAULT_WAREHOUSE_PATH})")


def refusal(state: GateState) -> str | None:
    """Why the gate's state forbids an export (the figures held back by a blocking check, or marts built on a read
    that may be incomplete), or None."""
    lines = [f"blocking check {failure['check']} on {failure['relation']} fails since {state.failing_since}: "
             f"{failure.get('description') or 'failed'} (stale: {', '.join(failure['protects']) or 'every figure'})"
             for failure in state.failures]
    held = {**state.held_marts, **held_marts(state)}
    lines += [f"{mart} keeps its last good figures: {why}" for mart, why in sorted(held.items())]
    if not lines:
        return None
    return ("the figures are held back by the gate, nothing exported:\n" + "\n".join(f"  - {line}" for line in lines)
            + "\nfix the cause, then `invoicing-warehouse models` (or `sync --reconcile` for an incomplete read)")


def _reader(target: WarehouseTarget, attach: bool) -> duckdb.DuckDBPyConnection:
    if not target.is_lake:
        snapshot = default_snapshot_path(Path(str(target.path)))
        if not snapshot.is_file():
            raise ExportRefused(f"no readers' copy at {snapshot}: run `invoicing-warehouse models` first")
        if attach:
            return attached(snapshot)
    return connect_reader(target)


def marts_connection(target: WarehouseTarget, as_of: date) -> duckdb.DuckDBPyConnection:
    """A connection whose `marts` are those as of `as_of`: the readers' copy when its marts were built for that
    date, else the models built in memory over it. ExportRefused when the gate holds figures."""
    why = refusal(load_gate_state(target))
    if why:
        raise ExportRefused(why)
    reader = _reader(target, attach=False)
    try:
        row = reader.execute("select coalesce((select max(as_of_date) from marts.cash_outlook), "
                             "(select max(as_of_date) from marts.dso))").fetchone()
    except duckdb.CatalogException as missing:
        reader.close()
        raise ExportRefused(f"the readers' copy has no marts ({missing}): run `invoicing-warehouse models`") from None
    if row and row[0] == as_of:
        return reader
    reader.close()
    reader = _reader(target, attach=True)
    try:
        return marts_as_of(reader, as_of, {})
    except AsOfRefused as refused:
        raise ExportRefused(str(refused)) from None
    finally:
        reader.close()


def mart_frames(connection: duckdb.DuckDBPyConnection) -> dict[str, pd.DataFrame]:
    """Every mart's rows by name, decimals kept as Decimal (DuckDB's `.df()` would make them floats)."""
    frames = {}
    for mart in every_mart():
        cursor = connection.execute(f"select * from {MARTS_SCHEMA}.{mart}")
        frames[mart] = pd.DataFrame.from_records(cursor.fetchall(), columns=[c[0] for c in cursor.description])
    return frames


def export_language(frames: dict[str, pd.DataFrame]) -> str:
    """The language of the headers of the files made for people: INVOICING_LANGUAGE, else the portals' (French
    when every figure is in euros, invoicing_warehouse/engine/report_language.py), read from marts.cash_outlook's
    currency."""
    outlook = frames.get("cash_outlook")
    currencies = [] if outlook is None or "currency" not in outlook else list(outlook["currency"])
    return report_language(currencies)


def export(target: WarehouseTarget, as_of: date, file_format: str, out: Path) -> list[tuple[Path, int]]:
    """Writes the marts as of `as_of` in `file_format` into `out`; returns (file, rows) per file written. The
    xlsx and the French CSV head their columns in the report language (`export_language`); CSV and Parquet keep
    the marts' column names."""
    connection = marts_connection(target, as_of)
    try:
        frames = mart_frames(connection)
    finally:
        connection.close()
    try:
        language = export_language(frames)
    except LanguageSettingError as wrong:
        raise ExportRefused(str(wrong)) from None
    out.mkdir(parents=True, exist_ok=True)
    try:
        check_owned_folder(out)
    except UnsafeFolderError as unsafe:  # security review 2, L5: a shared folder could redirect the files
        raise ExportRefused(str(unsafe)) from None
    if file_format == XLSX:
        too_long = [name for name, frame in frames.items() if len(frame) > XLSX_MAX_ROWS]
        if too_long:
            raise ExportRefused(f"{', '.join(too_long)}: more rows than an xlsx sheet holds; use parquet or csv")
        path = out / f"marts_{as_of.isoformat()}.xlsx"
        write_private_file(path, to_xlsx({name: labelled(frame, language) for name, frame in frames.items()}))
        return [(path, sum(len(frame) for frame in frames.values()))]
    written = []
    for name, frame in frames.items():
        path = out / f"{name}.{EXTENSIONS[file_format]}"
        write_private_file(path, write(frame, file_format, name, language))
        written.append((path, len(frame)))
    return written


def run(args: argparse.Namespace) -> int:
    """Exports; prints one line per file. Returns the exit code (1 when refused)."""
    as_of: date = args.as_of or today_in_portal_zone()
    try:
        target = target_from_env(args.warehouse)
    except WarehouseConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    out = args.out or target.local_anchor().parent / "exports" / as_of.isoformat()
    try:
        written = export(target, as_of, args.format, out)
    except (ExportRefused, GateStateError, WarehouseUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except duckdb.Error as error:
        print(f"error: cannot read the readers' copy of {target.describe()}: {error}", file=sys.stderr)
        return 1
    for path, rows in written:
        print(f"  {path}  {rows:>10,} rows")
    print(f"exported the marts as of {as_of.isoformat()} ({args.format}) to {out}")
    return 0
