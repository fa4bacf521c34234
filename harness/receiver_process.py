"""Runs `invoicing-warehouse webhooks serve` as a user would: a separate process on a free port.

The process gets the token through its environment (never on its command line), prints the address it
listens on (token masked) and is stopped with SIGTERM, or killed with SIGKILL to test what survives a crash.
A process that ends before it listens (a refused token, a bad option) raises ReceiverExited with its exit code
and what it printed: a caller never gets a receiver "on port 0" that nothing answers.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
from pathlib import Path
from typing import Self

from harness.common import wait_until
from harness.sync_process import COMMAND

__all__ = ["wait_until"]  # the tests' bounded polling, kept importable from here

LISTENING = re.compile(r"receiving on http://127\.0\.0\.1:(\d+)/hooks/\*\*\*")
START_TIMEOUT_S = 60.0


class ReceiverExited(RuntimeError):
    """The receiver ended before it listened: its exit code and its output (the token masked)."""


class ReceiverProcess:
    """One receiver process; `url(portal)` is its delivery URL with the token; `output` what it printed."""

    def __init__(self, warehouse: Path, token: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.token = token
        environment = {k: v for k, v in os.environ.items() if not k.startswith("INVOICING_WEBHOOK_")}
        environment.update(INVOICING_WEBHOOK_TOKEN=token, PYTHONUNBUFFERED="1", **(env or {}))
        self.process = subprocess.Popen(
            [*COMMAND, "webhooks", "serve", "--port", "0", "--warehouse", str(warehouse), *args],
            env=environment, cwd=warehouse.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            bufsize=1,
        )
        self.lines: list[str] = []
        self._listening = threading.Event()
        self.port = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._listening.wait(START_TIMEOUT_S):
            self.stop()
            raise RuntimeError(f"the receiver did not start within {START_TIMEOUT_S} s: {self._masked_output()}")
        if not self.port:  # the output ended before the listening line: the process exited
            code = self._wait()
            raise ReceiverExited(f"the receiver exited with code {code} before listening: {self._masked_output()}")

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            match = LISTENING.search(line)
            if match:
                self.port = int(match.group(1))
                self._listening.set()
        self._listening.set()  # ended before listening: the constructor raises ReceiverExited

    @property
    def output(self) -> str:
        """Everything the process printed so far (stdout and stderr)."""
        return "".join(self.lines)

    def _masked_output(self) -> str:
        return self.output.replace(self.token, "***") if self.token else self.output

    def url(self, portal: str | None = None) -> str:
        """The delivery URL of `portal` (None: `default`), its door included (hook_urls.portal_door)."""
        from pipelines.invoicing.hook_urls import hook_url

        return hook_url(f"http://127.0.0.1:{self.port}", self.token, portal)

    def kill(self) -> int:
        """SIGKILL, as a crash would; returns the exit code (-9)."""
        self.process.send_signal(signal.SIGKILL)
        return self._wait()

    def stop(self) -> int:
        """SIGTERM (SIGKILL if it does not end within 15 s); returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self._wait()

    def _wait(self) -> int:
        try:
            code = self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(15)
        self._reader.join(5)
        return code

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


