"""invoicing-warehouse: keeps a DuckDB warehouse (or a DuckLake) in step with accounts of the Invoicing API v2 and
publishes what finance reads (receivables and aging, overdue customers, payables, DSO, the cash outlook, the French
legal tables) through one gate that holds back figures it cannot vouch for.

The shell is this package: here the parser and the dispatch, beside it one module per subcommand (`python -m
invoicing_warehouse.cli` runs __main__.py). Each subcommand lives in the module that owns its role and exposes two
functions:
`add_arguments(parser)` and `run(args) -> int` (the exit code). Modules are imported only when their
subcommand runs, so `invoicing-warehouse sandbox` does not pay for importing dlt or Dagster.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import logging
import os
import re
import sys
import traceback
from types import ModuleType

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "sandbox": ("invoicing_sandbox.command",
                "serve a local emulator of the Invoicing API v2 on 127.0.0.1 (extra `sandbox`)"),
    "sync": ("invoicing_warehouse.cli.sync_command", "sync the API into the DuckDB warehouse"),
    "models": ("invoicing_warehouse.cli.models_command", "build the SQL models (staging, intermediate and marts)"),
    "doctor": ("invoicing_warehouse.cli.doctor_command",
               "probe a live account against the contract ledger (read-only)"),
    "webhooks": ("invoicing_warehouse.cli.webhooks_command",
                 "receive webhook deliveries as hints; manage subscriptions"),
    "demo": ("invoicing_warehouse.demo.command",
             "seeded sandbox -> Dagster asset graph -> warehouse -> report (extra `sandbox`)"),
    "dashboard": ("invoicing_warehouse.cli.dashboard_command",
                  "the finance dashboard (Streamlit) on the readers' copy"),
    "export": ("invoicing_warehouse.cli.export_command",
               "the marts as of a date to parquet, xlsx or CSV files, from the readers' copy"),
    "lake": ("invoicing_warehouse.cli.lake_command", "DuckLake upkeep: expire old snapshots, remove old files"),
    "status": ("invoicing_warehouse.cli.status_command", "per portal: last sync, freshness, hints, failing checks"),
}
# The commands whose dependencies come with an extra (pyproject.toml): the emulator and the demo on it are not the
# product; the dashboard is optional. Each names its extra when it is missing.
EXTRA_OF_COMMAND = {"sandbox": "sandbox", "demo": "sandbox", "dashboard": "dashboard"}
EXTRA_PURPOSE = {"sandbox": "the emulator's", "dashboard": "the dashboard's"}
DISTRIBUTION = "invoicing-warehouse"
DESCRIPTION = ("Keeps a DuckDB warehouse (or a DuckLake) in step with accounts of the Invoicing API v2 and publishes "
               "the finance figures through one gate. Settings: docs/settings.md.")
EXIT_CODES = """exit codes (every command):
  0    done (for `sync` and `models`: the figures are published)
  1    the command could not do its work, said in one line: a sync that failed, figures held back by the gate
       (the check and the figures named), a refused setting or file, an unreachable store
  2    bad usage (argparse), or an unexpected error (its traceback, secrets masked)
  3    `sync` and `models` only: partial, a list's read failed alone; the marts built on it keep their last good
       figures, the rest was published (invoicing_warehouse/cli/exit_codes.py)
  130  interrupted (Ctrl-C); nothing half-written is published
"""
# -q/-v: what each level shows (the root logger's level; a command's own lines on stdout follow -q)
LOG_LEVELS = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.INFO, 2: logging.DEBUG}


def missing_extra_requirements(extra: str = "sandbox") -> list[str]:
    """The distributions `extra` requires (this package's metadata; an extra it names, such as the sandbox's
    `invoicing-warehouse[dagster]`, counted through) that are not installed; empty when they all are, or when
    this package's metadata is not there to read (code run from a checkout without an install)."""
    from importlib import metadata

    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    missing: list[str] = []
    for requirement in requirements:
        spec, _, marker = requirement.partition(";")
        if re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", marker) is None:
            continue
        name = re.split(r"[\s\[<>=!~;(]", spec.strip(), maxsplit=1)[0]
        if name == DISTRIBUTION:  # another extra of this package
            inner = re.search(r"\[([^\]]*)\]", spec)
            for other in (inner.group(1).split(",") if inner else []):
                missing.extend(m for m in missing_extra_requirements(other.strip()) if m not in missing)
            continue
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


