"""Issue 15, point 4: a sync process where nothing changed upstream does only what it must.

A real `invoicing-warehouse sync` process (harness/sync_process.py) against a sandbox, warehouse already
synced: the second run makes exactly one request per endpoint (its token kept), loads no row, and leaves
the readers' snapshot untouched (same inode, same bytes: no copy of the whole file). A change upstream
is then published, and a run that died before publishing leaves a mark that makes the next run publish
even when that one changed nothing. How long the process takes is printed by
`bench/incremental_fixed_costs.py`, not asserted here.
"""

from __future__ import annotations

import os

import duckdb

from harness.common import quiet
from harness.sync_process import Workspace, run_sync_command
from invoicing_warehouse.engine.publish import default_snapshot_path, unpublished_mark


def _loads(warehouse) -> int:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute("select count(*) from invoicing_raw._dlt_loads").fetchone()[0]


def _price(path, item_id: str):
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("select price from invoicing_raw.items where id = ?", [item_id]).fetchone()[0]


def test_a_no_change_sync_process_loads_nothing_copies_nothing_and_asks_once_per_endpoint(sandbox_factory, tmp_path):
    sandbox = sandbox_factory(seed=3, scale=200, rate_limit_per_s=0)
    workspace = Workspace(tmp_path)
    env = workspace.env(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    first = run_sync_command(workspace, env, "--rate-limit", "0")
    assert first.returncode == 0, first.output
    snapshot = default_snapshot_path(workspace.warehouse)
    published = snapshot.stat()
    assert not unpublished_mark(workspace.warehouse).exists()

    quiet(sandbox)
    requests_before = sandbox.stats["requests"]
    quiet_run = run_sync_command(workspace, env, "--rate-limit", "0")
    assert quiet_run.returncode == 0, quiet_run.output
    assert "unchanged (no row changed)" in quiet_run.stdout
    # one request per endpoint, counted by the server and typed by hand (test-review-2 F11): GET /me, GET /portal,
    # one empty window page of each of the 7 lists (customers, items, documents, transactions, transaction
    # usages, suppliers, supplier documents) and the one refused GET /webhooks; no token request: the first run
    # kept its token for this one (pipelines/invoicing/http/token_cache.py)
    assert sandbox.stats["requests"] - requests_before == 1 + 1 + 7 + 1, quiet_run.output
    assert sandbox.stats["tokens_issued"] == 1
    assert "rows loaded" not in quiet_run.stdout
    same = snapshot.stat()
    assert (same.st_ino, same.st_mtime_ns, same.st_size) == (published.st_ino, published.st_mtime_ns,
                                                              published.st_size)
    assert not unpublished_mark(workspace.warehouse).exists()

    # a change upstream is loaded and published
    item = sandbox.portal.snapshot("items")[0]
    sandbox.portal.update("items", item["id"], {"price": 43.21})
    quiet(sandbox)
    changed = run_sync_command(workspace, env, "--rate-limit", "0")
    assert changed.returncode == 0, changed.output
    assert snapshot.stat().st_ino != published.st_ino
    assert str(_price(snapshot, item["id"])) == "43.21"

    # a run that changed data but died before publishing leaves the mark: the next run publishes even
    # though it changes nothing itself (the API is left as it was, so that run loads no row)
    loads = _loads(workspace.warehouse)
    with duckdb.connect(str(workspace.warehouse)) as con:  # what the dead run had committed
        con.execute("update invoicing_raw.items set price = 99.99 where id = ?", [item["id"]])
    unpublished_mark(workspace.warehouse).touch()
    quiet(sandbox)
    healed = run_sync_command(workspace, env, "--rate-limit", "0")
    assert healed.returncode == 0, healed.output
    assert "rows loaded" not in healed.stdout and "unchanged" not in healed.stdout, healed.stdout
    assert _loads(workspace.warehouse) == loads + 1  # the state-only load of that run
    assert str(_price(snapshot, item["id"])) == "99.99"
    assert not unpublished_mark(workspace.warehouse).exists()
    assert not list(tmp_path.glob("*.tmp")) and os.path.exists(snapshot)
