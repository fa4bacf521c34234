"""The warehouse's status, per portal, in one place: the last successful sync (when, records), its age against
a threshold, the webhook hints waiting and kept dead, the gate's failing checks and the readers' copy's age.
`invoicing-warehouse status` prints it (invoicing_warehouse/cli/status_command.py), the dashboard's Portals page
shows it (invoicing_warehouse/dashboard/screens/portals.py). Read-only: it opens no warehouse connection and creates no
file.

Stale by default after twice the sync interval (INVOICING_SYNC_INTERVAL_MINUTES, 15 min: 30 min), the rule of
Dagster's freshness policy on the raw tables (assets/ingestion.py), so the two never disagree: one late or failed run is
tolerated, two in a row are not. INVOICING_STALE_AFTER_MINUTES (or `--stale-after`) sets another threshold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from invoicing_warehouse.engine.environment.kinds import SettingError
from invoicing_warehouse.engine.environment.reader import environment
from invoicing_warehouse.engine.environment.run_settings import STALE_AFTER_MINUTES, SYNC_INTERVAL_MINUTES
from invoicing_warehouse.engine.publish import default_snapshot_path
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs import gate_state, run_log
from pipelines.invoicing.webhooks.dead_letters import counts_by_portal
from pipelines.invoicing.webhooks.hint_spool import spool_location_for

STALE_AFTER_ENV = STALE_AFTER_MINUTES.name
SYNC_INTERVAL_ENV = SYNC_INTERVAL_MINUTES.name
DEFAULT_SYNC_MINUTES = 15.0


class StatusError(ValueError):
    """A threshold that is not a positive number of minutes (a usage error)."""


@dataclass
class PortalStatus:
    """One portal's line of the status."""

    portal: str
    last_sync_at: str | None  # ISO 8601 UTC of the last successful sync; None: never synced
    last_sync_records: int | None
    age_s: float | None
    fresh: bool
    pending_hints: int
    dead_hints: int
    failing_checks: list[str]  # the gate's blocking failures, and this portal's reads holding marts

    @property
    def ok(self) -> bool:
        """Fresh, no check failing and no hint kept dead (Dagster's `no_dead_hints` fails on one too: a person
        must trace it); hints waiting are normal between two applying runs."""
        return self.fresh and not self.failing_checks and not self.dead_hints


@dataclass
class Status:
    """The whole status: every portal, the threshold, the readers' copy's age, the checks that flag figures."""

    checked_at: str
    stale_after_s: float
    portals: list[PortalStatus]
    readers_copy_published_at: str | None
    readers_copy_age_s: float | None
    flagged_checks: list[str] = field(default_factory=list)  # failed non-blocking checks (figures published)

    @property
    def ok(self) -> bool:
        """True when every portal is fresh and passing (exit 0)."""
        return bool(self.portals) and all(portal.ok for portal in self.portals)

    def as_json(self) -> dict[str, Any]:
        """The stable shape `status --json` prints (keys only ever added)."""
        return {"ok": self.ok, **asdict(self)}


def stale_after(minutes: float | str | None = None, environ: Mapping[str, str] | None = None) -> timedelta:
    """The threshold: `minutes`, else INVOICING_STALE_AFTER_MINUTES, else twice INVOICING_SYNC_INTERVAL_MINUTES
    (15 by default). Raises StatusError for a value that is not a positive number."""
    if minutes is not None and minutes != "":
        try:  # `--stale-after` comes as the command line wrote it
            number = float(minutes)
        except ValueError:
            raise StatusError(f"--stale-after must be a number of minutes, got {minutes!r}") from None
        if not number > 0:
            raise StatusError(f"--stale-after must be above 0 minutes, got {minutes!r}")
        return timedelta(minutes=number)
    settings = environment(environ)
    try:
        chosen = settings.value(STALE_AFTER_MINUTES)
        return timedelta(minutes=chosen if chosen is not None else 2 * settings.value(SYNC_INTERVAL_MINUTES))
    except SettingError as error:
        raise StatusError(str(error)) from None


def _parse(moment: str | None) -> datetime | None:
    if not moment:
        return None
    try:
        return datetime.fromisoformat(moment).astimezone(UTC)
    except ValueError:
        return None


def _published_at(target: WarehouseTarget, state: gate_state.GateState) -> datetime | None:
    published = _parse(state.last_published_at)
    if published is None and not target.is_lake and target.path is not None:
        copy = default_snapshot_path(target.path)
        if copy.exists():  # a copy published before the gate kept its time
            published = datetime.fromtimestamp(copy.stat().st_mtime, tz=UTC)
    return published


def warehouse_status(target: WarehouseTarget, portals: list[str] | None = None, *,
                     threshold: timedelta | None = None, now: datetime | None = None) -> Status:
    """The status of `target`'s portals (`portals`, and every portal a sync has recorded) at `now`."""
    now = now or datetime.now(UTC)
    threshold = threshold or stale_after()
    state = gate_state.load(target)
    syncs = run_log.last_syncs(target)
    pending, dead = counts_by_portal(spool_location_for(target))
    failing = [f"{f.get('check')} on {f.get('relation')}" for f in state.failures]
    lines = []
    for name in sorted(set(portals or []) | set(syncs)):
        last = syncs.get(name) or {}
        at = _parse(last.get("at"))
        age = None if at is None else max(0.0, (now - at).total_seconds())
        held = [f"read may be incomplete: {read.table} ({'; '.join(read.notes)})"
                for read in state.degraded_reads.values() if read.portal == name]
        lines.append(PortalStatus(name, last.get("at"), last.get("records"), age,
                                  age is not None and age <= threshold.total_seconds(),
                                  pending.get(name, 0), dead.get(name, 0), failing + held))
    published = _published_at(target, state)
    return Status(now.replace(microsecond=0).isoformat().replace("+00:00", "Z"), threshold.total_seconds(), lines,
                  None if published is None else published.replace(microsecond=0).isoformat().replace("+00:00", "Z"),
                  None if published is None else max(0.0, (now - published).total_seconds()),
                  [f"{w.get('check')} on {w.get('relation')}" for w in state.warnings])
