"""`invoicing-warehouse sync`: sync the API into the warehouse (the DuckDB file, or the DuckLake when
INVOICING_WAREHOUSE_ENGINE=ducklake: invoicing_warehouse/engine/target.py), with progress and a summary.

Configuration the dlt way: SOURCES__INVOICING__BASE_URL, SOURCES__INVOICING__CLIENT_ID,
SOURCES__INVOICING__CLIENT_SECRET, or `[sources.invoicing]` in `.dlt/config.toml` / `.dlt/secrets.toml`:
the portal `default`. With a portals file (`portals.toml`, `--portals PATH`), `--portal NAME` syncs one of
its portals and `--all` every one, one after another into the same warehouse (one writer per DuckDB file);
a portal that fails is reported and the others still run.
Exit codes (exit_codes.py): 0 when every selected portal was synced and every figure published (a list that
feeds no figure, as the webhooks, may have failed: said in a note); 3 for a partial run: a list's read failed
alone, the marts built on it keep their last good figures, everything else was loaded and published; 1 for
an expected failure (one line on stderr naming the endpoint, the status and the API's message) or figures
the gate held back; 2 for an unexpected failure. With several, the worst: 2, then 1, then 3.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from invoicing_warehouse.cli import exit_codes
from invoicing_warehouse.cli.follow import add_follow_arguments, follow
from invoicing_warehouse.engine.names import (
    DEFAULT_PORTALS_PATH,
    DEFAULT_WAREHOUSE_PATH,
    DOCTOR_FINDINGS_PATH,
)

if TYPE_CHECKING:  # the sync's modules load only when it runs (the CLI imports this module to list options)
    from pipelines.invoicing.capabilities import ServerCapabilities
    from pipelines.invoicing.load.portal_sync import PortalOutcome
    from pipelines.invoicing.portals import Portal


def add_portal_arguments(parser: argparse.ArgumentParser, *, every: bool) -> None:
    """`--portals PATH` and `--portal NAME` (and `--all` when `every`): shared by sync, doctor and models."""
    parser.add_argument("--portals", default=None, metavar="PATH",
                        help=f"portals file (default {DEFAULT_PORTALS_PATH} when it exists; without one, the "
                             "single portal `default` of sources.invoicing.*)")
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--portal", default=None, metavar="NAME", help="the portal of the portals file to use")
    if every:
        choice.add_argument("--all", action="store_true", help="every portal of the portals file, one after another")


def chosen_portals(args: argparse.Namespace) -> list[Portal]:
    """The portals the options name; raises InvoicingApiError (bad file, unknown name, no choice among many)."""
    from pipelines.invoicing.portals import configured_portals, select_portals

    portals = configured_portals(args.portals or DEFAULT_PORTALS_PATH, required=args.portals is not None)
    return select_portals(portals, args.portal, getattr(args, "all", False))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The sync subcommand's options."""
    parser.epilog = exit_codes.HELP
    add_portal_arguments(parser, every=True)
    parser.add_argument("--full-refresh", action="store_true",
                        help="read everything of the portal again; its rows no longer served are deleted")
    parser.add_argument("--reconcile", action="store_true",
                        help="scan every list in full: load what differs, mark records gone upstream as deleted")
    parser.add_argument("--warehouse", default=DEFAULT_WAREHOUSE_PATH, metavar="PATH",
                        help=f"DuckDB file of the warehouse (default {DEFAULT_WAREHOUSE_PATH}; unused with "
                             "INVOICING_WAREHOUSE_ENGINE=ducklake)")
    parser.add_argument("--resources", default=None, metavar="NAMES",
                        help="comma-separated resources to sync (default: all)")
    parser.add_argument("--rate-limit", type=float, default=None, metavar="PER_S",
                        help="requests per second allowed by the service (default: the portal's rate_limit, "
                             "else 10; 0: no pacing)")
    parser.add_argument("--chunk-pages", type=int, default=None, metavar="N",
                        help="pages per resource committed in one load (default 200)")
    parser.add_argument("--doctor-findings", default=DOCTOR_FINDINGS_PATH, metavar="PATH",
                        help="findings of `invoicing-warehouse doctor` (default %(default)s, used when present and "
                             "made against the same base URL): each list's strategy from the first run on")
    add_follow_arguments(parser)


