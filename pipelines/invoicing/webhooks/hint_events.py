"""From a webhook event to the hint it rings for: which resource, which id.

The event list is the contract's (spec, Events) plus `customer.deleted` (api-facts). A payload is read only
for the record's id; everything else in it is ignored, because deliveries are partial and unsigned: the
record itself is always fetched from the API (a doorbell, not a data feed). The id must be a record id
(record_ids.py: 1-64 of `A-Z a-z 0-9 _ -`): anything else could only be a forgery or change the request
it goes into.
"""

from __future__ import annotations

from collections.abc import Callable

from pipelines.invoicing.record_ids import record_id_problem
from pipelines.invoicing.settings import ENDPOINTS
from pipelines.invoicing.webhooks.hint_spool import Hint


class UnknownEvent(ValueError):
    """An event name this product does not subscribe to, or a payload without the id it must carry."""


def _at(path: str) -> Callable[[dict], object]:
    """Reads the dotted `path` (`supplierDocument.id`) of a payload; None where a step is not an object."""

    def read(data: dict) -> object:
        value: object = data
        for key in path.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        return value

    return read


# event name -> (resource, how to read the record's id from `event.data`): from the catalogue (settings.py)
EVENTS: dict[str, tuple[str, Callable[[dict], object]]] = {
    event: (name, _at(path)) for name, endpoint in ENDPOINTS.items() for event, path in endpoint.events.items()}
# Events after which the record may be gone: the applying run confirms (404 or `deleted: true`).
DELETION_EVENTS = frozenset(event for event in EVENTS if event.endswith(".deleted"))


def hint_for_event(portal_id: str, event: str, data: object) -> Hint:
    """The hint for `event` with payload `data`; raises UnknownEvent for an event outside `EVENTS` or a
    payload that does not carry a usable id (a record id, record_ids.py)."""
    known = EVENTS.get(event)
    if known is None:
        raise UnknownEvent(f"unknown event {event!r}; known: {', '.join(sorted(EVENTS))}")
    resource, read_id = known
    record_id = read_id(data) if isinstance(data, dict) else None
    if not isinstance(record_id, str | int) or isinstance(record_id, bool) or str(record_id) == "":
        raise UnknownEvent(f"event {event!r} carries no record id in its data")
    problem = record_id_problem(str(record_id))
    if problem is not None:
        raise UnknownEvent(f"event {event!r}: {problem}")
    return Hint(portal_id, resource, str(record_id), event)
