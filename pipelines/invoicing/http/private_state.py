"""The private folder of this user's local HTTP state (the hosts' rate budgets, the kept tokens), and the one safe
way to open a file in it.

Both kinds of file are read and written by every process of the user that calls the API, so they live in a folder
other users cannot touch (security review M1): a planted symlink would make a process overwrite a file of the
attacker's choosing, a FIFO would hang it, a file left locked would freeze it, a forged pause would stop it.

- Where: `INVOICING_RATE_BUDGET_DIR`, else `$XDG_CACHE_HOME` or `~/.cache`, `/invoicing-warehouse`: never the
  shared temp folder, and never `$XDG_RUNTIME_DIR` (issue 40): that variable is set in a login session and not for
  cron or a systemd service, so the runs of one user paced on two budgets. A folder the product creates is 0700.
- A folder shared by the users of a host (`INVOICING_RATE_BUDGET_SHARED_DIR`, host_budget.py) is checked as a
  group's: owned by root or this user, of a group of this user's, written by nobody else (no `o+w`); its files
  are regular files of that group that others may not write, created 0660.
- Refused, with an error naming the path and what to do: a folder that is a symbolic link, is owned by another
  user, or that group or others may write; a file that is a symbolic link (`O_NOFOLLOW`), not a regular file (a
  FIFO, a device: opened `O_NONBLOCK`, so a FIFO cannot hang the open), or owned by another user.
- A lock is waited for `LOCK_WAIT_S` at most: the budget's holds last microseconds, so a lock held for seconds is
  a stopped process or someone else's, and the error names the file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from pathlib import Path

import filelock

from invoicing_warehouse.engine.environment.api_settings import RATE_BUDGET_DIR
from invoicing_warehouse.engine.environment.external_settings import XDG_CACHE_HOME, XDG_RUNTIME_DIR
from invoicing_warehouse.engine.environment.reader import current_environment
from pipelines.invoicing.errors import InvoicingApiError

DIR_ENV = RATE_BUDGET_DIR.name
FOLDER_NAME = "invoicing-warehouse"
DIR_MODE = 0o700
FILE_MODE = 0o600
SHARED_FILE_MODE = 0o660
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
    configured = current_environment().text(RATE_BUDGET_DIR)
    if configured:
        return Path(configured)
    return default_state_dir()


def default_state_dir() -> Path:
    """`$XDG_CACHE_HOME` or `~/.cache`, `/invoicing-warehouse`: the same for every run of one user whatever its
    session (a login shell, cron, a systemd service)."""
    cache = current_environment().text(XDG_CACHE_HOME) or str(Path.home() / ".cache")
    return Path(cache) / FOLDER_NAME


def runtime_state_dirs() -> list[Path]:
    """Where versions before issue 40 kept the state when `XDG_RUNTIME_DIR` was set: that folder, and the usual
    `/run/user/<uid>` a run without the variable cannot see otherwise (to warn of a budget paced apart there)."""
    folders = [Path(runtime) / FOLDER_NAME] if (runtime := current_environment().text(XDG_RUNTIME_DIR)) else []
    if hasattr(os, "getuid"):
        folders.append(Path("/run/user") / str(os.getuid()) / FOLDER_NAME)
    return list(dict.fromkeys(folders))


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


def shared_state_dir(directory: Path) -> Path:
    """`directory`, a folder the operator made for the users of this host (not created here), checked as a group's
    (see the module's doc). Raises LocalStateError otherwise."""
    os.close(open_dir(directory, shared=True))
    return directory


def open_dir(directory: Path, *, shared: bool = False) -> int:
    """A descriptor of `directory` after the checks of `private_state_dir` (`shared`: of `shared_state_dir`; the
    caller closes it)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise LocalStateError(directory, "is a symbolic link or not a folder: refused; set "
                                  f"{DIR_ENV} to a folder of this user's") from None
        raise LocalStateError(directory, f"cannot open the folder ({error.strerror})") from None
    status = os.fstat(descriptor)
    problem = _shared_dir_problem(status) if shared else _private_dir_problem(status)
    if problem is not None:
        os.close(descriptor)
        raise LocalStateError(directory, problem)
    return descriptor


def _private_dir_problem(status: os.stat_result) -> str | None:
    problem = None
    if status.st_uid != os.geteuid():
        problem = f"is owned by uid {status.st_uid}, not by this user (uid {os.geteuid()})"
    elif status.st_mode & 0o022:
        problem = f"may be written by group or others (mode {stat.S_IMODE(status.st_mode):o})"
    if problem is None:
        return None
    return (f"{problem}: refused, another user could plant or lock its files; use a folder of this user's with "
            f"mode 700 ({DIR_ENV})")


def _shared_dir_problem(status: os.stat_result) -> str | None:
    problem = None
    if status.st_uid not in (0, os.geteuid()):
        problem = f"is owned by uid {status.st_uid}, neither root nor this user (uid {os.geteuid()})"
    elif status.st_mode & 0o002:
        problem = f"may be written by any user (mode {stat.S_IMODE(status.st_mode):o})"
    elif status.st_gid not in _own_groups():
        problem = f"belongs to group {status.st_gid}, not one of this user's"
    if problem is None:
        return None
    return (f"{problem}: refused as a shared rate budget folder; make it owned by root, of the group of the users "
            f"that share the budget, mode 2770 (INVOICING_RATE_BUDGET_SHARED_DIR, docs/settings.md)")


def _own_groups() -> set[int]:
    return {os.getegid(), *os.getgroups()}


def open_state_file(directory: Path, name: str, flags: int, *, shared: bool = False) -> int:
    """Opens `directory/name` with `flags` (plus O_NOFOLLOW, O_NONBLOCK, O_CLOEXEC; created 0600 with O_CREAT),
    after checking the folder, and checks the file: a regular file of this user's, narrowed to 0600 if it
    allowed more (`shared`: in a folder of `shared_state_dir`, a regular file of the folder's group that others
    may not write, created 0660 in that group). Raises LocalStateError naming the file; FileNotFoundError when it
    is missing without O_CREAT."""
    path = directory / name
    folder = open_dir(directory, shared=shared)
    folder_gid = os.fstat(folder).st_gid
    try:
        try:
            if shared and flags & os.O_CREAT:
                _create_shared(folder, name, folder_gid)
            descriptor = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                                 SHARED_FILE_MODE if shared else FILE_MODE, dir_fd=folder)
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
    if shared and status.st_uid == os.geteuid() and stat.S_ISREG(status.st_mode):
        # created by this process (or an earlier one of this user): the folder's group, read and written by it,
        # whatever the umask and whether or not the folder has the setgid bit
        if status.st_gid != folder_gid:
            os.fchown(descriptor, -1, folder_gid)
        if stat.S_IMODE(status.st_mode) != SHARED_FILE_MODE:
            os.fchmod(descriptor, SHARED_FILE_MODE)
        status = os.fstat(descriptor)
    problem = None
    if not stat.S_ISREG(status.st_mode):
        problem = f"is a {_kind(status.st_mode)}, not a regular file: refused; remove it"
    elif shared and (status.st_gid != folder_gid or status.st_mode & 0o002):
        problem = (f"is of group {status.st_gid} with mode {stat.S_IMODE(status.st_mode):o}, not a file of the "
                   f"folder's group (gid {folder_gid}) that others may not write: refused; remove it")
    elif not shared and status.st_uid != os.geteuid():
        problem = f"is owned by uid {status.st_uid}, not by this user: refused; remove it"
    if problem is not None:
        os.close(descriptor)
        raise LocalStateError(path, problem)
    if not shared and stat.S_IMODE(status.st_mode) & ~FILE_MODE:
        os.fchmod(descriptor, FILE_MODE)
    return descriptor


def _create_shared(folder: int, name: str, gid: int) -> None:
    """Creates `name` in the shared folder when missing, already of the folder's group and 0660: made under a name
    of this process's, then linked into place (another user's process never opens it 0600 under our umask)."""
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
        return
    except FileNotFoundError:
        pass
    draft = f".{name}.{os.getpid()}.new"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(draft, dir_fd=folder)  # left by a process of this pid that died here
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         SHARED_FILE_MODE, dir_fd=folder)
    try:
        os.fchown(descriptor, -1, gid)
        os.fchmod(descriptor, SHARED_FILE_MODE)
        with contextlib.suppress(FileExistsError):  # another process linked its own first: that one is used
            os.link(draft, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    finally:
        os.close(descriptor)
        os.unlink(draft, dir_fd=folder)


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
