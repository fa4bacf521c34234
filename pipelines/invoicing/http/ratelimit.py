"""One pacing limiter shared by every request to one API host: threads, and with a `SharedState` (the host's
budget file, `host_budget.py`) every process of the machine, pace on the same grants.

Each caller reserves the next free moment (span pacing) or slot (window-locked pacing) under the lock,
then sleeps until it: callers are served in the order they asked, whichever thread or process they are
in, and a crashed caller wastes at most the slot it had reserved.

The service allows 10 requests per second. The limiter paces in one of two ways:

1. **Span pacing**, the safe default: never more than N = round(rate) grants in any sliding span of
   N / (rate * safety) seconds (1.111 s at 10/s with the default safety 0.9), consecutive grants at least
   `MIN_GAP_SHARE` of an interval apart. Whatever the server's counting, a fixed one-second window or any
   one-second span then never holds 11 requests even when their arrival is shifted by up to ~110 ms. The
   pace is 9/s (it was 9.5/s at safety 0.95 until issue 33: a server counting a sliding second met 11 requests
   in one second on a loaded machine, grants leaving 50-70 ms after they were given). The rule
   holds on the grants as given, not only as reserved: a thread woken late (a busy machine, 70 ms seen) sends
   late while those reserved after it wake on time, so each waker also waits until the N-th grant given before
   it is a span old (keeping its turn). A server that counts over a sliding second (any one-second span holds
   at most N) then sees no 11th request (it did, once per run, before).

2. **Window-locked pacing**, exactly the limit: the sandbox (and, as far as its headers show, the service)
   counts requests in fixed one-second windows: `RateLimit-Remaining` counts down within a window and
   starts again at limit - 1 with the first request of the next. So each answer tells whether its request
   was the first of a window or followed the request granted just before it in the same window.
   `WindowPhase` turns those pairs into the arc of the client's clock (modulo one second) where the
   server's window boundaries fall. Once the arc is known within `MAX_ARC_S`, the limiter grants on a
   grid of N slots per window, drawn together (`SLOT_SPACING_SHARE` of an even spacing: 80 ms apart at
   10/s) so that the gap across the boundary is wide (280 ms), with the arc in its middle (120 to 140 ms
   of room on either side). Each window then gets exactly N requests, and a request may arrive that much
   earlier or later than its neighbours without landing in another window: several processes on a busy
   machine send late by tens of milliseconds (4 processes at an even 100 ms grid drew 2 x 429 in 5,560
   requests). A thread that wakes late may still use its slot up to `LATE_SLOT_SHARE` of that room after
   the last slot of the same window; later than that it takes a new slot. Two answers within 5 s that
   contradict the arc (one alone may be a request overtaken on its way by the next), and any 429, drop
   the lock: the limiter goes back to span pacing and learns again.

A server that does not count in fixed windows (a sliding log, a token bucket) never yields one consistent
arc, so the limiter stays on span pacing.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from pipelines.invoicing.http.window_phase import (
    MAX_ARC_S,
    WINDOW_S,
    Grid,
    WindowPhase,
    arc_overlaps,
    arc_within,
)

__all__ = ["MAX_ARC_S", "MAX_PAUSE_S", "Grant", "RateLimiter", "SharedState", "WindowPhase", "clamp_wait"]

log = logging.getLogger(__name__)

DEFAULT_SAFETY = 0.9
MIN_GAP_SHARE = 0.75
# Span pacing: a grant whose hold of the shared state took longer than this to save is checked again at the
# moment it truly leaves, and sent only if the rule still allows it then (`_regrant`).
LATE_HOLD_S = 0.015
# A thread that wakes later than this share of the margin after the last slot of its window (a busy
# interpreter) takes another slot: its request could otherwise reach the server in the next window. The
# rest of the margin is for the way there (the HTTP client's work and the network).
LATE_SLOT_SHARE = 0.5
# Slots of one window are this share of an even spacing apart: the room across the boundary grows from
# one spacing to (N - (N - 1) * share) spacings, 2.8 at 10/s, while each window still gets N requests.
SLOT_SPACING_SHARE = 0.8
# Two answers contradicting the lock within this many seconds drop it; windows that truly moved contradict it
# at every boundary (or meet a 429 first), a request overtaken on its way only once.
CONFIRM_WITHIN_S = 5.0
# The longest pause a server's answer may impose (Retry-After, RateLimit-TTL), and the furthest ahead any time of
# the shared state may lie (security review M2). The service counts one-second windows, so a real wait is about a
# second; two minutes still honours a longer ask (a quota, a maintenance), while `Retry-After: 1e9` or a forged
# `paused_until` can no longer stop every process of the machine: after MAX_429_RETRIES such pauses a run gives
# up with a clear error (about 40 minutes at most).
MAX_PAUSE_S = 120.0


def clamp_wait(seconds: float) -> float:
    """A server-given wait as the limiter honours it: 0 to MAX_PAUSE_S; not a number counts as 0 (ignored)."""
    if math.isnan(seconds):
        return 0.0
    return min(max(0.0, seconds), MAX_PAUSE_S)


def _finite(value: object) -> bool:
    return isinstance(value, float | int) and not isinstance(value, bool) and math.isfinite(value)


def _phase(value: object) -> bool:
    """A finite time within one window (a phase modulo WINDOW_S)."""
    return _finite(value) and 0 <= value <= WINDOW_S  # type: ignore[operator]


class SharedState(Protocol):
    """The pacing state of one API host shared by processes (see `host_budget.HostBudget`)."""

    def hold(self) -> contextlib.AbstractContextManager[dict]: ...


@dataclass(frozen=True)
class Reservation:
    """A moment (span pacing) or grid slot reserved for one request, and the grid and epoch it was reserved on."""

    slot: float
    grid: Grid | None
    epoch: int


@dataclass(frozen=True)
class Grant:
    """One permission to send: its sequence number (the order of grants) and when it was given."""

    seq: int
    at: float


class RateLimiter:
    """Paces requests below `rate_per_s` per second; `rate_per_s <= 0` turns pacing off."""

    def __init__(
        self,
        rate_per_s: float = 10.0,
        *,
        safety: float = DEFAULT_SAFETY,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        shared: SharedState | None = None,
    ) -> None:
        if not math.isfinite(float(rate_per_s or 0)):
            raise ValueError(f"rate limit {rate_per_s!r}: a finite number of requests/s is needed (0: no pacing)")
        self.rate_per_s = float(rate_per_s or 0)
        self.burst = max(1, round(self.rate_per_s)) if self.rate_per_s > 0 else 0
        self.span = self.burst / (self.rate_per_s * safety) if self.rate_per_s > 0 else 0.0
        self.min_gap = MIN_GAP_SHARE / self.rate_per_s if self.rate_per_s > 0 else 0.0
        self.slots_per_window = math.floor(self.rate_per_s * WINDOW_S + 1e-9) if self.rate_per_s > 0 else 0
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._shared = shared  # where the state lives between two holds when processes share the budget
        self._recent: deque[float] = deque(maxlen=self.burst or 1)  # the last `burst` grants
        # the last 2 x `burst` grants as given (not reserved): twice the rule's N, so that a grant checked again
        # after a slow save (`_regrant`) still sees the N sends before it once its own record is taken out
        self._sent: deque[float] = deque(maxlen=2 * self.burst or 1)
        self._paused_until = 0.0  # set after a 429: nobody sends before this
        self._seq = 0
        self._answers: dict[int, tuple[float, int]] = {}  # seq -> (granted at, place in its server window)
        self._phase = WindowPhase()
        self._grid: Grid | None = None
        self._arc = (0.0, 0.0)  # (start, width) of the boundary's phases while locked
        self._locked_from_seq = 0  # the first grant paced by the grid
        self._epoch = 0  # bumped whenever the grid changes: reserved slots of an old grid are void
        self._late_slot_s = 0.0  # how late a thread may still take its slot
        self._next_slot = 0.0  # the next grid reservation takes a slot at or after this
        self._span_until = 0.0  # while locked: a span reservation made before the lock may still be granted until this
        self.locks = 0  # times the limiter locked onto the server's windows
        self.lost_locks = 0  # times a 429 or two contradicting answers dropped the lock
        self.late_wakeups = 0  # grid slots given up because their thread woke too late
        self.held_back = 0  # span grants held back because grants before them were given late
        self.late_holds = 0  # span grants checked again because saving them took longer than LATE_HOLD_S
        self.late_saves = 0  # grid slots left unused because saving the grant took them past their window's room
        self.stray_answers = 0  # answers that contradicted the lock alone (a request overtaken on its way)
        self.turns_given_up = 0  # reservations not taken (any of the above, a 429 since, a new grid): reserved anew
        self._last_contradiction: float | None = None  # when the last one was granted, while locked

    @property
    def shared(self) -> SharedState | None:
        """The state shared with other processes (a budget file or database row), None when paced alone."""
        return self._shared

    @property
    def shares_budget(self) -> bool:
        """True when this limiter paces on a state shared with other processes (the host's budget)."""
        return self._shared is not None

    @contextmanager
    def _hold(self) -> Iterator[None]:
        """The limiter's state, to read and change: this process's alone, or loaded from (and saved back
        to) the host's shared state under its file lock, so every process paces on the same grants."""
        with self._lock:
            if self._shared is None:
                yield
                return
            with self._shared.hold() as state:
                self._load(state)
                yield
                state.clear()
                state.update(self._dump())

    def _dump(self) -> dict:
        """The state that paces and learns, as plain data (see `_hold`)."""
        oldest_kept = self._seq - 100
        return {
            "recent": list(self._recent), "sent": list(self._sent), "paused_until": self._paused_until,
            "seq": self._seq,
            "answers": [[seq, at, place] for seq, (at, place) in self._answers.items() if seq >= oldest_kept],
            "crossings": self._phase.crossings(),
            "grid": None if self._grid is None else [self._grid.base, self._grid.step, self._grid.per_window],
            "arc": list(self._arc), "locked_from_seq": self._locked_from_seq, "epoch": self._epoch,
            "late_slot_s": self._late_slot_s, "next_slot": self._next_slot, "span_until": self._span_until,
            "last_contradiction": self._last_contradiction,
        }

    def _load(self, state: dict) -> None:
        """Takes over the state another process (or this one) saved; an empty one leaves this one's own. A state
        that is malformed, or whose times lie further ahead than any server may ask (a forged or damaged file),
        is dropped for this process's own (and this one's is saved over it)."""
        if not state:
            return
        own = self._dump()
        try:
            self._restore(state)
            self._check_times(self._clock())
            self._check_shape()
        except (KeyError, IndexError, TypeError, ValueError, ArithmeticError) as error:
            # dropped: this process's own state is saved over it when the hold ends (security review 2, L1)
            log.warning("rate limiter: the shared state is not usable (%s), keeping this process's own", error)
            self._restore(own)

    def _restore(self, state: dict) -> None:
        self._recent = deque(state["recent"], maxlen=self.burst or 1)
        self._sent = deque(state.get("sent", []), maxlen=2 * self.burst or 1)  # absent from an older process's state
        self._paused_until = state["paused_until"]
        self._seq = state["seq"]
        self._answers = {seq: (at, place) for seq, at, place in state["answers"]}
        self._phase.restore(state["crossings"])
        self._grid = None if state["grid"] is None else Grid(*state["grid"])
        self._arc = (state["arc"][0], state["arc"][1])
        self._locked_from_seq = state["locked_from_seq"]
        self._epoch = state["epoch"]
        self._late_slot_s = state["late_slot_s"]
        self._next_slot = state["next_slot"]
        self._span_until = state.get("span_until", 0.0)  # absent from an older process's state: no span grant then
        self._last_contradiction = state.get("last_contradiction")  # absent from an older process's state

    def _check_times(self, now: float) -> None:
        """Raises ValueError when a time of the state is not finite or lies beyond any wait a server may ask: no
        process ever saves a pause longer than MAX_PAUSE_S (`pause` cuts it), nor reserves a slot further than a
        window ahead, so such a state was forged or damaged."""
        horizon = now + MAX_PAUSE_S + WINDOW_S
        times = [*self._recent, *self._sent, self._paused_until, self._next_slot, self._span_until, self._late_slot_s,
                 *self._arc]
        if self._grid is not None:
            times += [self._grid.base, self._grid.step]
        if not all(isinstance(t, float | int) and math.isfinite(t) and t <= horizon for t in times):
            raise ValueError("a pause or a grant time is not finite, or lies beyond any wait a server may ask")

    def _check_shape(self) -> None:
        """Raises ValueError when a field of the state is not what a limiter of this rate writes (security review 2,
        L1: a forged grid step of 0 divided by zero, one of 100 s or -1 s stalled every process): counters are
        whole numbers >= 0; the grid has 1 to `slots_per_window` slots a window (fewer when the server's limit is
        lower: `_try_lock`), `0 < step <= window / per_window` (`1/rate` at the full count), a base within one
        window; the arc and the crossings are phases within one window, the arc no wider than `MAX_ARC_S`; the
        late share of a slot within one window."""
        counters = [self._seq, self._locked_from_seq, self._epoch, *self._answers]
        if not all(type(n) is int and n >= 0 for n in counters):
            raise ValueError("a sequence number or an epoch is not a whole number >= 0")
        if not all(type(place) is int and _finite(at) for at, place in self._answers.values()):
            raise ValueError("an answer is not a (time, place) pair")
        if not all(_phase(before) and _phase(after) for before, after in self._phase.crossings()):
            raise ValueError("a window start is not a phase within one window")
        start, width = self._arc
        if not (_phase(start) and _finite(width) and 0 <= width <= MAX_ARC_S):
            raise ValueError("the window boundary's arc is not within one window")
        if not (_finite(self._late_slot_s) and 0 <= self._late_slot_s <= WINDOW_S):
            raise ValueError("the late share of a slot is not within one window")
        if self._last_contradiction is not None and not _finite(self._last_contradiction):
            raise ValueError("the last contradiction is not a time")
        grid = self._grid
        if grid is not None:
            per_window = grid.per_window
            if not (type(per_window) is int and 1 <= per_window <= self.slots_per_window):
                raise ValueError(f"the grid's {per_window!r} slots a window is not 1 to {self.slots_per_window}")
            if not (_finite(grid.step) and 0 < grid.step <= WINDOW_S / per_window and _phase(grid.base)):
                raise ValueError(f"the grid's step {grid.step!r} is not in (0, {WINDOW_S / per_window:g}] s, or its "
                                 "base not within one window")

    @property
    def locked(self) -> bool:
        """Whether the limiter paces on the server's windows (exactly the limit)."""
        return self._grid is not None

    def acquire(self) -> Grant:
        """Blocks until this thread may send one request; pass the Grant to `observe` with the answer.

        Each caller reserves the next free moment (span pacing) or grid slot, then sleeps until it: callers
        are served in the order they asked, across threads and, with a shared state, across processes.
        """
        while True:
            grant = self._take(self._reserve())
            if grant is not None:
                return grant
            self.turns_given_up += 1  # behind those who reserved meanwhile: the price of never risking a 429

    def _reserve(self) -> Reservation:
        """The next free moment (span pacing) or grid slot, reserved under the state's hold."""
        with self._hold():
            now = self._clock()
            grid = self._grid
            if grid is None:
                slot = max(now, self._span_ready_at())
                if self.rate_per_s > 0:
                    self._recent.append(slot)  # reserved: the next caller paces after it
            else:
                slot = grid.slot_at_or_after(max(now, self._paused_until, self._next_slot))
                self._next_slot = slot + grid.step / 2
            return Reservation(slot, grid, self._epoch)

    def _take(self, reservation: Reservation) -> Grant | None:
        """Sleeps until the reserved moment and takes the grant; None when the reservation no longer holds (a 429
        since, a new grid, woken or saved too late): the caller reserves again."""
        slot, grid, epoch = reservation.slot, reservation.grid, reservation.epoch
        while True:
            while (now := self._clock()) < slot:
                self._sleep(slot - now)
            span_grant: Grant | None = None
            grid_grant: Grant | None = None
            with self._hold():
                now = self._clock()  # the hold may have waited for another process
                if grid is None:
                    if self._paused_until > slot:
                        return None  # a 429 since: reserve again after the pause
                    if self._grid is not None and now > self._span_until:
                        # Locked since it reserved, and now too near the grid's first window (woken late, or held
                        # back below): sent now it could land among that window's slots. It takes a slot instead.
                        return None
                    sent_ready_at = self._sent_ready_at()
                    if now < sent_ready_at:
                        # Grants before it were given late (woken late on a busy machine): sent now, the last N
                        # requests would reach a server that counts over a sliding second closer than the span.
                        # It keeps its turn and waits until the N-th grant before it is a span old.
                        slot = sent_ready_at
                        self.held_back += 1
                        continue
                    span_grant = self._grant(now, record=False)
                elif now > grid.last_slot_of_window(slot) + self._late_slot_s:
                    self.late_wakeups += 1  # its request could reach the next window: take another slot
                    return None
                elif epoch == self._epoch and self._paused_until <= slot:
                    grid_grant = self._grant(now, record=True)
                else:
                    return None
            if grid is not None:
                assert grid_grant is not None  # every other way out of the hold returned
                if self._clock() <= grid.last_slot_of_window(slot) + self._late_slot_s:
                    return grid_grant
                # saving it took so long that the request could reach the next window: the slot is left unused
                self.late_saves += 1
                return None
            assert span_grant is not None  # every other way out of the hold returned or continued
            # Saving the grant took long (a busy machine, the shared state's database): its request would leave
            # that much later than recorded, and grants given meanwhile paced on the earlier time. It is checked
            # again at the moment it truly leaves, and sent only if the rule still holds then.
            while span_grant is not None and self._clock() - span_grant.at > LATE_HOLD_S:
                span_grant = self._regrant(span_grant)
            return span_grant

    def _regrant(self, late: Grant) -> Grant | None:
        """A span grant whose save took longer than LATE_HOLD_S, checked again now: its record is taken out and,
        if N grants of the last span (those given meanwhile included) still leave it room and no pause began,
        recorded again at now and returned (same sequence number); else None, and the caller reserves anew (its
        first reserved moment goes unused). Until issue 33's bench the record was only moved, so a request whose
        second save waited behind 19 processes (0.3-1.6 s) left among grants that had counted it as long gone
        (a 429 at the start of a 20-process run)."""
        self.late_holds += 1
        with self._hold():
            now = self._clock()
            with contextlib.suppress(ValueError):
                self._sent.remove(late.at)
            if self._paused_until > now or now < self._sent_ready_at():
                return None
            self._sent.append(now)
            return Grant(late.seq, now)

    def _sent_ready_at(self) -> float:
        """When the span pacing's rule holds on the grants as they were given (not as they were reserved): no
        more than N in any span, whatever thread or process woke late."""
        if self.rate_per_s > 0 and len(self._sent) >= self.burst:
            # the N-th latest send: records checked again (`_regrant`) may stand out of order in the deque
            return sorted(self._sent)[-self.burst] + self.span
        return 0.0

    def _span_ready_at(self) -> float:
        ready_at = self._paused_until
        if self.rate_per_s > 0 and self._recent:
            ready_at = max(ready_at, self._recent[-1] + self.min_gap)
        if self.rate_per_s > 0 and len(self._recent) == self.burst:
            ready_at = max(ready_at, self._recent[0] + self.span)
        return ready_at

    def _grant(self, now: float, *, record: bool) -> Grant:
        if record and self.rate_per_s > 0:
            self._recent.append(now)
        if self.rate_per_s > 0:
            self._sent.append(now)
        self._seq += 1
        return Grant(self._seq, now)

    def pause(self, seconds: float) -> None:
        """Holds every thread back for `seconds` from now (the server said 429; cut to MAX_PAUSE_S, `clamp_wait`),
        and drops the lock."""
        with self._hold():
            self._paused_until = max(self._paused_until, self._clock() + clamp_wait(seconds))
            self._unlock("a 429 answer")

    def observe(self, grant: Grant, *, limit: int | None, remaining: int | None) -> None:
        """Learns from the `RateLimit-Limit`/`RateLimit-Remaining` of the answer to `grant` (not a 429)."""
        if self.slots_per_window == 0 or limit is None or remaining is None or limit <= 0:
            return
        place = limit - remaining  # 1 for the first request of a server window
        with self._hold():
            self._answers[grant.seq] = (grant.at, place)
            for earlier, later in ((grant.seq - 1, grant.seq), (grant.seq, grant.seq + 1)):
                if earlier in self._answers and later in self._answers:
                    self._learn(earlier, limit)
            if len(self._answers) > 1000:
                oldest_kept = self._seq - 100
                self._answers = {seq: a for seq, a in self._answers.items() if seq >= oldest_kept}

    def _learn(self, earlier_seq: int, limit: int) -> None:
        earlier_at, earlier_place = self._answers[earlier_seq]
        later_at, later_place = self._answers[earlier_seq + 1]
        if not 0 < later_at - earlier_at < WINDOW_S:
            return  # a window or more apart: a boundary certainly fell between them, which says nothing
        if later_place == 1:
            crossed = True
        elif later_place == earlier_place + 1:
            crossed = False
        else:
            return  # reordered on the way, or another client shares the address: says nothing
        if self._grid is not None:
            if earlier_seq < self._locked_from_seq:
                return  # granted before the lock, by span pacing: may fall anywhere near the boundary
            earlier_phase, later_phase = earlier_at % WINDOW_S, later_at % WINDOW_S
            # Span-paced grants still in flight at the lock may straddle part of the arc: only a pair that
            # crossed away from it, or did not cross over all of it, says the boundary is elsewhere.
            if crossed:
                contradicts = not arc_overlaps(self._arc, earlier_phase, later_phase)
            else:
                contradicts = arc_within(self._arc, earlier_phase, later_phase)
            if contradicts:
                self._contradicted(later_at)
            return
        if crossed:
            self._phase.add(earlier_at, later_at)
            self._try_lock(min(self.slots_per_window, limit))

    def _try_lock(self, per_window: int) -> None:
        arc = self._phase.arc()
        step = WINDOW_S / per_window
        if arc is None or arc[1] > step / 2:
            return
        start, width = arc
        self._arc = arc
        spacing = SLOT_SPACING_SHARE * step
        # The arc sits in the middle of the gap across the boundary: as much room for a request that
        # arrives earlier than its neighbours as for one that arrives later.
        margin = (WINDOW_S - (per_window - 1) * spacing - width) / 2
        self._late_slot_s = LATE_SLOT_SHARE * margin
        self._grid = Grid((start + width + margin) % WINDOW_S, spacing, per_window)
        self._epoch += 1
        # Start on the first window whose boundary is at least a margin away: span grants reserved before the lock
        # may go until half a margin before that boundary (`_span_until`); a span reservation waking later moves
        # onto the grid. (Starting after the last span reservation instead left the grid unused for as long as the
        # span queue was deep, 25 s with 20 processes, while grants held back by the span rule crossed into it.)
        self._next_slot = self._grid.window_start_at_or_after(self._clock() + 2 * margin + width)
        self._span_until = self._next_slot - margin - width - self._late_slot_s
        self._locked_from_seq = self._seq + 1
        self._last_contradiction = None
        self.locks += 1
        log.info("rate limiter: pacing on the server's windows (boundary within %.0f ms), %d per window",
                 width * 1000, per_window)

    def _contradicted(self, granted_at: float) -> None:
        """One answer says the boundary is not where the lock put it. Alone it may be a request that was
        overtaken between its grant and the server (its thread starved for a moment); a second one within
        `CONFIRM_WITHIN_S` means the windows moved. (A 429 drops the lock at once, in `pause`.)"""
        last, self._last_contradiction = self._last_contradiction, granted_at
        if last is not None and abs(granted_at - last) <= CONFIRM_WITHIN_S:
            self._unlock("answers outside the learnt window phase")
        else:
            self.stray_answers += 1

    def _unlock(self, reason: str) -> None:
        self._last_contradiction = None
        self._phase.clear()
        self._answers.clear()
        if self._grid is None:
            return
        self._grid = None
        self._epoch += 1
        self.lost_locks += 1
        log.info("rate limiter: back to span pacing after %s", reason)
