"""Whether the last sync read each raw table exactly: a WARN check per raw table on the sync's notes.

The sync writes a note when it reads a table differently from the plan; a `degraded` note means
something is unknown (a list answered in one page that may be incomplete, no server clock, ...), not
just slower. The ingestion puts each table's notes in its materialization metadata (`sync_notes`,
assets/ingestion.py); this check reads the latest materialization recorded by the Dagster instance and
fails, naming the notes, when one of them is degraded. It is a warning: the data loaded is kept.
"""

from collections.abc import Iterator

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    MetadataValue,
    multi_asset_check,
)

from assets.keys import RAW_TABLES, raw_asset_key

SYNC_READ_CHECK_NAME = "sync_read_exactly"


def degraded_notes(metadata: dict) -> list[str] | None:
    """The degraded note texts of a materialization's metadata; None when it carries no `sync_notes`."""
    entry = metadata.get("sync_notes")
    if entry is None:
        return None
    notes = entry.value if hasattr(entry, "value") else entry
    return [note["text"] for note in notes or [] if note.get("degraded")]


@multi_asset_check(
    specs=[
        AssetCheckSpec(
            SYNC_READ_CHECK_NAME,
            asset=raw_asset_key(table),
            description="The last sync left no degraded note for this table (nothing it read is unknown).",
        )
        for table in RAW_TABLES
    ],
    can_subset=True,
    name="raw_sync_read_exactly",
)
def raw_sync_read_exactly(context: AssetCheckExecutionContext) -> Iterator[AssetCheckResult]:
    """Warns for each selected raw table whose latest materialization carries a degraded sync note."""
    for check_key in sorted(context.selected_asset_check_keys, key=str):
        event = context.instance.get_latest_materialization_event(check_key.asset_key)
        materialization = event.asset_materialization if event is not None else None
        degraded = degraded_notes(dict(materialization.metadata)) if materialization is not None else None
        yield AssetCheckResult(
            asset_key=check_key.asset_key,
            check_name=SYNC_READ_CHECK_NAME,
            passed=not degraded,
            severity=AssetCheckSeverity.WARN,
            description="; ".join(degraded) if degraded else None,
            metadata={
                "degraded_notes": MetadataValue.json(degraded or []),
                "notes_recorded": MetadataValue.bool(degraded is not None),
            },
        )
