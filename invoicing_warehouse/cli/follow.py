"""`invoicing-warehouse sync --follow`: the doorbell path without Dagster, one bounded loop in one process.

The loop: a regular sync of the chosen portals first (and publication), then the pending webhook hints of each
portal are applied as soon as a new delivery is spooled (a spool file is looked at every WAKE_S), at the
latest every `--poll-s` seconds (invoicing_warehouse/runs/hints.py: fetch by id, merge, rebuild the models
downstream, publish, acknowledge); every `--sync-every-minutes` (default INVOICING_SYNC_INTERVAL_MINUTES, else
15, the Dagster schedule's interval) the regular incremental sync runs again as the safety net that heals
lost deliveries. Everything runs one step after another in this process, so the process is the warehouse's
one writer; another writer holding a DuckDB file (a Dagster run, a manual sync) makes a step fail with the
file locked: it is reported in one line and retried at the next poll, the hints staying pending.
`--max-seconds` bounds the loop (tests, demos); without it the loop runs until Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.environment.run_settings import SYNC_INTERVAL_MINUTES

if TYPE_CHECKING:
    from pipelines.invoicing.http.client import InvoicingClient
    from pipelines.invoicing.portals import Portal

SYNC_INTERVAL_ENV = SYNC_INTERVAL_MINUTES.name
INTERCEPT_SIGNALS_ENV = "RUNTIME__INTERCEPT_SIGNALS"  # dlt's runtime.intercept_signals
DEFAULT_SYNC_MINUTES = float(SYNC_INTERVAL_MINUTES.default)
WAKE_S = 0.05  # between two looks at a spool file while waiting for hints (_wait_for_hints)


def add_follow_arguments(parser: argparse.ArgumentParser) -> None:
    """`--follow`, `--poll-s`, `--max-seconds`, `--sync-every-minutes`."""
    parser.add_argument("--follow", action="store_true",
                        help="after the sync, keep applying webhook hints from the spool beside the warehouse")
    parser.add_argument("--poll-s", type=float, default=2.0, metavar="S",
                        help="with --follow: the longest wait between two looks at the spool (default "
                             "%(default)s); a spool file is also looked at every 0.05 s, so a hint starts its run "
                             "at once")
    parser.add_argument("--max-seconds", type=float, default=None, metavar="N",
                        help="with --follow: stop after N seconds (default: run until interrupted)")
    parser.add_argument("--sync-every-minutes", type=float, default=None, metavar="M",
                        help=f"with --follow: the regular sync's interval (default {SYNC_INTERVAL_ENV}, else 15)")


def sync_every_s(args: argparse.Namespace) -> float:
    """The safety net's interval in seconds (`--sync-every-minutes`, else the schedule's setting, else 15 min)."""
    minutes = args.sync_every_minutes
    if minutes is None:
        minutes = float(current_environment().value(SYNC_INTERVAL_MINUTES))  # SettingError: a ValueError
    if minutes <= 0:
        raise ValueError("--sync-every-minutes must be above 0")
    return minutes * 60.0


def follow(args: argparse.Namespace, portals: list[Portal], sync_all: Callable[[], int]) -> int:
    """The loop; `sync_all()` is the regular sync of `portals` with publication (its exit code).
    Returns the last regular sync's exit code (invoicing_warehouse/cli/exit_codes.py: 0, 3 partial, 1 failed)."""

    if args.poll_s <= 0:
        print("sync failed: --poll-s must be above 0", file=sys.stderr)
        return 1
    try:
        interval = sync_every_s(args)
    except ValueError as error:
        print(f"sync failed: {error}", file=sys.stderr)
        return 1
    started = time.monotonic()
    deadline = started + args.max_seconds if args.max_seconds is not None else float("inf")
    code = sync_all()
    next_sync = time.monotonic() + interval
    print(f"following webhook hints every {args.poll_s:g} s; regular sync every {interval / 60:g} min",
          file=sys.stderr, flush=True)
    clients: dict[str, InvoicingClient] = {}  # per portal, kept across runs: one token, not one per run
    interrupted = _stop_on_ctrl_c()
    try:
        while time.monotonic() < deadline:
            for portal in portals:
                _apply_one(args, portal, clients)
                _stop_if(interrupted)
            if time.monotonic() >= next_sync:
                code = sync_all()
                next_sync = time.monotonic() + interval
                _stop_if(interrupted)
            _wait_for_hints(args, portals, min(time.monotonic() + args.poll_s, deadline, next_sync))
    except KeyboardInterrupt:
        print("follow stopped; pending hints stay in the spool", file=sys.stderr)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for client in clients.values():
            client.close()
    return code


