"""What one server was found to do where the contract is silent, per list: the sync's strategy cache.

The contract (spec + api-facts) does not say whether every list accepts the window parameters
(`updatedSince`/`updatedUntil`), the ordering (`orderBy=lastUpdate`, `order=1`), how large a page may be,
whether equal `lastUpdate` records keep one order, or whether deleted customers stay listed. The sync learns
these from what the server answers (a 400, records outside the window, a clamp) and `invoicing-warehouse
doctor` probes them on purpose. Both write the same record, kept in the sync's dlt state beside the page
sizes, so the next run picks its strategy per list at once: a server that refuses windows costs time,
never correctness, and never the same refused request twice.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Literal

Support = Literal["honoured", "ignored", "refused", "unknown"]
DeletedCustomers = Literal["listed", "flagged", "hidden", "unknown"]

STATE_KEY = "server_capabilities"


@dataclass(frozen=True)
class ListCapabilities:
    """One list endpoint: does it honour the window, the ordering, a stable order of ties, the paging?"""

    window: Support = "unknown"  # updatedSince / updatedUntil
    ordering: Support = "unknown"  # orderBy=lastUpdate with order=1 (ascending)
    stable_ties: bool | None = None  # equal-lastUpdate records in the same order on every request
    paging: Support = "unknown"  # limit / skip ("ignored": skip N answers the skip-0 records)


@dataclass(frozen=True)
class ServerCapabilities:
    """Everything learnt about one server; `unknown` values mean "assume nothing, check as you go"."""

    lists: dict[str, ListCapabilities] = field(default_factory=dict)  # by path, e.g. "/suppliers"
    deleted_customers: DeletedCustomers = "unknown"
    token_lifetime_s: float | None = None
    observed_at: str | None = None  # server time (ISO 8601) of the last observation

    def of(self, path: str) -> ListCapabilities:
        """The capabilities of the list at `path` (all unknown if never seen)."""
        return self.lists.get(path, ListCapabilities())

    def with_list(self, path: str, **changes: object) -> ServerCapabilities:
        """A copy where the list at `path` has `changes` applied."""
        lists = dict(self.lists)
        lists[path] = replace(self.of(path), **changes)  # type: ignore[arg-type]
        return replace(self, lists=lists)

    def completed_by(self, other: ServerCapabilities) -> ServerCapabilities:
        """This record where it knows, `other` (e.g. the doctor's findings) where this one says unknown."""
        lists = dict(other.lists)
        for path, mine in self.lists.items():
            theirs = other.of(path)
            lists[path] = ListCapabilities(
                mine.window if mine.window != "unknown" else theirs.window,
                mine.ordering if mine.ordering != "unknown" else theirs.ordering,
                mine.stable_ties if mine.stable_ties is not None else theirs.stable_ties,
                mine.paging if mine.paging != "unknown" else theirs.paging)
        return ServerCapabilities(
            lists,
            self.deleted_customers if self.deleted_customers != "unknown" else other.deleted_customers,
            self.token_lifetime_s if self.token_lifetime_s is not None else other.token_lifetime_s,
            self.observed_at or other.observed_at)

    def to_state(self) -> dict:
        """A JSON-able dict for dlt state or the doctor's findings file."""
        return asdict(self)

    @classmethod
    def from_state(cls, state: dict | None) -> ServerCapabilities:
        """Reads what `to_state` wrote; tolerates a missing or older record (unknown keys are dropped)."""
        if not state:
            return cls()
        lists = {path: ListCapabilities(**{k: v for k, v in values.items()
                                           if k in ListCapabilities.__dataclass_fields__})
                 for path, values in (state.get("lists") or {}).items()}
        known = {k: v for k, v in state.items() if k in cls.__dataclass_fields__ and k != "lists"}
        return cls(lists=lists, **known)
