"""The DuckLake's upkeep: snapshots older than a horizon expire, the files only they held are removed, small
files are merged (security review M9: without it the catalog grows by every commit, for ever), data files whose rows
are largely deleted are rewritten (a merge load on `id` leaves a delete file beside a data file on every sync: reads
pay for both until the file is rewritten), and files the catalog does not know (a writer killed before its commit)
are deleted once they are older than a grace period.

What is never expired, whatever its age:
- the last published snapshot (readers.py: what every new reader opens);
- an earlier published snapshot that was still the last one within the horizon: a reader may have opened it
  then and still be on it (a dashboard page, an analyst's session);
- every snapshot after those, and every snapshot younger than the horizon (time travel reaches that far back);
- the month-ends: the last published snapshot of each of the last `INVOICING_LAKE_MONTH_ENDS_KEPT` calendar
  months before the current one (UTC; default 12), so that a month-end report reads its month back exactly
  (`connect(target, snapshot_version=...)`) long after the horizon. The last *published* one: a month's very last
  snapshot may be a portal's load half way, which no report should read. A month without a publication keeps
  nothing;
- anything at all on a lake that was never published (no snapshot is known to be unused).
The upkeep holds the lake's lock exclusive (lake_lock.py): no load or publication is half way meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import duckdb

from invoicing_warehouse.engine.connection import connect
from invoicing_warehouse.engine.environment.engine_settings import (
    LAKE_MONTH_ENDS_KEPT,
    LAKE_SNAPSHOT_HORIZON_DAYS,
)
from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.lake_conflicts import retry_on_conflict
from invoicing_warehouse.engine.lake_lock import EXCLUSIVE, lake_lock
from invoicing_warehouse.engine.readers import PUBLISHED
from invoicing_warehouse.engine.target import LAKE_NAME, WarehouseTarget

HORIZON_ENV = LAKE_SNAPSHOT_HORIZON_DAYS.name
DEFAULT_HORIZON = timedelta(days=7)  # a week of time travel: last week's reports read back exactly
MONTH_ENDS_ENV = LAKE_MONTH_ENDS_KEPT.name
DEFAULT_MONTH_ENDS = 12  # a year of month-end closes, each read back as it was published
# A data file is rewritten without its deleted rows once this share of them is deleted (DuckLake's own default,
# 0.95, waits until a file is nearly empty; a portal's 15-minute merges delete a few rows of the same files each
# time, and every reader pays for each delete file until then).
REWRITE_DELETE_SHARE = 0.25
# A file no snapshot names may be a load's that has not committed yet (dlt writes its files first; its own upkeep
# runs outside the lake's lock): only files older than this are orphans.
ORPHAN_GRACE = timedelta(hours=1)

Snapshot = tuple[int, datetime, str | None]  # id, commit time, commit message


@dataclass
class MaintenanceReport:
    """What one upkeep did (or, `dry_run`, would do)."""

    snapshots_before: int
    last_published: int | None
    keep_from: int | None  # the oldest snapshot kept because a reader may be on it
    expired: list[int] = field(default_factory=list)
    month_ends: list[int] = field(default_factory=list)  # older month-end snapshots kept for as-of reports
    files_removed: int = 0
    files_rewritten: int = 0  # data files rewritten without their deleted rows
    orphans_removed: int = 0  # files in the lake's storage that no snapshot names
    tables_merged: int = 0
    dry_run: bool = False

    def line(self) -> str:
        """One line for the terminal and Dagster's log."""
        verb = "would expire" if self.dry_run else "expired"
        if self.last_published is None:
            return (f"{self.snapshots_before} snapshots, none published yet: nothing expired (no snapshot is "
                    "known to be unused)")
        return (f"{verb} {len(self.expired)} of {self.snapshots_before} snapshots; kept every snapshot from "
                f"{self.keep_from} on (last published: {self.last_published}) and "
                f"{len(self.month_ends)} older month-end snapshot(s); "
                f"{'would remove' if self.dry_run else 'removed'} {self.files_removed} old file(s) and "
                f"{self.orphans_removed} orphaned file(s); rewrote {self.files_rewritten} file(s) without their "
                f"deleted rows; merged the files of {self.tables_merged} table(s)")


def horizon_from_env() -> timedelta:
    """INVOICING_LAKE_SNAPSHOT_HORIZON_DAYS (default 7); raises ValueError naming it when not a number > 0."""
    return timedelta(days=current_environment().value(LAKE_SNAPSHOT_HORIZON_DAYS))


def month_ends_from_env() -> int:
    """INVOICING_LAKE_MONTH_ENDS_KEPT (default 12); raises ValueError naming it unless a whole number >= 0."""
    return current_environment().value(LAKE_MONTH_ENDS_KEPT)


