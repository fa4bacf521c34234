"""Month-end trends for the Trends page: receivables, overdue share and DSO at the last 12 month-ends
(invoicing_warehouse/runs/month_end_trends.py computes them).

The gate publishes them with the readers' copy (`marts.month_end_trends`, for the copy's report date), so a
first visit reads one small table. For another report date (the sidebar's As-of picker), or a copy published
without them, the page builds them here, in memory over the readers' copy, through the same checks.
"""

from __future__ import annotations

from datetime import date

import duckdb
import pandas as pd

from invoicing_warehouse.dashboard.source import Source, Unavailable
from invoicing_warehouse.runs.gate import held_marts, warehouse_checks
from invoicing_warehouse.runs.gate_state import load as load_gate_state
from invoicing_warehouse.runs.month_end_trends import (
    COLUMNS,
    MONTHS,
    TrendRefused,
    figures,
    needed_models,
    read_table,
    refusal,
)

__all__ = ["COLUMNS", "MONTHS", "month_end_figures"]


def month_end_figures(source: Source, as_of: date) -> pd.DataFrame:
    """One row per portal and month-end (COLUMNS; overdue_share in percent of the open receivables, None when
    nothing is open): the figures of marts.dso as of each of the MONTHS month-ends up to `as_of`. Raises
    Unavailable when the gate holds a mart they rest on, or a blocking check fails on a month-end's build."""
    portals = source.portals  # the builds below read every portal: only these portals' rows are returned
    held = held_marts(load_gate_state(source.target))
    if any(mart in needed_models() for mart in held):  # held since the copy was published: no trend at all
        raise Unavailable(str(refusal(held)))
    reader = source.connect()
    try:
        published = read_table(reader, as_of)
    except duckdb.Error as error:
        raise Unavailable(f"The published month-end figures could not be read: {error}") from None
    finally:
        reader.close()
    if published is not None:
        return _of(pd.DataFrame.from_records(published, columns=COLUMNS), portals)
    reader = source.connect(attach=True)
    try:
        rows = figures(reader, as_of, held, warehouse_checks)
    except TrendRefused as refused:
        raise Unavailable(str(refused)) from None
    except duckdb.Error as error:
        raise Unavailable(f"The month-end models could not be built: {error}") from None
    finally:
        reader.close()
    return _of(pd.DataFrame.from_records(rows, columns=COLUMNS), portals)


def _of(rows: pd.DataFrame, portals: frozenset[str] | None) -> pd.DataFrame:
    """The rows of `portals` only (all of them when None)."""
    return rows if portals is None else rows[rows["portal_id"].isin(sorted(portals))].reset_index(drop=True)
