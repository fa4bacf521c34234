"""Compares the marts with the API's own figures: each customer's `dueAmount` and the customers
`GET /customers?documentStatus=LATE` lists (read from the sandbox portal, the same functions its
routes call, so no injected fault can disturb the reference)."""

from __future__ import annotations

from decimal import Decimal

import duckdb

from harness.warehouse_truth import Comparison
from warehouse_engine.names import DEFAULT_PORTAL

MAX_PAGES = 10_000


def api_late_customer_ids(sb) -> set[str]:
    """Every id of GET /customers?documentStatus=LATE, paged to the end."""
    page_size = int(sb.config.max_page_size)
    ids: set[str] = set()
    for page in range(MAX_PAGES):
        params = {
            "documentStatus": "LATE",
            "orderBy": "name",
            "order": "1",
            "limit": str(page_size),
            "skip": str(page * page_size),
        }
        records = sb.portal.list("customers", params)
        ids.update(record["id"] for record in records)
        if not records:
            return ids
    raise AssertionError("the LATE list did not end within MAX_PAGES pages")


def compare_marts(connection: duckdb.DuckDBPyConnection, sb, portal_id: str = DEFAULT_PORTAL) -> Comparison:
    """`marts.receivables_by_customer.total_open` of the portal `portal_id` against `dueAmount` of every
    customer of the sandbox `sb` (0 when the mart has no row), and `marts.overdue_customers` against the
    API's LATE list."""
    result = Comparison(records_by_table={"marts.receivables_by_customer": 0, "marts.overdue_customers": 0})
    open_totals = dict(
        connection.execute("select customer_id, total_open from marts.receivables_by_customer where portal_id = ?",
                           [portal_id]).fetchall()
    )
    customers = sb.portal.snapshot("customers")
    known = {customer["id"] for customer in customers}
    for customer in customers:
        result.records_compared += 1
        result.fields_compared += 1
        result.records_by_table["marts.receivables_by_customer"] += 1
        expected = Decimal(str(customer["dueAmount"]))
        actual = Decimal(str(open_totals.get(customer["id"], 0)))
        if expected != actual:
            result.mismatches.append(
                f"marts.receivables_by_customer[{customer['id']}].total_open: "
                f"API dueAmount {expected}, mart {actual}"
            )
    for customer_id in set(open_totals) - known:
        result.mismatches.append(
            f"marts.receivables_by_customer[{customer_id}]: row for a customer the API does not know"
        )
    late_api = api_late_customer_ids(sb)
    late_mart = {
        row[0] for row in connection.execute("select customer_id from marts.overdue_customers where portal_id = ?",
                                             [portal_id]).fetchall()
    }
    result.records_compared += len(late_api | late_mart)
    result.fields_compared += len(late_api | late_mart)
    result.records_by_table["marts.overdue_customers"] += len(late_api | late_mart)
    for customer_id in sorted(late_api - late_mart):
        result.mismatches.append(
            f"marts.overdue_customers[{customer_id}]: listed LATE by the API, absent from the mart"
        )
    for customer_id in sorted(late_mart - late_api):
        result.mismatches.append(f"marts.overdue_customers[{customer_id}]: in the mart, not LATE for the API")
    return result