def month_end_snapshots(snapshots: list[Snapshot], months: int, now: datetime) -> list[int]:
    """The last published snapshot of each of the `months` calendar months (UTC) before `now`'s month."""
    current = now.astimezone(UTC).year * 12 + now.astimezone(UTC).month - 1
    last_of_month: dict[int, int] = {}
    for snapshot_id, at, message in snapshots:
        at_utc = at.astimezone(UTC) if at.tzinfo is not None else at.replace(tzinfo=UTC)
        month = at_utc.year * 12 + at_utc.month - 1
        if message == PUBLISHED and current - months <= month < current:
            last_of_month[month] = max(snapshot_id, last_of_month.get(month, snapshot_id))
    return sorted(last_of_month.values())


def parse_horizon_days(raw: str, where: str) -> timedelta:
    """`raw` days (fractions allowed) as a timedelta; raises ValueError naming `where` unless a number > 0."""
    try:
        days = float(raw)
    except ValueError:
        days = float("nan")
    if not 0 < days < 36500:
        raise ValueError(f"{where} must be a number of days > 0 (snapshots younger stay), not {raw!r}")
    return timedelta(days=days)


def expirable(snapshots: list[Snapshot], horizon: timedelta, now: datetime,
              month_ends: int = DEFAULT_MONTH_ENDS) -> tuple[list[int], int | None]:
    """(the ids that may expire, the oldest id kept because a reader may be on it): see the module's rules;
    `month_ends`: how many months' month-end snapshots stay (`month_end_snapshots`)."""
    cutoff = now - horizon
    published = sorted((snapshot_id, at) for snapshot_id, at, message in snapshots if message == PUBLISHED)
    if not published:
        return [], None
    keep_from = published[-1][0]
    for (earlier, _), (_, later_at) in pairwise(published):
        if later_at >= cutoff:  # `earlier` was the last publication until within the horizon
            keep_from = earlier
            break
    kept = set(month_end_snapshots(snapshots, month_ends, now))
    return sorted(snapshot_id for snapshot_id, at, _ in snapshots
                  if snapshot_id < keep_from and at < cutoff and snapshot_id not in kept), keep_from


def maintain(target: WarehouseTarget, *, horizon: timedelta = DEFAULT_HORIZON, now: datetime | None = None,
             dry_run: bool = False, month_ends: int = DEFAULT_MONTH_ENDS) -> MaintenanceReport:
    """Expires the lake's snapshots that `expirable` allows (keeping `month_ends` months' month-end snapshots),
    removes the files only they held and the orphaned ones, rewrites files with many deleted rows and merges small
    adjacent files (not when `dry_run`, which changes nothing). Raises ValueError on a DuckDB file (nothing to expire
    there), LakeBusy / WarehouseUnavailable as lake_lock and connect do."""
    if not target.is_lake:
        raise ValueError(f"{target.describe()} is a DuckDB file: snapshot upkeep is for the DuckLake engine "
                         "(INVOICING_WAREHOUSE_ENGINE=ducklake)")
    with lake_lock(target, EXCLUSIVE):
        connection = connect(target)
        try:
            return _maintain(connection, horizon, now or datetime.now(UTC), dry_run, month_ends)
        finally:
            connection.close()


def _maintain(connection: duckdb.DuckDBPyConnection, horizon: timedelta, now: datetime,
              dry_run: bool, month_ends: int) -> MaintenanceReport:
    snapshots: list[Snapshot] = connection.execute(
        f"select snapshot_id, snapshot_time, commit_message from {LAKE_NAME}.snapshots() order by snapshot_id"
    ).fetchall()
    ids, keep_from = expirable(snapshots, horizon, now, month_ends)
    published = [snapshot_id for snapshot_id, _, message in snapshots if message == PUBLISHED]
    older_month_ends = [s for s in month_end_snapshots(snapshots, month_ends, now) if keep_from and s < keep_from]
    report = MaintenanceReport(len(snapshots), max(published) if published else None, keep_from, ids,
                               month_ends=older_month_ends, dry_run=dry_run)
    if ids:
        report.expired = [int(row[0]) for row in connection.execute(
            "select snapshot_id from ducklake_expire_snapshots(?, dry_run => ?, versions => ?)",
            [LAKE_NAME, dry_run, ids]).fetchall()]
    if report.last_published is None:
        return report
    report.files_removed = len(connection.execute(
        "select * from ducklake_cleanup_old_files(?, dry_run => ?, cleanup_all => true)",
        [LAKE_NAME, dry_run]).fetchall())
    report.orphans_removed = len(connection.execute(
        "select * from ducklake_delete_orphaned_files(?, dry_run => ?, older_than => ?)",
        [LAKE_NAME, dry_run, now - ORPHAN_GRACE]).fetchall())
    if not dry_run:
        # the rewritten files' old versions stay while a kept snapshot names them: the next upkeep removes them
        report.files_rewritten = retry_on_conflict(lambda: sum(int(row[2]) for row in connection.execute(
            "select * from ducklake_rewrite_data_files(?, delete_threshold => ?)",
            [LAKE_NAME, REWRITE_DELETE_SHARE]).fetchall()))
        # a commit of its own: it can lose a race with a writer outside the lock (dlt's own upkeep), and is retried
        report.tables_merged = retry_on_conflict(lambda: len(connection.execute(
            "select * from ducklake_merge_adjacent_files(?)", [LAKE_NAME]).fetchall()))
    return report
