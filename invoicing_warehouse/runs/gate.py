"""The one gate between a build and the readers: whatever triggers it (the CLI's `models` and `sync`, `sync
--follow`, webhook hint runs on both paths, the Dagster jobs, the DuckLake, the dashboard's as-of builds), figures
reach readers only through `build_and_publish` or `publish_checked`:

1. the marts built on a read that may be incomplete (a degraded sync note, kept in
   invoicing_warehouse/runs/gate_state.py until a full read of that table is clean) are not rebuilt: they keep their
   last good figures, and say why;
2. the models are built as of one report date, in one transaction;
3. every blocking check runs inside that transaction; when one fails (other than on the held marts), the whole
   build rolls back and nothing is published: readers keep the last good copy;
4. otherwise the build commits and is published; the gate's state records what was held and since when, so
   the dashboard shows a banner on every page and `models`/`sync` exit 1 naming the check and its figures.

On a DuckLake, steps 2-4 hold the lake's lock exclusive (invoicing_warehouse/engine/lake_lock.py) while loads hold it
shared (invoicing_warehouse/runs/sync.py, invoicing_warehouse/runs/hints.py): a build never reads, and a publication
never shows, another portal's load half way.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import duckdb

from invoicing_warehouse.engine.connection import WarehouseUnavailable, connect, current_snapshot
from invoicing_warehouse.engine.lake_lock import EXCLUSIVE, lake_lock
from invoicing_warehouse.engine.portal_builds import build_models_for_portals
from invoicing_warehouse.engine.readers import publish_if_changed
from invoicing_warehouse.engine.sql_names import catalog_fixed
from invoicing_warehouse.engine.sql_runner import (
    analyst_models_dir,
    build_models,
    discover_models,
    drop_stale_analyst_models,
    missing_models,
    today_in_portal_zone,
)
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs import gate_state, month_end_trends
from invoicing_warehouse.runs.archive_checks import ARCHIVE_CHECKS
from invoicing_warehouse.runs.checks import (
    DELETED_PARENT_CHECKS,
    REFERENCE_CHECKS,
    CheckResult,
    WarehouseCheck,
    ids_unique,
    marts_reading,
)
from invoicing_warehouse.runs.contract_checks import CONTRACT_VALUE_CHECKS
from invoicing_warehouse.runs.due_amount_check import DUE_AMOUNT_CHECK
from invoicing_warehouse.runs.model_checks import model_checks
from invoicing_warehouse.runs.served_fields import SERVED_CHECKS
from pipelines.invoicing.settings import RESOURCE_NAMES

RUN_WIDE = "run"  # the table name of a degraded note that concerns every table of the run (`run: ...`)
# A DuckLake with no new snapshot for this long has no writer half way through a load (its chunks commit more
# often); a writer slower than that between two commits makes a false "held", never a wrong publication.
LAKE_QUIET_S = 5.0
LAKE_SETTLE_S = 180.0  # the longest a publication waits for the lake's other writers to finish

RAW_CHECKS: tuple[WarehouseCheck, ...] = (*(ids_unique(table) for table in RESOURCE_NAMES), *REFERENCE_CHECKS,
                                          *DELETED_PARENT_CHECKS, *ARCHIVE_CHECKS)


class ChecksFailed(Exception):
    """Blocking checks failed inside a build: it is rolled back (raised through `build_models`)."""

    def __init__(self, failures: list[CheckResult]) -> None:
        super().__init__("; ".join(failure.line() for failure in failures))
        self.failures = failures


@dataclass
class GateOutcome:
    """What one pass through the gate did."""

    note: str
    as_of: date | None = None
    models: dict[str, int] = field(default_factory=dict)
    failures: list[CheckResult] = field(default_factory=list)  # blocking checks that held the build back
    held: dict[str, str] = field(default_factory=dict)  # marts kept at their last good figures, and why
    portals: list[str] | None = None  # the portals whose rows were rebuilt; None: every portal's
    warnings: list[CheckResult] = field(default_factory=list)  # failed checks that do not block
    published: str | None = None
    # the held marts held only because a list's read failed (`record_reads(failed=...)`): the run was partial
    partial: tuple[str, ...] = ()
    # why the copy carries no month-end trend (invoicing_warehouse/runs/month_end_trends.py)
    trend_refused: str | None = None
    trend_carried: int = 0  # month-ends of the trend carried over from the last publication (unchanged rows)
    # wall seconds of each step (models, checks, trend, publish): where a publication's time goes
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def only_partial(self) -> bool:
        """True when nothing failed and every mart held is held because a list's read failed (a partial run:
        the others were published), not for a doubt that only a full read clears."""
        return not self.failures and bool(self.held) and set(self.held) <= set(self.partial)

    @property
    def ok(self) -> bool:
        """True when every figure readers see is the latest: nothing failed, nothing held."""
        return not self.failures and not self.held

    def lines(self) -> list[str]:
        """What a person must know, one line each (empty when ok): what failed, which figures it protects."""
        lines = [f"blocking check failed, nothing published: {failure.line()}" for failure in self.failures]
        lines += [f"held at its last good figures: {mart}: {why}" for mart, why in sorted(self.held.items())]
        lines += [f"published, but flagged: {warning.line()}" for warning in self.warnings]
        if self.trend_refused and not self.held:
            lines.append(f"published without its month-end trend: {self.trend_refused}")
        return lines


def warehouse_checks(connection: duckdb.DuckDBPyConnection,
                     models_dir: Path | None = None) -> list[WarehouseCheck]:
    """Every warehouse check: raw ids and references, the contract's value checks, the fields served (flags),
    and what each model's front matter declares (its grain, tests, dates at midnight), the analyst's models of
    `models_dir` (default: the setting INVOICING_MODELS_DIR) included."""
    del connection  # every check names its relation; one not built yet passes with a note
    return [*RAW_CHECKS, *CONTRACT_VALUE_CHECKS, *SERVED_CHECKS, DUE_AMOUNT_CHECK,
            *model_checks(models_dir=analyst_models_dir(models_dir))]


def run_checks(connection: duckdb.DuckDBPyConnection, models_dir: Path | None = None) -> list[CheckResult]:
    """Every warehouse check's answer on `connection` (the gate's, the dashboard's Freshness page's)."""
    with catalog_fixed(connection):  # the checks only read: one look at the catalog serves them all
        return [check.run(connection) for check in warehouse_checks(connection, models_dir)]


def judge(connection: duckdb.DuckDBPyConnection, held: Iterable[str] = (),
          models_dir: Path | None = None) -> tuple[list[CheckResult], list[CheckResult]]:
    """(the blocking checks that fail on `connection`, but those whose every protected figure is `held` (not
    rebuilt from what they doubt); the other failed checks, which flag figures without holding them)."""
    held = set(held)
    failed = [result for result in run_checks(connection, models_dir) if not result.passed]
    blocking = [result for result in failed
                if result.blocks and not (result.protects and set(result.protects) <= held)]
    return blocking, [result for result in failed if result not in blocking]


def blocking_failures(connection: duckdb.DuckDBPyConnection, held: Iterable[str] = ()) -> list[CheckResult]:
    """The blocking checks that fail on `connection` (see `judge`)."""
    return judge(connection, held)[0]


def held_marts(state: gate_state.GateState) -> dict[str, str]:
    """The marts built on a read that may be incomplete, each with the reason (portal, table, note)."""
    held: dict[str, str] = {}
    every_mart = tuple(m.key for m in discover_models() if m.schema == "marts")
    for read in sorted(state.degraded_reads.values(), key=lambda r: (r.portal, r.table)):
        marts = every_mart if read.table == RUN_WIDE else marts_reading([read.table])
        state_of_read = "read failed" if read.failed else "read incomplete"
        reason = f"portal {read.portal}: {read.table} {state_of_read} since {read.since} ({'; '.join(read.notes)})"
        for mart in marts:
            held.setdefault(mart, reason)
    return held


def failed_read_marts(state: gate_state.GateState) -> tuple[str, ...]:
    """The marts held only because a list's read failed: built on a failed read and on no read in doubt."""
    every_mart = tuple(m.key for m in discover_models() if m.schema == "marts")
    by_failed: set[str] = set()
    by_doubt: set[str] = set()
    for read in state.degraded_reads.values():
        marts = every_mart if read.table == RUN_WIDE else marts_reading([read.table])
        (by_failed if read.failed else by_doubt).update(marts)
    return tuple(sorted(by_failed - by_doubt))


