"""Asset checks on the warehouse: bad raw data stops the models; marts are checked after building.

Blocking checks (severity ERROR) run right after the asset they check, in the same run; when one
fails, Dagster skips every asset downstream of it, so the marts keep their last good state rather
than being rebuilt from duplicated or dangling raw rows.
"""

from collections.abc import Iterable, Iterator, Sequence

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetKey,
    MetadataValue,
    asset_check,
    multi_asset_check,
)

from assets.keys import RAW_DATASET, RAW_TABLES, raw_asset_key, relation_of
from assets.resources import WarehouseResource
from warehouse_engine.names import PORTAL_COLUMN

SAMPLE_SIZE = 5


def relation_exists(connection, relation: str) -> bool:
    """Whether `schema.table` exists in the warehouse."""
    schema, table = relation.split(".", 1)
    return bool(
        connection.execute(
            "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
            [schema, table],
        ).fetchone()[0]
    )


def duplicate_keys(connection, relation: str, columns: Sequence[str]) -> tuple[int, list[str]]:
    """(number of key values held by more than one row or null, a sample of them)."""
    quoted = [f'"{column}"' for column in columns]
    any_null = " or ".join(f"{column} is null" for column in quoted)
    schema, table = relation.split(".", 1)
    rows = connection.execute(
        f'select {", ".join(quoted)}, count(*) from "{schema}"."{table}" group by all '
        f"having count(*) > 1 or bool_or({any_null}) order by all"
    ).fetchall()
    return len(rows), [", ".join(str(value) for value in row[:-1]) for row in rows[:SAMPLE_SIZE]]


# ---------------------------------------------------------------- raw: ids unique (blocking)


def _ids_unique_check(table: str) -> AssetChecksDefinition:
    relation = f"{RAW_DATASET}.{table}"

    # One check (one step) per table: a duplicate in one table holds back only what reads that table.
    @asset_check(
        asset=raw_asset_key(table),
        name="ids_unique",
        blocking=True,
        description="Every (portal_id, id) appears once and neither is null: records are merged per portal on "
        "id, never duplicated.",
    )
    def _check(warehouse: WarehouseResource) -> AssetCheckResult:
        with warehouse.connect(read_only=True) as connection:
            if not relation_exists(connection, relation):
                # dlt creates a table with its first row; an endpoint with no records has none yet.
                return AssetCheckResult(passed=True, metadata={"note": "table not created yet"})
            duplicates, sample = duplicate_keys(connection, relation, [PORTAL_COLUMN, "id"])
        return AssetCheckResult(
            passed=duplicates == 0,
            severity=AssetCheckSeverity.ERROR,
            description=f"{duplicates} id(s) held by several rows (or null) in {relation}"
            if duplicates
            else None,
            metadata={"duplicate_ids": MetadataValue.int(duplicates), "sample": MetadataValue.json(sample)},
        )

    return _check


raw_ids_unique: list[AssetChecksDefinition] = [_ids_unique_check(table) for table in RAW_TABLES]


# ---------------------------------------------------------------- raw: references resolve (blocking)


def dangling_references(connection, child: str, column: str, parent: str) -> tuple[int, list[str]]:
    """Rows of raw `child` whose `column` is null or names no `id` of raw `parent` in the same portal:
    (count, sample)."""
    rows = connection.execute(
        f'select c.id, c."{column}" from {RAW_DATASET}."{child}" c '
        f'left join {RAW_DATASET}."{parent}" p on p.{PORTAL_COLUMN} = c.{PORTAL_COLUMN} and p.id = c."{column}" '
        "where p.id is null order by c.id"
    ).fetchall()
    return len(rows), [f"{child_id} -> {ref}" for child_id, ref in rows[:SAMPLE_SIZE]]


