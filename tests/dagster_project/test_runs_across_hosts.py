"""Dagster across hosts (issue 33, point 4): each portal's run says which budget it spends (its API host and the
host's egress) for the run queue to limit, and the models are built once per interval after the portals' runs.

Truths: the portals file written here (its API hosts), the INVOICING_EGRESS_IP set here, and the runs recorded in a
real (ephemeral) Dagster instance by the test, in the states a daemon would give them.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import pytest
from dagster import (
    AssetKey,
    DagsterEvent,
    DagsterEventType,
    DagsterInstance,
    DagsterRunStatus,
    build_schedule_context,
    build_sensor_context,
)

from assets.resources import InvoicingApiResource, WarehouseResource
from assets.run_tags import EGRESS_TAG, INTERVAL_TAG, PORTAL_TAG
from assets.writer_queue import WAREHOUSE_TAG
from dagster_project.definitions import build_definitions
from pipelines.invoicing.portals import configured_portals
from pipelines.invoicing.webhooks.hint_spool import Hint, HintSpool, spool_location_for, spool_path

PORTALS = {"acme": "https://api.one.example/api/v2", "beta": "https://api.one.example/api/v2",
           "gamma": "https://eu.two.example:8443/api/v2"}
TICK = datetime(2026, 11, 24, 15, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def portals_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("portals") / "portals.toml"
    path.write_text("".join(f'[portals.{name}]\nbase_url = "{url}"\n' for name, url in PORTALS.items()))
    return path


def _definitions(warehouse: str, portals: dict | None, api_url: str = "http://127.0.0.1:9/api/v2"):
    resources = {"invoicing_api": InvoicingApiResource(base_url=api_url, client_id="unused", client_secret="unused"),
                 "warehouse": WarehouseResource(path=warehouse)}
    return build_definitions(resources, portals), resources


def _scheduled(defs, name: str, instance: DagsterInstance, tick: datetime = TICK):
    schedule = defs.resolve_schedule_def(name)
    return schedule.evaluate_tick(build_schedule_context(instance=instance, scheduled_execution_time=tick,
                                                         repository_def=defs.get_repository_def())).run_requests


def _succeeded(instance: DagsterInstance, run) -> None:
    """The run's success, as its run worker reports it (the run storage follows its event log)."""
    instance.report_dagster_event(DagsterEvent(DagsterEventType.RUN_SUCCESS.value, job_name=run.job_name),
                                  run_id=run.run_id)
    assert instance.get_run_by_id(run.run_id).status == DagsterRunStatus.SUCCESS


def test_each_portal_run_carries_the_egress_of_its_api_host_and_this_host(portals_file, tmp_path, monkeypatch):
    monkeypatch.setenv("INVOICING_EGRESS_IP", "nat-a")
    defs, resources = _definitions(str(tmp_path / "w.duckdb"), configured_portals(portals_file, required=True))
    expected = {"acme": "api.one.example via nat-a", "beta": "api.one.example via nat-a",
                "gamma": "eu.two.example via nat-a"}  # the host, without the port: the service counts per host
    with DagsterInstance.ephemeral() as instance:
        for name in ("sync_schedule", "reconcile_schedule"):
            requests = _scheduled(defs, name, instance)
            assert {r.partition_key: r.tags[EGRESS_TAG] for r in requests} == expected, name
            assert {r.partition_key: r.tags[PORTAL_TAG] for r in requests} == {p: p for p in PORTALS}
            assert {r.tags[INTERVAL_TAG] for r in requests} == {TICK.isoformat()}
        # the webhook hints' runs spend the same budget: the sensor's request carries the same tag
        with HintSpool(spool_path(tmp_path / "w.duckdb")) as spool:
            spool.append("d1", Hint("gamma", "documents", "0123456789abcdef01234567", "document.updated"))
        sensor = next(s for s in defs.sensors if s.name == "apply_hints_when_pending")
        [request] = sensor.evaluate_tick(build_sensor_context(instance=instance, resources=resources)).run_requests
        assert (request.tags[EGRESS_TAG], request.tags[PORTAL_TAG]) == ("eu.two.example via nat-a", "gamma")

    # without INVOICING_EGRESS_IP: the host's name; the portal `default` (no portals file): the API resource's host
    monkeypatch.delenv("INVOICING_EGRESS_IP")
    defs, _ = _definitions(str(tmp_path / "w.duckdb"), None, api_url="https://api.three.example/v2")
    with DagsterInstance.ephemeral() as instance:
        [request] = _scheduled(defs, "sync_schedule", instance)
    assert request.tags[EGRESS_TAG] == f"api.three.example via {socket.gethostname()}"


