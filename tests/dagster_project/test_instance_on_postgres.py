"""Dagster's instance on PostgreSQL (issue 33, point 4): the deployment's dagster.yaml
(docs/deploy/dagster/dagster.yaml, the file docs/deploy.md tells to install), loaded by Dagster itself against the
session's real PostgreSQL.

Two instances from two DAGSTER_HOME folders that share no file, as two hosts would: a run executed with the
first is seen, with its tags and event log, from the second. The truth is the run's own result (its id, its
success, the message its op logged) and the limits written in the file. (A tiny job of the test's own: the
project's jobs are what they are on any storage; loading them would only add seconds.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus, job, op
from dagster._core.run_coordinator import QueuedRunCoordinator
from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

from assets.run_tags import EGRESS_TAG, PORTAL_TAG
from invoicing_warehouse.engine.target import parse_catalog_dsn

DEPLOYED_YAML = Path(__file__).resolve().parents[2] / "docs" / "deploy" / "dagster" / "dagster.yaml"
SAID = "synced portal acme on host A"


@op
def say(context) -> None:
    context.log.info(SAID)


@job(tags={EGRESS_TAG: "api.one.example via nat-a", PORTAL_TAG: "acme"})
def portal_run() -> None:
    say()


def test_a_run_recorded_by_one_host_is_seen_with_its_events_from_another(postgres_cluster, tmp_path, monkeypatch):
    dsn = parse_catalog_dsn(postgres_cluster.create_database("dagster_instance"))
    for name, value in {"DAGSTER_PG_HOST": dsn.host, "DAGSTER_PG_PORT": str(dsn.port), "DAGSTER_PG_USER": dsn.user,
                        "DAGSTER_PG_PASSWORD": postgres_cluster.password, "DAGSTER_PG_DB": dsn.database}.items():
        monkeypatch.setenv(name, value)
    homes = []
    for host in ("host-a", "host-b"):
        home = tmp_path / host / "dagster_home"
        home.mkdir(parents=True)
        shutil.copy(DEPLOYED_YAML, home / "dagster.yaml")
        homes.append(home)
    with DagsterInstance.from_config(str(homes[0])) as host_a:
        assert isinstance(host_a.run_storage, PostgresRunStorage)
        assert isinstance(host_a.event_log_storage, PostgresEventLogStorage)
        assert isinstance(host_a.schedule_storage, PostgresScheduleStorage)
        result = portal_run.execute_in_process(instance=host_a)
        assert result.success

    with DagsterInstance.from_config(str(homes[1])) as host_b:
        run = host_b.get_run_by_id(result.run_id)
        assert run is not None and run.status == DagsterRunStatus.SUCCESS and run.job_name == "portal_run"
        assert run.tags[EGRESS_TAG] == "api.one.example via nat-a"
        events = host_b.all_logs(result.run_id)
        assert DagsterEventType.RUN_SUCCESS in {event.dagster_event_type for event in events}
        assert any(event.message == SAID for event in events)
        # the run queue of the file: per egress (API host via egress IP) and per portal, as run_tags.py tags runs
        assert isinstance(host_b.run_coordinator, QueuedRunCoordinator)
        limits = host_b.get_concurrency_config().run_queue_config.tag_concurrency_limits
    assert {limit["key"]: (limit["value"], limit["limit"]) for limit in limits} == {
        EGRESS_TAG: ({"applyLimitPerUniqueValue": True}, 12), PORTAL_TAG: ({"applyLimitPerUniqueValue": True}, 1)}
    assert not (homes[1] / "storage").exists()  # host B read it all from PostgreSQL, nothing from a file
