"""`invoicing-warehouse demo`: a seeded sandbox, the whole asset graph run through Dagster into the
warehouse, then a short report of the marts.

The sandbox runs in this process on 127.0.0.1 with the real service's rate limit (10 requests/s);
the Dagster job `sync_job` (every raw table, every SQL model, every check) runs in process on an
ephemeral Dagster instance, exactly as a scheduled run would, with resources pointed at the sandbox.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from invoicing_warehouse.engine.names import DEFAULT_WAREHOUSE_PATH
from invoicing_warehouse.engine.warehouse_files import WarehouseFiles

DEFAULT_SCALE = 2000
DEMO_JOB = "sync_job"
UNLIMITED_RATE_PER_S = 100.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the demo subcommand."""
    parser.add_argument(
        "--warehouse", default=DEFAULT_WAREHOUSE_PATH, help="DuckDB file to (re)create (default: %(default)s)"
    )
    parser.add_argument(
        "--scale", type=int, default=DEFAULT_SCALE, help="about this many documents (default: %(default)s)"
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="seed of the sandbox's data (default: %(default)s)"
    )
    parser.add_argument(
        "--rate-limit",
        type=int,
        default=10,
        help="sandbox requests per second, as the real service (default: %(default)s)",
    )
    parser.add_argument("--top", type=int, default=5, help="overdue customers to list (default: %(default)s)")
    parser.add_argument(
        "--replace", action="store_true", help="overwrite a warehouse file that an earlier demo did not make"
    )
    parser.add_argument("--follow", action="store_true",
                        help="after the build, keep the sandbox changing and show each change reaching the marts")
    parser.add_argument("--follow-seconds", type=float, default=60.0, metavar="N",
                        help="with --follow: how long (default %(default)s)")
    parser.add_argument("--mutations-per-s", type=float, default=1.0, metavar="R",
                        help="with --follow: the sandbox's changes per second (default %(default)s)")


def demo_marker(warehouse: Path) -> Path:
    """The file beside a warehouse that says the demo made it (so a later demo may replace it)."""
    return WarehouseFiles.beside(warehouse).demo_marker


def prepare_empty_warehouse(warehouse: Path, replace: bool) -> None:
    """Removes an earlier demo's warehouse and dlt state; refuses to touch any other warehouse.

    The demo's warehouse mirrors one sandbox: rows and sync bounds of an earlier sandbox (other ids,
    other times) would mix with this one, so it starts empty. A warehouse the demo did not make may
    hold a real account's data: it is replaced only with --replace.
    """
    from pipelines.invoicing.load.sync import make_pipeline

    if warehouse.exists() and not demo_marker(warehouse).exists() and not replace:
        raise FileExistsError(
            f"{warehouse} exists and was not made by the demo; pass --warehouse OTHER_PATH, or --replace to "
            "overwrite it"
        )
    from pipelines.invoicing.webhooks.hint_spool import spool_path

    spool = spool_path(warehouse)  # an earlier sandbox's pending hints name records this one never had
    for stale in (warehouse, warehouse.with_name(warehouse.name + ".wal"), spool,
                  spool.with_name(spool.name + "-wal"), spool.with_name(spool.name + "-shm")):
        stale.unlink(missing_ok=True)
    make_pipeline(warehouse).drop()  # dlt's local working state beside the warehouse
    demo_marker(warehouse).write_text("made by `invoicing-warehouse demo`; the next demo run replaces it\n")


def _root_cause(error) -> str:
    # "Exceeded max_retries" wraps the error of the last attempt: show that one.
    while error.cause is not None:
        error = error.cause
    return error.message.strip()


def _failed_checks(result) -> list[str]:
    return [
        f"{evaluation.asset_key.to_user_string()}: {evaluation.check_name} ({evaluation.severity.value})"
        for evaluation in result.get_asset_check_evaluations()
        if not evaluation.passed
    ]


