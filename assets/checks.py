"""Every Dagster asset check, through one frame (`checks_step`): a step that answers the selected checks of a
list, each answer made by the check's own function.

The warehouse's checks are the gate's own (invoicing_warehouse/runs/gate.py `warehouse_checks`: raw ids and references,
the contract's values, the fields served, what each model's front matter declares, the due amounts): `gate_steps`
turns them into Dagster checks, so Dagster and the gate judge with one set of rules. Blocking checks (severity
ERROR) run right after the assets they read, each in a step of its own (a failure skips what is downstream of
that step in the same run); the models' declared checks share one step. The gate runs the same checks again
before publishing, on every path.

Two checks read no warehouse: the dead webhook hints of the spool and the sync's notes of the last
materialization (both warnings).
"""

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckKey,
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetKey,
    MetadataValue,
    multi_asset_check,
)

from assets.error_boundary import redacted_errors
from assets.keys import RAW_TABLES, raw_asset_key, relation_asset_key
from assets.resources import WarehouseResource
from invoicing_warehouse.engine.sql_names import catalog_fixed
from invoicing_warehouse.engine.sql_runner import SqlModel
from invoicing_warehouse.runs.checks import CheckResult, WarehouseCheck
from invoicing_warehouse.runs.contract_checks import CONTRACT_VALUE_CHECKS
from invoicing_warehouse.runs.due_amount_check import DUE_AMOUNT_CHECK
from invoicing_warehouse.runs.gate import RAW_CHECKS
from invoicing_warehouse.runs.model_checks import checks_of, dates_at_midnight
from invoicing_warehouse.runs.schema_notices import new_columns
from invoicing_warehouse.runs.served_fields import SERVED_CHECKS
from pipelines.invoicing.webhooks.dead_letters import read_dead_letters
from pipelines.invoicing.webhooks.hint_events import EVENTS
from pipelines.invoicing.webhooks.hint_spool import spool_location_for

SYNC_READ_CHECK_NAME = "sync_read_exactly"
DEAD_HINTS_CHECK_NAME = "no_dead_hints"
FIELDS_KNOWN_CHECK = "fields_known"
SHOWN = 20  # records named in a warning's description and metadata


@dataclass(frozen=True)
class CheckCall:
    """What one check's answer may read: the step's context, the warehouse resource, the step's read-only
    connection (None for a step that opens no warehouse) and the check's key."""

    context: AssetCheckExecutionContext
    warehouse: WarehouseResource
    connection: Any
    key: AssetCheckKey


Answer = Callable[[CheckCall], AssetCheckResult]


def checks_step(name: str, checks: Sequence[tuple[AssetCheckSpec, Answer]], *,
                opens_warehouse: bool = True) -> AssetChecksDefinition:
    """One Dagster step answering the selected checks of `checks` (spec, answer), in a stable order, on one
    read-only connection of the warehouse (none when `opens_warehouse` is False: a DuckDB file open here would
    block a writer in another process). What reaches Dagster's event log passes the scrubber."""
    answers = {spec.key: answer for spec, answer in checks}

    @multi_asset_check(specs=[spec for spec, _ in checks], can_subset=True, name=name)
    def _step(context: AssetCheckExecutionContext, warehouse: WarehouseResource) -> Iterator[AssetCheckResult]:
        opened = warehouse.connect(read_only=True) if opens_warehouse else nullcontext()
        # one look at the catalog serves every check of the step (a read-only connection alters nothing); the
        # answers are yielded once it is closed, never from inside the context it sets
        with redacted_errors(), opened as connection, (
                catalog_fixed(connection) if connection is not None else nullcontext()):
            results = [answers[key](CheckCall(context, warehouse, connection, key))
                       for key in sorted(context.selected_asset_check_keys, key=str)]
        yield from results

    return _step


# ---------------------------------------------------------------- the gate's checks


def _asset_key(relation: str) -> AssetKey:
    key = relation_asset_key(relation)
    assert key is not None, f"{relation} has no asset"
    return key


