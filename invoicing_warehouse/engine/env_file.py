"""The project's `.env` file, read the same way by the command line and by Dagster: every `KEY=value` line
becomes an environment variable unless the environment already sets it (the environment wins). dlt then reads
`SOURCES__INVOICING__*` and the others from the environment as usual, and `.dlt/config.toml` /
`.dlt/secrets.toml` below them (docs/settings.md).

Which file: `INVOICING_ENV_FILE` when set (a path named on purpose; missing, it is an error), else `.env` at the
project root (the checkout holding this package), never the working directory: a `.env` planted in a folder
someone else controls could send `sync` and its client secret to another host (security review 2, M3).

Whose file: the one read must belong to the user running the command and be writable by nobody else (group and
others): otherwise `EnvFileRefused` says why and how to fix it, and nothing of it is read.

Why here: it is the lowest layer, so the shell (invoicing_warehouse/cli/__init__.py) and Dagster
(dagster_project/definitions.py) both call it before anything reads a setting, without importing dlt.
"""

from __future__ import annotations

import io
import logging
import os
import stat
from pathlib import Path

from invoicing_warehouse.engine.environment.reader import environment
from invoicing_warehouse.engine.environment.run_settings import ENV_FILE as ENV_FILE_SETTING

ENV_FILE = ".env"
ENV_FILE_ENV = ENV_FILE_SETTING.name
PROJECT_ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger(__name__)


class EnvFileRefused(RuntimeError):
    """The settings file cannot be trusted or read; the message names the file and the fix (never a value)."""


def env_file_path(environ: dict[str, str] | None = None, project_root: Path | None = None) -> tuple[Path, bool]:
    """(the settings file to read, whether it was named explicitly by `INVOICING_ENV_FILE`)."""
    named = environment(environ).text(ENV_FILE_SETTING) or ""
    if named:
        return Path(named).expanduser(), True
    return (PROJECT_ROOT if project_root is None else Path(project_root)) / ENV_FILE, False


def load_env_file(project_root: str | Path | None = None) -> list[str]:
    """Sets the variables of the settings file (`env_file_path`) that the environment does not set; returns their
    names (never their values: the file holds secrets). No `.env` at the root: nothing, an empty list. Raises
    EnvFileRefused for a named file that is missing, or a file that is not the user's or is writable by others."""
    from dotenv import dotenv_values

    path, named = env_file_path(project_root=None if project_root is None else Path(project_root))
    text = _trusted_text(path, named)
    if text is None:
        return []
    added = []
    for name, value in dotenv_values(stream=io.StringIO(text)).items():
        if value is not None and name not in os.environ:  # the environment wins over the file
            os.environ[name] = value
            added.append(name)
    return added


def _trusted_text(path: Path, named: bool) -> str | None:
    """The file's text, read from the descriptor whose owner and mode were checked (no swap in between); None
    when the project's own `.env` does not exist."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the start
    except FileNotFoundError:
        if named:
            raise EnvFileRefused(f"{ENV_FILE_ENV} names {path}, which does not exist: create it (mode 0600) or "
                                 f"unset {ENV_FILE_ENV}") from None
        return None
    except OSError as error:
        raise EnvFileRefused(f"the settings file {path} cannot be read: {error.strerror}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise EnvFileRefused(f"the settings file {path} is not a regular file; nothing of it was read")
        if status.st_uid != os.geteuid():
            raise EnvFileRefused(
                f"the settings file {path} belongs to uid {status.st_uid}, not to you (uid {os.geteuid()}): "
                f"another user could set your settings (an API address that receives your client secret). "
                f"Nothing of it was read; make it yours (chown) or name your own file in {ENV_FILE_ENV}")
        if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise EnvFileRefused(
                f"the settings file {path} is writable by {'others' if status.st_mode & stat.S_IWOTH else 'its group'} "
                f"(mode {stat.S_IMODE(status.st_mode):04o}): anyone who can write it can send your client secret "
                f"elsewhere. Nothing of it was read; run `chmod 600 {path}`")
        if status.st_mode & stat.S_IROTH:
            log.warning("the settings file %s is readable by others (mode %04o): it holds secrets, run `chmod 600 %s`",
                        path, stat.S_IMODE(status.st_mode), path)
        with os.fdopen(descriptor, encoding="utf-8", closefd=False) as stream:
            return stream.read()
    finally:
        os.close(descriptor)
