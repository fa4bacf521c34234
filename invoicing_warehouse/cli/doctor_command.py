"""`invoicing-warehouse doctor`: a read-only probe of a live account against the contract ledger.

Reads the credentials like the sync (SOURCES__INVOICING__BASE_URL / _CLIENT_ID / _CLIENT_SECRET or
`[sources.invoicing]` in `.dlt/`), makes at most ~60 paced GET requests, prints one line per ledger item
(observed, ok/differs/absent, what the product does about it) and writes the findings as JSON to `--out`
(`--json` prints that document on stdout instead of the table, as `status --json` does). Exit 0 when
the sync can work (differences only cost time or are made visible), 1 when something it needs fails (bad
credentials, no `read` scope, no `data` envelope, unreachable), saying what will go wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from invoicing_warehouse.engine.names import DEFAULT_PORTAL, DOCTOR_FINDINGS_PATH, PORTAL_COLUMN
from invoicing_warehouse.engine.private_files import private_dir, private_umask

DEFAULT_JSON = DOCTOR_FINDINGS_PATH


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The doctor subcommand's options."""
    from invoicing_warehouse.cli.sync_command import add_portal_arguments

    add_portal_arguments(parser, every=False)  # one portal per probe: its server, its credentials
    parser.add_argument("--out", default=DEFAULT_JSON, metavar="PATH",
                        help=f"where to write the findings (default {DEFAULT_JSON})")
    parser.add_argument("--json", action="store_true",
                        help="print the findings as one JSON document on stdout instead of the table")
    parser.add_argument("--warehouse", default=None, metavar="PATH",
                        help="a DuckDB warehouse already synced: its customer ids reveal customers the lists hide")
    parser.add_argument("--rate-limit", type=float, default=8.0, metavar="PER_S",
                        help="requests per second (default 8, below the service's 10)")


def known_customer_ids(warehouse: str | None, portal_id: str = DEFAULT_PORTAL) -> set[str]:
    """Ids of the portal's live customers a warehouse holds (empty without one, or before its first sync)."""
    if not warehouse or not Path(warehouse).exists():
        return set()
    import duckdb

    from invoicing_warehouse.engine.names import RAW_DATASET

    with duckdb.connect(warehouse, read_only=True) as connection:
        try:
            rows = connection.execute(f"select id from {RAW_DATASET}.customers where _deleted_at is null "
                                      f"and {PORTAL_COLUMN} = ?", [portal_id]).fetchall()
        except duckdb.Error:
            return set()  # no customers table yet: nothing known
    return {str(row[0]) for row in rows}


def render(findings: dict) -> str:
    """The table a person reads, then the request count; a fatal failure as two plain sentences."""
    from pipelines.invoicing.doctor.probe_report import report_lines

    if findings.get("fatal"):
        fatal = findings["fatal"]
        return f"doctor: the sync cannot work: {fatal['message']}\n  what will go wrong: {fatal['consequence']}"
    lines = report_lines(findings)
    widths = [max(len(getattr(line, name)) for line in lines) for name in ("item", "observed", "status")]
    widths = [min(width, limit) for width, limit in zip(widths, (42, 70, 7), strict=True)]
    out = [f"{'ledger item':<{widths[0]}}  {'observed':<{widths[1]}}  {'status':<{widths[2]}}  what the product does"]
    for line in lines:
        out.append(f"{line.item:<{widths[0]}}  {line.observed:<{widths[1]}}  {line.status:<{widths[2]}}  "
                   f"{line.behaviour}")
    differing = sum(1 for line in lines if line.status == "differs")
    absent = sum(1 for line in lines if line.status == "absent")
    out.append(f"{len(lines)} items probed: {differing} differ from what the sandbox's default serves, "
               f"{absent} not served; "
               f"{findings['requests']} requests in {findings['wall_s']:.1f} s")
    out.extend(f"not probed: {reason}" for reason in findings.get("not_probed", []))
    out.extend(f"new field served, not in the ledger (docs/contract.md): {name}.{key}"
               for name, keys in sorted(findings.get("new_fields", {}).items()) for key in keys)
    return "\n".join(out)


def write_private_text(path: Path, text: str) -> None:
    """Writes `text` to `path`, the owner's only (0600; its folder 0700 when created here): the findings name the
    account's customers and the server's answers."""
    private_umask()
    if not path.parent.exists():
        private_dir(path.parent)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        os.fchmod(descriptor, 0o600)  # a file an older version left 0644
        out.write(text)


def run(args: argparse.Namespace) -> int:
    """Probes, prints, writes the JSON; 1 when the sync cannot work against this account."""
    from invoicing_warehouse.cli.sync_command import chosen_portals
    from pipelines.invoicing.credentials import resolve_settings
    from pipelines.invoicing.doctor.probe import probe_server
    from pipelines.invoicing.doctor.probe_http import ProbeSession
    from pipelines.invoicing.errors import InvoicingApiError

    try:
        portal = chosen_portals(args)[0]
        settings = resolve_settings(portal=portal)
    except InvoicingApiError as error:
        print(f"doctor: {error}", file=sys.stderr)
        return 1
    session = ProbeSession(settings.base_url, settings.client_id, settings.client_secret,
                           rate_limit_per_s=args.rate_limit)
    try:
        findings = probe_server(session, known_customer_ids(args.warehouse, portal.name))
    finally:
        session.close()
    findings["base_url"] = settings.base_url  # `sync` uses the findings for the portals on this server
    path = Path(args.out)
    document = json.dumps(findings, indent=2, default=str) + "\n"
    write_private_text(path, document)
    if args.json:
        sys.stdout.write(document)
    else:
        print(render(findings), file=sys.stderr if findings.get("fatal") else sys.stdout)
    print(f"findings written to {path}", file=sys.stderr)
    return 1 if findings.get("fatal") else 0
