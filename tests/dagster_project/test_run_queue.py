"""The run queue draining over several hosts (issue 33, point 4): runs limited per egress, one run per portal.

The deployment's dagster.yaml (docs/deploy/dagster/dagster.yaml: its PostgreSQL storage and its `concurrency:`
section, the egress limit scaled down from 12 to EGRESS_LIMIT so that a few runs fill an egress) against the
session's real PostgreSQL. The runs are the product's own: the sync schedule's run requests of two ticks, tagged by
run_tags.py, of two hosts' code locations (docs/deploy/dagster/workspace.yaml) each with its portals and its egress
IP, submitted to the instance's QueuedRunCoordinator as Dagster's scheduler submits them. Dagster's own
QueuedRunCoordinatorDaemon decides what leaves the queue, one iteration at a time, in process; the only stand-in
is the run launcher (Dagster's MockedRunLauncher: it records a launch instead of reaching the host's code server),
and the test ends runs between iterations as their run workers would report it.

Truths: the limits written here, and the launches per iteration worked out by hand from them (DRAIN below). At
every iteration the test also checks, from its own record of what runs, that no egress runs more than
EGRESS_LIMIT and no portal two runs, that a queued run waits only for a full egress or a busy portal (a full
egress holds no other egress back), and that within an egress no run overtakes an earlier one that could go.
"""

from __future__ import annotations

import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import yaml
from dagster import (
    DagsterEvent,
    DagsterEventType,
    DagsterInstance,
    DagsterRunStatus,
    RunsFilter,
    build_schedule_context,
)
from dagster._core.code_pointer import ModuleCodePointer
from dagster._core.origin import JobPythonOrigin, RepositoryPythonOrigin
from dagster._core.remote_origin import GrpcServerCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.test_utils import MockedRunLauncher, create_test_daemon_workspace_context
from dagster._core.workspace.load_target import EmptyWorkspaceTarget
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

from assets.resources import InvoicingApiResource, WarehouseResource
from assets.run_tags import EGRESS_TAG, INTERVAL_TAG, PORTAL_TAG
from dagster_project.definitions import build_definitions
from invoicing_warehouse.engine.target import parse_catalog_dsn
from pipelines.invoicing.portals import configured_portals

DEPLOYED = Path(__file__).resolve().parents[2] / "docs" / "deploy" / "dagster"
EGRESS_LIMIT = 2  # the deployed file's 12, scaled down: three portals already overfill an egress
PORTAL_LIMIT = 1  # as deployed: never two runs of one portal's pipeline at once
API = "https://api.one.example/api/v2"
# (egress IP, portals) of each host's code location: every portal on one API host, so that only the egress IP
# tells host A's budget from host B's
HOSTS = {"invoicing_host_a": ("nat-a", ("acme", "beta", "gamma")), "invoicing_host_b": ("nat-b", ("delta",))}
ONE, TWO = "api.one.example via nat-a", "api.one.example via nat-b"
TICKS = (datetime(2026, 11, 24, 15, 0, tzinfo=UTC), datetime(2026, 11, 24, 15, 15, tzinfo=UTC))

# The drain, by hand. Queue (submission order): acme, beta, gamma (ONE), delta (TWO) of 15:00, then the same of
# 15:15. Each row: the runs an iteration launches, then the run that ends before the next one (and how).
DRAIN = [
    # ONE fills with acme, beta; delta still goes (TWO); delta 15:15 waits for its portal alone (TWO has room)
    (["acme 15:00", "beta 15:00", "delta 15:00"], ("beta 15:00", "success")),
    # a slot of ONE: gamma, the first of ONE in the queue
    (["gamma 15:00"], ("gamma 15:00", "failure")),  # a failed run frees its slot too
    # a slot of ONE while acme still runs: acme 15:15 waits, beta 15:15 behind it goes
    (["beta 15:15"], ("delta 15:00", "success")),
    (["delta 15:15"], ("acme 15:00", "success")),
    (["acme 15:15"], ("beta 15:15", "failure")),
    (["gamma 15:15"], None),
]