def doctor_capabilities(path: str, base_url: str) -> ServerCapabilities | None:
    """The `ServerCapabilities` in the doctor's findings at `path`, if that file exists and probed `base_url`.

    Findings of another server are ignored: what a server honours is only known of that server."""
    from pipelines.invoicing.capabilities import ServerCapabilities

    try:
        findings = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(findings, dict) or findings.get("base_url") != base_url:
        return None
    return ServerCapabilities.from_state(findings.get("capabilities"))


class ProgressPrinter:
    """Prints one line per resource whose figures moved: pages, records, requests/s."""

    def __init__(self, stream=None) -> None:
        self.stream = stream  # None: sys.stderr as it is when printing (a test may swap it meanwhile)
        self._last: dict[str, tuple] = {}

    def __call__(self, snapshot: dict[str, dict]) -> None:
        for name, figures in sorted(snapshot.items()):
            key = (figures["pages"], figures["records"], figures["requests"], figures["done"])
            if self._last.get(name) == key:
                continue
            self._last[name] = key
            state = "done" if figures["done"] else "reading"
            print(f"  {name:<26} {state:<8} pages {figures['pages']:>6}  records {figures['records']:>8}  "
                  f"requests {figures['requests']:>6}  {figures['requests_per_s']:5.1f} req/s",
                  file=self.stream or sys.stderr, flush=True)