def test_the_portals_runs_of_an_interval_trigger_one_model_build(portals_file, tmp_path):
    defs, _ = _definitions(str(tmp_path / "w.duckdb"), configured_portals(portals_file, required=True))
    portal_job, models_job = defs.resolve_job_def("portal_sync_job"), defs.resolve_job_def("models_job")
    model_keys = {key for key in defs.resolve_all_asset_keys() if key.path[0] != "invoicing_raw"}
    # the portal runs load raw tables only; the models job builds every model and nothing else
    assert {key.path[0] for key in portal_job.asset_layer.executable_asset_keys} == {"invoicing_raw"}
    assert set(models_job.asset_layer.executable_asset_keys) == model_keys
    assert AssetKey(["marts", "receivables"]) in model_keys
    sensor = next(s for s in defs.sensors if s.name == "build_models_after_portal_runs")
    assert sensor.job_name == "models_job"

    with DagsterInstance.ephemeral() as instance:
        cursor = None

        def evaluate():
            nonlocal cursor
            data = sensor.evaluate_tick(build_sensor_context(instance=instance, cursor=cursor))
            cursor = data.cursor
            return data.run_requests

        assert evaluate() == []  # no portal run yet
        built = []
        for tick in (TICK, TICK.replace(minute=15)):
            requests = _scheduled(defs, "sync_schedule", instance, tick)
            assert len(requests) == len(PORTALS)
            runs = [instance.create_run_for_job(portal_job, tags=request.tags, status=DagsterRunStatus.STARTED)
                    for request in requests]
            assert evaluate() == []  # all running
            for run in runs[:-1]:
                _succeeded(instance, run)
            assert evaluate() == []  # the last portal still runs
            instance.report_run_failed(runs[-1])  # one portal failing holds nothing back
            requested = evaluate()
            assert [r.run_key for r in requested] == [f"models:{tick.isoformat()}"]
            assert requested[0].tags[INTERVAL_TAG] == tick.isoformat()
            built += requested
            assert evaluate() == []  # once per interval, however often it is evaluated
        assert len(built) == 2  # 2 intervals x 3 portal runs: 2 model builds


def test_on_a_lake_only_a_waiting_run_of_the_same_portal_holds_its_hints_back(portals_file, lake, tmp_path,
                                                                               monkeypatch):
    # a DuckLake takes a writer per portal: with runs of other portals in the queue, a portal's hints still go
    for name, value in {"INVOICING_WAREHOUSE_ENGINE": "ducklake", "INVOICING_DUCKLAKE_CATALOG": lake.catalog.public(),
                        "INVOICING_DUCKLAKE_DATA_PATH": str(lake.data_path),
                        "INVOICING_DUCKLAKE_PASSWORD": lake.catalog.password}.items():
        monkeypatch.setenv(name, value)
    defs, resources = _definitions(str(tmp_path / "w.duckdb"), configured_portals(portals_file, required=True))
    with HintSpool(spool_location_for(lake)) as spool:  # the lake's spool: its catalog database
        for portal in ("acme", "beta"):
            spool.append(f"d-{portal}", Hint(portal, "documents", "0123456789abcdef01234567", "document.updated"))
    sensor = next(s for s in defs.sensors if s.name == "apply_hints_when_pending")
    with DagsterInstance.ephemeral() as instance:
        [request] = _scheduled(defs, "sync_schedule", instance)[:1]  # acme's scheduled sync, not started yet
        instance.create_run_for_job(defs.resolve_job_def("portal_sync_job"), tags={**request.tags, 
            WAREHOUSE_TAG: str(tmp_path / "w.duckdb")}, status=DagsterRunStatus.NOT_STARTED)
        requests = sensor.evaluate_tick(build_sensor_context(instance=instance, resources=resources)).run_requests
    assert [r.tags[PORTAL_TAG] for r in requests] == ["beta"]  # acme's hints follow its waiting sync
