"""Where the server's fixed one-second windows begin, as the client's grants see it, and the grid of slots
the limiter paces on once it knows (`ratelimit.py` tells the whole method)."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

WINDOW_S = 1.0  # the service's limit is per second
MIN_CROSSINGS = 12  # window starts observed before the arc is trusted
MAX_CROSSINGS = 60  # the arc is learnt from the most recent ones
MAX_ARC_S = 0.04


class WindowPhase:
    """Where, in the client's clock modulo one window, the server's fixed windows begin.

    Every observed window start is a pair of consecutive grants: the last request of one window (granted
    at `before`) and the first of the next (granted at `after`). The boundary, as the client's grants see it,
    lies after the latest `before` and at or before the earliest `after`; where those cross (a request
    delayed on its way landed in the next window) the overlap is how far arrival times scatter. The arc
    from one to the other is where a grant must not be. One extreme on each side is left out, so a single
    request delayed by a busy moment does not keep the limiter from ever locking; the room the grid
    leaves on both sides of the arc is there for such a request.
    """

    def __init__(self) -> None:
        self._crossings: deque[tuple[float, float]] = deque(maxlen=MAX_CROSSINGS)

    def clear(self) -> None:
        self._crossings.clear()

    def crossings(self) -> list[list[float]]:
        """The window starts observed, as plain data (to share them with other processes)."""
        return [list(crossing) for crossing in self._crossings]

    def restore(self, crossings: list[list[float]]) -> None:
        """Takes over the window starts `crossings` gave (another process's, or this one's)."""
        self._crossings = deque(((before, after) for before, after in crossings), maxlen=MAX_CROSSINGS)

    def add(self, before: float, after: float) -> None:
        """Records one window start between two grants (times of the client's clock)."""
        self._crossings.append((before % WINDOW_S, after % WINDOW_S))

    def arc(self) -> tuple[float, float] | None:
        """(start, width) in seconds of the phases the boundary can have, once known within MAX_ARC_S."""
        if len(self._crossings) < MIN_CROSSINGS:
            return None
        centre = _circular_mean([b - ((b - a) % WINDOW_S) / 2 for a, b in self._crossings])
        befores = sorted(_around(a, centre) for a, _ in self._crossings)
        afters = sorted(_around(b, centre) for _, b in self._crossings)
        latest_before, earliest_after = befores[-2], afters[1]  # one extreme left out on each side
        start, end = min(latest_before, earliest_after), max(latest_before, earliest_after)
        if end - start > MAX_ARC_S:
            return None
        return (centre + start) % WINDOW_S, end - start


def _around(phase: float, centre: float) -> float:
    """The phase as an offset from `centre`, in [-half a window, half a window)."""
    return (phase - centre + WINDOW_S / 2) % WINDOW_S - WINDOW_S / 2


def _circular_mean(phases: list[float]) -> float:
    angle = math.atan2(sum(math.sin(2 * math.pi * p / WINDOW_S) for p in phases),
                       sum(math.cos(2 * math.pi * p / WINDOW_S) for p in phases))
    return (angle / (2 * math.pi) * WINDOW_S) % WINDOW_S


def arc_overlaps(arc: tuple[float, float], earlier: float, later: float) -> bool:
    """Whether the arc (start, width) and the pair's arc (earlier, later] share a phase."""
    start, width = arc
    span = (later - earlier) % WINDOW_S
    offset = (start - earlier) % WINDOW_S  # where the arc starts, seen from `earlier`
    return offset < span or offset + width > WINDOW_S


def arc_within(arc: tuple[float, float], earlier: float, later: float) -> bool:
    """Whether the arc (start, width) lies wholly inside the pair's arc (earlier, later]."""
    start, width = arc
    span = (later - earlier) % WINDOW_S
    offset = (start - earlier) % WINDOW_S
    return 0 < offset and offset + width <= span


@dataclass(frozen=True)
class Grid:
    """`per_window` slots in every window, `step` apart from `base + k` (k whole windows) on.

    With `step` shorter than one window / `per_window`, the slots of a window are drawn together and the
    gap across the window boundary is wider than between two slots: the room a request has to arrive late
    (or early) without landing in another window."""

    base: float
    step: float
    per_window: int

    def slot_at_or_after(self, moment: float) -> float:
        start = self._start_of_window(moment)
        index = math.ceil((moment - start) / self.step - 1e-9)
        if index >= self.per_window:
            return start + WINDOW_S
        return start + index * self.step

    def last_slot_of_window(self, slot: float) -> float:
        """The last slot of the window `slot` belongs to: a grant up to then still counts in that window."""
        return self._start_of_window(slot) + (self.per_window - 1) * self.step

    def _start_of_window(self, moment: float) -> float:
        """The start (`base + k`) of the grid's window holding `moment`; a hair before one counts in it."""
        return self.base + math.floor((moment - self.base) / WINDOW_S + 1e-9) * WINDOW_S

    def window_start_at_or_after(self, moment: float) -> float:
        return self.base + math.ceil((moment - self.base) / WINDOW_S - 1e-9) * WINDOW_S