def record_reads(target: WarehouseTarget, portal: str, degraded_notes: Sequence[str], *, full_read: bool,
                 failed: Mapping[str, str] | None = None, read: Iterable[str] | None = None) -> None:
    """After a sync of `portal`: remembers each table it read with a degraded note (`<table>: ...`) until a full
    read (reconcile or full refresh) of that portal reads it cleanly; an incremental read cannot bring back
    rows an incomplete read skipped.

    `failed`: the tables whose read failed in this run (table -> the error's line), held until a run that
    reads them (`read`: the tables this run read; None: every table) reads them without failing: the failed
    read kept its cursor, so the next clean read, incremental or not, is whole."""
    failed = dict(failed or {})
    degraded: dict[str, list[str]] = {}
    for note in degraded_notes:
        table, _, _ = note.partition(":")
        degraded.setdefault(table.strip() or RUN_WIDE, []).append(note)
    with gate_state.changing(target) as state:
        if full_read:
            state.degraded_reads = {key: read for key, read in state.degraded_reads.items()
                                    if read.portal != portal}
        healed = set(RESOURCE_NAMES if read is None else read) - set(failed)
        state.degraded_reads = {key: entry for key, entry in state.degraded_reads.items()
                                if not (entry.failed and entry.portal == portal and entry.table in healed)}
        for table, notes in degraded.items():
            key = f"{portal}/{table}"
            since = state.degraded_reads[key].since if key in state.degraded_reads else gate_state.now_iso()
            state.degraded_reads[key] = gate_state.DegradedRead(portal, table, notes, since)
        for table, line in failed.items():
            key = f"{portal}/{table}"
            known = state.degraded_reads.get(key)
            note = f"{table}: read failed: {line}"
            if known is not None and not known.failed:  # in doubt already: only a full read clears it
                known.notes = [*known.notes, note] if note not in known.notes else known.notes
                continue
            since = known.since if known is not None else gate_state.now_iso()
            state.degraded_reads[key] = gate_state.DegradedRead(portal, table, [note], since, failed=True)


