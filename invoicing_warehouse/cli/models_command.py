"""`invoicing-warehouse models`: builds the SQL models (staging, then marts) into the warehouse: the DuckDB file,
or the DuckLake when INVOICING_WAREHOUSE_ENGINE=ducklake (invoicing_warehouse/engine/target.py). `--models-dir` (or the
setting INVOICING_MODELS_DIR) adds an analyst's own models, built after the product's into the schema `analyst`
and judged by the same gate; `--select NAME` / `NAME+` builds one model / it and everything downstream."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date
from pathlib import Path

import duckdb

from invoicing_warehouse.cli import exit_codes
from invoicing_warehouse.engine.connection import WarehouseUnavailable
from invoicing_warehouse.engine.model_selection import UnknownModelError, resolve_selection
from invoicing_warehouse.engine.names import DEFAULT_WAREHOUSE_PATH
from invoicing_warehouse.engine.report_settings import ReportSettingError
from invoicing_warehouse.engine.seed_files import SeedFileError
from invoicing_warehouse.engine.sql_runner import (
    SQL_DIR,
    MissingRawTableError,
    ModelDefinitionError,
    SqlModel,
    analyst_models_dir,
    discover_models,
    today_in_portal_zone,
)
from invoicing_warehouse.engine.target import WarehouseConfigError, target_from_env
from invoicing_warehouse.runs.gate import build_and_publish
from invoicing_warehouse.runs.gate_state import GateStateError

DEFAULT_WAREHOUSE = Path(DEFAULT_WAREHOUSE_PATH)


def as_of_date(text: str) -> date:
    """`--as-of` of the commands that take a report date: YYYY-MM-DD, else argparse's usage error."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declares `--as-of`, `--warehouse`, `--models-dir` and `--select`."""
    parser.epilog = exit_codes.MODELS_HELP
    parser.add_argument(
        "--as-of",
        type=as_of_date,
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
    parser.add_argument(
        "--models-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="a folder of your own <name>.sql models (each with its front matter, docs/add-a-model.md), built "
        "after the product's into the schema `analyst` and checked by the same gate "
        "(default: the setting INVOICING_MODELS_DIR)",
    )
    parser.add_argument(
        "--select",
        action="append",
        default=None,
        metavar="NAME[+]",
        help="build only model NAME, or NAME+ for it and every model downstream (dbt's syntax); repeatable",
    )


def run(args: argparse.Namespace) -> int:
    """Builds every model; prints one line per model (rows, seconds). Returns the exit code."""
    from invoicing_warehouse.runs.alerts import notify_changes, outcome_lines

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

    models_dir = analyst_models_dir(args.models_dir)
    try:
        # checked before anything is opened: a typo in a name or a broken analyst model changes nothing
        models = discover_models(models_dir=models_dir)
        select = resolve_selection(models, args.select) if args.select else None
    except (ModelDefinitionError, UnknownModelError) as exc:
        print(f"error: invalid SQL models: {exc}", file=sys.stderr)
        return 1
    print(f"building models in {warehouse} as of {as_of.isoformat()}"
          + (f", with the analyst's models of {models_dir}" if models_dir is not None else ""))
    started = time.perf_counter()
    try:
        outcome = build_and_publish(target, note=f"models as of {as_of.isoformat()}", as_of=as_of,
                                    on_built=report, select=select, models_dir=models_dir)
    except (WarehouseUnavailable, GateStateError) as exc:
        print(f"error: cannot open warehouse {warehouse}: {exc}", file=sys.stderr)
        return 1
    except MissingRawTableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ModelDefinitionError as exc:
        print(f"error: invalid SQL models: {exc}", file=sys.stderr)
        return 1
    # a setting naming a data file that is not there (INVOICING_ECB_RATES_PATH), or a report setting out of range
    except (SeedFileError, ReportSettingError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except duckdb.IOException as exc:
        print(f"error: cannot open warehouse {warehouse}: {exc}", file=sys.stderr)
        return 1
    except duckdb.Error as exc:
        print(f"error: a model failed, nothing was replaced (readers keep the last good figures): {exc}",
              file=sys.stderr)
        return 1
    if not outcome.models and not outcome.failures:  # discover_models refuses an empty folder: a safety net
        print(f"error: no SQL model found to build (looked in {SQL_DIR})", file=sys.stderr)
        return 1
    for line in outcome.lines():
        print(f"gate: {line}", file=sys.stderr)
    # figures held back, or released (invoicing_warehouse/runs/alerts.py)
    for line in outcome_lines(notify_changes(target)):
        print(line, file=sys.stderr)
    if outcome.failures:
        print("readers' snapshot: unchanged, readers keep the last good figures", file=sys.stderr)
        return 1
    if select is not None and set(outcome.models) != set(select):
        # the gate builds a part only on top of a whole build of the same date that passed
        # (invoicing_warehouse/runs/gate.py)
        print("note: every model was rebuilt, not only the selection: the last build was of another date, "
              "or was held back or failed")
    print(f"built {len(outcome.models)} models in {time.perf_counter() - started:.2f} s")
    print(f"readers' snapshot: {outcome.published}")
    return exit_codes.of_gate(outcome)  # 3 when only the marts of a list whose read failed are held
