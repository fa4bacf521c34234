"""Publishes a read-only snapshot of the warehouse for analysts and dashboards.

Why: DuckDB lets one process open a database file for writing, and while it does, every other
process is refused the file, read-only connections included ("Could not set lock on file").
A scheduled sync that writes `data/warehouse.duckdb` for minutes would make every dashboard query
fail, and an analyst holding a read-only connection open would make the next sync fail.

So readers never open the warehouse itself. After each successful run the writer publishes a
copy, `data/warehouse.read.duckdb`, by atomic rename: it checkpoints the warehouse (so the main
file holds every committed change and the WAL is empty), copies the file to a temporary name
beside the snapshot, fsyncs it, and `os.replace`s it onto the snapshot path. A reader that has the
old snapshot open keeps reading the old inode, consistent and unblocked; the next connection it
opens sees the new figures. The writer never touches a file a reader has open, so neither waits.

A sync that changed no row need not copy the whole file again (most 15-minute runs): the sync marks
the warehouse "unpublished" before it writes (`mark_unpublished`) and `publish_if_changed` copies only
when the run changed data or the mark was already there (an earlier run that died before publishing).
dlt's own bookkeeping tables (`_dlt_loads`, `_dlt_pipeline_state`) of the snapshot may then lag
behind by the no-change runs; the data tables never do.

The copy is the owner's only (0600, private_files.py): it holds the customers' e-mails and phone numbers. A
publication killed during the copy leaves its full-size `.warehouse.read.duckdb.<pid>.tmp`; the next one removes
every such file whose process is gone (`remove_abandoned_copies`).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import duckdb

from invoicing_warehouse.engine.private_files import FILE_MODE, private_dir, private_umask
from invoicing_warehouse.engine.warehouse_files import WarehouseFiles


def default_snapshot_path(warehouse_path: Path) -> Path:
    """`data/warehouse.duckdb` -> `data/warehouse.read.duckdb` (beside the warehouse)."""
    return WarehouseFiles.beside(warehouse_path).readers_copy


def unpublished_mark(warehouse_path: Path) -> Path:
    """`data/warehouse.duckdb` -> `data/.warehouse.duckdb.unpublished`: there while the warehouse may hold
    changes its snapshot does not."""
    return WarehouseFiles.beside(warehouse_path).unpublished_marker


def mark_unpublished(warehouse_path: Path) -> bool:
    """Marks the warehouse as possibly ahead of its snapshot, before a writer changes it.

    Returns True when the snapshot was already behind (a mark left by a run that never published, or
    no snapshot at all): the next `publish_if_changed` then publishes whatever the run changes."""
    mark = unpublished_mark(warehouse_path)
    behind = mark.exists() or not default_snapshot_path(warehouse_path).exists()
    mark.touch()
    return behind


def publish_if_changed(warehouse_path: Path, *, changed: bool, behind: bool) -> Path | None:
    """Publishes (`publish_snapshot`) when the run `changed` data or the snapshot was `behind` before it
    (`mark_unpublished`'s answer); else only clears the mark. Returns the snapshot path, None if skipped."""
    if changed or behind:
        return publish_snapshot(warehouse_path)
    unpublished_mark(warehouse_path).unlink(missing_ok=True)
    return None


def publish_snapshot(warehouse_path: Path, snapshot_path: Path | None = None) -> Path:
    """Atomically replaces the readers' snapshot with the warehouse's current committed state.

    Call it after a run has committed and closed its own connection (the sync command, the models
    command, the Dagster job's last step): it opens the warehouse for writing to checkpoint, which
    fails with a clear error while another process is writing. Returns the snapshot path.
    """
    warehouse_path = Path(warehouse_path)
    if not warehouse_path.exists():
        raise FileNotFoundError(f"cannot publish a snapshot: warehouse {warehouse_path} does not exist")
    snapshot_path = (
        Path(snapshot_path) if snapshot_path is not None else default_snapshot_path(warehouse_path)
    )
    private_umask()
    if not snapshot_path.parent.exists():
        private_dir(snapshot_path.parent)
    remove_abandoned_copies(snapshot_path)
    temporary = snapshot_path.with_name(f".{snapshot_path.name}.{os.getpid()}.tmp")
    try:
        connection = duckdb.connect(str(warehouse_path))
    except duckdb.IOException as error:
        raise RuntimeError(
            f"cannot publish a snapshot of {warehouse_path}: another process is writing it ({error}); "
            "publish after that run has finished"
        ) from error
    try:
        # Holding the connection while copying keeps other writers out, so the copy is one state.
        connection.execute("checkpoint")
        shutil.copyfile(warehouse_path, temporary)
        os.chmod(temporary, FILE_MODE)  # whatever the umask was: readers' copy of customer data, owner only
    finally:
        connection.close()
    try:
        _fsync(temporary)
        # A WAL beside the snapshot would be replayed into the new file by the next reader; the
        # snapshot is never written, so any such file is stale.
        stale_wal = snapshot_path.with_name(snapshot_path.name + ".wal")
        if stale_wal.exists():
            stale_wal.unlink()
        os.replace(temporary, snapshot_path)
        # fsync the directory too: without it a power cut could bring back the old name
        _fsync(snapshot_path.parent)
        if snapshot_path == default_snapshot_path(warehouse_path):
            unpublished_mark(warehouse_path).unlink(missing_ok=True)  # the snapshot holds every change
    finally:
        if temporary.exists():
            temporary.unlink()
    return snapshot_path


def remove_abandoned_copies(snapshot_path: Path) -> list[Path]:
    """Removes the temporary copies (`.<snapshot>.<pid>.tmp`) of publications whose process is gone (killed
    during the copy); a copy of a live process, or of another user's, stays. Returns the paths removed."""
    pattern = re.compile(rf"^\.{re.escape(snapshot_path.name)}\.(\d+)\.tmp$")
    removed = []
    for candidate in snapshot_path.parent.iterdir():
        match = pattern.match(candidate.name)
        if match is None or _process_alive(int(match.group(1))):
            continue
        candidate.unlink(missing_ok=True)
        removed.append(candidate)
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process is not copying yet: a copy of its own pid is an earlier, failed one
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def connect_reader(snapshot_path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a published snapshot: what dashboards and analysts should open."""
    return duckdb.connect(str(snapshot_path), read_only=True)


def _fsync(path: Path) -> None:
    """Flushes a file, or a directory entry (what makes a rename durable), to disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