def build_and_publish(target: WarehouseTarget, *, note: str, as_of: date | None = None,
                      select: Iterable[str] | None = None, changed: bool = True, behind: bool = True,
                      on_built=None, models_dir: Path | None = None,
                      portals: Iterable[str] | None = None) -> GateOutcome:
    """Builds the models as of `as_of` (default today in the portal's zone), runs the blocking checks and
    publishes only if they pass (see the module's docstring).

    `select`: only these models (a hint run's downstream models); every model is built instead when the last
    build was of another report date, when marts were held or never built, so that one build is of one date.
    `changed`/`behind`: as `publish_if_changed` (a file is copied only when something changed).
    `models_dir`: the analyst's folder of models (default: the setting INVOICING_MODELS_DIR), built after the
    product's in the same transaction and judged by their own front matter.
    `portals`: the portals whose raw rows the run changed: only their rows of the chosen models are rebuilt
    (invoicing_warehouse/engine/portal_builds.py), unless the whole build is due (the rule of `select`).
    Raises MissingRawTableError / ModelDefinitionError / duckdb.Error as `build_models` does (nothing built).
    """
    as_of = as_of or today_in_portal_zone()
    models_dir = analyst_models_dir(models_dir)
    # on a DuckLake, no other writer's load is half way while this build reads the raw tables and publishes
    with lake_lock(target, EXCLUSIVE):
        state = gate_state.load(target)
        held = held_marts(state)
        outcome = GateOutcome(note, as_of, held=held, partial=failed_read_marts(state))
        connection = _open(target)
        try:
            chosen = _models_to_build(connection, state, as_of, select, models_dir)
            by_portal = portals is not None and not _whole_build_due(connection, state, as_of, models_dir)
            chosen = [key for key in chosen if key not in held]

            def gate(conn: duckdb.DuckDBPyConnection) -> None:
                judged = time.perf_counter()
                failures, outcome.warnings = judge(conn, held, models_dir)
                outcome.seconds["checks"] = time.perf_counter() - judged
                if failures:
                    raise ChecksFailed(failures)

            built = time.perf_counter()
            try:
                if by_portal:
                    assert portals is not None
                    outcome.portals = sorted(set(portals))
                    outcome.models = build_models_for_portals(connection, portals, as_of, chosen, on_built=on_built,
                                                              before_commit=gate, models_dir=models_dir)
                else:
                    outcome.models = build_models(connection, as_of=as_of, select=chosen, on_built=on_built,
                                                  before_commit=gate, models_dir=models_dir)
            except ChecksFailed as failed:
                outcome.failures = failed.failures
            outcome.seconds["models"] = time.perf_counter() - built - outcome.seconds.get("checks", 0.0)
        finally:
            connection.close()
        return _publish_or_hold(target, outcome, changed=changed, behind=behind)


