"""Many portals in one warehouse: `sync --portal/--all` over real HTTP against several sandboxes whose ids
collide (same seed), each portal exact against its own sandbox (harness/warehouse_truth.py), a failing
portal reported without stopping the others, bad options changing nothing, and the upgrade of a warehouse
made before portals existed."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from harness.sync_process import Workspace, run_sync_in_process
from harness.warehouse_truth import mismatches, table_fingerprint
from tests.pipelines.sandbox_syncs import quiet, sync

SEED, SCALE = 5, 150


def portals_env(workspace: Workspace, sandboxes: dict, secrets: dict | None = None) -> dict[str, str]:
    """The environment of a sync with `sandboxes` (name -> sandbox) as portals of the file, each with its
    credentials under its own dlt section; `secrets` overrides a portal's secret (a wrong one)."""
    first = next(iter(sandboxes.values()))
    extra = {}
    for name, sandbox in sandboxes.items():
        section = f"SOURCES__INVOICING__PORTALS__{name.upper()}"
        extra[f"{section}__CLIENT_ID"] = sandbox.client_id
        extra[f"{section}__CLIENT_SECRET"] = (secrets or {}).get(name, sandbox.client_secret)
    return workspace.env(first.base_url, first.client_id, first.client_secret, **extra)


def write_portals(workspace: Workspace, sandboxes: dict) -> None:
    text = "".join(f'[portals.{name}]\nbase_url = "{s.base_url}"\nrate_limit = 0\n\n' for name, s in sandboxes.items())
    (workspace.cwd / "portals.toml").write_text(text, encoding="utf-8")


def portal_counts(warehouse, table: str) -> dict[str, int]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return dict(con.execute(f"select portal_id, count(*) from invoicing_raw.{table} group by 1").fetchall())


def test_two_portals_with_colliding_ids_each_exact_and_a_bad_portal_does_not_stop_them(start_sandbox, tmp_path):
    acme, beta = start_sandbox(seed=SEED, scale=SCALE), start_sandbox(seed=SEED, scale=SCALE)
    shared = {d["id"] for d in acme.portal.snapshot("documents")} & {d["id"] for d in beta.portal.snapshot("documents")}
    assert len(shared) > 100  # same seed: the two accounts' ids collide
    item = beta.portal.snapshot("items")[0]
    beta.portal.update("items", item["id"], {"price": 77.7})  # a colliding id whose record differs
    extra = beta.portal.create("customers", {"name": "Only in beta"})
    quiet(beta)
    workspace = Workspace(tmp_path)
    sandboxes = {"acme": acme, "beta": beta, "broken": acme}
    write_portals(workspace, sandboxes)
    env = portals_env(workspace, sandboxes, secrets={"broken": "wrong-secret"})

    result = run_sync_in_process(workspace, env, "--all")

    assert result.returncode == 1, result.output
    assert "portal acme: ok" in result.stdout and "portal beta: ok" in result.stdout
    assert "portal broken: FAILED" in result.stdout and "wrong-secret" not in result.output
    assert "SOURCES__INVOICING__PORTALS__BROKEN__CLIENT_SECRET" in result.stdout  # names what to fix
    warehouse = str(workspace.warehouse)
    assert mismatches(warehouse, acme.portal, portal_id="acme") == []
    assert mismatches(warehouse, beta.portal, portal_id="beta") == []
    documents = len(acme.portal.snapshot("documents"))
    assert portal_counts(workspace.warehouse, "documents") == {"acme": documents, "beta": documents}
    assert portal_counts(workspace.warehouse, "customers") == {
        "acme": len(acme.portal.snapshot("customers")), "beta": len(beta.portal.snapshot("customers"))}
    with duckdb.connect(warehouse, read_only=True) as con:
        prices = dict(con.execute("select portal_id, price from invoicing_raw.items where id = ?",
                                  [item["id"]]).fetchall())
        assert float(prices["beta"]) == 77.7 and float(prices["acme"]) != 77.7
        assert con.execute("select count(*) from invoicing_raw.customers where id = ?",
                           [extra["id"]]).fetchone()[0] == 1
        # each portal keeps its own dlt state: its windows and what it learnt of its server
        pipelines = {r[0] for r in con.execute("select pipeline_name from invoicing_raw._dlt_pipeline_state")
                     .fetchall()}
        assert pipelines == {"invoicing__acme", "invoicing__beta"}

    # one portal alone, incremental: the other's rows stay as they were
    before = table_fingerprint(workspace.warehouse)
    acme.portal.update("items", item["id"], {"price": 12.5})
    quiet(acme)
    result = run_sync_in_process(workspace, env, "--portal", "acme")
    assert result.returncode == 0, result.output
    assert mismatches(warehouse, acme.portal, portal_id="acme") == []
    assert mismatches(warehouse, beta.portal, portal_id="beta") == []
    after = table_fingerprint(workspace.warehouse)
    assert before["items"] != after["items"]
    with duckdb.connect(warehouse, read_only=True) as con:
        prices = dict(con.execute("select portal_id, price from invoicing_raw.items where id = ?",
                                  [item["id"]]).fetchall())
    assert float(prices["acme"]) == 12.5 and float(prices["beta"]) == 77.7


