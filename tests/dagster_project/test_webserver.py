"""The project as `dg` runs it: `dg check defs` passes, and `dg dev` serves the Dagster UI listing the
assets (started on 127.0.0.1 with a free port and a temporary DAGSTER_HOME, queried through its
GraphQL endpoint, then stopped: bounded waits, the whole process group killed in teardown)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from dagster import AssetKey
from dagster_expectations import PROJECT_ROOT, SPEC_RAW_TABLES, sql_model_paths

from harness.common import free_port

START_TIMEOUT_S = 120
ASSETS_QUERY = "{ assetNodes { assetKey { path } } }"


@pytest.fixture
def dg_dev(temporary_dagster_home: Path, tmp_path: Path):
    """A running `dg dev` on a free port of 127.0.0.1; yields its base URL."""
    port = free_port()
    # The instance uses the project's settings (run queue limits), as `dg dev` from the root would.
    shutil.copy(PROJECT_ROOT / "dagster.yaml", temporary_dagster_home / "dagster.yaml")
    dg = Path(sys.executable).with_name("dg")
    log = (tmp_path / "dg_dev.log").open("w")
    env = {**os.environ, "DAGSTER_HOME": str(temporary_dagster_home)}
    process = subprocess.Popen(
        [str(dg), "dev", "--host", "127.0.0.1", "--port", str(port)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        # its own process group, where the webserver, daemon and code server die together; not its own session,
        # which Linux would schedule apart from the tests (autogroup), whatever the worker's nice (scripts/test)
        process_group=0,
    )
    try:
        yield f"http://127.0.0.1:{port}", process, tmp_path / "dg_dev.log"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)  # as Ctrl-C: `dg dev` ignores SIGTERM for 20 s and more
            try:
                process.wait(timeout=8)  # about 2 s as a rule; once 20 s on a fresh clone, then killed
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        log.close()


def _asset_keys(base_url: str, process: subprocess.Popen, log_path: Path) -> set[AssetKey]:
    deadline = time.monotonic() + START_TIMEOUT_S
    last_error = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"dg dev exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            response = httpx.post(f"{base_url}/graphql", json={"query": ASSETS_QUERY}, timeout=10)
            nodes = response.json().get("data", {}).get("assetNodes") or []
            if nodes:
                return {AssetKey(node["assetKey"]["path"]) for node in nodes}
            last_error = response.text[:300]
        except (httpx.HTTPError, ValueError) as error:
            last_error = repr(error)
        time.sleep(1)
    pytest.fail(f"no assets listed after {START_TIMEOUT_S} s ({last_error}):\n{log_path.read_text()[-3000:]}")


def test_dg_dev_serves_the_asset_graph(dg_dev):
    base_url, process, log_path = dg_dev
    keys = _asset_keys(base_url, process, log_path)
    expected = {AssetKey(["invoicing_raw", t]) for t in SPEC_RAW_TABLES} | {
        AssetKey(list(p)) for p in sql_model_paths()
    }
    assert keys == expected
    log = log_path.read_text()
    for warning in ("DeprecationWarning", "SupersessionWarning", "deprecated", "superseded"):
        assert warning.lower() not in log.lower(), warning


def test_dg_check_defs_passes(temporary_dagster_home: Path):
    dg = Path(sys.executable).with_name("dg")
    result = subprocess.run(
        [str(dg), "check", "defs"],
        check=False,
        cwd=PROJECT_ROOT,
        env={**os.environ, "DAGSTER_HOME": str(temporary_dagster_home)},
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "All definitions loaded successfully" in output
    for warning in ("DeprecationWarning", "SupersessionWarning", "deprecated", "superseded"):
        assert warning.lower() not in output.lower(), warning
