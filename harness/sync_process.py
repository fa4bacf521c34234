"""Runs `invoicing-warehouse sync` as a user would: a separate process, configured by environment.

Every run gets its own dlt data dir (DLT_DATA_DIR, where dlt keeps pipeline working dirs) and
runs in a scratch working directory, so no `.dlt/secrets.toml` of the developer's tree and no
pipeline state of another test leaks in.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

COMMAND = [str(Path(sys.executable).with_name("invoicing-warehouse"))]


@dataclass
class Workspace:
    """Where one test's sync runs live: the warehouse file, dlt's data dir, a working dir."""

    root: Path

    @property
    def warehouse(self) -> Path:
        """The DuckDB warehouse file."""
        return self.root / "warehouse.duckdb"

    @property
    def dlt_data_dir(self) -> Path:
        """DLT_DATA_DIR of every run (dlt's pipelines dir is `<this>/pipelines`)."""
        return self.root / "dlt"

    @property
    def cwd(self) -> Path:
        """The working directory of the sync process."""
        path = self.root / "cwd"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def env(self, base_url: str, client_id: str, client_secret: str, **extra: str) -> dict[str, str]:
        """The environment of a sync process pointed at `base_url` with these credentials."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("SOURCES__INVOICING__") and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(
            SOURCES__INVOICING__BASE_URL=base_url,
            SOURCES__INVOICING__CLIENT_ID=client_id,
            SOURCES__INVOICING__CLIENT_SECRET=client_secret,
            DLT_DATA_DIR=str(self.dlt_data_dir),
            PYTHONUNBUFFERED="1",
        )
        env.update(extra)
        return env


@dataclass
class SyncResult:
    """Exit code and output of one finished (or killed) sync process."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    lines: list[tuple[float, str]] = field(default_factory=list)  # (seconds since start, line)

    @property
    def output(self) -> str:
        """stdout and stderr together."""
        return self.stdout + self.stderr


def run_sync_command(
    workspace: Workspace, env: dict[str, str], *args: str, timeout: float = 120
) -> SyncResult:
    """Runs the sync to the end (bounded by `timeout`) and returns its result."""
    started = time.monotonic()
    completed = subprocess.run(
        [*COMMAND, "sync", "--warehouse", str(workspace.warehouse), *args],
        check=False,
        env=env,
        cwd=workspace.cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return SyncResult(completed.returncode, completed.stdout, completed.stderr, time.monotonic() - started)


def run_sync_and_kill(
    workspace: Workspace,
    env: dict[str, str],
    *args: str,
    kill_after_s: float | None = None,
    kill_on_text: str | None = None,
    kill_when: Callable[[float], bool] | None = None,
    timeout: float = 120,
) -> SyncResult:
    """Starts the sync and SIGKILLs it `kill_after_s` seconds in, as soon as a line of its output
    contains `kill_on_text`, or as soon as `kill_when(seconds since start)` (polled every few
    milliseconds) says so, whichever comes first. If it ends before, it is not killed
    (returncode >= 0); a killed run has returncode -9."""
    started = time.monotonic()
    process = subprocess.Popen(
        [*COMMAND, "sync", "--warehouse", str(workspace.warehouse), *args],
        env=env,
        cwd=workspace.cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    lines: list[tuple[float, str]] = []
    seen_text = threading.Event()

    def read_output() -> None:
        assert process.stdout is not None  # stdout=PIPE above
        for line in process.stdout:
            lines.append((time.monotonic() - started, line.rstrip("\n")))
            if kill_on_text and kill_on_text in line:
                seen_text.set()

    reader = threading.Thread(target=read_output, daemon=True)
    reader.start()
    deadline = started + timeout
    while process.poll() is None and time.monotonic() < deadline:
        elapsed = time.monotonic() - started
        if (
            seen_text.is_set()
            or (kill_after_s is not None and elapsed >= kill_after_s)
            or (kill_when is not None and kill_when(elapsed))
        ):
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.003)
    if process.poll() is None and time.monotonic() >= deadline:
        process.kill()
    process.wait(timeout=30)
    reader.join(timeout=10)
    text = "\n".join(line for _, line in lines)
    return SyncResult(process.returncode, text, "", time.monotonic() - started, lines)


def run_sync_in_process(workspace: Workspace, env: dict[str, str], *args: str) -> SyncResult:
    """Runs the same command (`invoicing_warehouse.cli.main`, whose return value the console script
    exits with) inside this process: no interpreter start-up, so a case costs its own work only.
    The environment, working directory, stdout, stderr and log records are swapped for the call and
    restored after; everything printed or logged lands in the result's output."""
    from invoicing_warehouse.cli import main

    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    started = time.monotonic()
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(workspace.cwd)
        root.addHandler(handler)
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            try:
                code = main(["sync", "--warehouse", str(workspace.warehouse), *args])
            except SystemExit as exit_:  # argparse errors
                code = int(exit_.code or 0)
    finally:
        root.removeHandler(handler)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return SyncResult(code, buffer.getvalue(), "", time.monotonic() - started)