def _label(run) -> str:
    return f"{run.tags[PORTAL_TAG]} {run.tags[INTERVAL_TAG][11:16]}"


def _deployed_instance(postgres_cluster, home, monkeypatch) -> DagsterInstance:
    """The deployed dagster.yaml in `home`, its egress limit scaled down, launches recorded instead of started."""
    dsn = parse_catalog_dsn(postgres_cluster.create_database("dagster_run_queue"))
    for name, value in {"DAGSTER_PG_HOST": dsn.host, "DAGSTER_PG_PORT": str(dsn.port), "DAGSTER_PG_USER": dsn.user,
                        "DAGSTER_PG_PASSWORD": postgres_cluster.password, "DAGSTER_PG_DB": dsn.database}.items():
        monkeypatch.setenv(name, value)
    config = yaml.safe_load((DEPLOYED / "dagster.yaml").read_text())
    limits = {limit["key"]: limit for limit in config["concurrency"]["runs"]["tag_concurrency_limits"]}
    assert set(limits) == {EGRESS_TAG, PORTAL_TAG}  # the file's limits, no other (else this test would miss one)
    limits[EGRESS_TAG]["limit"] = EGRESS_LIMIT
    assert limits[PORTAL_TAG]["limit"] == PORTAL_LIMIT
    config["run_launcher"] = {"module": MockedRunLauncher.__module__, "class": MockedRunLauncher.__name__}
    (home / "dagster.yaml").write_text(yaml.safe_dump(config))
    return DagsterInstance.from_config(str(home))


def _end(instance: DagsterInstance, run, outcome: str) -> None:
    """The run's end, as its run worker reports it."""
    if outcome == "success":
        instance.report_dagster_event(DagsterEvent(DagsterEventType.RUN_SUCCESS.value, job_name=run.job_name),
                                      run_id=run.run_id)
    else:
        instance.report_run_failed(run)


class HostLocation:
    """One host's code location as the daemon sees it: the project's definitions with the host's portals file, and
    the origins Dagster's scheduler records on the runs it creates (the host's code server, workspace.yaml)."""

    def __init__(self, location: str, tmp_path: Path):
        self.egress_ip, names = HOSTS[location]
        portals_file = tmp_path / f"portals-{location}.toml"
        portals_file.write_text("".join(f'[portals.{name}]\nbase_url = "{API}"\n' for name in names))
        self.defs = build_definitions({"invoicing_api": InvoicingApiResource(base_url=API, client_id="unused",
                                                                             client_secret="unused"),
                                       "warehouse": WarehouseResource(path=str(tmp_path / "w.duckdb"))},
                                      configured_portals(portals_file, required=True))
        self.job = self.defs.resolve_job_def("portal_sync_job")
        [server] = [entry["grpc_server"] for entry in yaml.safe_load((DEPLOYED / "workspace.yaml").read_text())[
            "load_from"] if entry["grpc_server"]["location_name"] == location]
        code_server = GrpcServerCodeLocationOrigin(host=server["host"], port=server["port"], location_name=location)
        self.remote_origin = RemoteJobOrigin(RemoteRepositoryOrigin(code_server, "__repository__"), self.job.name)
        self.python_origin = JobPythonOrigin(self.job.name, RepositoryPythonOrigin(
            sys.executable, ModuleCodePointer("dagster_project.definitions", "defs")))

    def scheduled_runs(self, instance: DagsterInstance, tick: datetime, monkeypatch) -> list:
        """The runs the location's sync schedule asks for at `tick`, created as the scheduler creates them (not yet
        submitted)."""
        monkeypatch.setenv("INVOICING_EGRESS_IP", self.egress_ip)  # the environment of the host's code server
        requests = self.defs.resolve_schedule_def("sync_schedule").evaluate_tick(build_schedule_context(
            instance=instance, scheduled_execution_time=tick, repository_def=self.defs.get_repository_def()
        )).run_requests
        # the job's snapshot and the run's origins and tags, without the execution plan: its "asset planned"
        # events (one per asset, each a PostgreSQL round trip: 20 s here) are nothing the queue reads
        return [instance.create_run(job_name=self.job.name, run_id=None, run_config=None, resolved_op_selection=None,
                                    step_keys_to_execute=None, status=DagsterRunStatus.NOT_STARTED, tags=request.tags,
                                    root_run_id=None, parent_run_id=None, job_snapshot=self.job.get_job_snapshot(),
                                    execution_plan_snapshot=None, parent_job_snapshot=None, asset_selection=None,
                                    asset_check_selection=None, op_selection=None,
                                    remote_job_origin=self.remote_origin, job_code_origin=self.python_origin,
                                    asset_graph=self.job.asset_layer.asset_graph)
                for request in requests]