def publish_checked(target: WarehouseTarget, *, note: str, as_of: date | None = None, changed: bool = True,
                    behind: bool = True, allowed: bool = True) -> GateOutcome:
    """Publishes what is already built (a `sync` without models, a Dagster job whose assets built the marts)
    only if the blocking checks pass. `as_of`: the report date those marts were built for (recorded).
    `allowed=False`: never publishes (a run that failed), only records what the checks hold back."""
    with lake_lock(target, EXCLUSIVE):  # on a DuckLake: judged and published with no load half way
        state = gate_state.load(target)
        outcome = GateOutcome(note, as_of, held=held_marts(state), partial=failed_read_marts(state))
        if allowed and not (target.is_lake or changed or behind):
            # nothing to publish (readers are current and the run changed nothing): no check to run either
            publish_if_changed(target, note, changed=False, behind=False)
            return outcome
        if allowed:
            changed = _drop_stale_analyst_tables(target) or changed
        outcome.failures, outcome.warnings = _judge_when_settled(target, outcome.held)
        if not allowed:
            _record(target, outcome)
            return outcome
        return _publish_or_hold(target, outcome, changed=changed, behind=behind)


def _drop_stale_analyst_tables(target: WarehouseTarget) -> bool:
    """Drops the analyst's tables whose model file is gone (or whose folder is no longer named) before a
    publication of what Dagster built (build_models does it for every other build). True when one was dropped."""
    connection = _open(target)
    try:
        return bool(drop_stale_analyst_models(connection, discover_models(models_dir=analyst_models_dir())))
    finally:
        connection.close()


def check_built(connection: duckdb.DuckDBPyConnection) -> list[CheckResult]:
    """The blocking checks failing on models just built on `connection` (the dashboard's as-of builds, which
    are never published: their failures are shown instead of their figures)."""
    return blocking_failures(connection)


def _judge_when_settled(target: WarehouseTarget,
                        held: Iterable[str]) -> tuple[list[CheckResult], list[CheckResult]]:
    """`judge` on the warehouse as committed. A DuckLake takes several writers at once (one per portal), and
    one of them may be half way through its load (documents committed, their customers not yet): failures
    seen while another writer keeps committing are judged again once the lake has been quiet for
    LAKE_QUIET_S (at most LAKE_SETTLE_S in all); failures on a quiet lake are real."""
    deadline = time.monotonic() + LAKE_SETTLE_S
    while True:
        connection = _open(target)
        try:
            seen = current_snapshot(connection) if target.is_lake else None
            failures, warnings = judge(connection, held)
        finally:
            connection.close()
        if not failures or seen is None or time.monotonic() >= deadline:
            return failures, warnings
        time.sleep(LAKE_QUIET_S)
        connection = _open(target)
        try:
            quiet = current_snapshot(connection) == seen
        finally:
            connection.close()
        if quiet:
            return failures, warnings


