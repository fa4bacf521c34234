"""Freshness: when the readers' copy was published, when each raw table was last loaded, the webhook hints
kept dead, and the warehouse's data checks re-run on the copy."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.freshness import dead_hints, snapshot
from invoicing_warehouse.dashboard.portal_scope import allowed_portals
from invoicing_warehouse.dashboard.source import Source
from invoicing_warehouse.dashboard.widgets import PageContext, heading, table
from invoicing_warehouse.engine.target import WarehouseTarget


def _age(moment: datetime | None, context: PageContext) -> str:
    if moment is None:
        return context.tr("unknown")
    seconds = int((datetime.now(UTC) - moment.astimezone(UTC)).total_seconds())
    if seconds < 3600:
        return context.tr("{count} min ago", count=seconds // 60)
    if seconds < 172800:
        return context.tr("{count} h ago", count=seconds // 3600)
    return context.tr("{count} days ago", count=seconds // 86400)


def render(context: PageContext) -> None:
    """Lays out the Freshness page."""
    heading(context.tr("Freshness"), context)
    tr = context.tr
    source = Source(Path(context.view.warehouse))
    copy = snapshot(source.warehouse, source.snapshot_path)
    tables, last_load = cache.freshness_tables(context.view.warehouse, context.view.key)
    published, loaded, size = st.columns(3)
    published.metric(tr("Snapshot published"), _age(copy.published_at, context),
                     help=f"{copy.path}, {copy.published_at.isoformat() if copy.published_at else ''}")
    loaded.metric(tr("Last sync"), _age(last_load, context), help=tr("last successful dlt load in the copy"))
    size.metric(tr("Snapshot size"), f"{(copy.size_bytes or 0) / 1e6:.1f} MB")
    if copy.warehouse_ahead:
        st.warning(tr("The warehouse has changes the readers' copy does not show yet (a run did not publish). "
                      "Publish them: `invoicing-warehouse models --warehouse {warehouse}`.",
                      warehouse=source.warehouse))
    st.caption(tr("Snapshot published at {moment} (UTC)",
                  moment=copy.published_at.isoformat() if copy.published_at else tr("unknown")))

    st.subheader(tr("Last load per raw table"))
    table(tables.drop(columns=["load_id"]), "raw_tables", context, download=tables)

    dead_hints_section(source.target, context)

    st.subheader(tr("Checks on the readers' copy"))
    results = cache.checks(context.view.warehouse, context.view.key)
    failed = results[~results["passed"]]
    if failed.empty:
        st.success(tr("All {count} checks pass.", count=len(results)))
    else:
        st.error(tr("{failed} of {count} checks fail.", failed=len(failed), count=len(results)))
    table(results, "checks", context)


def dead_hints_section(target: WarehouseTarget, context: PageContext) -> None:
    """The webhook hints kept dead (pipelines/invoicing/webhooks/dead_letters.py): a line when there are none,
    else a warning with the count and the newest of them."""
    tr = context.tr
    st.subheader(tr("Webhook hints set aside"))
    try:
        total, letters = dead_hints(target, allowed_portals())
    except sqlite3.Error as error:
        st.warning(tr("The hints spool could not be read: {error}", error=error))
        return
    if not total:
        st.success(tr("No webhook hint is kept dead."))
        return
    st.warning(tr(
        "{total} webhook hint(s) kept dead: the API refused their record alone, or the delivery named no "
        "record. Real-time updates skipped these records; the scheduled sync still reads them. A forged "
        "delivery looks like this: trace it, or delete the row once its cause is fixed.", total=total))
    table(letters, "dead_hints", context)
