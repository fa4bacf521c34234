"""The warehouse's data checks, without Dagster: what the gate (runs/gate.py) runs before every publication,
what the Dagster asset checks of `assets/` wrap, and what the dashboard re-runs on the readers' copy.

A check reads the warehouse only (SQL on one connection) and answers a `CheckResult`: passed or not, a
description naming the field and the figures a failure makes wrong (`protects`), and small metadata (counts,
samples). A `blocking` check guards figures: when it fails, those figures are not published.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import duckdb

from warehouse_engine.names import PORTAL_COLUMN, RAW_DATASET
from warehouse_engine.sql_runner import discover_models

SAMPLE_SIZE = 5
ERROR = "ERROR"
WARN = "WARN"

RECEIVABLES = ("marts.receivables", "marts.receivables_by_customer", "marts.overdue_customers")
PAYABLES = ("marts.supplier_payables", "marts.payables_by_supplier", "marts.payables_schedule")


@dataclass(frozen=True)
class CheckResult:
    """One check's answer on one relation."""

    name: str
    relation: str  # what was checked: `invoicing_raw.documents`, `marts.receivables`, ...
    passed: bool
    blocking: bool
    severity: str = ERROR  # ERROR or WARN
    protects: tuple[str, ...] = ()  # the figures (marts) a failure makes wrong
    description: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def blocks(self) -> bool:
        """Whether this answer holds figures back: a failed blocking check of severity ERROR."""
        return self.blocking and not self.passed and self.severity == ERROR

    def line(self) -> str:
        """One line for a terminal, a log or a banner: the check, what it found, the figures it protects."""
        figures = ", ".join(self.protects) or "every figure"
        return f"{self.name} on {self.relation}: {self.description or 'failed'} (protects {figures})"


@dataclass(frozen=True)
class WarehouseCheck:
    """A check of `relation`: `evaluate(connection)` answers (passed, description, metadata)."""

    name: str
    relation: str
    description: str
    evaluate: Callable[[duckdb.DuckDBPyConnection], tuple[bool, str | None, dict[str, Any]]]
    blocking: bool = False
    severity: str = ERROR
    protects: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()  # other relations the check needs (passed while one is not built yet)
    after: tuple[str, ...] = ()  # other relations it reads that must exist (it fails without them)

    def run(self, connection: duckdb.DuckDBPyConnection) -> CheckResult:
        """The check's answer; passed (with a note) when its relation or an input is not built yet."""
        missing = [r for r in (self.relation, *self.reads) if not relation_exists(connection, r)]
        if missing:
            return self._result(True, None, {"note": f"{', '.join(missing)} not built yet"})
        passed, description, metadata = self.evaluate(connection)
        return self._result(passed, description, metadata)

    def _result(self, passed: bool, description: str | None, metadata: dict[str, Any]) -> CheckResult:
        return CheckResult(self.name, self.relation, passed, self.blocking, self.severity, self.protects,
                           description, metadata)


def relation_exists(connection: duckdb.DuckDBPyConnection, relation: str) -> bool:
    """Whether `schema.table` (a table or a view) exists in the connection's current catalog."""
    schema, table = relation.split(".", 1)
    row = connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ? "
        "and table_catalog = current_database()",
        [schema, table],
    ).fetchone()
    return bool(row and row[0])


@cache
def _model_inputs() -> tuple[tuple[str, frozenset[str]], ...]:
    # the product's models and what each reads, in dependency order (read once: checks are declared at import)
    return tuple((model.key, model.depends_on) for model in discover_models())


def marts_reading(raw_tables: Sequence[str]) -> tuple[str, ...]:
    """The marts built on any of `raw_tables`, directly or through other models."""
    return marts_built_on([f"{RAW_DATASET}.{table}" for table in raw_tables])


def marts_built_on(relations: Sequence[str]) -> tuple[str, ...]:
    """The marts among `relations` and those built on any of them, directly or through other models."""
    stale = set(relations)
    for key, inputs in _model_inputs():
        if inputs & stale:
            stale.add(key)
    return tuple(sorted(relation for relation in stale if relation.startswith("marts.")))


# ---------------------------------------------------------------- raw: ids unique


def duplicate_keys(connection: duckdb.DuckDBPyConnection, relation: str,
                   columns: Sequence[str]) -> tuple[int, list[str]]:
    """(number of key values held by more than one row or null, a sample of them)."""
    quoted = [f'"{column}"' for column in columns]
    any_null = " or ".join(f"{column} is null" for column in quoted)
    schema, table = relation.split(".", 1)
    rows = connection.execute(
        f'select {", ".join(quoted)}, count(*) from "{schema}"."{table}" group by all '
        f"having count(*) > 1 or bool_or({any_null}) order by all"
    ).fetchall()
    return len(rows), [", ".join(str(value) for value in row[:-1]) for row in rows[:SAMPLE_SIZE]]


def ids_unique(table: str) -> WarehouseCheck:
    """Every (portal_id, id) of raw `table` appears once and neither is null: records are merged, never
    duplicated. Blocking: a duplicate counts twice in every mart built on the table."""
    relation = f"{RAW_DATASET}.{table}"

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        duplicates, sample = duplicate_keys(connection, relation, [PORTAL_COLUMN, "id"])
        return (duplicates == 0,
                f"{duplicates} id(s) held by several rows (or null) in {relation}" if duplicates else None,
                {"duplicate_ids": duplicates, "sample": sample})

    return WarehouseCheck("ids_unique", relation,
                          "Every (portal_id, id) appears once and neither is null: records are merged per portal "
                          "on id, never duplicated.", evaluate, blocking=True, protects=marts_reading([table]))


# ---------------------------------------------------------------- raw: references resolve


def dangling_references(connection: duckdb.DuckDBPyConnection, child: str, column: str,
                        parent: str) -> tuple[int, list[str]]:
    """Rows of raw `child` whose `column` is null or names no `id` of raw `parent` in the same portal:
    (count, sample)."""
    rows = connection.execute(
        f'select c.id, c."{column}" from {RAW_DATASET}."{child}" c '
        f'left join {RAW_DATASET}."{parent}" p on p.{PORTAL_COLUMN} = c.{PORTAL_COLUMN} and p.id = c."{column}" '
        "where p.id is null order by c.id"
    ).fetchall()
    return len(rows), [f"{child_id} -> {ref}" for child_id, ref in rows[:SAMPLE_SIZE]]


def references_resolve(child: str, column: str, parent: str, name: str, description: str) -> WarehouseCheck:
    """Every `column` of raw `child` names a row of raw `parent` (blocking: a dangling row is a figure
    without its customer or invoice)."""

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        if not relation_exists(connection, f"{RAW_DATASET}.{parent}"):
            return False, f"{RAW_DATASET}.{parent} does not exist", {}
        dangling, sample = dangling_references(connection, child, column, parent)
        return (dangling == 0,
                f"{dangling} {child} row(s) whose {column} is not in {parent}" if dangling else None,
                {"dangling_rows": dangling, "sample": sample})

    return WarehouseCheck(name, f"{RAW_DATASET}.{child}", description, evaluate, blocking=True,
                          protects=marts_reading([child]), after=(f"{RAW_DATASET}.{parent}",))


REFERENCE_CHECKS = (
    references_resolve("documents", "customer_id", "customers", "customers_exist",
                       "Every document's customer_id is a loaded customer."),
    references_resolve("transaction_usages", "invoice_id", "documents", "invoices_exist",
                       "Every transaction usage's invoice_id is a loaded document."),
)

# The marts' grains and their other declared checks: runs/model_checks.py, from each model's front matter.
