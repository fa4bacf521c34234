"""The comparer under the strict contract profile (harness/warehouse_truth.py, harness/served_truth.py):
a warehouse holding exactly what an ideal client of a strict server would hold compares clean, and each
way of being wrong on such a server is reported (an invented value, a deleted customer not flagged, a live
customer lost, a wrong event position, a referenced deleted customer missing).

Fixture: what the strict sandbox serves plus the client's documented additions, loaded by a plain dlt
pipeline (independent of the project's extraction); deleted customers the strict server hides are left out
but one, which is held flagged with an observation time (`_deleted_at` without `deletedAt`).
"""

from __future__ import annotations

import json
from decimal import Decimal

import dlt
import duckdb
import pytest

from harness.served_truth import expected_records
from harness.warehouse_truth import RAW_TABLES, compare_raw_tables, flatten

OBSERVED = "2026-03-16T09:30:00Z"  # a client's observation time of a deletion served without `deletedAt`


def _decimals(value):
    if isinstance(value, dict):
        return {key: _decimals(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_decimals(inner) for inner in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Decimal(str(value))
    return value


@pytest.fixture(scope="module")
def loaded(tmp_path_factory, module_sandbox_factory):
    """(portal, warehouse path, id of the held deleted customer) of a strict sandbox loaded by plain dlt."""
    root = tmp_path_factory.mktemp("strict-truth")
    portal = module_sandbox_factory(seed=9, scale=40, rate_limit_per_s=0, contract="strict", real_date=True).portal
    spare = portal.create("customers", {"name": "Short-lived SARL"})
    portal.delete("customers", spare["id"])  # a second deleted customer: one held, one hidden
    pairs = {table: expected_records(portal, table, "strict") for table in RAW_TABLES}
    deleted = [record["id"] for record, _ in pairs["customers"] if record.get("deleted")]
    assert len(deleted) >= 2, "the seed must have soft-deleted customers"
    held = deleted[0]
    rows = {}
    for table, table_pairs in pairs.items():
        out = []
        for record, expected in table_pairs:
            if record.get("deleted") and record["id"] != held:
                continue  # hidden from lists, never seen
            row = _decimals({**expected, "_deleted_at": OBSERVED if record.get("deleted") else None})
            if "contacts" in row:
                # a customer without contacts stays NULL, as the sync loads it (not the JSON text 'null')
                row["contacts"] = None if expected["contacts"] is None else json.dumps(expected["contacts"])
            out.append(row)
        rows[table] = out
    warehouse = root / "w.duckdb"
    pipeline = dlt.pipeline("strict_truth_fixture", destination=dlt.destinations.duckdb(str(warehouse)),
                            dataset_name="invoicing_raw", pipelines_dir=str(root / "pipelines"))
    pipeline.run([
        dlt.resource(records, name=table, write_disposition="merge", primary_key="id",
                     columns={"_deleted_at": {"data_type": "timestamp"}})
        for table, records in rows.items() if records
    ])
    # the project declares every column of the data contract, served or not: add the missing ones (null)
    with duckdb.connect(str(warehouse)) as connection:
        for table, table_pairs in pairs.items():
            wanted = {c for record, expected in table_pairs for c in (*flatten(record), *flatten(expected))}
            existing = {name for (name,) in connection.execute(
                "select column_name from information_schema.columns where table_schema = 'invoicing_raw' "
                "and table_name = ?", [table]).fetchall()}
            for column in sorted(wanted - existing) if existing else ():
                connection.execute(f'alter table invoicing_raw."{table}" add column "{column}" varchar')
    return portal, warehouse, held


def _compare(loaded, sql: str | None, tmp_path):
    portal, original, _ = loaded
    warehouse = tmp_path / "w.duckdb"
    warehouse.write_bytes(original.read_bytes())
    if sql:
        with duckdb.connect(str(warehouse)) as connection:
            connection.execute(sql)
    return compare_raw_tables(warehouse, portal, contract="strict")


def test_what_a_strict_client_can_hold_compares_clean(loaded, tmp_path):
    result = _compare(loaded, None, tmp_path)
    assert result.mismatches == [], result.summary()
    portal = loaded[0]
    assert result.records_by_table["customers"] == len(portal.snapshot("customers"))
    assert result.records_by_table.get("documents__messages", 0) == 0  # messages are not served


@pytest.mark.parametrize(
    ("corruption", "expected"),
    [
        ("update invoicing_raw.documents set remaining = 1 where id = (select min(id) from invoicing_raw.documents)",
         "remaining: not served"),
        ("update invoicing_raw.customers set _deleted_at = null where deleted", "_deleted_at: NULL for a deleted"),
        ("delete from invoicing_raw.customers where id = (select min(id) from invoicing_raw.customers "
         "where not deleted)", "customers: 1 missing"),
        ("update invoicing_raw.supplier_document_events set _position = _position + 1 "
         "where id = (select min(id) from invoicing_raw.supplier_document_events)", "_position:"),
        ("update invoicing_raw.supplier_document_events set supplier_document_id = null "
         "where id = (select min(id) from invoicing_raw.supplier_document_events)", "supplier_document_id:"),
    ],
    ids=["invented value", "deleted not flagged", "live customer lost", "event position", "event document"],
)
def test_each_strict_corruption_is_found(loaded, tmp_path, corruption, expected):
    result = _compare(loaded, corruption, tmp_path)
    assert len(result.mismatches) == 1 and expected in result.mismatches[0], result.summary()


def test_a_hidden_deleted_customer_that_a_live_document_references_must_be_there(loaded, tmp_path):
    portal, _, held = loaded
    hidden = next(c["id"] for c in portal.snapshot("customers") if c.get("deleted") and c["id"] != held)
    result = _compare(loaded, f"update invoicing_raw.documents set customer_id = '{hidden}' "
                              "where id = (select min(id) from invoicing_raw.documents)", tmp_path)
    assert any("customers: 1 missing" in line and hidden in line for line in result.mismatches), result.summary()
