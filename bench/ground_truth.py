"""The benchmark's view of the sandbox's truth: which resources it compares, their snapshots, and the
fewest requests that can carry them. The comparison itself is the harness's (harness/warehouse_truth.py,
by id: `check_warehouse`), shared with the tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# What the benchmark compares: list endpoints (paged, windowed on lastUpdate), single-object endpoints, and
# the status history of each supplier document (one request per supplier document). Not /webhooks: it needs
# the `read write` scope and both contenders read with `read` (the ETL never writes).
LIST_RESOURCES = (
    "customers", "items", "documents", "transactions", "transaction_usages", "suppliers",
    "supplier_documents",
)
SINGLE_RESOURCES = ("user", "portal")
EVENTS_RESOURCE = "supplier_document_events"
PAGE_SIZE = 100  # the sandbox's maximum page size (and the real service's, as far as is known)


ALL_RESOURCES = (*SINGLE_RESOURCES, *LIST_RESOURCES, EVENTS_RESOURCE)


def snapshot_all(sb: Any, resources: Iterable[str] = ALL_RESOURCES) -> dict[str, list[dict]]:
    """Every record of each resource in `resources`, as GET returns it (the sandbox's own ground truth)."""
    truth: dict[str, list[dict]] = {}
    for resource in resources:
        records = sb.portal.snapshot(resource)
        truth[resource] = [records] if isinstance(records, dict) else list(records)
    return truth


def record_count(truth: dict[str, list[dict]]) -> int:
    """Records of the list endpoints (the base of "1% of the records changed")."""
    return sum(len(truth[resource]) for resource in LIST_RESOURCES if resource in truth)


def describe(truth: dict[str, list[dict]]) -> str:
    """`documents=100000, customers=...`: the size of each resource."""
    return ", ".join(f"{resource}={len(records)}" for resource, records in truth.items())


def changed_records(truth: dict[str, list[dict]], since: dict[str, list[dict]], resource: str) -> list[dict]:
    """Records of `resource` that are new or carry another `lastUpdate` than in the earlier snapshot."""
    before = {record["id"]: record.get("lastUpdate") for record in since.get(resource, [])}
    return [
        record for record in truth.get(resource, [])
        if record["id"] not in before or before[record["id"]] != record.get("lastUpdate")
    ]


def changed_count(truth: dict[str, list[dict]], since: dict[str, list[dict]]) -> int:
    """Changed records over the list endpoints."""
    return sum(
        len(changed_records(truth, since, resource)) for resource in LIST_RESOURCES if resource in truth
    )


def minimum_requests(truth: dict[str, list[dict]], since: dict[str, list[dict]] | None = None) -> int:
    """The fewest requests that can carry the data: a full sync, or (with `since`) the changes after it.

    One token request; one request per single-object endpoint; per list endpoint every full page of 100
    plus the one short (possibly empty) page that proves the end, i.e. floor(n / 100) + 1; one request per
    supplier document (new or changed ones on an incremental) for its status history. Only the resources
    present in `truth` count.
    """
    def records(resource: str) -> list[dict]:
        return truth[resource] if since is None else changed_records(truth, since, resource)

    lists = sum(len(records(resource)) // PAGE_SIZE + 1 for resource in LIST_RESOURCES if resource in truth)
    singles = sum(1 for resource in SINGLE_RESOURCES if resource in truth)
    events = len(records("supplier_documents")) if EVENTS_RESOURCE in truth else 0
    return 1 + singles + lists + events
