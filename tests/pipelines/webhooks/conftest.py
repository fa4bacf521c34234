"""Fixtures of the applying-run tests: a seeded sandbox on 127.0.0.1 (stopped at teardown), a synced
warehouse, an isolated dlt data dir, and the portal `default` pointed at the sandbox."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[3]
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))


@pytest.fixture(autouse=True)
def isolated_dlt_data_dir(tmp_path, monkeypatch) -> Path:
    """Every test's dlt pipelines live under its own DLT_DATA_DIR."""
    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / "dlt"))
    return tmp_path / "dlt"


@pytest.fixture
def sandbox(sandbox_factory):
    """A seeded sandbox (seed 16, scale 40), unpaced, on the run's date; stopped at teardown."""
    from harness.common import quiet

    server = sandbox_factory(seed=16, scale=40, rate_limit_per_s=0, latency_ms=0)
    quiet(server)
    return server


@pytest.fixture
def api_env(sandbox, monkeypatch) -> dict[str, str]:
    """The sandbox's settings as the environment names them (the portal `default`)."""
    env = {"SOURCES__INVOICING__BASE_URL": sandbox.base_url, "SOURCES__INVOICING__CLIENT_ID": sandbox.client_id,
           "SOURCES__INVOICING__CLIENT_SECRET": sandbox.client_secret}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env