def test_the_queue_drains_within_the_egress_and_portal_limits(postgres_cluster, temporary_dagster_home, tmp_path,
                                                               monkeypatch):
    with (_deployed_instance(postgres_cluster, temporary_dagster_home, monkeypatch) as instance,
          create_test_daemon_workspace_context(EmptyWorkspaceTarget(), instance) as workspace_context,
          QueuedRunCoordinatorDaemon(interval_seconds=1) as daemon):
        assert isinstance(instance.run_launcher, MockedRunLauncher)
        # the scheduler's part: at each tick, each location's run requests become runs, submitted to the queue
        locations = [HostLocation(location, tmp_path) for location in HOSTS]
        runs = {}  # label -> run, in submission order
        for tick in TICKS:
            for location in locations:
                for run in location.scheduled_runs(instance, tick, monkeypatch):
                    instance.submit_run(run.run_id, workspace_context.create_request_context())
                    runs[_label(run)] = run
        order = list(runs)
        assert order == [f"{p} {tick:%H:%M}" for tick in TICKS for p in ("acme", "beta", "gamma", "delta")]
        egress = {label: run.tags[EGRESS_TAG] for label, run in runs.items()}
        portal = {label: run.tags[PORTAL_TAG] for label, run in runs.items()}
        assert [egress[label] for label in order[:4]] == [ONE, ONE, ONE, TWO]
        assert {run.status for run in instance.get_runs()} == {DagsterRunStatus.QUEUED}

        queue, running, drained = list(order), [], []
        for iteration in range(len(DRAIN) + 3):  # bounded: a few iterations more than the drain takes
            list(daemon.run_iteration(workspace_context))
            launched = [_label(run) for run in instance.run_launcher.queue()][len(order) - len(queue):]
            drained.append(launched)
            running += launched
            queue = [label for label in queue if label not in launched]
            assert sorted(_label(run) for run in instance.get_runs(RunsFilter(statuses=[DagsterRunStatus.QUEUED]))) \
                == sorted(queue), iteration
            per_egress, per_portal = Counter(egress[r] for r in running), Counter(portal[r] for r in running)
            assert max(per_egress.values()) <= EGRESS_LIMIT and max(per_portal.values()) <= PORTAL_LIMIT, running
            for waiting in queue:  # nothing waits but for a full egress or a busy portal
                assert per_egress[egress[waiting]] == EGRESS_LIMIT or per_portal[portal[waiting]] == PORTAL_LIMIT, \
                    (iteration, waiting, running)
            for label in launched:  # FIFO within an egress: no earlier run of its egress that could go still waits
                earlier = [w for w in queue if egress[w] == egress[label] and order.index(w) < order.index(label)]
                assert all(per_portal[portal[w]] == PORTAL_LIMIT for w in earlier), (iteration, label, earlier)
            if not queue:
                break
            if iteration < len(DRAIN) and DRAIN[iteration][1] is not None:
                ended, outcome = DRAIN[iteration][1]
                running.remove(ended)
                _end(instance, runs[ended], outcome)
        assert drained == [launches for launches, _ in DRAIN]
        assert not queue  # every run launched, each once
        assert sorted(_label(run) for run in instance.run_launcher.queue()) == sorted(order)
        assert sorted(_label(run) for run in instance.get_runs(RunsFilter(statuses=[DagsterRunStatus.STARTING]))) \
            == sorted(running)
