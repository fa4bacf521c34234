"""Freshness: when the readers' copy was published, when each raw table was last loaded, the webhook hints
kept dead, and the warehouse's data checks re-run on the copy."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import streamlit as st

from dashboard import cache
from dashboard.freshness import dead_hints, snapshot
from dashboard.portal_scope import allowed_portals
from dashboard.source import Source
from dashboard.widgets import PageContext, heading, table
from warehouse_engine.target import WarehouseTarget


def _age(moment: datetime | None) -> str:
    if moment is None:
        return "unknown"
    seconds = int((datetime.now(UTC) - moment.astimezone(UTC)).total_seconds())
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 172800:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} days ago"


def render(context: PageContext) -> None:
    """Lays out the Freshness page."""
    heading("Freshness", context)
    source = Source(Path(context.view.warehouse))
    copy = snapshot(source.warehouse, source.snapshot_path)
    tables, last_load = cache.freshness_tables(context.view.warehouse, context.view.key)
    published, loaded, size = st.columns(3)
    published.metric("Snapshot published", _age(copy.published_at),
                     help=f"{copy.path}, {copy.published_at.isoformat() if copy.published_at else ''}")
    loaded.metric("Last sync", _age(last_load), help="last successful dlt load in the copy")
    size.metric("Snapshot size", f"{(copy.size_bytes or 0) / 1e6:.1f} MB")
    if copy.warehouse_ahead:
        st.warning(
            "The warehouse has changes the readers' copy does not show yet (a run did not publish). "
            f"Publish them: `invoicing-warehouse models --warehouse {source.warehouse}`."
        )
    st.caption(f"Snapshot published at {copy.published_at.isoformat() if copy.published_at else 'unknown'} (UTC)")

    st.subheader("Last load per raw table")
    table(tables.drop(columns=["load_id"]), "raw_tables", context, download=tables)

    dead_hints_section(source.target, context)

    st.subheader("Checks on the readers' copy")
    results = cache.checks(context.view.warehouse, context.view.key)
    failed = results[~results["passed"]]
    if failed.empty:
        st.success(f"All {len(results)} checks pass.")
    else:
        st.error(f"{len(failed)} of {len(results)} checks fail.")
    table(results, "checks", context)


def dead_hints_section(target: WarehouseTarget, context: PageContext) -> None:
    """The webhook hints kept dead (pipelines/invoicing/webhooks/dead_letters.py): a line when there are none,
    else a warning with the count and the newest of them."""
    st.subheader("Webhook hints set aside")
    try:
        total, letters = dead_hints(target, allowed_portals())
    except sqlite3.Error as error:
        st.warning(f"The hints spool could not be read: {error}")
        return
    if not total:
        st.success("No webhook hint is kept dead.")
        return
    st.warning(
        f"{total} webhook hint(s) kept dead: the API refused their record alone, or the delivery named no "
        "record. Real-time updates skipped these records; the scheduled sync still reads them. A forged "
        "delivery looks like this: trace it, or delete the row once its cause is fixed."
    )
    table(letters, "dead_hints", context)
