"""Month-end trends: receivables, overdue share and DSO at the last 12 month-ends, each from the SQL models built
as of that month-end, over the warehouse's own raw tables in an in-memory catalog beside them.

Two callers, one computation:
- the gate (runs/gate.py) computes them just before it publishes and writes `marts.month_end_trends` into the
  warehouse, so the readers' copy carries them: the dashboard's Trends page reads one small table instead of
  building the models twelve times on a visitor's first click (40 s at 1,000,000 documents);
- the dashboard computes them itself for another report date (the sidebar's As-of picker), or for a copy
  published without them (the setting below off, a copy published before this table existed).

Only the models marts.dso rests on are built (staging and intermediate views, marts.receivables,
marts.receivables_by_customer, marts.dso), the views once: a month-end costs three mart tables, not every model.
The blocking checks of those models run after the first build, and after each later one those of the models
that read the report date; the raw tables' checks do not depend on the date and are the gate's. A mart the gate
holds (a read that may be incomplete) refuses the whole trend, as it refuses another report date: the gate then
publishes no table, and the page says why.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import date, timedelta
from functools import cache

import duckdb

from runs.checks import WarehouseCheck
from warehouse_engine.scratch_catalog import leave, raw_views
from warehouse_engine.sql_runner import build_models, discover_models

MONTHS = 12
TREND_MART = "marts.dso"
REPORT_DATE = "intermediate.int_report_date"
TABLE = "marts.month_end_trends"
COLUMNS = ["portal_id", "month_end", "open_receivables", "overdue_receivables", "overdue_share", "dso_days"]
PUBLISH_SETTING = "INVOICING_PUBLISH_TRENDS"


class TrendRefused(Exception):
    """The month-end figures cannot be shown: a mart they rest on is held, or a build's checks failed."""


def publish_trends_enabled() -> bool:
    """The setting INVOICING_PUBLISH_TRENDS: on unless `0`, `false`, `no` or `off` (a firm whose hint runs must
    publish within seconds at millions of documents turns it off; the page then builds on its first visit)."""
    return os.environ.get(PUBLISH_SETTING, "1").strip().lower() not in ("0", "false", "no", "off")


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


_SELECT_ROW = """select portal_id, as_of_date as month_end, open_receivables, overdue_receivables,
                         case when open_receivables <> 0
                              then cast(round(overdue_receivables / open_receivables * 100, 1) as decimal(9, 1))
                         end as overdue_share,
                         dso_days
                  from marts.dso"""
_ROWS = "main.month_end_rows"  # in the in-memory catalog, beside the models built there


def refusal(held: Mapping[str, str]) -> TrendRefused:
    """Why no trend is shown while the gate holds `held` (mart: why), naming the held marts the trend rests on."""
    return TrendRefused(
        "No trend: "
        + "; ".join(
            f"{mart} rests on a read that may be incomplete: {why}"
            for mart, why in sorted(held.items())
            if mart in needed_models()
        )
    )


Checks = Callable[[duckdb.DuckDBPyConnection], list[WarehouseCheck]]


def figures(
    reader: duckdb.DuckDBPyConnection, as_of: date, held: Mapping[str, str], checks: Checks
) -> list[tuple]:
    """One row per portal and month-end (COLUMNS; overdue_share in percent of the open receivables, None when
    nothing is open), oldest first, from the raw tables of the catalog current on `reader`; the models are built
    in an in-memory catalog that is left current. `held`: the marts the gate holds, and why; `checks`: the
    warehouse's checks (runs/gate.py `warehouse_checks`), of which those of the built models run.
    Raises TrendRefused, or duckdb.Error when a build fails."""
    _collect(reader, as_of, held, checks)
    return reader.execute(
        f"select {', '.join(COLUMNS)} from {_ROWS} order by month_end, portal_id"
    ).fetchall()


def _collect(reader: duckdb.DuckDBPyConnection, as_of: date, held: Mapping[str, str], checks: Checks) -> None:
    needed = needed_models()
    if any(mart in needed for mart in held):
        raise refusal(held)
    raw_views(reader)
    marts = [key for key in needed if key.startswith("marts.")]
    for index, end in enumerate(month_ends(as_of)):
        # the staging and intermediate models are views that read the report date when queried: built once,
        # then only the three mart tables are built again for each month-end
        build_models(reader, as_of=end, select=marts if index else needed)
        # every check of these models at the first month-end, then those whose answer may change with the date
        checked = needed if not index else dated_models()
        failures = [
            result.line()
            for result in (check.run(reader) for check in checks(reader) if check.relation in checked)
            if result.blocks
        ]
        if failures:
            raise TrendRefused(
                f"No trend: the checks hold the build as of {end.isoformat()} back: " + "; ".join(failures)
            )
        reader.execute(
            f"create table {_ROWS} as {_SELECT_ROW}" if not index else f"insert into {_ROWS} {_SELECT_ROW}"
        )


def write_table(
    connection: duckdb.DuckDBPyConnection, as_of: date, held: Mapping[str, str], checks: Checks
) -> str | None:
    """Replaces TABLE on the warehouse `connection` (its catalog current) with the month-end figures up to
    `as_of` (COLUMNS), each row carrying `report_date` (`as_of`: the dashboard uses the table only for that
    date). Returns None when written, else why not (refused: the table is then dropped, so that no trend of an
    earlier publication outlives the figures it was built from)."""
    warehouse = connection.execute("select current_database()").fetchall()[0][0]
    connection.execute(f"drop table if exists {TABLE}")
    try:
        _collect(connection, as_of, held, checks)
        connection.execute(
            f"""create table "{warehouse}".{TABLE} as
                select {", ".join(COLUMNS)}, cast(? as date) as report_date from {_ROWS}
                order by month_end, portal_id""",
            [as_of],
        )
    except TrendRefused as refused:
        return str(refused)
    finally:
        leave(connection, warehouse)
    return None


def read_table(connection: duckdb.DuckDBPyConnection, as_of: date) -> list[tuple] | None:
    """The rows of TABLE on `connection` (COLUMNS) when it was published for the report date `as_of`, else None
    (no table: the setting was off, the gate refused, or an older copy; another date; no row at all, when the
    date it was built for cannot be told)."""
    schema, name = TABLE.split(".")
    present = connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    ).fetchall()[0][0]
    if not present:
        return None
    dates = [row[0] for row in connection.execute(f"select distinct report_date from {TABLE}").fetchall()]
    if dates != [as_of]:
        return None
    return connection.execute(
        f"select {', '.join(COLUMNS)} from {TABLE} order by month_end, portal_id"
    ).fetchall()
