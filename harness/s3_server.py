"""A throwaway S3-compatible server for tests and benchmarks: the object store of a DuckLake on `s3://`.

`S3Server` runs moto's standalone server (`moto_server`, PyPI's `moto[server]`, a dev dependency) on 127.0.0.1
and a port the OS picks, in a process of its own: DuckDB's httpfs talks real HTTP to it, as it would to AWS S3,
MinIO or R2. Its keys are random; `environ()` gives the standard AWS variables that point the product at it.
`stop()` ends the process (everything it held was in its memory).
"""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

START_TIMEOUT_S = 30
REGION = "us-east-1"
_LISTENING = re.compile(r"Running on http://127\.0\.0\.1:(\d+)")


class S3ServerMissing(RuntimeError):
    """moto's server is not installed in this environment."""


def moto_server_command() -> list[str]:
    """`moto_server` beside this Python (the project's venv), else on PATH."""
    beside = Path(sys.executable).with_name("moto_server")
    found = str(beside) if beside.exists() else shutil.which("moto_server")
    if found is None:
        raise S3ServerMissing("moto_server not found: install the dev dependencies (`scripts/bootstrap`)")
    return [found]


@dataclass
class S3Server:
    """One S3-compatible server on 127.0.0.1: `endpoint_url`, and the keys it is reached with."""

    key_id: str = field(default_factory=lambda: "AKIA" + secrets.token_hex(8).upper())
    secret_key: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    port: int = 0
    _process: subprocess.Popen[str] | None = field(default=None, repr=False)
    _log: Any = field(default=None, repr=False)

    @property
    def endpoint_url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        """Starts the server and waits (bounded) until it says which port it listens on."""
        # its log goes to a file, read for the address: a pipe nobody drains would block the server once full
        self._log = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115 - closed by stop()
        self._process = subprocess.Popen([*moto_server_command(), "-H", "127.0.0.1", "-p", "0"],
                                         stdout=subprocess.DEVNULL, stderr=self._log, text=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        text = ""
        while time.monotonic() < deadline and self._process.poll() is None:
            self._log.seek(0)
            text = self._log.read()
            if match := _LISTENING.search(text):
                self.port = int(match.group(1))
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"moto_server did not start within {START_TIMEOUT_S} s: {text[-2000:]}")

    def environ(self) -> dict[str, str]:
        """The AWS variables that point DuckDB (and boto3) at this server."""
        return {"AWS_ACCESS_KEY_ID": self.key_id, "AWS_SECRET_ACCESS_KEY": self.secret_key,
                "AWS_REGION": REGION, "AWS_ENDPOINT_URL": self.endpoint_url}

    def client(self) -> Any:
        """A boto3 S3 client on this server (boto3 comes with moto)."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint_url, aws_access_key_id=self.key_id,
                            aws_secret_access_key=self.secret_key, region_name=REGION)

    def create_bucket(self, name: str) -> str:
        """A new bucket `name` (3 to 63 lowercase letters, digits, `-`); returns `s3://name/`."""
        self.client().create_bucket(Bucket=name)
        return f"s3://{name}/"

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every object key under `prefix` in `bucket`, paged through."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def stop(self) -> None:
        """Ends the server's process; safe to call twice."""
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)
        self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