def require_extra(command: str) -> None:
    """Exits with one line naming the install command when `command` needs an extra that is missing."""
    extra = EXTRA_OF_COMMAND.get(command)
    missing = missing_extra_requirements(extra) if extra else []
    if extra and missing:
        raise SystemExit(
            f"invoicing-warehouse {command}: needs {EXTRA_PURPOSE[extra]} dependencies, not installed here "
            f"({', '.join(missing)}): pip install '{DISTRIBUTION}[{extra}]' (in a checkout: scripts/bootstrap)"
        )


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, ModuleType | None]:
    """Builds the parser; only the chosen subcommand's module is imported."""
    from pipelines.invoicing.release import product_version

    parser = argparse.ArgumentParser(prog="invoicing-warehouse", description=DESCRIPTION, epilog=EXIT_CODES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {product_version()}")
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", action="store_true",
                          help="print only errors (and, with --json, the JSON document)")
    loudness.add_argument("-v", "--verbose", action="count", default=0,
                          help="log what the run does on stderr (-vv: debug)")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((a for a in argv if a in SUBCOMMANDS), None)
    module = None
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text, epilog=EXIT_CODES,
                                    formatter_class=argparse.RawDescriptionHelpFormatter)
        if name == chosen:
            require_extra(name)
            module = importlib.import_module(module_name)
            module.add_arguments(sub)
    return parser, module


def main(argv: list[str] | None = None) -> int:
    """Parses the command line and runs the subcommand; returns its exit code."""
    from invoicing_warehouse.engine.env_file import EnvFileRefused, load_env_file

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        load_env_file()  # `.env` of the project root, as Dagster reads it (docs/settings.md); the environment wins
    except EnvFileRefused as refused:  # a settings file someone else could have written: nothing of it is used
        print(f"invoicing-warehouse: {refused}", file=sys.stderr)
        return 2
    parser, module = build_parser(argv)
    args = parser.parse_args(argv)
    assert module is not None  # the subcommand is required: parse_args exits when none was given
    set_loudness(quiet=args.quiet, verbose=args.verbose, data_on_stdout=bool(getattr(args, "json", False)))
    return int(module.run(args) or 0)


def set_loudness(*, quiet: bool, verbose: int, data_on_stdout: bool) -> None:
    """`-v`: the product's and its libraries' log records on stderr (INFO; `-vv` DEBUG). `-q`: errors only; a
    command's own progress and summary lines (stdout) are dropped, unless stdout carries a `--json` document,
    which a monitoring script asked for. Errors go to stderr and are never silenced."""
    level = LOG_LEVELS[-1 if quiet else min(verbose, 2)]
    if verbose:
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger().setLevel(level)
    if quiet and not data_on_stdout:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process


def entry() -> None:
    """The console script: `main`, then a quick exit.

    Every command has closed its files and connections when it returns; what the interpreter still does
    at exit is tear down the module graphs of dlt, pyarrow and pandas, 0.2-0.5 s of a 3 s no-change sync
    (issue 15). The exit handlers (logging, temporary folders, dlt's own) run as usual, the output is
    flushed, and the process ends without that teardown.

    Everything printed passes through the one scrubber (redacted_output.py), an unexpected error's traceback
    included (exit 2); every data file it writes is the owner's only (the umask,
    invoicing_warehouse/engine/private_files.py).
    """
    from invoicing_warehouse.cli.redacted_output import redact_standard_streams
    from invoicing_warehouse.engine.private_files import private_umask

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

