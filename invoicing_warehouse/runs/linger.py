"""An applying run that stays a while (the Dagster hints job's): after its hints, it watches the spool and applies what
arrives.

Launched by the sensor, a run pays Dagster's sensor loop (the daemon evaluates sensors at most every 5 s),
the queue and a fresh process (about 5 s in all, bench/RESULTS.md) before its first request. Changes rarely
come alone: an office's next change is often seconds away. So once a run has applied its hints, it looks at
the spool (local SQLite, no API cost) every `poll_s` and applies new hints of its portal at once, with the
client and token it already holds, as `sync --follow` does. When hints are still arriving (a burst: the
sender delivers one event after another), it waits until none came for `settle_quiet_s` (at most `settle_max_s`)
and applies them as one set: a set reads a window of a list where GETs by id would cost one request each, and
the payments window once. It ends:
- after `idle_s` without a new hint (INVOICING_HINTS_LINGER_S, default 60; 0: no lingering, one set per run),
  never for a run in standby (INVOICING_HINTS_STANDBY: launched before any hint, it waits for the first),
- after `max_s` in all (INVOICING_HINTS_RUN_MAX_S, default 600), so a run's log and history stay readable,
- as soon as another writing run of the warehouse waits in the queue (the scheduled sync, a reconcile,
  another portal's hints): the single writer rule keeps every writer's turn, and the next run applies
  what comes after.
Each set is applied as a run without lingering applies it (invoicing_warehouse/runs/hints.py: committed, modelled,
published, then acknowledged), so a crash while lingering loses nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.environment.run_settings import HINTS_LINGER_S, HINTS_RUN_MAX_S, HINTS_STANDBY
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.hints import HintRun, apply_pending, spool_for
from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.webhooks.hint_spool import HintSpool

LINGER_ENV = HINTS_LINGER_S.name
RUN_MAX_ENV = HINTS_RUN_MAX_S.name
DEFAULT_LINGER_S = HINTS_LINGER_S.default
DEFAULT_RUN_MAX_S = HINTS_RUN_MAX_S.default
POLL_S = 0.1  # a look at the spool: one SQLite read (under a millisecond); a hint waits half of it on average
SETTLE_QUIET_S = 0.2  # a burst's deliveries come milliseconds apart; a single change waits this much more
SETTLE_MAX_S = 1.5
QUEUE_CHECK_S = 1.0  # a look at Dagster's run queue: one read of the instance's storage


@dataclass(frozen=True)
class Linger:
    """How long an applying run stays for more hints."""

    idle_s: float = DEFAULT_LINGER_S
    max_s: float = DEFAULT_RUN_MAX_S
    poll_s: float = POLL_S
    settle_quiet_s: float = SETTLE_QUIET_S
    settle_max_s: float = SETTLE_MAX_S
    standby: bool = False  # the run waits for hints until max_s, idle or not

    @property
    def enabled(self) -> bool:
        """Whether a run stays at all."""
        return self.idle_s > 0 or self.standby

    @classmethod
    def from_environment(cls) -> Linger:
        """INVOICING_HINTS_LINGER_S (seconds without a new hint before a run ends; 0 = not at all) and
        INVOICING_HINTS_RUN_MAX_S (a run's whole length), INVOICING_HINTS_STANDBY (runs waiting before any
        hint); raises ValueError on a value that is not a number of seconds >= 0."""
        settings = current_environment()
        return cls(idle_s=settings.value(HINTS_LINGER_S), max_s=settings.value(HINTS_RUN_MAX_S),
                   standby=settings.value(HINTS_STANDBY))


@dataclass
class Lingered:
    """What a run did after its first set of hints."""

    runs: list[HintRun] = field(default_factory=list)
    ended: str = ""  # why it stopped staying

    @property
    def hints(self) -> int:
        """Hints applied while lingering."""
        return sum(run.acknowledged for run in self.runs)


def linger(target: WarehouseTarget, portal: Portal, client: InvoicingClient, settings: Linger, *,
           another_writer_waits: Callable[[], str | None], on_run: Callable[[HintRun], None] | None = None,
           on_idle: Callable[[], None] | None = None, started: float | None = None,
           api_settings: ApiSettings | None = None, rate_limit_per_s: float | None = None) -> Lingered:
    """Applies `portal`'s new hints as they arrive until the run has been idle `settings.idle_s`, has lasted
    `settings.max_s` (from `started`, time.monotonic(), default now), or `another_writer_waits()` names a
    writing run waiting for the warehouse (checked every QUEUE_CHECK_S). `on_run` sees every applied set;
    `on_idle()` is called whenever the spool holds no pending hint of the portal (the moment for work that must
    not delay the next set, such as the Dagster op's event writes).
    `api_settings`, `rate_limit_per_s`: the portal's, for a resource's re-read (invoicing_warehouse/runs/hints.py).
    Raises what apply_pending raises (the hints of that set stay pending; the sets before are acknowledged)."""
    outcome = Lingered()
    if not settings.enabled:
        outcome.ended = "lingering off"
        return outcome
    begun = time.monotonic() if started is None else started
    last_hint = time.monotonic()
    next_queue_check = 0.0
    with spool_for(target) as spool:
        while not outcome.ended:
            now = time.monotonic()
            if now - begun >= settings.max_s:
                outcome.ended = f"run length {settings.max_s:g} s reached"
            elif not settings.standby and now - last_hint >= settings.idle_s:
                outcome.ended = f"no new hint for {settings.idle_s:g} s"
            elif now >= next_queue_check and (waiting := another_writer_waits()):
                outcome.ended = waiting
            elif spool.pending(portal.name, 1):
                _settle(spool, portal.name, settings)
                run = apply_pending(target, portal, client=client, settings=api_settings,
                                    rate_limit_per_s=rate_limit_per_s)
                outcome.runs.append(run)
                if on_run is not None:
                    on_run(run)
                if run.waiting:
                    outcome.ended = run.waiting
                last_hint = time.monotonic()
            else:
                if on_idle is not None:
                    on_idle()
                time.sleep(settings.poll_s)
            if now >= next_queue_check:
                next_queue_check = now + QUEUE_CHECK_S
    return outcome


def _settle(spool: HintSpool, portal_id: str, settings: Linger) -> None:
    """Waits while the portal's pending hints keep growing: until none came for `settle_quiet_s`, at most
    `settle_max_s`."""
    deadline = time.monotonic() + settings.settle_max_s
    seen = spool.pending_count(portal_id)
    while time.monotonic() < deadline:
        time.sleep(min(settings.settle_quiet_s, max(0.0, deadline - time.monotonic())))
        now_pending = spool.pending_count(portal_id)
        if now_pending == seen:
            return
        seen = now_pending
