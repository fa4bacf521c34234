"""Where the dashboard's figures come from, without ever touching the warehouse itself.

- The published figures: the marts of the readers' copy, read on a connection from
  `invoicing_warehouse.engine.readers.connect_reader`, opened for one page load and closed at once (a reader that
  held the file would not block the writer, who replaces it by rename, but would keep reading stale
  figures).
- Another report date: the same SQL models (`invoicing_warehouse.engine.sql_runner.build_models`) built as of that
  date into an in-memory DuckDB catalog over the readers' copy's raw tables (invoicing_warehouse/runs/as_of.py, which
  `invoicing-warehouse export` shares); the marts are then copied into
  a connection of their own and the reader is closed, so the figures equal `invoicing-warehouse models
  --as-of D` and the file is held only while they are built.

A readers' copy that is missing, locked or without the marts raises `Unavailable`, whose message says what
to run.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb

from invoicing_warehouse.dashboard.portal_scope import PortalScopeError, allowed_portals, restrict
from invoicing_warehouse.engine.connection import WarehouseUnavailable
from invoicing_warehouse.engine.names import DEFAULT_WAREHOUSE_PATH, MARTS_SCHEMA
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.readers import connect_reader, published_snapshot
from invoicing_warehouse.engine.target import WarehouseTarget, target_from_env
from invoicing_warehouse.runs.as_of import AsOfRefused, attached, marts_as_of
from invoicing_warehouse.runs.gate import held_marts
from invoicing_warehouse.runs.gate_state import load as load_gate_state

# The marts no page can do without: a readers' copy built before one of them existed must be rebuilt (a section
# reading another mart the copy lacks says so in place of its figures, cache._load).
REQUIRED_MARTS = (
    "receivables",
    "receivables_by_customer",
    "overdue_customers",
    "supplier_payables",
    "payables_by_supplier",
    "payables_schedule",
    "dso",
    "cash_outlook",
    # the pages' own figures (issue 43 point 5): the tiles, the aging and the eight weeks
    "receivables_summary",
    "receivables_aging",
    "payables_summary",
    "payables_weeks",
)


def warehouse_argument(arguments: list[str]) -> Path:
    """The absolute `--warehouse PATH` among the dashboard script's `arguments` (others ignored)."""
    parser = argparse.ArgumentParser(prog="dashboard")
    parser.add_argument("--warehouse", default=DEFAULT_WAREHOUSE_PATH)
    known, _ = parser.parse_known_args(arguments)
    return Path(known.warehouse).resolve()


class Unavailable(RuntimeError):
    """The readers' copy cannot be read; the message tells the user what to run."""


