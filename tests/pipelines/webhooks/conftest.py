"""Fixtures of the applying-run tests: an isolated dlt data dir, and the portal `default` pointed at the test's
sandbox (the root conftest's `sandbox`: seed 16, scale 40, unpaced, past the windows' lag, stopped at teardown)."""

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
def api_env(sandbox, monkeypatch) -> dict[str, str]:
    """The sandbox's settings as the environment names them (the portal `default`)."""
    env = {"SOURCES__INVOICING__BASE_URL": sandbox.base_url, "SOURCES__INVOICING__CLIENT_ID": sandbox.client_id,
           "SOURCES__INVOICING__CLIENT_SECRET": sandbox.client_secret}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env
