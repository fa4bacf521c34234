"""What a client of a contract profile can know of the sandbox: every record as the profile serves it
(`invoicing_sandbox/served.py`, the functions the routes call, applied to `Portal.snapshot`), plus what the client adds
by its own documented rules (docs/contract.md): events' `supplierDocumentId`, `_position` and synthesised
`id`, and the keys listed in `_absent_fields`. `harness/warehouse_truth.py` compares the warehouse with it.
"""

from __future__ import annotations

from typing import Any

from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.served import served_event_item, served_record
from pipelines.invoicing.settings import ENDPOINTS, EVENTS

POSITION = "_position"  # the client's position of an event in its document's history (1 = oldest)
ABSENT_FIELDS = "_absent_fields"  # the client's list of assumed keys a served record did not carry


def expected_records(portal, table: str, contract: ContractProfile | str = "default") -> list[tuple[dict, dict]]:
    """`(sandbox record, expected record)` of every record of `table`, sorted by id: the expected record is
    what `contract` serves (`invoicing_sandbox/served.py`) plus the client's documented additions (module docstring).
    The default profile serves the sandbox's records as they are."""
    profile = ContractProfile.named(contract)
    truth = portal.snapshot(table)
    if table == "supplier_document_events":
        return _expected_events(portal, truth, profile)
    return [(record, served_record(table, record, profile)) for record in truth]


def _expected_events(portal, truth: list[dict], profile: ContractProfile) -> list[tuple[dict, dict]]:
    # positions come from the served history (most recent first); a truth with only `snapshot` (a test's
    # stand-in for the portal) gives none, and `_position` is then not compared
    history_of = getattr(portal, "supplier_document_events", None)
    positions: dict[str, int] = {}
    if history_of is not None:
        for document_id in sorted({event["supplierDocumentId"] for event in truth}):
            history = history_of(document_id)
            positions.update({event["id"]: len(history) - index for index, event in enumerate(history)})
    pairs = []
    for record in truth:
        served = served_event_item(record, profile)
        expected = {**served, "supplierDocumentId": record["supplierDocumentId"]}
        if record["id"] in positions:
            expected[POSITION] = positions[record["id"]]
            expected.setdefault("id", f"{record['supplierDocumentId']}:{positions[record['id']]}")
        pairs.append((record, expected))
    return pairs


def absent_keys(resource: str, served: dict) -> set[str]:
    """Keys of the endpoint's `assumed` tuple (camelCase, dotted for nested ones) that `served` lacks."""
    endpoint = ENDPOINTS.get(resource) or (EVENTS if resource == EVENTS.name else None)
    absent = set()
    for key in getattr(endpoint, "assumed", ()):
        value: Any = served
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                absent.add(key)
                break
            value = value[part]
    return absent
