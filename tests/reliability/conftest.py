"""Fixtures of the reliability suite: isolated dlt data dirs (its sandboxes: the root conftest's `sandbox_factory`).

The suite's scenarios live in `harness/` (shared with `bench/chaos.py`, the long form), so
the project root must be importable as in `python -m pytest` from the root; this also makes a
plain `pytest` call from elsewhere work.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
if str(PROJECT_ROOT) not in sys.path:
    sys.path.insert(0, str(PROJECT_ROOT))



@pytest.fixture(autouse=True)
def isolated_dlt_data_dir(tmp_path, monkeypatch) -> Path:
    """dlt keeps pipeline working dirs (state, trace, load packages) under DLT_DATA_DIR/pipelines:
    every test gets its own, so no state crosses tests and the secret scan sees this test's only."""
    data_dir = tmp_path / "dlt"
    monkeypatch.setenv("DLT_DATA_DIR", str(data_dir))
    for name in (
        "SOURCES__INVOICING__BASE_URL",
        "SOURCES__INVOICING__CLIENT_ID",
        "SOURCES__INVOICING__CLIENT_SECRET",
    ):
        monkeypatch.delenv(name, raising=False)
    return data_dir

