"""Every data file the product writes is its owner's alone: files 0600, folders 0700 (the warehouse, the readers'
copy, the hint spool, the doctor's findings, dlt's working folder, the token cache and the rate budget).

The warehouse holds customers' e-mails and phone numbers, and dlt's folder holds load packages of the same rows:
a umask of 022 (the usual default) would leave them readable by every user of the machine. DuckDB, SQLite and dlt
create their files themselves (and DuckDB its WAL, again and again), so no `mode` argument can reach them: the
process's umask is tightened instead (`private_umask`), once and only ever tightened, by every door that writes
data (the CLI, Dagster's definitions, `connect`, the publication, dlt's pipeline, the spool). Files and folders
left by an older version with wider modes are narrowed when the product opens them again (`make_private`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700
PRIVATE_UMASK = 0o077


def private_umask() -> None:
    """Adds group and world to the process's umask (never loosens it): what DuckDB, SQLite and dlt create from
    now on is 0600 / 0700."""
    current = os.umask(PRIVATE_UMASK)
    os.umask(current | PRIVATE_UMASK)


def private_dir(path: str | Path) -> Path:
    """`path` as a folder of the owner's only: created 0700 (with its missing parents), or narrowed to 0700 when
    this user owns it and it allowed more."""
    path = Path(path)
    private_umask()
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    make_private(path)
    return path


def make_private(path: str | Path) -> None:
    """Narrows an existing file to 0600 or folder to 0700 when this user owns it; a path owned by someone else,
    a symbolic link or a missing path is left as it is (never follows a link to change its target)."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    if status.st_uid != os.geteuid() or stat.S_ISLNK(status.st_mode):
        return
    wanted = DIR_MODE if stat.S_ISDIR(status.st_mode) else FILE_MODE
    if stat.S_IMODE(status.st_mode) & ~wanted:
        os.chmod(path, stat.S_IMODE(status.st_mode) & wanted)


class UnsafeFolderError(PermissionError):
    """A folder to write into that another user could change under the writer: the message names it."""


def check_owned_folder(path: str | Path) -> None:
    """Raises UnsafeFolderError when the folder `path` is writable by its group or by others: someone else could
    plant a name there (a symbolic link to a file of theirs) between two writes."""
    status = os.stat(path)
    if stat.S_IMODE(status.st_mode) & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafeFolderError(f"{path} is writable by other users (mode {stat.S_IMODE(status.st_mode):o}): "
                                "choose a folder of your own, or `chmod go-w` it")


def write_private_file(path: str | Path, data: bytes) -> None:
    """Writes `data` to `path` as a new 0600 file: first under a fresh temporary name in the same folder, opened
    O_CREAT|O_EXCL|O_NOFOLLOW (a name planted there is never written through), then renamed over `path` (a
    rename replaces a symbolic link itself, never its target). A reader sees the old file or the whole new one."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
