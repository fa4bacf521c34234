"""Fixtures of the extraction's tests: `start_sandbox`, the factory's sandboxes as these tests want them (the
root conftest's `warehouse` is the path of an empty warehouse)."""

from __future__ import annotations

import functools

import pytest


@pytest.fixture
def start_sandbox(sandbox_factory):
    """Starts sandboxes for a test (unpaced unless asked), past the windows' lag; every one is stopped at
    teardown. `start(contract="strict")` (or a `ContractProfile`) serves that contract profile instead of the
    default one."""
    return functools.partial(sandbox_factory, rate_limit_per_s=0, latency_ms=0, quiet=True)
