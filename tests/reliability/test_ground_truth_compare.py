"""The field-by-field comparison the reliability suite relies on (helper B's
harness/warehouse_truth.py) must catch every kind of
wrong warehouse, or a chaos run reporting "0 mismatches" proves nothing.

Fixture: the sandbox's own records loaded into DuckDB by a plain dlt pipeline (merge on id, dlt's
default flattening, decimals, contacts as JSON text as the data contract says), independent of the
project's extraction. It must compare clean; then each corruption (a changed amount, a changed
timestamp, a lost row, a duplicated row, a changed child row, an orphan child row, a live row for a
record deleted upstream, a soft-deleted customer without `_deleted_at`) must be reported.
"""

from __future__ import annotations

import json
from decimal import Decimal

import dlt
import duckdb
import pytest

from harness.warehouse_truth import RAW_TABLES, compare_raw_tables, flatten


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, module_sandbox_factory):
    """(snapshot function, warehouse path) of a small sandbox loaded by plain dlt."""
    root = tmp_path_factory.mktemp("truth")
    sb = module_sandbox_factory(seed=9, scale=40, rate_limit_per_s=0, real_date=True)
    truth = {table: sb.portal.snapshot(table) for table in RAW_TABLES}
    warehouse = root / "w.duckdb"
    pipeline = dlt.pipeline(
        "truth_fixture",
        destination=dlt.destinations.duckdb(str(warehouse)),
        dataset_name="invoicing_raw",
        pipelines_dir=str(root / "pipelines"),
    )
    resources = [
        # Decimals, so that dlt does not let the first number seen decide a column's type.
        dlt.resource(
            [_as_loaded(record) for record in records],
            name=table,
            write_disposition="merge",
            primary_key="id",
            columns={"_deleted_at": {"data_type": "timestamp"}},
        )
        for table, records in truth.items()
        if records
    ]
    pipeline.run(resources)
    # dlt creates no column for a field that is null in every record; the project's source declares
    # every column of the data contract, and the comparison expects them: add them (all null).
    with duckdb.connect(str(warehouse)) as connection:
        for table, records in truth.items():
            expected = {column for record in records for column in flatten(record)}
            existing = {
                name
                for (name,) in connection.execute(
                    "select column_name from information_schema.columns where table_schema = 'invoicing_raw' "
                    "and table_name = ?",
                    [table],
                ).fetchall()
            }
            for column in sorted(expected - existing) if existing else ():
                connection.execute(f'alter table invoicing_raw."{table}" add column "{column}" varchar')
    return truth, warehouse


def _as_loaded(record: dict) -> dict:
    row = _decimals({**record, "_deleted_at": record.get("deletedAt") if record.get("deleted") else None})
    if "contacts" in row:
        # a customer without contacts stays NULL, as the sync loads it (not the JSON text 'null')
        row["contacts"] = None if record["contacts"] is None else json.dumps(record["contacts"])
    return row


class _Truth:
    def __init__(self, records: dict[str, list[dict]]) -> None:
        self.records = records

    def snapshot(self, table: str) -> list[dict]:
        return self.records[table]


def _decimals(value):
    if isinstance(value, dict):
        return {key: _decimals(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_decimals(inner) for inner in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Decimal(str(value))
    return value


def _compare(truth, warehouse):
    return compare_raw_tables(warehouse, _Truth(truth))


def _mutate(warehouse, sql: str) -> None:
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(sql)


def test_an_exact_load_compares_clean(loaded):
    truth, warehouse = loaded
    result = _compare(truth, warehouse)
    assert result.mismatches == [], result.summary()
    assert result.records_compared > sum(len(records) for records in truth.values())  # child rows too
    assert result.records_by_table["documents__lines"] > 0


@pytest.mark.parametrize(
    ("corruption", "expected"),
    [
        (
            "update invoicing_raw.documents set amount = amount + 0.01 where id = (select min(id) from "
            "invoicing_raw.documents)",
            "amount:",
        ),
        (
            "update invoicing_raw.items set last_update = last_update + interval 1 second "
            "where id = (select min(id) "
            "from invoicing_raw.items)",
            "last_update:",
        ),
        (
            "delete from invoicing_raw.transactions "
            "where id = (select min(id) from invoicing_raw.transactions)",
            "transactions: 1 missing",
        ),
        (
            "insert into invoicing_raw.suppliers select * from invoicing_raw.suppliers limit 1",
            "suppliers: duplicate ids",
        ),
        (
            "update invoicing_raw.documents__lines set quantity = quantity + 1 where _dlt_list_idx = 0 and "
            "_dlt_parent_id = (select min(_dlt_parent_id) from invoicing_raw.documents__lines)",
            ".quantity:",
        ),
        (
            "insert into invoicing_raw.documents__lines select * replace ('orphan' as _dlt_parent_id, "
            "'orphan-row' as _dlt_id) from invoicing_raw.documents__lines limit 1",
            "documents__lines: 1 rows without a parent row",
        ),
    ],
    ids=["amount", "timestamp", "lost row", "duplicate", "child value", "orphan child"],
)
def test_each_corruption_is_found(loaded, tmp_path, corruption, expected):
    truth, original = loaded
    warehouse = tmp_path / "w.duckdb"
    warehouse.write_bytes(original.read_bytes())
    _mutate(warehouse, corruption)
    result = _compare(truth, warehouse)
    assert len(result.mismatches) == 1 and expected in result.mismatches[0], result.summary()


def test_deletions_upstream_must_be_marked(loaded):
    truth, warehouse = loaded
    vanished = truth["items"][0]
    shrunk = {**truth, "items": truth["items"][1:]}
    result = _compare(shrunk, warehouse)
    assert len(result.mismatches) == 1 and "items: 0 missing, 1 extra" in result.mismatches[0]
    assert vanished["id"] in result.mismatches[0]
    customer = next(c for c in truth["customers"] if not c["deleted"])
    others = [c for c in truth["customers"] if c is not customer]
    deleted = {**customer, "deleted": True, "deletedAt": "2026-01-01T00:00:00Z"}
    found = _compare({**truth, "customers": [deleted, *others]}, warehouse).mismatches
    assert any(customer["id"] in line and "_deleted_at" in line for line in found), found