def as_asset_check_result(result: CheckResult) -> AssetCheckResult:
    """A gate check's answer as Dagster's (its metadata as Dagster metadata values)."""
    return AssetCheckResult(
        asset_key=_asset_key(result.relation),
        check_name=result.name,
        passed=result.passed,
        severity=AssetCheckSeverity(result.severity),
        description=result.description,
        metadata={key: MetadataValue.json(value) if isinstance(value, (list, dict)) else value
                  for key, value in result.metadata.items()},
    )


def _gate_check(check: WarehouseCheck) -> tuple[AssetCheckSpec, Answer]:
    spec = AssetCheckSpec(
        check.name, asset=_asset_key(check.relation), blocking=check.blocking, description=check.description,
        additional_deps=[key for r in (*check.reads, *check.after) if (key := relation_asset_key(r)) is not None])
    return spec, lambda call: as_asset_check_result(check.run(call.connection))


def gate_steps(name: str, checks: Iterable[WarehouseCheck], *, one_step_each: bool = False
               ) -> list[AssetChecksDefinition]:
    """The gate's `checks` as Dagster checks: one step for all (named `name`), or one step per check."""
    specs = [_gate_check(check) for check in checks]
    if not one_step_each:
        return [checks_step(name, specs)] if specs else []
    return [checks_step(f"{name}_{spec.asset_key.path[-1]}_{spec.name}", [(spec, answer)]) for spec, answer in specs]


def has_asset(check: WarehouseCheck) -> bool:
    """Whether the relation `check` judges is a Dagster asset (the PDF archive's table is not one: the gate
    alone runs its check)."""
    return relation_asset_key(check.relation) is not None


def raw_checks() -> list[AssetChecksDefinition]:
    """The gate's checks of the raw tables (ids unique, references, deleted parents), each in a step of its own:
    a failed blocking check fails its step, and Dagster skips what is downstream of the step, so a duplicate in
    one table holds back only what reads that table."""
    return gate_steps("raw", [check for check in RAW_CHECKS if has_asset(check)], one_step_each=True)


def model_checks(models: Iterable[SqlModel]) -> list[AssetChecksDefinition]:
    """The blocking checks each table model's front matter declares (grain, not_null, accepted_range), one step
    for all; `dates_at_midnight` (a warning) for the models listing date-only values."""
    models = list(models)
    declared = [check for model in models for check in checks_of(model) if check.blocking]
    midnight = [dates_at_midnight(model) for model in models if model.manifest.date_only]
    return [*gate_steps("models_declared_checks", declared), *gate_steps("models_dates_at_midnight", midnight)]


def contract_checks() -> list[AssetChecksDefinition]:
    """The contract's value checks, each in a step of its own (after its inputs); the fields served per raw
    table and the due amounts stored by the sync, one step each."""
    return [*gate_steps("contract", CONTRACT_VALUE_CHECKS, one_step_each=True),
            *gate_steps("raw_fields_served", SERVED_CHECKS),
            *gate_steps("due_amounts", [DUE_AMOUNT_CHECK])]


# ---------------------------------------------------------------- warnings beside the gate's checks


def _fields_known(call: CheckCall) -> AssetCheckResult:
    table = call.key.asset_key.path[-1]
    found = new_columns(call.connection)
    columns = [c for t, cs in found.items() if t == table or t.startswith(table + "__")
               for c in (cs if t == table else [f"{t}.{c}" for c in cs])]
    return AssetCheckResult(
        asset_key=call.key.asset_key, check_name=FIELDS_KNOWN_CHECK, passed=not columns,
        severity=AssetCheckSeverity.WARN,
        description=f"new field(s) served, not in the contract ledger: {', '.join(columns)}" if columns else None,
        metadata={"new_columns": MetadataValue.json(columns)})


