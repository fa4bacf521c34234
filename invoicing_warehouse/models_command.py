"""`invoicing-warehouse models`: builds the SQL models (staging, then marts) into the warehouse: the DuckDB file,
or the DuckLake when INVOICING_WAREHOUSE_ENGINE=ducklake (warehouse_engine/target.py)."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path

import duckdb

from runs.gate import build_and_publish
from runs.gate_state import GateStateError
from warehouse_engine.connection import WarehouseUnavailable
from warehouse_engine.names import DEFAULT_WAREHOUSE_PATH
from warehouse_engine.sql_runner import (
    SQL_DIR,
    MissingRawTableError,
    ModelDefinitionError,
    SqlModel,
    today_in_portal_zone,
)
from warehouse_engine.target import WarehouseConfigError, target_from_env

DEFAULT_WAREHOUSE = Path(DEFAULT_WAREHOUSE_PATH)


def _as_of_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declares `--as-of` and `--warehouse`."""
    parser.add_argument(
        "--as-of",
        type=_as_of_date,
        default=None,
        metavar="DATE",
        help="report date of the marts, YYYY-MM-DD (default: today in the portal's time zone, Europe/Paris)",
    )
    parser.add_argument(
        "--warehouse",
        type=Path,
        default=DEFAULT_WAREHOUSE,
        metavar="PATH",
        help=f"DuckDB warehouse file (default: {DEFAULT_WAREHOUSE}; unused with INVOICING_WAREHOUSE_ENGINE=ducklake)",
    )


def run(args: argparse.Namespace) -> int:
    """Builds every model; prints one line per model (rows, seconds). Returns the exit code."""
    as_of: date = args.as_of or today_in_portal_zone()
    try:
        target = target_from_env(args.warehouse)
    except WarehouseConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    warehouse = target.describe()
    if not target.is_lake and not Path(str(target.path)).is_file():
        print(
            f"error: warehouse {warehouse} does not exist; run `invoicing-warehouse sync` first",
            file=sys.stderr,
        )
        return 1

    def report(model: SqlModel, rows: int, seconds: float) -> None:
        print(f"  {model.key:<48} {rows:>12,} rows  {seconds:7.2f} s", flush=True)

    print(f"building models in {warehouse} as of {as_of.isoformat()}")
    started = time.perf_counter()
    try:
        outcome = build_and_publish(target, note=f"models as of {as_of.isoformat()}", as_of=as_of,
                                    on_built=report)
    except (WarehouseUnavailable, GateStateError) as exc:
        print(f"error: cannot open warehouse {warehouse}: {exc}", file=sys.stderr)
        return 1
    except MissingRawTableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ModelDefinitionError as exc:
        print(f"error: invalid SQL models: {exc}", file=sys.stderr)
        return 1
    except duckdb.IOException as exc:
        print(f"error: cannot open warehouse {warehouse}: {exc}", file=sys.stderr)
        return 1
    except duckdb.Error as exc:
        print(f"error: a model failed, nothing was replaced: {exc}", file=sys.stderr)
        return 1
    if not outcome.models and not outcome.failures:  # discover_models refuses an empty folder: a safety net
        print(f"error: no SQL model found to build (looked in {SQL_DIR})", file=sys.stderr)
        return 1
    for line in outcome.lines():
        print(f"gate: {line}", file=sys.stderr)
    if outcome.failures:
        print("readers' snapshot: unchanged, readers keep the last good figures", file=sys.stderr)
        return 1
    print(f"built {len(outcome.models)} models in {time.perf_counter() - started:.2f} s")
    print(f"readers' snapshot: {outcome.published}")
    return 0 if outcome.ok else 1
