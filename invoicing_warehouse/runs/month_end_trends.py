"""Month-end trends: receivables, overdue share and DSO at the last 12 month-ends, each from the SQL models built
as of that month-end, over the warehouse's own raw tables in an in-memory catalog beside them.

Two callers, one computation:
- the gate (invoicing_warehouse/runs/gate.py) computes them just before it publishes and writes `marts.month_end_trends`
  into the warehouse, so the readers' copy carries them: the dashboard's Trends page reads one small table instead of
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

from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from functools import cache

import duckdb

from invoicing_warehouse.engine.environment.engine_settings import PUBLISH_TRENDS
from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.scratch_catalog import leave, raw_views
from invoicing_warehouse.engine.sql_names import catalog_fixed
from invoicing_warehouse.engine.sql_runner import build_models, discover_models
from invoicing_warehouse.runs import month_end_inputs
from invoicing_warehouse.runs.checks import WarehouseCheck

MONTHS = 12
TREND_MART = "marts.dso"
REPORT_DATE = "intermediate.int_report_date"
TABLE = "marts.month_end_trends"
COLUMNS = ["portal_id", "month_end", "open_receivables", "overdue_receivables", "overdue_share", "dso_days"]
PUBLISH_SETTING = PUBLISH_TRENDS.name


class TrendRefused(Exception):
    """The month-end figures cannot be shown: a mart they rest on is held, or a build's checks failed."""


def publish_trends_enabled() -> bool:
    """The setting INVOICING_PUBLISH_TRENDS: on unless `0`, `false`, `no` or `off` (a firm whose hint runs must
    publish within seconds at millions of documents turns it off; the page then builds on its first visit)."""
    return current_environment().value(PUBLISH_TRENDS)


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
    warehouse's checks (invoicing_warehouse/runs/gate.py `warehouse_checks`), of which those of the built models run.
    Raises TrendRefused, or duckdb.Error when a build fails."""
    _collect(reader, month_ends(as_of), held, checks)
    return reader.execute(
        f"select {', '.join(COLUMNS)} from {_ROWS} order by month_end, portal_id"
    ).fetchall()


def _collect(
    reader: duckdb.DuckDBPyConnection,
    ends: Sequence[date],
    held: Mapping[str, str],
    checks: Checks,
) -> None:
    """Builds the needed models as of each month-end of `ends` in an in-memory catalog left current on `reader`
    and gathers their rows in _ROWS; raises TrendRefused when a mart is held or a build's checks fail. With no
    month-end to build, the checks of the models that do not read the report date still run (their answer
    depends on every raw row, whatever its date), on the models as the warehouse current on `reader` has them
    (the gate has just built them from the same SQL)."""
    needed = needed_models()
    if any(mart in needed for mart in held):
        raise refusal(held)
    if not ends:
        _refuse_on_failures(reader, checks, [key for key in needed if key not in dated_models()], None)
    raw_views(reader)
    marts = [key for key in needed if key.startswith("marts.")]
    if not ends:
        return
    for index, end in enumerate(ends):
        # the staging and intermediate models are views that read the report date when queried: built once,
        # then only the three mart tables are built again for each month-end
        build_models(reader, as_of=end, select=marts if index else needed)
        # every check of these models at the first month-end, then those whose answer may change with the date
        _refuse_on_failures(reader, checks, needed if not index else dated_models(), end)
        reader.execute(
            f"create table {_ROWS} as {_SELECT_ROW}" if not index else f"insert into {_ROWS} {_SELECT_ROW}"
        )


def _refuse_on_failures(
    reader: duckdb.DuckDBPyConnection, checks: Checks, checked: Sequence[str], end: date | None
) -> None:
    with catalog_fixed(reader):  # the checks only read: one look at the catalog serves them all
        failures = [
            result.line()
            for result in (check.run(reader) for check in checks(reader) if check.relation in checked)
            if result.blocks
        ]
    if failures:
        when = f"as of {end.isoformat()}" if end else "of the models that do not read the report date"
        raise TrendRefused(f"No trend: the checks hold the build {when} back: " + "; ".join(failures))


def write_table(
    connection: duckdb.DuckDBPyConnection, as_of: date, held: Mapping[str, str], checks: Checks
) -> str | None:
    """Replaces TABLE on the warehouse `connection` (its catalog current) with the month-end figures up to
    `as_of` (COLUMNS), each row carrying `report_date` (`as_of`: the dashboard uses the table only for that
    date). The month-ends whose raw rows did not change since the last publication are carried over from it, the
    others built (invoicing_warehouse/runs/month_end_inputs.py); `carried` says how many were. Returns None when
    written, else why not (refused: the table is then dropped, so that no trend of an earlier publication outlives the
    figures it was built from)."""
    return write_table_carried(connection, as_of, held, checks)[0]


def write_table_carried(
    connection: duckdb.DuckDBPyConnection, as_of: date, held: Mapping[str, str], checks: Checks
) -> tuple[str | None, int]:
    """`write_table`, with the number of month-ends carried over from the last publication."""
    warehouse = connection.execute("select current_database()").fetchall()[0][0]
    ends = month_ends(as_of)
    under = month_end_inputs.context(needed_models())
    found = month_end_inputs.digests(connection, ends)
    kept = month_end_inputs.stored(connection, warehouse, under) if _table_present(connection, warehouse) else {}
    if not month_end_inputs.reviewed(needed_models()):
        kept = {}  # the models changed since their reach rules were read: every month-end is built
    carried = [end for end in ends if end in kept and kept[end] == found[end]]
    built = [end for end in ends if end not in carried]
    try:
        _collect(connection, built, held, checks)
        if carried:  # still in the in-memory catalog: copied there before the warehouse's table is replaced
            connection.execute(f"create table {_CARRIED} as select {', '.join(COLUMNS)} "
                               f'from "{warehouse}".{TABLE} where month_end in (select unnest(?::date[]))',
                               [carried])
        sources = ([_CARRIED] if carried else []) + ([_ROWS] if built else [])
        rows = " union all ".join(f"select {', '.join(COLUMNS)} from {source}" for source in sources)
        connection.execute("begin transaction")
        connection.execute(f'drop table if exists "{warehouse}".{TABLE}')
        connection.execute(
            f"""create table "{warehouse}".{TABLE} as
                select {", ".join(COLUMNS)}, cast(? as date) as report_date from ({rows})
                order by month_end, portal_id""",
            [as_of],
        )
        month_end_inputs.write(connection, warehouse, under, found)
        connection.execute("commit")
    except TrendRefused as refused:
        _drop(connection, warehouse)
        return str(refused), 0
    except BaseException:
        _drop(connection, warehouse)
        raise
    finally:
        leave(connection, warehouse)
    return None, len(carried)


_CARRIED = "main.month_end_carried"  # in the in-memory catalog


def _table_present(connection: duckdb.DuckDBPyConnection, warehouse: str) -> bool:
    schema, name = TABLE.split(".")
    return bool(connection.execute(
        "select count(*) from information_schema.tables where table_catalog = ? and table_schema = ? "
        "and table_name = ?", [warehouse, schema, name]).fetchall()[0][0])


def _drop(connection: duckdb.DuckDBPyConnection, warehouse: str) -> None:
    """No trend and nothing to carry over from (a refused or failed build)."""
    if connection.execute("select count(*) from duckdb_databases() where database_name = ?", [warehouse]
                          ).fetchall()[0][0] == 0:
        return
    try:
        connection.execute("rollback")
    except duckdb.Error:
        pass  # no transaction was open
    connection.execute(f'drop table if exists "{warehouse}".{TABLE}')
    month_end_inputs.forget(connection, warehouse)


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