def fields_known_check() -> AssetChecksDefinition:
    """A WARN `fields_known` per raw table (invoicing_warehouse/runs/schema_notices.py): the columns of fields the API
    serves that the contract ledger does not know. Never blocking: a new field changes no figure."""
    return checks_step("raw_fields_known", [
        (AssetCheckSpec(FIELDS_KNOWN_CHECK, asset=raw_asset_key(table),
                        description="Every column of the raw table is a field the contract ledger knows."),
         _fields_known) for table in RAW_TABLES])


def _dead_hints(call: CheckCall) -> AssetCheckResult:
    _, letters = read_dead_letters(spool_location_for(call.warehouse.target()), limit=1_000)
    table = call.key.asset_key.path[-1]
    dead = [letter for letter in letters if letter.resource == table]
    named = [f"{letter.portal_id}/{letter.record_id}: {letter.attempts} attempts, {letter.last_error}"
             for letter in dead[:SHOWN]]
    return AssetCheckResult(
        asset_key=call.key.asset_key, check_name=DEAD_HINTS_CHECK_NAME, passed=not dead,
        severity=AssetCheckSeverity.WARN,
        description=None if not dead else f"{len(dead)} dead webhook hint(s) in the spool: " + "; ".join(named),
        metadata={"dead_hints": MetadataValue.int(len(dead)), "records": MetadataValue.json(named)})


# A warning, not a blocking check: a dead letter means the real-time path skipped one record (the API refused
# it alone, or the delivery named an id that is no record); the scheduled sync still reads every record, so no
# figure is wrong because of it. Blocking would hand anyone holding the receiver's door a way to freeze the
# readers' figures with one forged delivery. The warning names the records and the last error.
raw_no_dead_hints = checks_step("raw_no_dead_hints", [
    (AssetCheckSpec(DEAD_HINTS_CHECK_NAME, asset=raw_asset_key(table),
                    description="No webhook hint of this table is kept dead in the spool (the scheduled sync "
                    "still reads the records; a dead hint is one the real-time path skipped)."), _dead_hints)
    for table in sorted({resource for resource, _ in EVENTS.values()})], opens_warehouse=False)


def degraded_notes(metadata: dict) -> list[str] | None:
    """The degraded note texts of a materialization's metadata; None when it carries no `sync_notes`."""
    entry = metadata.get("sync_notes")
    if entry is None:
        return None
    notes = entry.value if hasattr(entry, "value") else entry
    return [note["text"] for note in notes or [] if note.get("degraded")]


def _sync_read(call: CheckCall) -> AssetCheckResult:
    event = call.context.instance.get_latest_materialization_event(call.key.asset_key)
    materialization = event.asset_materialization if event is not None else None
    degraded = degraded_notes(dict(materialization.metadata)) if materialization is not None else None
    return AssetCheckResult(
        asset_key=call.key.asset_key, check_name=SYNC_READ_CHECK_NAME, passed=not degraded,
        severity=AssetCheckSeverity.WARN, description="; ".join(degraded) if degraded else None,
        metadata={"degraded_notes": MetadataValue.json(degraded or []),
                  "notes_recorded": MetadataValue.bool(degraded is not None)})


# The sync writes a note when it reads a table differently from the plan; a `degraded` note means something is
# unknown (a list answered in one page that may be incomplete, no server clock, ...). The ingestion puts each
# table's notes in its materialization metadata (assets/ingestion.py). A warning: the data loaded is kept.
raw_sync_read_exactly = checks_step("raw_sync_read_exactly", [
    (AssetCheckSpec(SYNC_READ_CHECK_NAME, asset=raw_asset_key(table),
                    description="The last sync left no degraded note for this table (nothing it read is "
                    "unknown)."), _sync_read) for table in RAW_TABLES], opens_warehouse=False)


def all_checks(models: Iterable[SqlModel]) -> list[AssetChecksDefinition]:
    """Every asset check of the project, for `models` (the product's and the analyst's)."""
    return [*raw_checks(), *contract_checks(), *model_checks(models), fields_known_check(), raw_no_dead_hints,
            raw_sync_read_exactly]
