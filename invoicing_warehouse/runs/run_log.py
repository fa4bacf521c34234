"""What the regular sync remembers between runs beside the warehouse (`<stem>.runs.json`): each portal's last
successful sync (when, records loaded) and the raw columns a schema notice has already named.

Why a file and not dlt's `_dlt_loads`: a run that read no change loads no row and leaves no load there, yet it
is a successful sync that the status must count as fresh; and `_dlt_loads` does not say which portal loaded.
Written like the gate's state (invoicing_warehouse/runs/gate_state.py): atomically, owner-only, changed under an
exclusive lock.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate_state import exclusive_lock, now_iso


def log_path(target: WarehouseTarget) -> Path:
    """`data/warehouse.duckdb` -> `data/warehouse.runs.json` (beside the gate's state)."""
    return target.files().runs_log


def read_log(target: WarehouseTarget) -> dict[str, Any]:
    """The log (empty before the first run; an unreadable file reads as empty: it only feeds the status)."""
    try:
        raw = json.loads(log_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


@contextmanager
def _changing(target: WarehouseTarget) -> Iterator[dict[str, Any]]:
    path = log_path(target)
    with exclusive_lock(path):  # one writer per portal at once on a DuckLake
        log = read_log(target)
        yield log
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(log, out, indent=1, sort_keys=True)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def record_sync(target: WarehouseTarget, portal: str, records: int, at: str | None = None) -> None:
    """Records a successful sync of `portal` that loaded `records` rows, at `at` (ISO 8601 UTC; now)."""
    with _changing(target) as log:
        log.setdefault("last_syncs", {})[portal] = {"at": at or now_iso(), "records": int(records)}


def last_syncs(target: WarehouseTarget) -> dict[str, dict[str, Any]]:
    """portal -> {"at": ISO 8601 UTC, "records": rows loaded} of its last successful sync."""
    syncs = read_log(target).get("last_syncs", {})
    return syncs if isinstance(syncs, dict) else {}


def notice_once(target: WarehouseTarget, columns: Iterable[str]) -> list[str]:
    """Of `columns` (`<raw table>.<column>`), those no earlier run has noticed, now remembered; sorted."""
    with _changing(target) as log:
        noticed = set(log.get("noticed_columns", []))
        new = sorted(set(columns) - noticed)
        log["noticed_columns"] = sorted(noticed | set(new))
    return new


def noticed_columns(target: WarehouseTarget) -> list[str]:
    """Every raw column a schema notice has named (`<raw table>.<column>`), sorted."""
    return sorted(read_log(target).get("noticed_columns", []))


def standing_notes_once(target: WarehouseTarget, portal: str, notes: Iterable[str]) -> list[str]:
    """Of `portal`'s standing notes in this run (conditions of the account, such as a scope not granted), those the
    portal's previous run did not have: a note is said when its condition appears, and again when it comes back
    after a run without it. The run's set replaces the previous one."""
    current = list(dict.fromkeys(notes))
    with _changing(target) as log:
        standing = log.setdefault("standing_notes", {})
        previous = set(standing.get(portal, []))
        standing[portal] = current
    return [note for note in current if note not in previous]


def record_failure(target: WarehouseTarget, key: str, message: str, at: str | None = None) -> None:
    """Records that `key` (`sync:<portal>`, `run:<job>`) failed with `message` (already redacted); the first
    failure of a streak keeps its time (`since`)."""
    with _changing(target) as log:
        failures = log.setdefault("failures", {})
        since = (failures.get(key) or {}).get("since") or at or now_iso()
        failures[key] = {"since": since, "message": message}


def clear_failure(target: WarehouseTarget, key: str) -> None:
    """Forgets `key`'s failure: it succeeded since."""
    if key not in failures(target):
        return  # the common case: nothing to write
    with _changing(target) as log:
        log.setdefault("failures", {}).pop(key, None)


def failures(target: WarehouseTarget) -> dict[str, dict[str, str]]:
    """key -> {"since", "message"} of what failed last time it ran (`record_failure`)."""
    found = read_log(target).get("failures", {})
    return found if isinstance(found, dict) else {}


def alert_transitions(target: WarehouseTarget, current: dict[str, dict[str, Any]]
                      ) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """(the conditions of `current` no alert has announced yet, the announced ones no longer in `current`), and
    `current` is now what has been announced: under the log's lock, so that of several processes evaluating at
    once exactly one announces each change."""
    with _changing(target) as log:
        announced = log.get("alerts_open", {})
        announced = announced if isinstance(announced, dict) else {}
        raised = {key: value for key, value in current.items() if key not in announced}
        cleared = {key: value for key, value in announced.items() if key not in current}
        log["alerts_open"] = {key: announced.get(key, value) for key, value in current.items()}
    return raised, cleared


def undo_alert_transitions(target: WarehouseTarget, raised: dict[str, dict[str, Any]],
                           cleared: dict[str, dict[str, Any]]) -> None:
    """Puts back what `alert_transitions` changed for alerts that no channel took: the next evaluation tries them
    again."""
    with _changing(target) as log:
        announced = log.setdefault("alerts_open", {})
        for key in raised:
            announced.pop(key, None)
        announced.update(cleared)
