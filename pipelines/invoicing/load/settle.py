"""The settle-lag zone of a first sync (or a full refresh), read in the same run once the lag has passed.

Windows end WINDOW_LAG_S before the server's time at the start of a run (windows.py): records touched in those
last seconds are left to the next run, whose window starts before them. A first sync has no next run yet, and
its figures would lack those records (a customer edited 2 s before, while its 30 older invoices are read). So
when a list whose window the server honours holds a record past the run's window end (one request per list,
`limit=1`), the run waits until the lag has passed and reads one more, short window (load/sync.py).
"""

from __future__ import annotations

import time
from datetime import timedelta

from pipelines.invoicing.dates import format_timestamp
from pipelines.invoicing.read.feed import Feed
from pipelines.invoicing.settings import ENDPOINTS, WINDOW_LAG_S

# After the lag, one second more for the `Date` header's whole seconds and one for the answer's travel.
SETTLE_MARGIN_S = 2.0


def lag_zone_holds_records(feed: Feed, names: list[str]) -> bool:
    """Whether a windowed list of `names` read through an honoured window holds a record changed after the
    run's window end (the lists read in full read those records already)."""
    plan = feed.plan
    if plan is None:
        return False
    since = format_timestamp(plan.until + timedelta(seconds=1))
    for name in names:
        endpoint = ENDPOINTS.get(name)
        if endpoint is None or endpoint.mode != "window" or name not in feed.reads:
            continue
        if feed.capabilities.of(endpoint.path).window != "honoured":
            continue
        page = feed.client.get(endpoint.path, {"updatedSince": since, "orderBy": "lastUpdate", "order": "1",
                                               "limit": "1"}, tag=name)
        if isinstance(page, list) and page:
            return True
    return False


def wait_out_lag(feed: Feed) -> None:
    """Sleeps until the server's clock has passed the run's start by the lag (measured on this machine's
    monotonic clock from before the run's first request: at most WINDOW_LAG_S + SETTLE_MARGIN_S)."""
    remaining = feed.started_at + WINDOW_LAG_S + SETTLE_MARGIN_S - time.monotonic()
    if remaining > 0:
        time.sleep(remaining)
