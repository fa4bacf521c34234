"""Month-end trends: receivables, overdue share and DSO at the last month-ends, each from the SQL models built as
of that month-end (the same as-of models as the sidebar's date, dashboard.source), in memory over the readers'
copy.

Only the models marts.dso rests on are built (staging and intermediate views, marts.receivables,
marts.receivables_by_customer, marts.dso), the views once: a month-end costs three mart tables, not all eight
models and the views' row counts (at 1,000,000 documents on a busy machine: 12 s a month-end for the whole
set, about 7 s for the three tables). The blocking checks
of those models run after the first build, and after each later one those of the models that read the report
date (the marts' grain, their single currency); the raw tables' checks do not depend on the date and passed
when the copy was published (the gate), so they are not run at all. A mart the
gate holds (a read that may be incomplete) refuses the whole trend, as it refuses another report date.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import cache

import duckdb
import pandas as pd

from dashboard.source import Source, Unavailable
from runs.as_of import raw_views
from runs.gate import held_marts, warehouse_checks
from runs.gate_state import load as load_gate_state
from warehouse_engine.sql_runner import build_models, discover_models

MONTHS = 12
TREND_MART = "marts.dso"
REPORT_DATE = "intermediate.int_report_date"
COLUMNS = ["portal_id", "month_end", "open_receivables", "overdue_receivables", "overdue_share", "dso_days"]


def month_ends(as_of: date, count: int = MONTHS) -> list[date]:
    """The last `count` month-ends on or before `as_of`, oldest first (`as_of` itself when it is one)."""
    ends: list[date] = []
    end = as_of if (as_of + timedelta(days=1)).day == 1 else as_of.replace(day=1) - timedelta(days=1)
    while len(ends) < count:
        ends.append(end)
        end = end.replace(day=1) - timedelta(days=1)
    return ends[::-1]


def _closure(key: str) -> set[str]:
    models = {model.key: model for model in discover_models()}
    wanted: set[str] = set()
    stack = [key]
    while stack:
        key = stack.pop()
        if key in wanted or key not in models:
            continue
        wanted.add(key)
        stack.extend(models[key].model_dependencies)
    return wanted


@cache
def needed_models() -> tuple[str, ...]:
    """marts.dso and every model it reads, directly or not (keys)."""
    return tuple(sorted(_closure(TREND_MART)))


@cache
def dated_models() -> tuple[str, ...]:
    """The needed models that read the report date (intermediate.int_report_date), directly or not: the only
    ones whose checks can answer differently from one month-end to the next."""
    return tuple(key for key in needed_models() if REPORT_DATE in _closure(key))


def month_end_figures(source: Source, as_of: date) -> pd.DataFrame:
    """One row per portal and month-end (COLUMNS; overdue_share in percent of the open receivables, None when
    nothing is open): the figures of marts.dso as of each of the MONTHS month-ends up to `as_of`. Raises
    Unavailable when the gate holds a mart they rest on, or a blocking check fails on a month-end's build."""
    needed = needed_models()
    held = {mart: why for mart, why in held_marts(load_gate_state(source.target)).items() if mart in needed}
    if held:
        raise Unavailable("No trend: " + "; ".join(f"{mart} rests on a read that may be incomplete: {why}"
                                                   for mart, why in sorted(held.items())))
    reader = source.connect(attach=True)
    try:
        raw_views(reader)
        rows = []
        marts = [key for key in needed if key.startswith("marts.")]
        for index, end in enumerate(month_ends(as_of)):
            # the staging and intermediate models are views that read the report date when queried: built
            # once, then only the three mart tables are built again for each month-end
            build_models(reader, as_of=end, select=marts if index else needed)
            # every check of these models at the first month-end, then those whose answer may change with the date
            checked = needed if not index else dated_models()
            failures = [result.line() for result in (check.run(reader) for check in warehouse_checks(reader)
                                                     if check.relation in checked)
                        if result.blocks]
            if failures:
                raise Unavailable(f"No trend: the checks hold the build as of {end.isoformat()} back: "
                                  + "; ".join(failures))
            rows += reader.execute(
                """select portal_id, as_of_date, open_receivables, overdue_receivables,
                          case when open_receivables <> 0
                               then cast(round(overdue_receivables / open_receivables * 100, 1) as decimal(9, 1)) end,
                          dso_days
                   from marts.dso order by portal_id"""
            ).fetchall()
    except duckdb.Error as error:
        raise Unavailable(f"The month-end models could not be built: {error}") from None
    finally:
        reader.close()
    return pd.DataFrame.from_records(rows, columns=COLUMNS)