def _reference_check(
    child: str, column: str, parent: str, name: str, description: str
) -> AssetChecksDefinition:
    @asset_check(
        asset=raw_asset_key(child),
        name=name,
        additional_deps=[raw_asset_key(parent)],
        blocking=True,
        description=description,
    )
    def _check(warehouse: WarehouseResource) -> AssetCheckResult:
        with warehouse.connect(read_only=True) as connection:
            missing = [r for r in (child, parent) if not relation_exists(connection, f"{RAW_DATASET}.{r}")]
            if child in missing:
                return AssetCheckResult(passed=True, metadata={"note": f"{child} not created yet"})
            if parent in missing:
                return AssetCheckResult(passed=False, description=f"{RAW_DATASET}.{parent} does not exist")
            dangling, sample = dangling_references(connection, child, column, parent)
        return AssetCheckResult(
            passed=dangling == 0,
            severity=AssetCheckSeverity.ERROR,
            description=f"{dangling} {child} row(s) whose {column} is not in {parent}" if dangling else None,
            metadata={"dangling_rows": MetadataValue.int(dangling), "sample": MetadataValue.json(sample)},
        )

    return _check


documents_customers_exist = _reference_check(
    "documents",
    "customer_id",
    "customers",
    "customers_exist",
    "Every document's customer_id is a loaded customer.",
)
usages_invoices_exist = _reference_check(
    "transaction_usages",
    "invoice_id",
    "documents",
    "invoices_exist",
    "Every transaction usage's invoice_id is a loaded document.",
)


# ---------------------------------------------------------------- marts: keys unique

# The grain of each mart (read from its SQL): always within one portal, whose ids may collide with
# another's. A mart not listed here is keyed by `portal_id` and its first other column named `*_id`: the
# house style names the grain's key that way.
MART_KEY_COLUMNS: dict[str, tuple[str, ...]] = {
    "marts.receivables": (PORTAL_COLUMN, "invoice_id"),
    "marts.receivables_by_customer": (PORTAL_COLUMN, "customer_id"),
    "marts.overdue_customers": (PORTAL_COLUMN, "customer_id"),
    "marts.supplier_payables": (PORTAL_COLUMN, "supplier_document_id"),
    "marts.payables_by_supplier": (PORTAL_COLUMN, "supplier_id"),
    "marts.payables_schedule": (PORTAL_COLUMN, "week_start"),
    "marts.dso": (PORTAL_COLUMN,),
    "marts.cash_outlook": (PORTAL_COLUMN, "period_index"),
}


def mart_key_columns(connection, relation: str) -> tuple[str, ...]:
    """The columns that identify a row of the mart `relation`."""
    if relation in MART_KEY_COLUMNS:
        return MART_KEY_COLUMNS[relation]
    schema, table = relation.split(".", 1)
    first = connection.execute(
        "select column_name from information_schema.columns where table_schema = ? and table_name = ? "
        "and ends_with(column_name, '_id') and column_name <> ? order by ordinal_position limit 1",
        [schema, table, PORTAL_COLUMN],
    ).fetchone()
    if first is None:
        raise ValueError(f"{relation}: no key declared in MART_KEY_COLUMNS and no *_id column")
    return (PORTAL_COLUMN, first[0])


def build_mart_key_checks(mart_keys: Iterable[AssetKey]) -> list[AssetChecksDefinition]:
    """One `keys_unique` check per mart (a multi-check: one step for all of them)."""
    mart_keys = sorted(mart_keys, key=lambda k: k.to_user_string())
    if not mart_keys:
        return []

    @multi_asset_check(
        specs=[
            AssetCheckSpec(
                "keys_unique", asset=key, blocking=True, description="One row per key of the mart's grain."
            )
            for key in mart_keys
        ],
        can_subset=True,
        name="marts_keys_unique",
    )
    def marts_keys_unique(
        context: AssetCheckExecutionContext, warehouse: WarehouseResource
    ) -> Iterator[AssetCheckResult]:
        """Checks that each selected mart has one row per key."""
        with warehouse.connect(read_only=True) as connection:
            for check_key in sorted(context.selected_asset_check_keys, key=str):
                relation = relation_of(check_key.asset_key)
                columns = mart_key_columns(connection, relation)
                duplicates, sample = duplicate_keys(connection, relation, columns)
                yield AssetCheckResult(
                    asset_key=check_key.asset_key,
                    check_name="keys_unique",
                    passed=duplicates == 0,
                    severity=AssetCheckSeverity.ERROR,
                    metadata={
                        "key_columns": MetadataValue.json(list(columns)),
                        "duplicate_keys": MetadataValue.int(duplicates),
                        "sample": MetadataValue.json(sample),
                    },
                )

    return [marts_keys_unique]