@pytest.fixture(scope="module")
def golden_default_portal(tmp_path_factory, module_sandbox_factory):
    """One sandbox and one first sync of the portal `default` (as before portals) for the bad-option cases,
    which copy it: their refused runs make no request, so they can share the sandbox."""
    sandbox = module_sandbox_factory(seed=2, scale=40, rate_limit_per_s=0, latency_ms=0, quiet=True,
                                     real_date=True)
    golden = Workspace(tmp_path_factory.mktemp("golden-default-portal"))
    env = golden.env(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    first = run_sync_in_process(golden, env, "--rate-limit", "0")
    assert first.returncode == 0, first.output  # the sandbox's own limit is off: unpaced
    return sandbox, golden


@pytest.mark.parametrize(("portals_text", "args", "says"), [
    ('[portals.acme]\nbase_url = "http://127.0.0.1:1/api/v2"\nclient_secret = "hush-hush"\n', ("--all",),
     "SOURCES__INVOICING__PORTALS__ACME__CLIENT_SECRET"),
    ("[portals.acme\n", ("--all",), "not valid TOML"),
    ('[portals.acme]\nbase_url = "http://127.0.0.1:1/api/v2"\n', ("--portal", "acne"),
     "unknown portal; configured: acme"),
    (None, ("--portals", "missing.toml", "--all"), "cannot read it"),
])
def test_bad_portal_options_sync_nothing_and_leave_the_warehouse_as_it_was(golden_default_portal, tmp_path,
                                                                            portals_text, args, says):
    sandbox, golden = golden_default_portal
    workspace = Workspace(tmp_path / "workspace")
    shutil.copytree(golden.root, workspace.root)
    env = workspace.env(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    before = table_fingerprint(workspace.warehouse)
    assert before["documents"], before  # a loaded warehouse, so "as it was" compares real rows
    if portals_text is not None:
        (workspace.cwd / "portals.toml").write_text(portals_text, encoding="utf-8")
    sandbox.portal.create("customers", {"name": "Not synced"})
    quiet(sandbox)
    requests_before = sandbox.stats["requests"]

    result = run_sync_in_process(workspace, env, *args)

    assert result.returncode == 1 and says in result.output, result.output
    assert "hush-hush" not in result.output
    assert table_fingerprint(workspace.warehouse) == before
    assert sandbox.stats["requests"] == requests_before  # refused before any request


def test_a_warehouse_made_before_portals_becomes_portal_default_without_duplicates(start_sandbox, warehouse):
    sandbox = start_sandbox(seed=6, scale=150)
    sync(sandbox, warehouse)
    # the old shape: `portal_id` held the API's portalId, tables without it had no such column
    with duckdb.connect(warehouse) as con:
        tables = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_schema = 'invoicing_raw' "
            "and table_name not like '%\\_\\_%' escape '\\' and table_name not like '\\_dlt%' escape '\\'").fetchall()]
        for table in tables:
            columns = {r[0] for r in con.execute(
                "select column_name from information_schema.columns where table_schema = 'invoicing_raw' "
                "and table_name = ?", [table]).fetchall()}
            if "api_portal_id" in columns:
                con.execute(f"update invoicing_raw.{table} set portal_id = api_portal_id")
                con.execute(f"alter table invoicing_raw.{table} drop column api_portal_id")
            else:
                con.execute(f"alter table invoicing_raw.{table} drop column portal_id")
    portal = sandbox.portal
    item = portal.snapshot("items")[0]
    portal.update("items", item["id"], {"price": 3.21})
    portal.create("customers", {"name": "After the upgrade"})
    quiet(sandbox)

    sync(sandbox, warehouse)

    assert mismatches(warehouse, portal) == []  # portal `default`, duplicate ids included in the check
    for table in ("items", "customers", "documents", "user", "portal", "supplier_document_events"):
        assert set(portal_counts(warehouse, table)) == {"default"}, table
    assert sum(portal_counts(warehouse, "items").values()) == len(portal.snapshot("items"))


def test_a_full_refresh_of_one_portal_deletes_only_its_own_rows_no_longer_served(start_sandbox, tmp_path):
    acme, beta = start_sandbox(seed=3, scale=60), start_sandbox(seed=3, scale=60)
    workspace = Workspace(tmp_path)
    sandboxes = {"acme": acme, "beta": beta}
    write_portals(workspace, sandboxes)
    env = portals_env(workspace, sandboxes)
    assert run_sync_in_process(workspace, env, "--all").returncode == 0
    gone = beta.portal.snapshot("items")[0]["id"]
    beta.portal.delete("items", gone)  # hard delete: only a full scan can see it
    quiet(beta)

    result = run_sync_in_process(workspace, env, "--portal", "beta", "--full-refresh")

    assert result.returncode == 0, result.output
    warehouse = str(workspace.warehouse)
    assert mismatches(warehouse, beta.portal, portal_id="beta") == []
    assert mismatches(warehouse, acme.portal, portal_id="acme") == []
    with duckdb.connect(warehouse, read_only=True) as con:
        holders = {r[0] for r in con.execute("select portal_id from invoicing_raw.items where id = ?",
                                             [gone]).fetchall()}
    assert holders == {"acme"}  # beta's row went, acme's record of the same id stayed
