"""Portals: one row per portal of the firm (open receivables, overdue, DSO, last sync, failing checks), for the
person who looks after several accounts. Shown only when the readers' copy holds two portals or more."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from invoicing_warehouse.dashboard import cache
from invoicing_warehouse.dashboard.portals import portal_figures, portal_rows
from invoicing_warehouse.dashboard.source import Source
from invoicing_warehouse.dashboard.widgets import PageContext, table
from invoicing_warehouse.runs.status import warehouse_status


@st.cache_data(max_entries=8, show_spinner=False)
def _figures(warehouse: str, key: str) -> dict:
    with cache.marts(cache.View(warehouse, key, None, "")) as connection:
        return portal_figures(connection)


def render(context: PageContext, portals: list[str]) -> None:
    """Lays out the Portals page: the published marts' figures per portal, and each portal's status."""
    tr = context.tr
    st.title(tr("Portals"))
    st.caption(tr("Published marts · {count} portals · the status is `invoicing-warehouse status`'s",
                  count=len(portals)))
    source = Source(Path(context.view.warehouse))
    status = warehouse_status(source.target, portals)  # small files beside the warehouse: read on every visit
    rows = portal_rows(_figures(context.view.warehouse, context.view.key), status, context.style)
    late = [line.portal for line in status.portals if not line.ok]
    if late:
        st.warning(tr("Needs attention: {portals} (stale, a failing check, or a webhook hint kept dead).",
                      portals=", ".join(late)))
    table(rows, "portals", context)
