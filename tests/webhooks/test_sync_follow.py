"""`invoicing-warehouse sync --follow` as a user runs it (a separate process): the first sync, then hints
applied within the bounded loop (`--max-seconds` bounds it; the test stops it with Ctrl-C once the hints are
applied); the readers' copy then equals the sandbox's own records."""

from __future__ import annotations

import signal
import subprocess
import threading
import time

from hint_support import reader

from harness.hinted_changes import DELETIONS, HintedMutator
from harness.sync_process import COMMAND, Workspace
from harness.warehouse_truth import compare_raw_tables
from invoicing_warehouse.hint_feed import ListenerFeed
from pipelines.invoicing.hint_spool import HintSpool, spool_path

WAIT_S = 60.0


def test_sync_follow_applies_hints_until_max_seconds(sandbox, tmp_path):
    workspace = Workspace(tmp_path)
    warehouse = str(workspace.warehouse)
    env = workspace.env(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    process = subprocess.Popen([*COMMAND, "sync", "--warehouse", warehouse, "--follow", "--poll-s", "0.5",
                                "--max-seconds", "90", "--rate-limit", "0"], env=env, cwd=workspace.cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    lines: list[str] = []
    following, applied = threading.Event(), threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            following.set() if "following webhook hints" in line else None
            applied.set() if line.startswith("hints default:") and "applied" in line else None

    threading.Thread(target=read, daemon=True).start()
    try:
        assert following.wait(WAIT_S), "\n".join(lines[-30:])
        feed = ListenerFeed(sandbox.portal, spool_path(warehouse)).start()
        try:
            HintedMutator(sandbox.portal, 0, seed=21, without=DELETIONS).steps(15)
        finally:
            feed.stop()
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            with HintSpool(spool_path(warehouse)) as spool:
                if spool.pending_count() == 0 and applied.is_set():
                    break
            time.sleep(0.2)
        process.send_signal(signal.SIGINT)  # Ctrl-C between two polls: a clean stop, hints kept
        assert process.wait(timeout=WAIT_S) == 0, "\n".join(lines[-30:])
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    assert applied.is_set(), "\n".join(lines[-30:])
    with reader(warehouse) as connection:
        comparison = compare_raw_tables(connection, sandbox.portal)
    assert comparison.mismatches == [], comparison.summary()
