"""What one endpoint's read needs from the run that hosts it.

`ResourceRead` (reader.py) and its `PageProducer` (read_producer.py) depend on this small protocol, not on
`Feed` (feed.py), so the run may own its reads without the reads importing the run back: the feed
implements `ReadHost`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from pipelines.invoicing.capabilities import DeletedCustomers, ServerCapabilities
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.read.paging import PageSizes

# id -> (last_update, _deleted_at) in the warehouse; (None, None) for an id other tables reference but
# this one never loaded (a customer deleted before it could be listed: warehouse.load_indexes)
Index = dict[str, tuple[str | None, str | None]]

@dataclass(frozen=True)
class RunPlan:
    """What a run reads: windows end at `until`; `run_time` stamps records found gone upstream."""

    until: datetime
    run_time: datetime
    from_scratch: bool = False
    reconcile: bool = False


class ReadHost(Protocol):
    """The run a read belongs to: its client, plan and page sizes, and the few calls a read makes back."""

    client: InvoicingClient
    page_sizes: PageSizes
    capabilities: ServerCapabilities  # what earlier runs (or the doctor) learnt about the server
    plan: RunPlan | None
    preloaded: dict[str, Any]  # JSON answers read before the reads start (GET /me proves the credentials)
    stopping: bool

    def note(self, text: str, degraded: bool = False, standing: bool = False) -> None:
        """Records a remark (`<table>: ...`) for the run's summary; `degraded`: something is unknown; `standing`: a
        condition of the account, said once per change."""

    def learn_deleted_customers(self, mode: DeletedCustomers) -> None:
        """Records how the server shows deleted customers: listed (with or without timestamp) or hidden."""

    def learn(self, path: str, **changes: object) -> None:
        """Records what the server was seen to do for the list at `path` (kept in the sync's state)."""

    def fail(self, error: BaseException) -> None:
        """Stops every read of the run; the run raises `error`."""

    def fails_alone(self, error: BaseException) -> bool:
        """Whether `error`, ending one read, leaves the run's other reads going."""

    def wants_reader(self) -> bool:
        """Whether the run has room for one more producer thread (a slice may split)."""

    def fetch_events(self, document_ids: list[str]) -> None:
        """Fetches the status histories of these supplier documents before their page is handed over."""
