"""The private folder of this user's local HTTP state (the hosts' rate budgets, the kept tokens), and the one safe
way to open a file in it.

Both kinds of file are read and written by every process of the user that calls the API, so they live in a folder
other users cannot touch (security review M1): a planted symlink would make a process overwrite a file of the
attacker's choosing, a FIFO would hang it, a file left locked would freeze it, a forged pause would stop it.

- Where: `INVOICING_RATE_BUDGET_DIR`, else `$XDG_RUNTIME_DIR/invoicing-warehouse` (memory that ends with the
  session), else `$XDG_CACHE_HOME` or `~/.cache`, `/invoicing-warehouse`: never the shared temp folder. A folder
  the product creates is 0700.
- Refused, with an error naming the path and what to do: a folder that is a symbolic link, is owned by another
  user, or that group or others may write; a file that is a symbolic link (`O_NOFOLLOW`), not a regular file (a
  FIFO, a device: opened `O_NONBLOCK`, so a FIFO cannot hang the open), or owned by another user.
- A lock is waited for `LOCK_WAIT_S` at most: the budget's holds last microseconds, so a lock held for seconds is
  a stopped process or someone else's, and the error names the file.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

import filelock

from pipelines.invoicing.errors import InvoicingApiError

DIR_ENV = "INVOICING_RATE_BUDGET_DIR"
FOLDER_NAME = "invoicing-warehouse"
DIR_MODE = 0o700
FILE_MODE = 0o600
LOCK_WAIT_S = 10.0
# polling a non-blocking lock (flock has no timeout): from half a millisecond, doubling, to 5 ms
FIRST_LOCK_POLL_S = 0.0005
LAST_LOCK_POLL_S = 0.005
KIND = "local_state"


class LocalStateError(InvoicingApiError):
    """A local state file or its folder cannot be used safely: one line naming the path and what to do."""

    def __init__(self, path: str | Path, detail: str) -> None:
        super().__init__(KIND, str(path), detail=detail)


def state_dir() -> Path:
    """The folder of the local state files (see the module's doc); not created nor checked here."""
    configured = os.environ.get(DIR_ENV)
    if configured:
        return Path(configured)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / FOLDER_NAME
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / FOLDER_NAME


def private_state_dir(directory: Path) -> Path:
    """`directory`, created 0700 when missing, checked: a real folder of this user that nobody else may write.
    Raises LocalStateError otherwise."""
    try:
        directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except OSError as error:
        raise LocalStateError(directory, f"cannot create the folder ({error.strerror}); set {DIR_ENV} to a "
                              "folder of this user's") from None
    descriptor = open_dir(directory)
    os.close(descriptor)
    return directory


def open_dir(directory: Path) -> int:
    """A descriptor of `directory` after the checks of `private_state_dir` (the caller closes it)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LocalStateError(directory, "is a symbolic link or not a folder: refused; set "
                                  f"{DIR_ENV} to a folder of this user's") from None
        raise LocalStateError(directory, f"cannot open the folder ({error.strerror})") from None
    status = os.fstat(descriptor)
    problem = None
    if status.st_uid != os.geteuid():
        problem = f"is owned by uid {status.st_uid}, not by this user (uid {os.geteuid()})"
    elif status.st_mode & 0o022:
        problem = f"may be written by group or others (mode {stat.S_IMODE(status.st_mode):o})"
    if problem is not None:
        os.close(descriptor)
        raise LocalStateError(directory, f"{problem}: refused, another user could plant or lock its files; "
                              f"use a folder of this user's with mode 700 ({DIR_ENV})")
    return descriptor


def open_state_file(directory: Path, name: str, flags: int) -> int:
    """Opens `directory/name` with `flags` (plus O_NOFOLLOW, O_NONBLOCK, O_CLOEXEC; created 0600 with O_CREAT),
    after checking the folder, and checks the file: a regular file of this user's, narrowed to 0600 if it
    allowed more. Raises LocalStateError naming the file; FileNotFoundError when it is missing without O_CREAT."""
    path = directory / name
    folder = open_dir(directory)
    try:
        try:
            descriptor = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, FILE_MODE,
                                 dir_fd=folder)
        except FileNotFoundError:
            raise
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise LocalStateError(path, "is a symbolic link: refused (never followed); remove it") from None
            if error.errno == errno.ENXIO:
                raise LocalStateError(path, "is a FIFO or socket, not a regular file: refused; remove it") from None
            raise LocalStateError(path, f"cannot open it ({error.strerror}); remove it, or set {DIR_ENV} to "
                                  "a folder of this user's") from None
    finally:
        os.close(folder)
    status = os.fstat(descriptor)
    problem = None
    if not stat.S_ISREG(status.st_mode):
        problem = f"is a {_kind(status.st_mode)}, not a regular file: refused; remove it"
    elif status.st_uid != os.geteuid():
        problem = f"is owned by uid {status.st_uid}, not by this user: refused; remove it"
    if problem is not None:
        os.close(descriptor)
        raise LocalStateError(path, problem)
    if stat.S_IMODE(status.st_mode) & ~FILE_MODE:
        os.fchmod(descriptor, FILE_MODE)
    return descriptor


def lock_exclusive(descriptor: int, path: Path, wait_s: float = LOCK_WAIT_S) -> None:
    """Takes the exclusive lock of an open file (`filelock`'s lock of a descriptor this module opened safely: flock
    on POSIX, LockFileEx on Windows), waiting `wait_s` at most; raises LocalStateError naming the file when another
    process holds it longer, or when this system has no such lock."""
    deadline = time.monotonic() + wait_s
    pause = FIRST_LOCK_POLL_S
    while True:
        try:
            if filelock.lock_descriptor(descriptor, blocking=False):
                return
        except OSError as error:
            raise LocalStateError(path, f"cannot be locked on this system ({error.strerror}); set {DIR_ENV} to a "
                                  "folder on a local file system") from None
        now = time.monotonic()
        if now >= deadline:
            raise LocalStateError(path, f"locked by another process for more than {wait_s:g} s (a stopped process, "
                                  "or another user's): find it with `fuser` and stop it, or remove the file")
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, LAST_LOCK_POLL_S)


def read_bounded(descriptor: int, limit: int) -> bytes | None:
    """The file's bytes from its start, or None when it holds more than `limit` (not a file this product wrote)."""
    data = b""
    while chunk := os.pread(descriptor, 65536, len(data)):
        data += chunk
        if len(data) > limit:
            return None
    return data


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISDIR, "folder"), (stat.S_ISCHR, "character device"),
             (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))
    return next((name for test, name in kinds if test(mode)), "special file")
