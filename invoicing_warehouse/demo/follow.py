"""`invoicing-warehouse demo --follow`: after the demo's build, the sandbox keeps changing like an application
user (its mutator), every announced change becomes a hint, the applying run (invoicing_warehouse/runs/hints.py) brings
it into the marts, and each change is printed with its latency: from the API write to the readers' copy
published with it (the marts rebuilt in the same run). Bounded by `--follow-seconds`.

Where the hints come from: the real receiver (pipelines/invoicing/webhooks/receiver.py) served in this process on
127.0.0.1 (a free port, a fresh token); the sandbox is subscribed to it for every event and delivers over
HTTP, as the service would. The sandbox's event listener (invoicing_warehouse/demo/hint_feed.py) only records when
each write happened, for the latency.
"""

from __future__ import annotations

import secrets
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

POLL_S = 0.5


@dataclass
class FollowStats:
    """Latencies (seconds) of the changes that reached the marts, and what was left over."""

    latencies: list[float] = field(default_factory=list)
    runs: int = 0
    requests: int = 0
    pending_at_end: int = 0

    def summary(self) -> str:
        """One line: count, p50, p95, max, requests per change."""
        if not self.latencies:
            return "no change reached the marts"
        ordered = sorted(self.latencies)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return (f"{len(ordered)} changes reached the marts in {self.runs} runs: latency p50 "
                f"{statistics.median(ordered):.1f} s, p95 {p95:.1f} s, max {ordered[-1]:.1f} s; "
                f"{self.requests / len(ordered):.1f} API requests per change; {self.pending_at_end} hints pending")


def follow_demo(sandbox, warehouse: Path, seconds: float, mutations_per_s: float, rate_limit: float) -> FollowStats:
    """Mutates `sandbox` for `seconds`, applies the hints of its changes into `warehouse`, prints each change
    reaching the marts with its latency; returns the figures."""
    from invoicing_sandbox.server import HttpThread
    from invoicing_warehouse.demo.hint_feed import ListenerFeed, Write
    from invoicing_warehouse.engine.names import DEFAULT_PORTAL
    from invoicing_warehouse.engine.target import WarehouseTarget
    from invoicing_warehouse.runs.hints import apply_pending
    from pipelines.invoicing.credentials import ApiSettings
    from pipelines.invoicing.hook_urls import hook_url
    from pipelines.invoicing.portals import Portal
    from pipelines.invoicing.webhooks.hint_events import EVENTS
    from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_path
    from pipelines.invoicing.webhooks.receiver import Receiver, ReceiverSettings

    target, portal = WarehouseTarget.duckdb_file(warehouse), Portal(DEFAULT_PORTAL)
    settings = ApiSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    stats, reported = FollowStats(), 0
    waiting: list[Write] = []  # writes whose record no run has loaded since
    started = time.monotonic()
    receiver = Receiver(ReceiverSettings(secrets.token_urlsafe(24), spool_path(warehouse)))
    receiver.open()
    server = HttpThread(receiver.app(), "127.0.0.1", 0)
    port = server.start()
    sandbox.portal.create("webhooks", {"url": hook_url(f"http://127.0.0.1:{port}", receiver.settings.token, None),
                                       "events": sorted(EVENTS)})
    print(f"receiver: http://127.0.0.1:{port}/hooks/*** (the sandbox delivers every event to it)")
    feed = ListenerFeed(sandbox.portal, spool_path(warehouse), DEFAULT_PORTAL, record_only=True).start()
    sandbox.start_mutations(mutations_per_s)
    print(f"following for {seconds:g} s: the sandbox makes {mutations_per_s:g} changes/s; each change that "
          "reaches the marts is printed with its latency (API write -> readers' copy)")
    try:
        while time.monotonic() - started < seconds:
            run = apply_pending(target, portal, settings=settings, rate_limit_per_s=rate_limit)
            if run.load is not None and not run.waiting:
                stats.runs += 1
                stats.requests += run.load.requests
                visible_at = time.time()
                applied = {(h.resource, h.record_id) for h in run.load.hints}
                end = len(feed.writes)  # the listener appends meanwhile: read up to a fixed end
                writes, waiting, reported = waiting + feed.writes[reported:end], [], end
                for write in writes:
                    # a write after the fetch is not in this run: it has a pending hint of its own
                    if (write.resource, write.record_id) not in applied or write.at > run.load.fetched_at:
                        waiting.append(write)
                        continue
                    latency = visible_at - write.at
                    stats.latencies.append(latency)
                    print(f"  {time.monotonic() - started:6.1f} s  {write.event:<32} {write.record_id}  "
                          f"in the marts after {latency:.1f} s")
            time.sleep(POLL_S)
    finally:
        sandbox.stop_mutations()
        feed.stop()
        server.stop()
        receiver.close()
    with HintSpool.for_warehouse(warehouse) as spool:
        stats.pending_at_end = spool.pending_count()
    print(stats.summary())
    return stats
