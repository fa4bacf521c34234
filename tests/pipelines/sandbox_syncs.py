"""Helpers for tests that sync a sandbox: let its clock pass the windows' lag, run a sync against it."""

from __future__ import annotations

from harness.common import quiet
from pipelines.invoicing.load.sync import make_pipeline, run_sync

__all__ = ["quiet", "sync"]  # quiet: the one copy in harness/common.py, importable from here as before


def sync(sandbox, warehouse: str, **options):
    """`run_sync` into `warehouse` with the sandbox's credentials (no pacing unless asked)."""
    options.setdefault("rate_limit_per_s", 0)
    return run_sync(make_pipeline(warehouse), base_url=sandbox.base_url, client_id=sandbox.client_id,
                    client_secret=sandbox.client_secret, **options)
