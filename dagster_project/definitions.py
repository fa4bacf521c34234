"""The one `Definitions` of the project: assets, checks, jobs, schedules, sensors and resources.

`dg dev`, `dagster dev` and `dg check defs` load `defs`; the demo and the tests call
`build_definitions` with resources of their own (a sandbox, a temporary warehouse).
"""

from __future__ import annotations

from dagster import Definitions, in_process_executor

from assets.checks import all_checks, raw_no_dead_hints
from assets.ingestion import build_ingestion_assets
from assets.models import build_model_assets
from assets.portals import load_portals
from assets.resources import InvoicingApiResource, api_resource, default_resources
from dagster_project.alert_sensors import build_alert_sensors
from dagster_project.hint_sensor import build_hints_sensor
from dagster_project.jobs import build_hints_job, build_jobs, build_lake_maintenance_job
from dagster_project.model_sensor import build_models_sensor
from dagster_project.schedules import build_schedules, sync_interval
from dagster_project.sensors import build_publish_sensors
from invoicing_warehouse.engine.env_file import load_env_file
from invoicing_warehouse.engine.sql_runner import analyst_models_dir, discover_models


def build_definitions(resources: dict, portals: dict | None = None) -> Definitions:
    """Every definition of the project, bound to `resources` (`invoicing_api`, `warehouse`); the raw tables
    are partitioned by the portals of `portals` (default: the portals file, assets/portals.py)."""
    portals = load_portals() if portals is None else portals
    # the product's models and the analyst's of INVOICING_MODELS_DIR, read as the CLI reads them
    models = discover_models(models_dir=analyst_models_dir())
    model_assets = build_model_assets(models_dir=analyst_models_dir())
    interval = sync_interval()
    jobs = [*build_jobs(resources["warehouse"].path, [raw_no_dead_hints]),
            build_hints_job(resources["warehouse"].path, portals),
            build_lake_maintenance_job(resources["warehouse"].path)]
    jobs_by_name = {job.name: job for job in jobs}
    api = resources.get("invoicing_api")
    api_values = api if isinstance(api, InvoicingApiResource) else None
    if isinstance(api, InvoicingApiResource):
        # bound with an empty config schema: no run config may name another API host or secret (review M3)
        resources = {**resources, "invoicing_api": api_resource(api)}
    return Definitions(
        # stale after twice the interval, as `status` says (invoicing_warehouse/runs/status.py): one late or failed run
        # is tolerated
        assets=[build_ingestion_assets(portals, stale_after=2 * interval), *model_assets],
        asset_checks=all_checks(models),
        jobs=jobs,
        schedules=build_schedules(jobs_by_name, interval, portals, api_values),
        sensors=[*build_publish_sensors([jobs_by_name["sync_job"], jobs_by_name["reconcile_job"],
                                         jobs_by_name["models_job"]]),
                 build_hints_sensor(jobs_by_name["apply_hints_job"], portals, api=api_values),
                 build_models_sensor(jobs_by_name["models_job"]),
                 *build_alert_sensors(portals)],
        resources=resources,
        # Steps run one after another in the run's process: DuckDB takes one writing process per
        # file, so parallel step processes would lock each other out.
        executor=in_process_executor,
    )


def project_definitions() -> Definitions:
    """The deployment's Definitions: `.env` read as the command line reads it (invoicing_warehouse/engine/env_file.py:
    the environment wins), then the resources from the environment and dlt's settings."""
    load_env_file()
    return build_definitions(default_resources())


defs = project_definitions()
