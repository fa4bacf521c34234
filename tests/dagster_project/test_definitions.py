"""The definitions load, hold exactly the expected assets (every raw table of the spec, every SQL
file on disk), wire models from their SQL, and carry the operational settings (jobs, schedules,
run concurrency, retries)."""

from __future__ import annotations

from datetime import timedelta

import duckdb
from dagster import AssetKey, DagsterInstance, Definitions, materialize
from dagster._core.instance.ref import InstanceRef
from dagster_expectations import CONTRACT_CHECKS, PROJECT_ROOT, SPEC_RAW_TABLES, sql_model_paths

from assets.models import build_model_assets
from assets.resources import WarehouseResource


def _defs():
    from dagster_project.definitions import defs

    return defs


def _asset_graph(defs: Definitions):
    return defs.resolve_asset_graph()


def test_definitions_load():
    defs = _defs()
    Definitions.validate_loadable(defs)
    assert {job for job in ("sync_job", "reconcile_job", "hint_check_job")} <= {
        job.name for job in defs.resolve_all_job_defs()
    }


def test_asset_keys_are_every_raw_table_and_every_sql_file():
    expected = {AssetKey(["invoicing_raw", table]) for table in SPEC_RAW_TABLES} | {
        AssetKey([schema, name]) for schema, name in sql_model_paths()
    }
    # 11 staging + 4 intermediate + 6 marts at the time of writing; more is fine
    assert len(sql_model_paths()) >= 21
    assert set(_defs().resolve_all_asset_keys()) == expected


def test_groups_and_kinds():
    graph = _asset_graph(_defs())
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        expected_group = {
            "invoicing_raw": "invoicing_raw",
            "staging": "staging",
            "intermediate": "intermediate",
            "marts": "marts",
            "reference": "reference",  # the seeds' tables (invoicing_warehouse/engine/seeds/)
        }[key.path[0]]
        assert node.group_name == expected_group, key
        expected_kinds = {"dlt", "duckdb"} if key.path[0] == "invoicing_raw" else {"sql", "duckdb"}
        assert set(node.kinds) == expected_kinds, key


def test_model_dependencies_come_from_the_sql():
    graph = _asset_graph(_defs())

    def parents(*path):
        return {k.to_user_string() for k in graph.get(AssetKey(list(path))).parent_keys}

    # sql/staging/stg_invoicing__document_lines.sql reads invoicing_raw.documents__lines (a child
    # table, owned by the documents asset) and invoicing_raw.documents.
    assert parents("staging", "stg_invoicing__document_lines") == {"invoicing_raw/documents"}
    assert parents("staging", "stg_invoicing__customers") == {"invoicing_raw/customers"}
    # sql/marts/overdue_customers.sql reads two marts and the customers staging model.
    assert parents("marts", "overdue_customers") == {
        "marts/receivables",
        "marts/receivables_by_customer",
        "staging/stg_invoicing__customers",
    }
    # the marts read the shared rules of sql/intermediate/
    assert parents("marts", "receivables") == {
        "intermediate/int_report_date",
        "intermediate/int_invoices_as_of",
        "intermediate/int_usages_as_of",
        "intermediate/int_aging_buckets",
        "staging/stg_invoicing__customers",
        "staging/stg_invoicing__document_messages",
    }
    assert parents("intermediate", "int_usages_as_of") == {
        "intermediate/int_report_date",
        "intermediate/int_usages_on_live_versions",
    }
    # a usage left on a replaced version counts for the live one: the versions tell which
    assert parents("intermediate", "int_usages_on_live_versions") == {
        "staging/stg_invoicing__transaction_usages",
        "staging/stg_invoicing__document_versions",
    }
    # raw tables have no upstream asset
    assert parents("invoicing_raw", "documents") == set()


def test_a_new_sql_file_becomes_an_asset_without_python(tmp_path):
    (tmp_path / "staging").mkdir()
    (tmp_path / "marts").mkdir()
    (tmp_path / "staging" / "stg_a.sql").write_text(
        "-- ---\n-- description: the a.\n-- materialized: view\n-- grain: [id]\n-- ---\nselect id from "
        "invoicing_raw.items\n")
    (tmp_path / "marts" / "b.sql").write_text(
        "-- ---\n-- description: the count of a.\n-- grain: []\n-- ---\nselect count(*) as n from staging.stg_a\n")
    assets = build_model_assets(tmp_path)
    # the description shown in Dagster is the front matter's
    assert {a.key.to_user_string(): a.descriptions_by_key[a.key] for a in assets} == {
        "staging/stg_a": "the a.", "marts/b": "the count of a."}
    deps = {
        key.to_user_string(): {d.to_user_string() for d in a.asset_deps[key]}
        for a in assets
        for key in a.keys
    }
    assert deps == {"staging/stg_a": {"invoicing_raw/items"}, "marts/b": {"staging/stg_a"}}


def test_a_models_materialization_carries_its_columns_types_and_descriptions(tmp_path):
    (tmp_path / "marts").mkdir()
    (tmp_path / "marts" / "b.sql").write_text(
        "-- ---\n-- description: the items.\n-- grain: [id]\n-- columns:\n--   id: the item\n-- ---\n"
        "select id, name from invoicing_raw.items\n")
    warehouse = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(warehouse)) as conn:
        conn.execute("create schema invoicing_raw; create table invoicing_raw.items (id bigint, name varchar)")
    result = materialize(build_model_assets(tmp_path), resources={"warehouse": WarehouseResource(path=str(warehouse))})
    assert result.success
    [event] = result.get_asset_materialization_events()
    schema = event.materialization.metadata["dagster/column_schema"].value
    # DuckDB's own types of the built table; the front matter's texts, none for a column it does not describe
    assert [(c.name, c.type, c.description) for c in schema.columns] == [
        ("id", "BIGINT", "the item"), ("name", "VARCHAR", None)]


