"""Writers racing on one DuckLake: a commit that lost to another writer's is recognised as such and run
again, a bounded number of times; any other error is raised at once (invoicing_warehouse/engine/lake_conflicts.py)."""

from __future__ import annotations

import duckdb
import pytest

from invoicing_warehouse.engine import lake_conflicts
from invoicing_warehouse.engine.connection import connect
from invoicing_warehouse.engine.lake_conflicts import CONFLICT_RETRIES, is_commit_conflict, retry_on_conflict


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(lake_conflicts, "CONFLICT_BACKOFF_S", 0.0)


def test_a_commit_that_lost_a_race_is_retried_and_then_lands(lake):
    with connect(lake) as setup:
        setup.execute("create table main.balance as select range as id, 0 as amount from range(10)")
    first, second = connect(lake), connect(lake)
    calls: list[BaseException | None] = []

    def update_row_3() -> None:
        second.execute("begin transaction")
        second.execute("update main.balance set amount = amount + 5 where id = 3")
        if not calls:  # the first time, another writer commits a change of the same row meanwhile
            first.execute("begin transaction")
            first.execute("update main.balance set amount = amount + 100 where id = 3")
            first.execute("commit")
        try:
            second.execute("commit")
        except duckdb.Error as error:
            calls.append(error)
            second.execute("rollback")
            raise
        calls.append(None)

    retry_on_conflict(update_row_3)
    assert len(calls) == 2 and isinstance(calls[0], duckdb.TransactionException), calls
    assert "conflict" in str(calls[0]).lower() and is_commit_conflict(calls[0])
    with connect(lake, read_only=True) as reader:  # both writers' changes, none lost
        assert reader.execute("select amount from main.balance where id = 3").fetchone() == (105,)
    first.close()
    second.close()


def test_other_errors_are_raised_at_once_and_conflicts_only_so_often():
    calls = []

    def missing_table() -> None:
        calls.append(1)
        raise duckdb.CatalogException("Catalog Error: Table with name nowhere does not exist!")

    with pytest.raises(duckdb.CatalogException):
        retry_on_conflict(missing_table)
    assert len(calls) == 1

    def always_conflicting() -> None:
        calls.append(1)
        raise duckdb.TransactionException("Failed to commit DuckLake transaction. Transaction conflict")

    calls.clear()
    with pytest.raises(duckdb.TransactionException):
        retry_on_conflict(always_conflicting)
    assert len(calls) == CONFLICT_RETRIES + 1


def test_two_runs_publishing_a_new_lake_at_once_both_publish(lake, monkeypatch):
    # Both runs find no marker table and create it; the one that commits second loses that race. Here
    # the rival commits its creation and its marker just before this run's first commit, every time.
    from invoicing_warehouse.engine import readers

    rival = connect(lake)
    attempts: list[int] = []

    class RivalCommitsFirst:
        """A real lake connection whose first commit is preceded by a rival run's whole publication."""

        def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
            self.connection = connection

        def execute(self, sql: str, *args):
            if sql == "commit":
                attempts.append(1)
                if len(attempts) == 1:
                    rival.execute("begin transaction")
                    rival.execute(f"create table {readers.MARKER_TABLE} "
                                  "(published_at timestamp with time zone, note varchar)")
                    rival.execute(f"insert into {readers.MARKER_TABLE} values (now(), 'rival')")
                    rival.execute("commit")
            return self.connection.execute(sql, *args)

        def close(self) -> None:
            self.connection.close()

    monkeypatch.setattr(readers, "connect", lambda target, **options: RivalCommitsFirst(connect(target, **options)))
    opened = readers.publish(lake, "sync portal acme")
    rival.close()
    assert len(attempts) == 2  # the first commit lost, the second landed
    with connect(lake, read_only=True) as reader:
        notes = reader.execute(f"select note from {readers.MARKER_TABLE} order by published_at").fetchall()
        assert notes == [("rival",), ("sync portal acme",)]
        snapshot = readers.published_snapshot(reader)
    assert opened.endswith(f"snapshot {snapshot}")
