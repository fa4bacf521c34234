"""What the Portals page shows, one row per portal of a firm: open receivables, overdue and DSO (marts.dso of the
readers' copy), and the last successful sync and failing checks (invoicing_warehouse/runs/status.py, the `status`
command's own computation, read from the files beside the warehouse). The page is shown only when the copy holds two
portals or more (invoicing_warehouse/dashboard/app.py)."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pandas as pd

from invoicing_warehouse.dashboard.formatting import days, money
from invoicing_warehouse.dashboard.queries import currency
from invoicing_warehouse.runs.status import Status

COLUMNS = ["portal", "open_receivables", "overdue_receivables", "dso_days", "last_sync", "failing_checks"]


def portal_figures(connection: duckdb.DuckDBPyConnection) -> dict[str, tuple[Decimal, Decimal, Decimal | None, str]]:
    """portal -> (open receivables, overdue, DSO in days, currency) of the published marts."""
    rows = connection.execute(
        "select portal_id, open_receivables, overdue_receivables, dso_days from marts.dso order by portal_id"
    ).fetchall()
    return {portal: (open_total, overdue, dso, currency(connection, portal))
            for portal, open_total, overdue, dso in rows}


def portal_rows(figures: dict[str, tuple[Decimal, Decimal, Decimal | None, str]], status: Status,
                style: str) -> pd.DataFrame:
    """One row per portal with figures or a recorded sync, formatted for the page (amounts in each portal's
    currency: a firm's portals may keep different ones, so they are never summed here)."""
    by_portal = {line.portal: line for line in status.portals}
    rows = []
    for portal in sorted(set(figures) | set(by_portal)):
        open_total, overdue, dso, portal_currency = figures.get(portal, (None, None, None, "EUR"))
        line = by_portal.get(portal)
        if line is None or line.last_sync_at is None:
            synced = "never"
        else:
            synced = f"{line.last_sync_at} ({line.last_sync_records} records)" + ("" if line.fresh else ", STALE")
        rows.append((portal,
                     "" if open_total is None else money(open_total, style, portal_currency),
                     "" if overdue is None else money(overdue, style, portal_currency),
                     "" if dso is None else days(dso, style),
                     synced,
                     "; ".join(line.failing_checks) if line and line.failing_checks else "none"))
    return pd.DataFrame(rows, columns=COLUMNS)
