"""Entry point of the `invoicing-warehouse` console script.

Each subcommand lives in the module that owns its role and exposes two functions:
`add_arguments(parser)` and `run(args) -> int` (the exit code). Modules are imported only when their
subcommand runs, so `invoicing-warehouse sandbox` does not pay for importing dlt or Dagster.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import re
import sys
import traceback
from types import ModuleType

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "sandbox": ("sandbox.command", "serve a local emulator of the Invoicing API v2 on 127.0.0.1 (extra `sandbox`)"),
    "sync": ("invoicing_warehouse.sync_command", "sync the API into the DuckDB warehouse"),
    "models": ("invoicing_warehouse.models_command", "build the SQL models (staging, intermediate and marts)"),
    "doctor": ("invoicing_warehouse.doctor_command", "probe a live account against the contract ledger (read-only)"),
    "webhooks": ("invoicing_warehouse.webhooks_command", "receive webhook deliveries as hints; manage subscriptions"),
    "demo": ("demo.command", "seeded sandbox -> Dagster asset graph -> warehouse -> report (extra `sandbox`)"),
    "dashboard": ("invoicing_warehouse.dashboard_command", "the finance dashboard (Streamlit) on the readers' copy"),
    "export": ("invoicing_warehouse.export_command", "the marts as of a date to parquet, xlsx or CSV files, from the readers' copy"),
    "lake": ("invoicing_warehouse.lake_command", "DuckLake upkeep: expire old snapshots, remove old files"),
    "status": ("invoicing_warehouse.status_command", "per portal: last sync, freshness, hints, failing checks"),
}
# The emulator and the demo run on it are not the product: their dependencies (FastAPI, Faker, ...) come with
# the `sandbox` extra, which a checkout's scripts/bootstrap installs.
EXTRA = "sandbox"
NEEDS_EXTRA = frozenset({"sandbox", "demo"})
DISTRIBUTION = "invoicing-warehouse"


def missing_extra_requirements(extra: str = EXTRA) -> list[str]:
    """The distributions `extra` requires (this package's metadata) that are not installed; empty when they all
    are, or when this package's metadata is not there to read (code run from a checkout without an install)."""
    from importlib import metadata

    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    missing = []
    for requirement in requirements:
        spec, _, marker = requirement.partition(";")
        if re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", marker) is None:
            continue
        name = re.split(r"[\s\[<>=!~;(]", spec.strip(), maxsplit=1)[0]
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def require_extra(command: str) -> None:
    """Exits with one line naming the install command when `command` needs the extra and it is missing."""
    missing = missing_extra_requirements() if command in NEEDS_EXTRA else []
    if missing:
        raise SystemExit(
            f"invoicing-warehouse {command}: needs the emulator's dependencies, not installed here "
            f"({', '.join(missing)}): pip install '{DISTRIBUTION}[{EXTRA}]' (in a checkout: scripts/bootstrap)"
        )


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, ModuleType | None]:
    """Builds the parser; only the chosen subcommand's module is imported."""
    parser = argparse.ArgumentParser(prog="invoicing-warehouse", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((a for a in argv if a in SUBCOMMANDS), None)
    module = None
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            require_extra(name)
            module = importlib.import_module(module_name)
            module.add_arguments(sub)
    return parser, module


def main(argv: list[str] | None = None) -> int:
    """Parses the command line and runs the subcommand; returns its exit code."""
    from warehouse_engine.env_file import load_env_file

    argv = list(sys.argv[1:] if argv is None else argv)
    load_env_file()  # `.env` of the project, as Dagster reads it (docs/settings.md); the environment wins
    parser, module = build_parser(argv)
    args = parser.parse_args(argv)
    assert module is not None  # the subcommand is required: parse_args exits when none was given
    return int(module.run(args) or 0)


def entry() -> None:
    """The console script: `main`, then a quick exit.

    Every command has closed its files and connections when it returns; what the interpreter still does
    at exit is tear down the module graphs of dlt, pyarrow and pandas, 0.2-0.5 s of a 3 s no-change sync
    (issue 15). The exit handlers (logging, temporary folders, dlt's own) run as usual, the output is
    flushed, and the process ends without that teardown.

    Everything printed passes through the one scrubber (redacted_output.py), an unexpected error's traceback
    included (exit 2); every data file it writes is the owner's only (the umask, warehouse_engine/private_files.py).
    """
    from invoicing_warehouse.redacted_output import redact_standard_streams
    from warehouse_engine.private_files import private_umask

    redact_standard_streams()
    private_umask()
    try:
        code = main()
    except SystemExit as stop:  # argparse's --help and usage errors, Ctrl-C's 130
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if stop.code is not None and not isinstance(stop.code, int):
            print(stop.code, file=sys.stderr)
    except Exception:  # not an expected failure: the traceback for the report, redacted like every output  # noqa: BLE001
        traceback.print_exc()
        code = 2
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