@dataclass(frozen=True)
class Source:
    """The warehouse the dashboard was started on (`--warehouse`), and the readers' copy it reads."""

    warehouse: Path

    @property
    def target(self) -> WarehouseTarget:
        """The warehouse target (a DuckDB file, or the DuckLake when INVOICING_WAREHOUSE_ENGINE says so)."""
        return target_from_env(self.warehouse)

    @property
    def portals(self) -> frozenset[str] | None:
        """The portals this dashboard may show (`INVOICING_DASHBOARD_PORTALS`; None: every portal); Unavailable
        naming the setting when it is malformed (no figure is shown rather than every portal's)."""
        try:
            return allowed_portals()
        except PortalScopeError as error:
            raise Unavailable(str(error)) from None

    @property
    def snapshot_path(self) -> Path:
        """The readers' copy of a file warehouse (`data/warehouse.read.duckdb`)."""
        return default_snapshot_path(self.warehouse)

    def snapshot_key(self) -> str:
        """Changes whenever a new copy is published (inode, size and mtime of the file): the cache key of
        everything computed from it. On a DuckLake: the last published snapshot's id."""
        target = self.target
        if target.is_lake:
            connection = self.connect()
            try:
                return f"lake:{published_snapshot(connection)}"
            finally:
                connection.close()
        try:
            stat = os.stat(self.snapshot_path)
        except FileNotFoundError:
            raise Unavailable(self._missing_message()) from None
        return f"{stat.st_ino}:{stat.st_size}:{stat.st_mtime_ns}"

    def connect(self, attach: bool = False) -> duckdb.DuckDBPyConnection:
        """A read-only connection on the readers' copy (close it soon); Unavailable with what to do.

        `attach`: the copy of a file warehouse attached read-only to an in-memory database (its catalog made
        current), so that the caller may create tables beside it (a DuckLake reader already is one). Without it,
        the connection sees only the rows of the portals this dashboard may show
        (invoicing_warehouse/dashboard/portal_scope.py); with it (the builds of another report date), every row, and the
        caller limits what it returns.
        """
        portals = self.portals
        target = self.target
        if not target.is_lake and not self.snapshot_path.is_file():
            raise Unavailable(self._missing_message())
        try:
            # limited to some portals, the copy is attached to an in-memory database that can hold their views
            in_memory = attach or portals is not None
            connection = connect_reader(target) if target.is_lake or not in_memory else attached(self.snapshot_path)
        except duckdb.IOException as error:
            raise Unavailable(self._locked_message(error)) from None
        except (duckdb.Error, WarehouseUnavailable, OSError) as error:  # a corrupt file, a lake that is down
            raise Unavailable(f"Cannot open the readers' copy of {target.describe()}: {error}") from None
        # a mart the gate holds since before its first build is missing on purpose: the banner says why
        held = held_marts(load_gate_state(target))
        missing = [mart for mart in missing_marts(connection) if f"marts.{mart}" not in held]
        if missing:
            connection.close()
            raise Unavailable(
                f"The readers' copy {self.snapshot_path} has no {', '.join(f'marts.{m}' for m in missing)}. "
                f"Rebuild the models: `invoicing-warehouse models --warehouse {self.warehouse}`."
            )
        return connection if attach else restrict(connection, portals)

    def build_as_of(self, as_of: date) -> duckdb.DuckDBPyConnection:
        """An in-memory connection holding every mart built as of `as_of` from the readers' copy.

        The build goes through the gate's checks (invoicing_warehouse/runs/gate.py): a failing blocking check, or a mart
        built on a read that may be incomplete, raises Unavailable naming them, and no figure of that date is shown."""
        held = held_marts(load_gate_state(self.target))
        portals = self.portals
        reader = self.connect(attach=True)
        try:
            return restrict(marts_as_of(reader, as_of, held), portals)
        except AsOfRefused as refused:
            raise Unavailable(str(refused)) from None
        except duckdb.Error as error:
            raise Unavailable(f"The models could not be built as of {as_of.isoformat()}: {error}") from None
        finally:
            reader.close()

    def _missing_message(self) -> str:
        if self.warehouse.is_file():
            return (
                f"No readers' copy at {self.snapshot_path}: the warehouse {self.warehouse} was never published. "
                f"Run `invoicing-warehouse models --warehouse {self.warehouse}` (it publishes the copy)."
            )
        return (
            f"No warehouse at {self.warehouse}. Build one: `invoicing-warehouse demo --warehouse {self.warehouse}` "
            f"(a seeded sandbox), or `invoicing-warehouse sync --warehouse {self.warehouse}` then "
            f"`invoicing-warehouse models --warehouse {self.warehouse}`."
        )

    def _locked_message(self, error: Exception) -> str:
        holder = next((line.strip() for line in str(error).splitlines() if "held" in line.lower()), "")
        return (
            f"The readers' copy {self.snapshot_path} is locked by another process that opened it for writing"
            f"{f' ({holder})' if holder else ''}. Readers' copies are for reading only: close that process "
            f"(a DuckDB shell or script), or republish with `invoicing-warehouse models --warehouse "
            f"{self.warehouse}`, then reload this page."
        )


def missing_marts(connection: duckdb.DuckDBPyConnection) -> list[str]:
    """The REQUIRED_MARTS absent from the connection's current catalog."""
    present = {
        row[0]
        for row in connection.execute(
            "select table_name from information_schema.tables where table_schema = ? "
            "and table_catalog = current_database()",
            [MARTS_SCHEMA],
        ).fetchall()
    }
    return [mart for mart in REQUIRED_MARTS if mart not in present]