def _summary(report, warehouse: str) -> str:
    lines = [(f"sync finished in {report.wall_s:.1f} s into {warehouse} "
             f"({report.chunks} load(s); extract {report.extract_s:.1f} s, normalize {report.normalize_s:.1f} s, "
             f"load {report.load_s:.1f} s)"),
             (f"requests {report.total_requests} ({report.total_requests / max(report.wall_s, 1e-6):.1f}/s), "
             f"429s {report.throttled}, retried {report.retried}")]
    for table, count in sorted(report.rows.items()):
        lines.append(f"  {table:<28} {count:>8} rows loaded")
    for table, count in sorted(report.tombstoned.items()):
        lines.append(f"  {table:<28} {count:>8} marked deleted (gone upstream)")
    if report.conflicts:
        lines.append(f"  {report.conflicts} load(s) retried: another writer of the lake committed first")
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Syncs the chosen portal(s); returns the exit code (the worst of the portals')."""
    from invoicing_warehouse.engine.target import WarehouseConfigError, target_from_env
    from pipelines.invoicing.errors import InvoicingApiError

    started = time.monotonic()
    try:
        portals = chosen_portals(args)
        args.target = target_from_env(args.warehouse)
    except (InvoicingApiError, WarehouseConfigError) as error:
        print(f"sync failed: {error}", file=sys.stderr)  # nothing was synced, no state touched
        return 1
    if args.follow:
        if args.full_refresh:
            print("sync failed: --follow cannot repeat --full-refresh; run the full refresh alone first",
                  file=sys.stderr)
            return 1
        return follow(args, portals, lambda: _announced(args, portals, _sync_and_publish(
            args, portals, time.monotonic(), with_models=True)))
    return _announced(args, portals, _sync_and_publish(args, portals, started))


def _announced(args: argparse.Namespace, portals: list[Portal], code: int) -> int:
    """`code`, once the alerts the run's outcome calls for are sent (invoicing_warehouse/runs/alerts.py; never
    changes the code)."""
    from invoicing_warehouse.runs.alerts import notify_changes, outcome_lines

    for line in outcome_lines(notify_changes(args.target, [portal.name for portal in portals])):
        print(line, file=sys.stderr)
    return code


def _sync_and_publish(args: argparse.Namespace, portals: list[Portal], started: float,
                      with_models: bool = False) -> int:
    """The regular sync of `portals` and its publication through the gate (invoicing_warehouse/runs/sync.py), printed;
    the worst exit code, 1 when the gate held figures back."""
    from invoicing_warehouse.runs.sync import sync_and_publish

    codes: dict[str, int] = {}

    def sync_one(portal: Portal) -> PortalOutcome:
        if len(portals) > 1:
            print(f"portal {portal.name}:", file=sys.stderr, flush=True)
        codes[portal.name], outcome = _sync_one(args, portal, started)
        return outcome

    run = sync_and_publish(args.target, portals, sync_one, with_models=with_models)
    if len(portals) > 1:
        for outcome in run.outcomes:
            print(outcome.line())
    worst = exit_codes.worst(codes.values())
    gate = run.gate
    if gate is None:
        return worst
    if with_models and gate.models:
        print(f"models: {len(gate.models)} built", file=sys.stderr, flush=True)
    for line in gate.lines():
        print(f"sync: {line}", file=sys.stderr, flush=True)
    if gate.failures:
        print("readers' snapshot: unchanged, readers keep the last good figures")
    else:
        print(f"readers' snapshot: {gate.published}" if gate.published
              else "readers' snapshot: unchanged (no row changed)")
    if gate.only_partial:
        print(f"sync: partial: {len(gate.held)} mart(s) held for a list whose read failed "
              f"({', '.join(sorted(gate.held))}); everything else published", file=sys.stderr, flush=True)
    return exit_codes.worst([worst, exit_codes.of_gate(gate)])


def _sync_one(args: argparse.Namespace, portal: Portal, started: float) -> tuple[int, PortalOutcome]:
    """One portal's sync with progress and summary; (exit code, PortalOutcome). Never raises but Ctrl-C."""
    from invoicing_warehouse.engine.connection import WarehouseUnavailable
    from invoicing_warehouse.runs.sync import sync_and_record
    from pipelines.invoicing.errors import InvoicingApiError
    from pipelines.invoicing.load.portal_sync import PortalOutcome, portal_settings
    from pipelines.invoicing.load.sync import CHUNK_PAGES

    resources = [r.strip() for r in args.resources.split(",") if r.strip()] if args.resources else None
    outcome = PortalOutcome(portal.name)
    try:
        settings = portal_settings(portal)
        known = doctor_capabilities(args.doctor_findings, settings.base_url)
        if known is not None:
            print(f"using the doctor's findings in {args.doctor_findings}", file=sys.stderr)
        outcome.report = sync_and_record(args.target, portal, settings=settings, rate_limit_per_s=args.rate_limit,
                                     known_capabilities=lambda _url: known, resources=resources,
                                     full_refresh=args.full_refresh, reconcile=args.reconcile,
                                     progress=ProgressPrinter(), chunk_pages=args.chunk_pages or CHUNK_PAGES)
    except InvoicingApiError as error:
        outcome.error = error
        print(f"sync failed after {time.monotonic() - started:.1f} s: {error}", file=sys.stderr)
        return 1, outcome
    except WarehouseUnavailable as error:  # the lake's catalog down or refusing: an outage, not a bug (L6)
        from invoicing_warehouse.engine.connection import scrub

        outcome.error = error
        print(f"sync failed after {time.monotonic() - started:.1f} s: the warehouse is unreachable: "
              f"{scrub(str(error), args.target)}; check INVOICING_DUCKLAKE_CATALOG, INVOICING_DUCKLAKE_PASSWORD "
              "and that the PostgreSQL server runs", file=sys.stderr)
        return 1, outcome
    except KeyboardInterrupt:
        print("sync interrupted; what was committed stays committed, run it again to resume", file=sys.stderr)
        raise SystemExit(130) from None
    except Exception as error:  # not an expected failure: keep the traceback for the report  # noqa: BLE001
        from invoicing_warehouse.engine.connection import scrub

        outcome.error = error
        # the catalog's password may sit in a DuckDB error's text: print the traceback scrubbed
        print(scrub(traceback.format_exc(), args.target), file=sys.stderr, end="")
        print(f"sync failed unexpectedly: {type(error).__name__}: {scrub(str(error), args.target)}", file=sys.stderr)
        return 2, outcome
    print(_summary(outcome.report, args.target.describe()))
    return 0, outcome
