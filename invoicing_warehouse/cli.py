"""Entry point of the `invoicing-warehouse` console script.

Each subcommand lives in the module that owns its role and exposes two functions:
`add_arguments(parser)` and `run(args) -> int` (the exit code). Modules are imported only when their
subcommand runs, so `invoicing-warehouse sandbox` does not pay for importing dlt or Dagster.
"""

from __future__ import annotations

import argparse
import importlib
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


if __name__ == "__main__":
    raise SystemExit(main())
