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
import sys
from types import ModuleType

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "sandbox": ("sandbox.command", "serve a local emulator of the Invoicing API v2 on 127.0.0.1"),
    "sync": ("invoicing_warehouse.sync_command", "sync the API into the DuckDB warehouse"),
    "models": ("invoicing_warehouse.models_command", "build the SQL models (staging, intermediate and marts)"),
    "doctor": ("invoicing_warehouse.doctor_command", "probe a live account against the contract ledger (read-only)"),
    "webhooks": ("invoicing_warehouse.webhooks_command", "receive webhook deliveries as hints; manage subscriptions"),
    "demo": ("invoicing_warehouse.demo", "seeded sandbox -> Dagster asset graph -> warehouse -> report"),
    "dashboard": ("invoicing_warehouse.dashboard_command", "the finance dashboard (Streamlit) on the readers' copy"),
}


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, ModuleType | None]:
    """Builds the parser; only the chosen subcommand's module is imported."""
    parser = argparse.ArgumentParser(prog="invoicing-warehouse", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((a for a in argv if a in SUBCOMMANDS), None)
    module = None
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            module = importlib.import_module(module_name)
            module.add_arguments(sub)
    return parser, module


def main(argv: list[str] | None = None) -> int:
    """Parses the command line and runs the subcommand; returns its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, module = build_parser(argv)
    args = parser.parse_args(argv)
    assert module is not None  # the subcommand is required: parse_args exits when none was given
    return int(module.run(args) or 0)


def entry() -> None:
    """The console script: `main`, then a quick exit.

    Every command has closed its files and connections when it returns; what the interpreter still does
    at exit is tear down the module graphs of dlt, pyarrow and pandas, 0.2-0.5 s of a 3 s no-change sync
    (issue 15). The exit handlers (logging, temporary folders, dlt's own) run as usual, the output is
    flushed, and the process ends without that teardown."""
    try:
        code = main()
    except SystemExit as stop:  # argparse's --help and usage errors, Ctrl-C's 130
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if stop.code is not None and not isinstance(stop.code, int):
            print(stop.code, file=sys.stderr)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


if __name__ == "__main__":
    entry()
