"""The check that ties the marts back to the API's own figure, over stored data: each customer's open total in
`marts.receivables_by_customer` equals the `dueAmount` the sync stored with the customer (docs/contract.md,
`customers.dueAmount`).

It reads no API: the sync already stores `dueAmount` (raw `customers.due_amount`). A stored `dueAmount` is the
API's figure at the moment the customer was read, so a customer is compared only when nothing of its was read
newer than the customer itself (no document, payment or usage with a later `lastUpdate`): the figures then
describe one moment. The marts must be built for today (the API's figure is today's); another report date, or
`dueAmount` not served (absent is not 0), leaves the check passed with a note.

A flag, never a hold: `dueAmount` is the service's own derivation, whose rules the contract does not spell out
(future-dated payments, rounding); a difference names the customers and the amounts for a person to judge.
"""

from __future__ import annotations

from typing import Any

import duckdb

from invoicing_warehouse.engine.names import PORTAL_COLUMN, RAW_DATASET
from invoicing_warehouse.engine.sql_names import relation_columns
from invoicing_warehouse.engine.sql_runner import one_row, today_in_portal_zone
from invoicing_warehouse.runs.checks import SAMPLE_SIZE, WARN, WarehouseCheck

NAME = "total_open_matches_due_amount"
BY_CUSTOMER = "marts.receivables_by_customer"
CUSTOMERS = f"{RAW_DATASET}.customers"
# the tables whose records move a customer's due amount, each with its customer_id
CHANGES = ("documents", "transactions", "transaction_usages")


def _evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
    customer_columns = set(relation_columns(connection, CUSTOMERS))
    if "due_amount" not in customer_columns:
        return True, None, {"note": "dueAmount not served: nothing to compare with"}
    (as_of,) = one_row(connection, f"select max(as_of_date) from {BY_CUSTOMER}")
    if as_of is not None and as_of != today_in_portal_zone():
        return True, None, {"note": f"marts built for {as_of}, not today: the stored dueAmount is today's figure"}
    live = " and not coalesce(deleted, false)" if "deleted" in customer_columns else ""
    changes = [f"select {PORTAL_COLUMN}, customer_id, last_update from {RAW_DATASET}.{table}"
               for table in CHANGES if "customer_id" in relation_columns(connection, f"{RAW_DATASET}.{table}")]
    newest = " union all ".join(changes) or f"select null::varchar as {PORTAL_COLUMN}, null::varchar as " \
                                             "customer_id, null::timestamptz as last_update where false"
    compared, differing, total_difference, sample = one_row(connection, f"""
        with customers as (
            select {PORTAL_COLUMN}, id as customer_id, round(due_amount, 2) as due_amount, last_update
            from {CUSTOMERS}
            where due_amount is not null and _deleted_at is null{live}
        ),
        newest_change as (
            select {PORTAL_COLUMN}, customer_id, max(last_update) as last_change from ({newest}) group by all
        ),
        compared as (
            select c.{PORTAL_COLUMN}, c.customer_id, c.due_amount, round(coalesce(r.total_open, 0), 2) as total_open
            from customers c
            left join newest_change n using ({PORTAL_COLUMN}, customer_id)
            left join {BY_CUSTOMER} r using ({PORTAL_COLUMN}, customer_id)
            where n.last_change is null or n.last_change <= c.last_update
        )
        select count(*),
               count(*) filter (where due_amount <> total_open),
               coalesce(sum(abs(due_amount - total_open)) filter (where due_amount <> total_open), 0),
               list({PORTAL_COLUMN} || '/' || customer_id || ': dueAmount ' || due_amount || ', total_open '
                    || total_open order by {PORTAL_COLUMN}, customer_id)
                   filter (where due_amount <> total_open)
        from compared
    """)
    metadata = {"customers_compared": compared, "mismatches": differing,
                "difference_total": float(total_difference), "sample": (sample or [])[:SAMPLE_SIZE]}
    if not differing:
        return True, None, metadata
    return False, (f"{differing} of {compared} customers' total_open differ from the dueAmount stored with them "
                   f"(by {total_difference} in all)"), metadata


DUE_AMOUNT_CHECK = WarehouseCheck(
    NAME, BY_CUSTOMER,
    "Each customer's total_open equals the API's dueAmount stored by the sync, for the customers read no older "
    "than their documents and payments (a flag: dueAmount's rules are the service's).",
    _evaluate, severity=WARN, protects=(BY_CUSTOMER,), reads=(CUSTOMERS,),
)
