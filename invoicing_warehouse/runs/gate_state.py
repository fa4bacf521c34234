"""What the gate knows between runs, in one small JSON file beside the warehouse (`<stem>.gate.json`): the reads
that may be incomplete, the blocking checks that failed and since when, the marts held back, the report date of
the last build and when readers last got figures.

Why a file beside the warehouse and not a table in it: when the gate holds a build back, the readers' copy is
not republished, yet the dashboard must say why its figures are old; it reads this file beside the copy.
It is written atomically (a temporary file renamed over it), readable by its owner only, and changed under a
lock (`changing`): a DuckLake takes one writer per portal at once, and each records its own reads.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import filelock

from invoicing_warehouse.engine.target import WarehouseTarget


class GateStateError(RuntimeError):
    """The gate's file cannot be read; the message says which file and what to do."""


@dataclass
class DegradedRead:
    """A raw table of one portal read with a degraded note, or whose read failed: its rows may be incomplete."""

    portal: str
    table: str
    notes: list[str]
    since: str  # ISO 8601 UTC: the first run that read it so
    # the read failed (the list's requests kept failing), rather than read whole with a doubt: the sync kept
    # its cursor, so the next run that reads the table cleanly, incremental or not, makes it whole again
    failed: bool = False


@dataclass
class GateState:
    """The gate's memory (see the module's docstring)."""

    degraded_reads: dict[str, DegradedRead] = field(default_factory=dict)  # by "<portal>/<table>"
    failures: list[dict[str, Any]] = field(default_factory=list)  # the blocking checks that held the last build
    failing_since: str | None = None  # when the current streak of held builds began
    warnings: list[dict[str, Any]] = field(default_factory=list)  # failed checks that flag published figures
    held_marts: dict[str, str] = field(default_factory=dict)  # mart -> why it keeps its last good figures
    held_since: str | None = None  # when marts were first held in the current streak
    built_as_of: str | None = None  # the report date of the last build that passed the gate
    last_published_at: str | None = None
    last_published_note: str | None = None

    @property
    def holding(self) -> bool:
        """Whether readers see figures that are not the latest: a build held back or marts held."""
        return bool(self.failures or self.held_marts)


def now_iso() -> str:
    """The present, ISO 8601 UTC to the second (what the file records)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def state_path(target: WarehouseTarget) -> Path:
    """`data/warehouse.duckdb` -> `data/warehouse.gate.json` (beside a DuckLake's data folder for a lake,
    in its local state folder for a lake on object storage: `data/<dbname>/lake.gate.json`)."""
    return target.files().gate_state


def load(target: WarehouseTarget) -> GateState:
    """The gate's state (empty before the first run)."""
    return load_path(state_path(target))


def load_path(path: Path) -> GateState:
    """The gate's state from `path` (empty when there is no file)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return GateState()
    except (OSError, ValueError) as error:
        raise GateStateError(f"cannot read the gate's state {path}: {error}. It only says which figures are "
                             "held and why: remove it and run the sync with --reconcile to rebuild it.") from None
    reads = {key: DegradedRead(**value) for key, value in raw.pop("degraded_reads", {}).items()}
    known = {name for name in GateState.__dataclass_fields__}
    return GateState(degraded_reads=reads, **{k: v for k, v in raw.items() if k in known})


def save(target: WarehouseTarget, state: GateState) -> None:
    """Writes the state atomically (owner-only permissions)."""
    path = state_path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            json.dump(asdict(state), out, indent=1, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@contextmanager
def changing(target: WarehouseTarget) -> Iterator[GateState]:
    """The state, loaded under an exclusive lock and saved when the block ends without error: a change made by
    another writer meanwhile is never lost. The lock is a file beside the state, released by the process's
    end if it dies."""
    with exclusive_lock(state_path(target)):
        state = load(target)
        yield state
        save(target, state)


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Holds the exclusive lock of `<path>.lock` (created 0600 beside `path`, never through a symbolic link) for
    the block, waiting for another writer as long as it holds it. `filelock` takes the operating system's lock
    (flock on POSIX, LockFileEx on Windows), which the kernel releases when a process dies holding it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(path.with_name(path.name + ".lock"), mode=0o600):
        yield
