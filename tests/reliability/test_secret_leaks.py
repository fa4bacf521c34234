"""Issue 7, point 4: no client secret or bearer token anywhere after real runs.

A sandbox with a recognisable client secret issues tokens through the tamper proxy (which records
each one; tokens are revoked every few requests so a run holds several). Then the searches:
terminal output of `invoicing-warehouse sync` (normal and with dlt's DEBUG logs), the output of a
refused run, Dagster's event log and run storage (materialized with a temporary DAGSTER_HOME), the
logs captured in this process, dlt's whole data dir (pipeline state, schemas, trace, load packages,
gzip and parquet files opened), and every text value in the warehouse.
"""

from __future__ import annotations

import logging

from dagster import DagsterInstance

from harness.sync_process import Workspace, run_sync_command
from harness.tamper_proxy import TamperProxy
from tests.support.secret_scan import scan_text, scan_tree, scan_warehouse, secret_needles

SECRET = "S3CRET-canary-7f3a"


def test_no_secret_or_token_anywhere(sandbox_factory, tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    sb = sandbox_factory(
        seed=5,
        scale=40,
        rate_limit_per_s=0,
        client_id="canary-client",
        client_secret=SECRET,
        revoke_token_after_requests=20,
    )
    with TamperProxy(sb.base_url) as proxy:
        workspace = Workspace(tmp_path / "cli")
        env = workspace.env(proxy.base_url, sb.client_id, SECRET)
        # the CLI runs unpaced: the sandbox's own limit is off and the tokens are revoked by request count;
        # the Dagster run below keeps the deployed resources (their pacing included)
        unpaced = ("--rate-limit", "0")
        first = run_sync_command(workspace, env, *unpaced)
        assert first.returncode == 0, first.output[-2000:]
        debug = run_sync_command(workspace, {**env, "RUNTIME__LOG_LEVEL": "DEBUG"}, "--reconcile", *unpaced)
        assert debug.returncode == 0, debug.output[-2000:]
        refused = run_sync_command(
            workspace, {**env, "SOURCES__INVOICING__CLIENT_SECRET": SECRET + "-wrong"}, *unpaced
        )
        assert refused.returncode != 0

        dagster_home = tmp_path / "dagster_home"
        dagster_home.mkdir()
        dagster_warehouse = tmp_path / "dagster" / "warehouse.duckdb"
        monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
        monkeypatch.setenv("SOURCES__INVOICING__BASE_URL", proxy.base_url)
        monkeypatch.setenv("SOURCES__INVOICING__CLIENT_ID", sb.client_id)
        monkeypatch.setenv("SOURCES__INVOICING__CLIENT_SECRET", SECRET)
        monkeypatch.setenv("INVOICING_WAREHOUSE_PATH", str(dagster_warehouse))
        from assets.resources import default_resources
        from dagster_project.definitions import build_definitions

        defs = build_definitions(default_resources())
        with DagsterInstance.get() as instance:
            result = defs.resolve_job_def("sync_job").execute_in_process(
                instance=instance, raise_on_error=False, partition_key="default"
            )
            assert result.success, [e.message for e in result.all_events if e.is_failure]
            event_texts = [repr(record) for record in instance.all_logs(result.run_id)]
            run_texts = [repr(run) for run in instance.get_runs()]
        tokens = list(proxy.issued_tokens)

    assert len(tokens) >= 3, f"expected several tokens (revoked every 20 requests), got {len(tokens)}"
    needles = secret_needles(sb.client_id, SECRET, tokens)
    findings = []
    for label, result in (
        ("sync output", first),
        ("sync output, DEBUG logs", debug),
        ("refused sync output", refused),
    ):
        findings += scan_text(label, result.output, needles)
    findings += scan_text("refused sync output", refused.output, {"wrong secret": SECRET + "-wrong"})
    findings += [f for text in event_texts for f in scan_text("dagster event log", text, needles)]
    findings += [f for text in run_texts for f in scan_text("dagster run storage", text, needles)]
    findings += scan_text("logs captured in the test process", caplog.text, needles)
    files_scanned = 0
    for root in (workspace.root, tmp_path / "dlt", dagster_home, dagster_warehouse.parent):
        scanned, found = scan_tree(root, needles, skip_suffixes=(".duckdb", ".duckdb.wal"))
        files_scanned += scanned
        findings += found
    columns = 0
    for warehouse in (workspace.warehouse, dagster_warehouse):
        scanned, found = scan_warehouse(warehouse, needles)
        columns += scanned
        findings += found
    print(
        f"\nsecret scan: {len(needles)} needles ({len(tokens)} bearer tokens), {files_scanned} files, "
        f"{columns} warehouse text columns, {len(event_texts)} Dagster events: {len(findings)} findings"
    )
    assert files_scanned > 10 and columns > 20 and event_texts
    assert not findings, "\n".join(f"{f.secret_label} in {f.where}" for f in findings)
