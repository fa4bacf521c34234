"""The month-end trends the gate publishes (invoicing_warehouse/runs/month_end_trends.py) against the models built as of
each month-end by the engine's runner on a copy of the raw tables; the copy never carries an older trend; the
dashboard reads the published table for its date and builds them itself for another."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import duckdb
import pytest
from model_fixture import D, load_fixture

from invoicing_warehouse.dashboard.source import Source, Unavailable
from invoicing_warehouse.dashboard.trends import month_end_figures
from invoicing_warehouse.engine.connection import connect
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.readers import connect_reader
from invoicing_warehouse.engine.sql_runner import build_models
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish, record_reads
from invoicing_warehouse.runs.month_end_trends import COLUMNS, TABLE, month_ends


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """The hand-made portal (model_fixture.py) in a warehouse file, built as of D and published with its trend."""
    warehouse = tmp_path_factory.mktemp("trends") / "warehouse.duckdb"
    with duckdb.connect(str(warehouse)) as connection:
        load_fixture(connection)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INVOICING_PUBLISH_TRENDS", "1")
        outcome = build_and_publish(WarehouseTarget.duckdb_file(warehouse), note="test", as_of=D)
    assert outcome.ok and outcome.published and outcome.trend_refused is None
    return warehouse


def _table(path: Path) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return connection.execute(f"select {', '.join(COLUMNS)}, report_date from {TABLE} "
                                  "order by month_end").fetchall()


def test_the_published_trend_is_the_models_built_as_of_each_month_end(published, tmp_path):
    rows = _table(default_snapshot_path(published))
    ends = month_ends(D)
    assert ends[-1] == D and ends[0] == date(2025, 2, 28)
    # the truth: every model built by the runner as of the month-end, on a copy of the raw tables
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(published, copy)
    expected = []
    with duckdb.connect(str(copy)) as connection:
        for end in ends:
            build_models(connection, as_of=end)
            for portal, open_total, overdue, dso in connection.execute(
                    "select portal_id, open_receivables, overdue_receivables, dso_days from marts.dso").fetchall():
                share = None if open_total == 0 else round(overdue / open_total * 100, 1)
                expected.append((portal, end, open_total, overdue, share, dso, D))
    assert rows == expected
    # the fixture's hand-worked figures on D (model_fixture.py): some of it open and overdue, so the trend is
    # not a column of zeros that any build would match
    assert rows[-1][2] > 0 and rows[-1][3] > 0


def test_the_dashboard_reads_the_published_trend_and_builds_another_date_itself(published):
    source = Source(published)
    shown = month_end_figures(source, D)
    assert [tuple(row) for row in shown.itertuples(index=False)] == [row[:-1] for row in _table(published)]
    # another report date: no published table for it, the page builds the month-ends over the readers' copy
    other = month_end_figures(source, date(2026, 1, 15))
    # (a month-end with nothing open and nothing sold in its 90 days has no row: the fixture starts in November)
    assert list(other["month_end"]) == [end for end in month_ends(date(2026, 1, 15)) if end >= date(2025, 11, 30)]
    # December's figures do not depend on the date the page was asked for
    december = next(row for row in _table(published) if row[1] == date(2025, 12, 31))
    assert tuple(other.iloc[-1]) == december[:-1]


def test_a_publication_without_the_trend_drops_the_older_one(published, tmp_path, monkeypatch):
    warehouse = tmp_path / "warehouse.duckdb"
    shutil.copyfile(published, warehouse)
    target = WarehouseTarget.duckdb_file(warehouse)
    monkeypatch.setenv("INVOICING_PUBLISH_TRENDS", "0")
    outcome = build_and_publish(target, note="off", as_of=D)
    assert outcome.published
    with duckdb.connect(str(default_snapshot_path(warehouse)), read_only=True) as connection:
        assert connection.execute("select count(*) from information_schema.tables "
                                  "where table_schema = 'marts' and table_name = 'month_end_trends'").fetchall() == [(0,
                                                                                                                      )]
    # the page then builds them itself: the same figures
    assert [tuple(row) for row in month_end_figures(Source(warehouse), D).itertuples(index=False)] == [
        row[:-1] for row in _table(published)]


def test_a_held_mart_publishes_no_trend_and_the_page_says_why(published, tmp_path, monkeypatch):
    warehouse = tmp_path / "warehouse.duckdb"
    shutil.copyfile(published, warehouse)
    target = WarehouseTarget.duckdb_file(warehouse)
    monkeypatch.setenv("INVOICING_PUBLISH_TRENDS", "1")
    record_reads(target, "default", ["documents: page 3 answered 500 five times"], full_read=False)
    outcome = build_and_publish(target, note="held", as_of=D)
    assert "marts.receivables" in outcome.held and outcome.published
    assert outcome.trend_refused and "marts.receivables rests on a read that may be incomplete" in outcome.trend_refused
    with duckdb.connect(str(default_snapshot_path(warehouse)), read_only=True) as connection:
        assert not connection.execute("select * from information_schema.tables "
                                      "where table_name = 'month_end_trends'").fetchall()
    with pytest.raises(Unavailable, match="page 3 answered 500"):
        month_end_figures(Source(warehouse), D)


def test_a_lake_publishes_its_trend_in_the_snapshot_readers_open(published, lake, monkeypatch):
    with connect(lake) as writer:
        load_fixture(writer)
    monkeypatch.setenv("INVOICING_PUBLISH_TRENDS", "1")
    outcome = build_and_publish(lake, note="lake", as_of=D)
    assert outcome.ok and outcome.trend_refused is None
    with connect_reader(lake) as reader:  # the last published snapshot
        rows = reader.execute(f"select {', '.join(COLUMNS)}, report_date from {TABLE} order by month_end").fetchall()
    assert rows == _table(default_snapshot_path(published))
