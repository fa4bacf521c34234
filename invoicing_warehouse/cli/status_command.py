"""`invoicing-warehouse status [--json]`: per portal the last successful sync, its freshness, the webhook hints
waiting and kept dead, the gate's failing checks, and the readers' copy's age (invoicing_warehouse/runs/status.py).

Exit 0 when every portal is fresh and passing, 1 when one is stale, never synced or failing, or when a store it
reads cannot be (the spool's or the catalog's PostgreSQL: `--json` then answers `{"ok": false, "error": ...}`), 2
for bad usage
(a threshold that is not a positive number, an unreadable portals file), as argparse's own errors. `--json` is
for monitoring: its keys are stable (only ever added to).
"""

from __future__ import annotations

import argparse
import json
import sys

from invoicing_warehouse.engine.names import DEFAULT_PORTAL, DEFAULT_PORTALS_PATH, DEFAULT_WAREHOUSE_PATH


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The status subcommand's options."""
    parser.add_argument("--warehouse", default=DEFAULT_WAREHOUSE_PATH, metavar="PATH",
                        help=f"DuckDB file of the warehouse (default {DEFAULT_WAREHOUSE_PATH}; unused with "
                             "INVOICING_WAREHOUSE_ENGINE=ducklake)")
    parser.add_argument("--portals", default=None, metavar="PATH",
                        help=f"portals file (default {DEFAULT_PORTALS_PATH} when it exists; without one, the "
                             "single portal `default`)")
    parser.add_argument("--stale-after", default=None, metavar="MINUTES",
                        help="a portal whose last successful sync is older is stale (default "
                             "INVOICING_STALE_AFTER_MINUTES, else twice INVOICING_SYNC_INTERVAL_MINUTES: 30)")
    parser.add_argument("--json", action="store_true", help="one JSON object, stable keys, for monitoring")


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _table(status) -> str:
    header = f"{'portal':<16} {'last sync (UTC)':<21} {'records':>8} {'age':>9} {'fresh':<6} {'hints':>6} " \
             f"{'dead':>5}  failing checks"
    lines = [header, "-" * len(header)]
    for p in status.portals:
        lines.append(f"{p.portal:<16} {p.last_sync_at or 'never':<21} "
                     f"{'' if p.last_sync_records is None else p.last_sync_records:>8} {_age(p.age_s):>9} "
                     f"{'yes' if p.fresh else 'STALE':<6} {p.pending_hints:>6} {p.dead_hints:>5}  "
                     f"{'; '.join(p.failing_checks) or 'none'}")
    lines.append(f"readers' copy: published {status.readers_copy_published_at or 'never'} "
                 f"({_age(status.readers_copy_age_s)} ago); stale after {_age(status.stale_after_s)}")
    lines += [f"flagged (published, check failed): {line}" for line in status.flagged_checks]
    lines.append("status: ok" if status.ok else "status: NOT OK (a portal is stale or a check fails)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Prints the status; 0 all fresh and passing, 1 stale, failing or a store unreachable, 2 bad usage."""
    from invoicing_warehouse.engine.connection import WarehouseUnavailable
    from invoicing_warehouse.engine.redaction import redact
    from invoicing_warehouse.engine.target import WarehouseConfigError, target_from_env
    from invoicing_warehouse.runs.alerts import notify_changes, outcome_lines
    from invoicing_warehouse.runs.gate_state import GateStateError
    from invoicing_warehouse.runs.status import StatusError, stale_after, warehouse_status
    from pipelines.invoicing.errors import InvoicingApiError
    from pipelines.invoicing.portals import configured_portals

    try:
        threshold = stale_after(args.stale_after)
        portals = configured_portals(args.portals or DEFAULT_PORTALS_PATH, required=args.portals is not None)
        target = target_from_env(args.warehouse)
    except (StatusError, InvoicingApiError, WarehouseConfigError) as error:
        print(f"status: {error}", file=sys.stderr)
        return 2
    names = sorted(portals) or [DEFAULT_PORTAL]
    try:
        status = warehouse_status(target, names, threshold=threshold)
    except (InvoicingApiError, GateStateError, WarehouseUnavailable) as error:
        # a store the status reads (the spool's or the catalog's PostgreSQL, the gate's state) cannot be read:
        # monitoring is told so, in its format, with the not-ok exit (security review 2, L6)
        message = redact(str(error))
        print(json.dumps({"ok": False, "error": message}, indent=1, sort_keys=True) if args.json
              else f"status: NOT OK: {message}")
        return 1
    print(json.dumps(status.as_json(), indent=1, sort_keys=True) if args.json else _table(status))
    # a cron running `status` is enough for stale portals and dead hints to reach someone
    # (invoicing_warehouse/runs/alerts.py)
    for line in outcome_lines(notify_changes(target, names, threshold=threshold)):
        print(line, file=sys.stderr)
    return 0 if status.ok else 1
