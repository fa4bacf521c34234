"""The warehouse's data checks, without Dagster: what the gate (invoicing_warehouse/runs/gate.py) runs before every
publication, what the Dagster asset checks of `assets/` wrap, and what the dashboard re-runs on the readers' copy.

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

from invoicing_warehouse.engine.names import PORTAL_COLUMN, RAW_DATASET
from invoicing_warehouse.engine.sql_names import quoted, quoted_relation, relation_columns
from invoicing_warehouse.engine.sql_runner import discover_models
from pipelines.invoicing.settings import REFERENCES, Reference

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
    """Whether `schema.table` (a table or a view) exists in the connection's current catalog (every relation
    has a column)."""
    return bool(relation_columns(connection, relation))


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
    """(number of key values held by more than one row or null, a sample of them). Every name is quoted (a
    model's front matter names the columns: invoicing_warehouse/runs/model_checks.py)."""
    quoted_columns = [quoted(column) for column in columns]
    any_null = " or ".join(f"{column} is null" for column in quoted_columns)
    rows = connection.execute(
        f'select {", ".join(quoted_columns)}, count(*) from {quoted_relation(relation)} group by all '
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

# What a dangling row of each child table weighs: the amount it carries into the figures.
REFERENCE_AMOUNTS = {"documents": "amount_vat_net", "transaction_usages": "amount"}
REFERENCE_CHECK_NAMES = {"customers": "customers_exist", "documents": "invoices_exist"}


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


def dangling_amount(connection: duckdb.DuckDBPyConnection, child: str, column: str, parent: str,
                    amount: str) -> float:
    """The sum of `amount` over the live rows of raw `child` whose reference dangles (as dangling_references)."""
    (total,) = connection.execute(
        f'select coalesce(sum(c."{amount}"), 0) from {RAW_DATASET}."{child}" c '
        f'left join {RAW_DATASET}."{parent}" p on p.{PORTAL_COLUMN} = c.{PORTAL_COLUMN} and p.id = c."{column}" '
        "where p.id is null and c._deleted_at is null"
    ).fetchone() or (0,)
    return float(total)


def references_resolve(reference: Reference) -> WarehouseCheck:
    """Every `column` of raw `child` names a row of raw `parent`. A flag, not a hold: the contract does not
    promise that a list shows every parent its children name (a record deferred by the settle lag, a customer
    hidden after deletion), so the sync reads such parents by id first (pipelines/invoicing/load/parents.py);
    a row still dangling is published, named with its amount (docs/contract.md, "Blocking checks")."""
    child, column, parent = reference.child, reference.column, reference.parent
    amount = REFERENCE_AMOUNTS[child]

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        if not relation_exists(connection, f"{RAW_DATASET}.{parent}"):
            return False, f"{RAW_DATASET}.{parent} does not exist", {}
        dangling, sample = dangling_references(connection, child, column, parent)
        total = dangling_amount(connection, child, column, parent, amount) if dangling else 0.0
        return (dangling == 0,
                f"{dangling} {child} row(s) whose {column} is not in {parent} ({amount} {total:.2f} in all; "
                f"{', '.join(sample)}): counted, without their {parent[:-1]}" if dangling else None,
                {"dangling_rows": dangling, "amount": round(total, 2), "sample": sample})

    return WarehouseCheck(REFERENCE_CHECK_NAMES[parent], f"{RAW_DATASET}.{child}",
                          f"Every {child} row's {column} is a loaded {parent[:-1]} (a flag: read by id in the "
                          "run; one still dangling is counted and named).", evaluate, severity=WARN,
                          protects=marts_reading([child]), after=(f"{RAW_DATASET}.{parent}",))


def deleted_customers_owed() -> WarehouseCheck:
    """Open invoices of customers deleted upstream (soft-deleted, hidden, or gone): still owed and counted in
    the receivables under "deleted customer <id>"; a flag naming the invoices and their open amount."""
    relation = "marts.receivables"
    customers = "staging.stg_invoicing__customers"

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        rows = connection.execute(
            f"select r.invoice_id, r.customer_id, r.open_amount from {relation} r join {customers} c "
            "on c.portal_id = r.portal_id and c.customer_id = r.customer_id where c.is_deleted "
            "order by r.customer_id, r.invoice_id").fetchall()
        total = float(sum(row[2] for row in rows))
        sample = [f"{invoice} ({customer}: {amount})" for invoice, customer, amount in rows[:SAMPLE_SIZE]]
        customers_count = len({row[1] for row in rows})
        return (not rows,
                f"{len(rows)} open invoice(s) of {customers_count} deleted customer(s), {total:.2f} owed in all "
                f"({', '.join(sample)}): counted in the receivables" if rows else None,
                {"invoices": len(rows), "customers": customers_count, "open_amount": round(total, 2),
                 "sample": sample})

    return WarehouseCheck("deleted_customers_owed", relation,
                          "Open invoices of a customer deleted upstream stay owed and counted (a flag naming them).",
                          evaluate, severity=WARN, protects=marts_built_on([relation]), reads=(customers,))


REFERENCE_CHECKS = tuple(references_resolve(reference) for reference in REFERENCES)
DELETED_PARENT_CHECKS = (deleted_customers_owed(),)

# The marts' grains and their other declared checks: invoicing_warehouse/runs/model_checks.py, from each model's front
# matter.