def test_checks_cover_raw_tables_references_and_marts():
    graph = _asset_graph(_defs())
    check_keys = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys}
    for table in SPEC_RAW_TABLES:  # stale after twice the 15-minute interval, as `status` says
        policy = graph.get(AssetKey(["invoicing_raw", table])).freshness_policy
        assert policy is not None and policy.fail_window.to_timedelta() == timedelta(minutes=30)
    for table in SPEC_RAW_TABLES:
        assert (f"invoicing_raw/{table}", "ids_unique") in check_keys
        assert (f"invoicing_raw/{table}", "sync_read_exactly") in check_keys
        assert (f"invoicing_raw/{table}", "fields_known") in check_keys
    assert ("invoicing_raw/documents", "customers_exist") in check_keys
    assert ("invoicing_raw/transaction_usages", "invoices_exist") in check_keys
    assert ("marts/receivables_by_customer", "total_open_matches_due_amount") in check_keys
    for schema, name in sql_model_paths():
        if schema == "marts":
            assert (f"marts/{name}", "keys_unique") in check_keys
    # the contract checks, exactly: every check whose name is one of theirs is one of them
    contract_names = {name for _, name in CONTRACT_CHECKS}
    assert {key for key in check_keys if key[1] in contract_names} == CONTRACT_CHECKS


def test_writing_jobs_queue_on_the_warehouse_tag_and_retry(tmp_path):
    defs = _defs()
    # the webhook hints job adds no asset (the keys above are unchanged) but writes: it queues on the tag too
    assert defs.resolve_job_def("apply_hints_job").tags.get("invoicing-warehouse/warehouse") == "data/warehouse.duckdb"
    hints_sensor = next(s for s in defs.sensors if s.name == "apply_hints_when_pending")
    assert hints_sensor.job_name == "apply_hints_job" and hints_sensor.minimum_interval_seconds == 3
    # the lake's upkeep writes its catalog: it queues with the writers, and retries a lake busy past its bound
    upkeep = defs.resolve_job_def("lake_maintenance_job")
    assert upkeep.tags.get("invoicing-warehouse/warehouse") == "data/warehouse.duckdb"
    assert upkeep.op_retry_policy is not None and upkeep.op_retry_policy.max_retries == 3
    for name in ("sync_job", "reconcile_job", "portal_sync_job", "portal_reconcile_job", "models_job"):
        job = defs.resolve_job_def(name)
        assert job.tags.get("invoicing-warehouse/warehouse") == "data/warehouse.duckdb"
        assert job.op_retry_policy is not None and job.op_retry_policy.max_retries == 3
        assert job.op_retry_policy.backoff is not None
    # The project's dagster.yaml, parsed by Dagster itself: one run at a time per warehouse path.
    with DagsterInstance.from_ref(
        InstanceRef.from_dir(str(tmp_path), config_dir=str(PROJECT_ROOT))
    ) as instance:
        limits = instance.get_concurrency_config().run_queue_config.tag_concurrency_limits
    assert limits == [
        {"key": "invoicing-warehouse/warehouse", "value": {"applyLimitPerUniqueValue": True}, "limit": 1}
    ]


def test_schedules_follow_the_configured_interval(monkeypatch):
    from dagster_project import schedules

    by_name = {schedule.name: schedule for schedule in _defs().schedules}
    assert by_name["sync_schedule"].cron_schedule == "0-59/15 * * * *"
    assert by_name["reconcile_schedule"].cron_schedule == "30 3 * * *"
    # one run per portal of its raw tables; the models once after them (model_sensor.py)
    assert by_name["sync_schedule"].job_name == "portal_sync_job"
    assert by_name["reconcile_schedule"].job_name == "portal_reconcile_job"
    assert (by_name["lake_maintenance_schedule"].job_name, by_name["lake_maintenance_schedule"].cron_schedule) == \
        ("lake_maintenance_job", "30 4 * * *")
    monkeypatch.setenv("INVOICING_SYNC_INTERVAL_MINUTES", "5")
    assert schedules.sync_interval() == timedelta(minutes=5)
    monkeypatch.setenv("INVOICING_SYNC_INTERVAL_MINUTES", "7")
    try:
        schedules.sync_interval()
    except ValueError as error:
        assert "divide 60" in str(error)
    else:
        raise AssertionError("an interval that does not divide 60 must be refused")


def test_the_lake_upkeep_job_leaves_a_duckdb_file_alone(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INVOICING_WAREHOUSE_ENGINE", raising=False)
    with DagsterInstance.ephemeral() as instance:
        result = _defs().resolve_job_def("lake_maintenance_job").execute_in_process(instance=instance)
        logged = [event.message for event in instance.all_logs(result.run_id) if event.message]
    assert result.success
    assert any("is a DuckDB file: no snapshot to expire" in message for message in logged)
    assert list(tmp_path.iterdir()) == []  # the warehouse is neither made nor opened


def test_every_check_of_the_gate_on_an_asset_is_a_dagster_check():
    # one set of rules: what the gate judges before publishing, Dagster judges after each asset
    from assets.checks import has_asset
    from assets.keys import relation_asset_key
    from invoicing_warehouse.runs.gate import warehouse_checks

    check_keys = {(k.asset_key, k.name) for k in _asset_graph(_defs()).asset_check_keys}
    gate = {(relation_asset_key(c.relation), c.name) for c in warehouse_checks(None) if has_asset(c)}
    assert len(gate) > 50
    assert gate - check_keys == set()