def run(args: argparse.Namespace) -> int:
    """Runs the demo; 0 when every asset materialized and every check passed."""
    from dagster import DagsterInstance

    from assets.resources import InvoicingApiResource, WarehouseResource
    from dagster_project.definitions import build_definitions
    from invoicing_sandbox.config import SandboxConfig
    from invoicing_sandbox.server import SandboxServer
    from invoicing_warehouse.engine.names import DEFAULT_PORTAL
    from pipelines.invoicing.portals import Portal

    warehouse = Path(args.warehouse)
    try:
        prepare_empty_warehouse(warehouse, args.replace)
    except OSError as error:
        print(f"invoicing-warehouse demo: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    config = SandboxConfig(seed=args.seed, scale=args.scale, rate_limit_per_s=args.rate_limit)
    with SandboxServer(config) as sandbox:
        print(
            f"sandbox: {sandbox.base_url} "
            f"(seed {args.seed}, scale {args.scale}, {args.rate_limit} requests/s)"
        )
        resources = {
            "invoicing_api": InvoicingApiResource(
                base_url=sandbox.base_url,
                client_id=sandbox.client_id,
                client_secret=sandbox.client_secret,
                # pace like the sandbox allows; with its limit off, still stay polite to one's own machine
                rate_limit_per_s=float(args.rate_limit) if args.rate_limit > 0 else UNLIMITED_RATE_PER_S,
            ),
            "warehouse": WarehouseResource(path=str(warehouse)),
        }
        # the demo's one portal is its sandbox, whatever portals file the working directory holds
        portals = {DEFAULT_PORTAL: Portal(DEFAULT_PORTAL)}
        job = build_definitions(resources, portals).resolve_job_def(DEMO_JOB)
        print(
            f"running the Dagster job {DEMO_JOB} (every raw table, SQL model and check) into {warehouse} ..."
        )
        with DagsterInstance.ephemeral() as instance:
            result = job.execute_in_process(
                instance=instance,
                raise_on_error=False,
                partition_key=DEFAULT_PORTAL,
                run_config={"loggers": {"console": {"config": {"log_level": "INFO"}}}},
            )
        if args.follow:
            # the sandbox must outlive the build: report and publication happen here, then the follow
            code = _report(result, warehouse, args, started)
            if code == 0:
                from invoicing_warehouse.demo.follow import follow_demo

                follow_demo(sandbox, warehouse, args.follow_seconds, args.mutations_per_s,
                            float(args.rate_limit) if args.rate_limit > 0 else UNLIMITED_RATE_PER_S)
            return code
    return _report(result, warehouse, args, started)


def _report(result, warehouse: Path, args: argparse.Namespace, started: float) -> int:
    """The run's outcome, publication and the marts' report; the demo's exit code."""
    import duckdb

    from invoicing_warehouse.demo.report import render_report
    from invoicing_warehouse.engine.sql_runner import today_in_portal_zone
    from invoicing_warehouse.engine.target import WarehouseTarget
    from invoicing_warehouse.runs.gate import publish_checked

    materialized = {event.asset_key for event in result.get_asset_materialization_events()}
    failed_checks = _failed_checks(result)
    print(
        f"Dagster run {result.run_id[:8]}: {'success' if result.success else 'FAILED'}, "
        f"{len(materialized)} assets materialized, {len(failed_checks)} failed checks, "
        f"{time.monotonic() - started:.0f} s"
    )
    for failure in failed_checks:
        print(f"  failed check {failure}", file=sys.stderr)
    if not result.success:
        for event in result.all_events:
            if event.is_step_failure:
                print(
                    f"  step {event.step_key} failed: {_root_cause(event.step_failure_data.error)}",
                    file=sys.stderr,
                )
        return 1
    gate = publish_checked(WarehouseTarget.duckdb_file(warehouse), note=f"demo run {result.run_id}",
                           as_of=today_in_portal_zone())
    for line in gate.lines():
        print(f"  {line}", file=sys.stderr)
    if gate.failures:
        return 1
    print(f"published the readers' snapshot {gate.published}\n")
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        print(render_report(connection, top=args.top))
    print(dashboard_hint(warehouse))
    return 0 if not failed_checks else 1


def dashboard_hint(warehouse: Path) -> str:
    """The closing lines: the command that opens the dashboard on the warehouse the demo just built."""
    from invoicing_warehouse.cli.dashboard_command import DEFAULT_HOST, DEFAULT_PORT

    return (
        "\nSee these figures in the dashboard (Receivables, Payables, Cash outlook, Freshness):\n"
        f"  invoicing-warehouse dashboard --warehouse {shlex.quote(str(warehouse))}\n"
        f"  then open http://{DEFAULT_HOST}:{DEFAULT_PORT} in a browser"
    )
