"""Frozen windows: which lastUpdate ranges a run reads, how they split, and what state records progress.

A run reads `[last committed bound - WINDOW_OVERLAP_S, server time at start - WINDOW_LAG_S]`, both
inclusive. The lag (5 s) keeps the window away from the second the service is still writing in; the
overlap (30 s) re-reads the end of the previous window, for writes that became visible late or were
stamped by an application server whose clock is a little behind. Re-read records whose (id, lastUpdate)
the previous run already saw at the end of its window are skipped (`overlap_seen`), so a run with
nothing changed loads nothing.

A window is read as slices (time ranges), in parallel. Each slice's progress is the second it has been
read up to (`since`, inclusive: the group at that second is read again on resume), committed with the
data of the same load. The bound (`cursor`) moves to the window's end only when every slice is done, so
state never runs ahead of data, and a crash resumes the unfinished slices instead of starting over.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.settings import WINDOW_LAG_S, WINDOW_OVERLAP_S

SPLIT_PARTS = 8
MAX_SLICES = 32
MIN_SPLIT_RANGE = timedelta(seconds=10)


@dataclass
class Slice:
    """A lastUpdate range still to read: since (None: from the start) to until, both inclusive."""

    since: datetime | None
    until: datetime
    done: bool = False

    def to_state(self) -> dict:
        since = format_timestamp(self.since) if self.since else None
        return {"since": since, "until": format_timestamp(self.until), "done": self.done}

    @classmethod
    def from_state(cls, data: dict) -> Slice:
        since = parse_timestamp(data["since"]) if data.get("since") else None
        return cls(since, parse_timestamp(data["until"]), bool(data.get("done")))


def window_end(server_time: datetime) -> datetime:
    """The frozen end of this run's windows: server time minus the lag, whole seconds."""
    return server_time.replace(microsecond=0) - timedelta(seconds=WINDOW_LAG_S)


def plan_slices(state: dict, until: datetime, *, from_scratch: bool) -> list[Slice]:
    """The slices a run reads: the unfinished slices of an interrupted window, then the new range.

    `from_scratch` (first sync, full refresh, reconcile) reads everything up to `until`.
    """
    if from_scratch:
        return [Slice(None, until)]
    pending = state.get("window")
    if not pending and state.get("cursor") is None:
        return [Slice(None, until)]
    slices = [Slice.from_state(s) for s in pending["slices"] if not s.get("done")] if pending else []
    bound: str = pending["until"] if pending else state["cursor"]
    since = parse_timestamp(bound) - timedelta(seconds=WINDOW_OVERLAP_S)
    if since <= until:
        slices.append(Slice(since, until))
    return slices


def split_range(since: datetime, until: datetime, parts: int) -> list[tuple[datetime, datetime]]:
    """Cuts [since, until] (whole seconds, inclusive) into up to `parts` adjacent inclusive ranges."""
    total = int((until - since).total_seconds()) + 1
    parts = max(1, min(parts, total))
    step = total // parts
    ranges = []
    start = since
    for index in range(parts):
        end = until if index == parts - 1 else start + timedelta(seconds=step - 1)
        ranges.append((start, end))
        start = end + timedelta(seconds=1)
    return ranges


def overlap_start(until: datetime) -> datetime:
    """Records at or after this second are remembered as seen, for the next run's overlap."""
    return until - timedelta(seconds=WINDOW_OVERLAP_S)