def _open(target: WarehouseTarget) -> duckdb.DuckDBPyConnection:
    """The warehouse for writing; WarehouseUnavailable (with DuckDB's reason) when it cannot be opened."""
    try:
        return connect(target)
    except duckdb.Error as error:
        raise WarehouseUnavailable(str(error)) from None


def _models_to_build(connection: duckdb.DuckDBPyConnection, state: gate_state.GateState, as_of: date,
                     select: Iterable[str] | None, models_dir: Path | None) -> list[str]:
    """`select`, or every model's key (see build_and_publish)."""
    if select is None or _whole_build_due(connection, state, as_of, models_dir):
        return [model.key for model in discover_models(models_dir=models_dir)]
    return list(select)


def _whole_build_due(connection: duckdb.DuckDBPyConnection, state: gate_state.GateState, as_of: date,
                     models_dir: Path | None) -> bool:
    """True when only a build of every model for every portal is whole: a partial build (some models, some
    portals) is whole only on top of a whole build of the same date that passed the gate."""
    return bool(state.built_as_of != as_of.isoformat() or state.held_marts or state.failures
                or missing_models(connection, models_dir=models_dir))


def _publish_or_hold(target: WarehouseTarget, outcome: GateOutcome, *,
                     changed: bool, behind: bool) -> GateOutcome:
    if not outcome.failures:
        started = time.perf_counter()
        if changed or behind or target.is_lake:  # a new copy is published: its trend is of its own raw tables
            _write_trends(target, outcome)
        outcome.seconds["trend"] = time.perf_counter() - started
        outcome.published = publish_if_changed(target, outcome.note, changed=changed, behind=behind)
        outcome.seconds["publish"] = time.perf_counter() - started - outcome.seconds["trend"]
    _record(target, outcome)
    return outcome


def _write_trends(target: WarehouseTarget, outcome: GateOutcome) -> None:
    """Writes marts.month_end_trends for the report date of the marts about to be published (or drops it: the
    setting off, no known date, or the month-end builds refused), so the copy never carries an older trend."""
    built_as_of = gate_state.load(target).built_as_of
    as_of = outcome.as_of or (date.fromisoformat(built_as_of) if built_as_of else None)
    connection = _open(target)
    try:
        if as_of is None or not month_end_trends.publish_trends_enabled():
            connection.execute(f"drop table if exists {month_end_trends.TABLE}")
            return
        outcome.trend_refused, outcome.trend_carried = month_end_trends.write_table_carried(
            connection, as_of, outcome.held, warehouse_checks)
    finally:
        connection.close()


def _as_record(result: CheckResult) -> dict[str, object]:
    return {"check": result.name, "relation": result.relation, "protects": list(result.protects),
            "description": result.description or "", "severity": result.severity}


def _record(target: WarehouseTarget, outcome: GateOutcome) -> None:
    # reloaded under the lock: another portal's writer of a lake may have recorded its reads meanwhile
    now = gate_state.now_iso()
    with gate_state.changing(target) as state:
        if outcome.failures:
            state.failures = [_as_record(failure) for failure in outcome.failures]
            state.failing_since = state.failing_since or now
            return
        state.failures, state.failing_since = [], None
        if outcome.as_of is not None:
            state.built_as_of = outcome.as_of.isoformat()
        if outcome.published is not None:
            state.last_published_at, state.last_published_note = now, outcome.note
        state.held_since = (state.held_since or now) if outcome.held else None
        state.held_marts = dict(outcome.held)
        state.warnings = [_as_record(warning) for warning in outcome.warnings]
