"""The suite's one fixture factory (issue 43 point 8): the sandboxes it starts and the warehouses it makes.

Sandboxes: `SandboxFactory` starts seeded sandboxes on 127.0.0.1 on the run's date (tests/support/sandboxes.py)
and stops every one it started. The root conftest's fixtures are made with it: `sandbox_factory` (a test's),
`module_sandbox_factory` (a module's), and `sandbox` / `shared_sandbox`, which start the sandbox a test or a
module declares with `@pytest.mark.sandbox(**settings)` (the settings of `SandboxFactory.__call__`).

Warehouses: `empty_warehouse`, `synced_warehouse` (optionally published), `copied_warehouse` (a module's synced
base copied for one test, with the files beside it), and `point_at` (the CLI's settings for a sandbox). A module
syncs one base from its shared sandbox and hands each test a copy: one sync per module, not one per test.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Self

import pytest

from harness.common import quiet as past_the_windows_lag
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import ConfiguredClock, SandboxServer
from tests.support.sandboxes import sandbox_date_shift

SANDBOX_MARKER = "sandbox"  # registered by tests/conftest.py's pytest_configure
# an unmarked `sandbox`: small, unpaced and past the windows' lag, what a test that only needs "a sandbox" wants
DEFAULT_SANDBOX = {"seed": 16, "scale": 40, "rate_limit_per_s": 0, "latency_ms": 0, "quiet": True}
CREDENTIAL_SETTINGS = ("SOURCES__INVOICING__BASE_URL", "SOURCES__INVOICING__CLIENT_ID",
                       "SOURCES__INVOICING__CLIENT_SECRET")


class SandboxFactory:
    """Starts seeded sandboxes on 127.0.0.1 on the run's date and stops every one of them in `stop_all`."""

    def __init__(self) -> None:
        self.started: list[SandboxServer] = []

    def __call__(self, *, config: SandboxConfig | None = None, clock: Clock | None = None, generate: bool = True,
                 real_date: bool = False, quiet: bool = False,
                 before_start: Callable[[SandboxServer], object] | None = None, **settings) -> SandboxServer:
        """A started sandbox of `config`, else of `SandboxConfig(**settings)` (`contract` may be a profile's
        name). Without `clock`, it runs on the run's date (INVOICING_TEST_TODAY) and follows its
        `clock_offset_s` setting; with `real_date`, on the machine's date: for a test whose data does not depend
        on the date and that needs the product's clock and the server's to agree (a moved date is a server days
        ahead or behind). `quiet`: its clock already past the windows' lag (harness/common.py `quiet`).
        `before_start(server)` runs before it serves: a history of the test's own (with `generate=False`)."""
        if config is None:
            if isinstance(settings.get("contract"), str):
                settings["contract"] = ContractProfile.named(settings["contract"])
            config = SandboxConfig(**settings)
        elif settings:
            raise TypeError(f"a config, or its settings, not both: {sorted(settings)}")
        shift = timedelta(0) if real_date else sandbox_date_shift()
        server = SandboxServer(config, generate=generate,
                               clock=clock if clock is not None else ConfiguredClock(config, shift))
        self.started.append(server)
        if before_start is not None:
            before_start(server)
        server.start()
        if quiet:
            past_the_windows_lag(server)
        return server

    def marked(self, node: pytest.Item | pytest.Collector) -> SandboxServer:
        """The sandbox that `node` (a test, or a module for a module's sandbox) declares with its closest
        `@pytest.mark.sandbox(**settings)`, else one of DEFAULT_SANDBOX."""
        marker = node.get_closest_marker(SANDBOX_MARKER)
        if marker is not None and marker.args:
            raise TypeError(f"{node.nodeid}: pytest.mark.{SANDBOX_MARKER} takes settings by name, "
                            f"not {marker.args!r}")
        # `**` hands the factory a dict of its own: a marker's settings, shared by every test it marks, stay as written
        return self(**(marker.kwargs if marker is not None else DEFAULT_SANDBOX))

    def stop_all(self) -> None:
        """Stops every sandbox started here (also after a failed start of a later one)."""
        while self.started:
            self.started.pop().stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop_all()


def point_at(patch: pytest.MonkeyPatch, sandbox: SandboxServer) -> None:
    """Sets the CLI's settings of the portal `default` to `sandbox`'s URL and credentials (undone by `patch`)."""
    for name, value in zip(CREDENTIAL_SETTINGS, (sandbox.base_url, sandbox.client_id, sandbox.client_secret),
                           strict=True):
        patch.setenv(name, value)


def empty_warehouse(folder: Path) -> Path:
    """The path of a warehouse not made yet, `folder/warehouse.duckdb` (the first sync or build makes it)."""
    return folder / "warehouse.duckdb"


def synced_warehouse(folder: Path, sandbox: SandboxServer, *, publish: bool = True,
                     through_cli: bool = False) -> Path:
    """A warehouse in `folder` synced once from `sandbox`, unpaced; with `publish`, its models built and
    published (the gate's checks passed). `through_cli` syncs and builds as a user does, with
    `invoicing-warehouse sync` and `models` (which also record the run in the run log, in `folder`); else
    through `run_sync` and `build_and_publish` (no run log)."""
    warehouse = empty_warehouse(folder)
    if through_cli:
        from invoicing_warehouse.cli import main

        with pytest.MonkeyPatch.context() as patch:
            point_at(patch, sandbox)
            patch.chdir(folder)  # no portals.toml here: the one portal `default`
            assert main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0"]) == 0
            if publish:
                assert main(["models", "--warehouse", str(warehouse)]) == 0
        return warehouse
    from invoicing_warehouse.engine.target import WarehouseTarget
    from invoicing_warehouse.runs.gate import build_and_publish
    from pipelines.invoicing.load.sync import make_pipeline, run_sync

    run_sync(make_pipeline(warehouse), base_url=sandbox.base_url, client_id=sandbox.client_id,
             client_secret=sandbox.client_secret, rate_limit_per_s=0)
    if publish:
        outcome = build_and_publish(WarehouseTarget.duckdb_file(warehouse), note="base")
        assert outcome.ok and outcome.published, outcome.lines()
    return warehouse


def copied_warehouse(base: Path, folder: Path) -> Path:
    """A copy in `folder` of the warehouse `base` and of the files beside it (its readers' copy, gate state,
    run log, spools), times kept: a test changes its copy, never a base other tests share."""
    for path in base.parent.iterdir():
        if path.is_file():
            shutil.copy2(path, folder / path.name)
    return folder / base.name