def _wait_for_hints(args: argparse.Namespace, portals: list[Portal], until: float) -> None:
    """Sleeps until `until` (time.monotonic()), or less when a NEW delivery (one spooled after the wait began)
    left a hint of `portals` pending in a spool FILE.

    Why: a hint waited half of `--poll-s` on average before its run began, time the data did not need (the
    doorbell's p95, bench/RESULTS.md). A look at a local SQLite spool costs well under a millisecond, so the
    file is looked at every WAKE_S; `--poll-s` stays the longest wait. Only a new delivery wakes the loop:
    hints left pending by a failed run (the API down, no first sync yet) are retried once per `--poll-s`, as
    before. A PostgreSQL spool (a DuckLake's, or INVOICING_HINT_SPOOL) is not asked that often: one query per
    `--poll-s`, as before."""
    from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_location_for

    location = spool_location_for(args.target)
    if not isinstance(location, Path):
        time.sleep(max(0.0, until - time.monotonic()))
        return
    names = [portal.name for portal in portals]
    with HintSpool(location) as spool:
        seen = spool.last_sequence()
        while (left := until - time.monotonic()) > 0:
            time.sleep(min(WAKE_S, left))
            if spool.last_sequence() > seen and any(spool.pending(name, 1) for name in names):
                return


def _stop_on_ctrl_c() -> threading.Event:
    """Ctrl-C (SIGINT) sets the returned event as well as raising KeyboardInterrupt.

    Inside a run, dlt turns the KeyboardInterrupt into its own step error (an Exception the loop reports and
    survives), and by default even holds SIGINT back while it normalizes or loads, forgetting it when the step
    ends: Ctrl-C during a run was lost and the loop went on. With dlt's interception off (for this process)
    and the event checked after every run, Ctrl-C stops the loop; a load cut short is finished by the next
    run (finish_pending), its hints still pending."""
    os.environ.setdefault(INTERCEPT_SIGNALS_ENV, "false")
    interrupted = threading.Event()

    def on_sigint(signum: int, frame: object) -> None:
        interrupted.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    return interrupted


def _stop_if(interrupted: threading.Event) -> None:
    if interrupted.is_set():
        raise KeyboardInterrupt


def _apply_one(args: argparse.Namespace, portal: Portal, clients: dict[str, InvoicingClient]) -> None:
    """One applying run for `portal` with its kept client (opened on first need); a failure is one line (the
    hints stay pending for the next poll) and drops the client, so the next run starts from the settings
    again (credentials rotated meanwhile, a server restarted)."""
    from invoicing_warehouse.runs.hints import apply_pending, hint_client, spool_for
    from pipelines.invoicing.errors import InvoicingApiError

    try:
        if portal.name not in clients:
            with spool_for(args.target) as spool:
                if not spool.pending(portal.name, 1):
                    return  # nothing to apply: no client, no token
            clients[portal.name] = hint_client(portal, rate_limit_per_s=args.rate_limit)
        run = apply_pending(args.target, portal, client=clients[portal.name])
    except InvoicingApiError as error:
        _drop(clients, portal.name)
        print(f"hints {portal.name}: not applied, kept pending: {error}", file=sys.stderr, flush=True)
        return
    except Exception as error:  # a locked file, a model failing: reported, retried at the next poll  # noqa: BLE001
        from invoicing_warehouse.engine.connection import scrub

        _drop(clients, portal.name)
        print(f"hints {portal.name}: not applied, kept pending: {type(error).__name__}: "
              f"{scrub(str(error), args.target)}", file=sys.stderr, flush=True)
        return
    if run.hints:
        print(run.line(), flush=True)


def _drop(clients: dict[str, InvoicingClient], name: str) -> None:
    client = clients.pop(name, None)
    if client is not None:
        client.close()
