"""The reliability suite's view of "the warehouse equals the sandbox": helper B's field-by-field
comparison (`tests/pipelines/warehouse_truth.py`, reused as is, one comparison for the project) plus
the figures the suite prints (records and fields compared) and one check it lacks: child rows whose
parent row does not exist (a load that kept stale lines of a replaced document would pass a
parent-driven comparison).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from tests.pipelines.warehouse_truth import CHILDREN, COMPARED, flatten, mismatches, snake_to_camel

RAW_DATASET = "invoicing_raw"
RAW_TABLES = COMPARED  # webhooks need the `write` scope, which the read-only sync never asks for
UNLIMITED = 10**9


@dataclass
class Comparison:
    """What a comparison covered and every difference it found (one text line each)."""

    records_compared: int = 0
    fields_compared: int = 0
    records_by_table: dict[str, int] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)

    def merge(self, other: Comparison) -> None:
        """Adds another comparison's counts and mismatches to this one."""
        self.records_compared += other.records_compared
        self.fields_compared += other.fields_compared
        for table, count in other.records_by_table.items():
            self.records_by_table[table] = self.records_by_table.get(table, 0) + count
        self.mismatches.extend(other.mismatches)

    def summary(self, limit: int = 15) -> str:
        """A short text for assertion messages."""
        lines = [f"{len(self.mismatches)} mismatches over {self.records_compared} records"]
        lines += [f"  {m}" for m in self.mismatches[:limit]]
        return "\n".join(lines)


def compare_raw_tables(warehouse_path: Path, portal, tables: tuple[str, ...] = RAW_TABLES) -> Comparison:
    """Every raw table in `tables` against `portal.snapshot(table)`, field by field (opens the
    warehouse read-only: call it when no connection of this process writes the file)."""
    result = Comparison(mismatches=mismatches(str(warehouse_path), portal, tables=tables, limit=UNLIMITED))
    for table in tables:
        records = portal.snapshot(table)
        result.records_by_table[table] = len(records)
        result.records_compared += len(records)
        for record in records:
            result.fields_compared += len(flatten(record))
            for child in CHILDREN.get(table, ()):
                items = record.get(snake_to_camel(child)) or []
                result.records_compared += len(items)
                result.records_by_table[f"{table}__{child}"] = result.records_by_table.get(
                    f"{table}__{child}", 0
                ) + len(items)
                result.fields_compared += sum(len(flatten(i)) if isinstance(i, dict) else 1 for i in items)
    result.mismatches += orphan_child_rows(warehouse_path)
    return result


def orphan_child_rows(warehouse_path: Path) -> list[str]:
    """Child tables' rows whose `_dlt_parent_id` matches no `_dlt_id` of the parent table."""
    found = []
    with duckdb.connect(str(warehouse_path), read_only=True) as connection:
        tables = {
            name
            for (name,) in connection.execute(
                "select table_name from information_schema.tables where table_schema = ?", [RAW_DATASET]
            ).fetchall()
        }
        for child in sorted(t for t in tables if "__" in t):
            parent = child.rsplit("__", 1)[0]
            if parent not in tables:
                continue
            count = connection.execute(
                f'select count(*) from {RAW_DATASET}."{child}" c where not exists '
                f'(select 1 from {RAW_DATASET}."{parent}" p where p._dlt_id = c._dlt_parent_id)'
            ).fetchone()[0]
            if count:
                found.append(f"{child}: {count} rows without a parent row in {parent}")
    return found
