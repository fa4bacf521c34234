"""The fixture factory (tests/support/fixture_factory.py): a test's marker reaches its sandbox and no other test's,
a module's sandbox is the one its module fixtures see, every sandbox started is stopped, a warehouse's copy is
byte for byte its base with the files beside it. The truths are the markers' literals written here, the
sandboxes' own configs and counters, and the files' bytes."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.contract import ContractProfile
from pipelines.invoicing.settings import WINDOW_LAG_S
from tests.support.fixture_factory import SandboxFactory, copied_warehouse, point_at
from tests.support.sandboxes import sandbox_date_shift

MODULE_SETTINGS = {"seed": 5, "scale": 3, "rate_limit_per_s": 0, "generate": False, "contract": "strict"}
pytestmark = pytest.mark.sandbox(**MODULE_SETTINGS)


def _answers(base_url: str) -> bool:
    """Whether a server still answers on `base_url` (any HTTP status counts; a refused connection does not)."""
    try:
        httpx.get(base_url + "/openapi.json", timeout=2.0, trust_env=False)
    except httpx.TransportError:
        return False
    return True


@pytest.mark.sandbox(seed=11, scale=4, rate_limit_per_s=0, generate=False)
def test_the_tests_own_marker_wins_over_the_modules(sandbox):
    assert (sandbox.config.seed, sandbox.config.scale) == (11, 4)
    assert sandbox.portal.snapshot("documents") == []  # generate=False reached the server


def test_the_modules_marker_serves_an_unmarked_test_and_stays_as_written(sandbox):
    assert (sandbox.config.seed, sandbox.config.scale) == (5, 3)
    assert sandbox.config.contract == ContractProfile.strict()
    # the factory turned "strict" into a profile on a copy: the next test marked by it reads the literal again
    assert pytestmark.kwargs == MODULE_SETTINGS


@pytest.fixture(scope="module")
def module_fixture_on_the_shared_sandbox(shared_sandbox):
    """A module-scoped fixture on the module's sandbox, as a synced base warehouse is."""
    return shared_sandbox


def test_the_modules_shared_sandbox_is_the_one_its_module_fixtures_see(shared_sandbox,
                                                                       module_fixture_on_the_shared_sandbox, sandbox):
    assert module_fixture_on_the_shared_sandbox is shared_sandbox
    assert shared_sandbox.config.seed == 5  # the module's marker
    assert sandbox is not shared_sandbox  # a test's own sandbox is another server


def test_an_unmarked_node_gets_the_small_unpaced_sandbox_past_the_lag():
    class Unmarked:  # a node without markers, as a test of an unmarked module is
        nodeid = "unmarked"

        def get_closest_marker(self, name):
            return None

    with SandboxFactory() as factory:
        server = factory.marked(Unmarked())  # type: ignore[arg-type]
        ahead = server.clock.now() - datetime.now(UTC) - sandbox_date_shift()
    config = server.config
    assert (config.seed, config.scale, config.rate_limit_per_s, config.latency_ms) == (16, 40, 0, 0)
    # quiet: the sandbox's clock already stands past the windows' lag (a second more), not merely on the date
    assert timedelta(seconds=WINDOW_LAG_S) <= ahead <= timedelta(seconds=WINDOW_LAG_S + 1)


def test_quiet_and_before_start_on_a_pinned_clock():
    pinned = datetime(2026, 3, 16, 9, 30, tzinfo=UTC)
    seen_before_start: list[int] = []
    with SandboxFactory() as factory:
        server = factory(seed=1, scale=2, generate=False, rate_limit_per_s=0, clock=Clock(fixed=pinned), quiet=True,
                         before_start=lambda s: seen_before_start.append(s.port))
        assert server.clock.now() == pinned + timedelta(seconds=WINDOW_LAG_S + 1)
    assert seen_before_start == [0]  # ran before the server bound its port


def test_a_marker_with_positional_settings_is_refused_naming_the_test():
    class Marked:
        nodeid = "tests/x.py::test_y"

        def get_closest_marker(self, name):
            return pytest.mark.sandbox(7).mark

    with SandboxFactory() as factory, pytest.raises(TypeError, match=r"tests/x.py::test_y.*by name"):
        factory.marked(Marked())  # type: ignore[arg-type]
    assert factory.started == []


def test_every_sandbox_started_is_stopped_also_after_a_failed_start():
    factory = SandboxFactory()
    first = factory(seed=1, scale=2, generate=False, rate_limit_per_s=0)
    with pytest.raises(ValueError):
        factory(seed=1, scale=2, generate=False, contract="no-such-profile")
    assert _answers(first.base_url)
    factory.stop_all()
    assert not _answers(first.base_url) and factory.started == []


def test_a_copy_holds_the_warehouse_and_the_files_beside_it_and_leaves_the_base_alone(tmp_path):
    base_folder, copy_folder = tmp_path / "base", tmp_path / "copy"
    base_folder.mkdir()
    copy_folder.mkdir()
    files = {"warehouse.duckdb": b"warehouse bytes", "warehouse.read.duckdb": b"readers' copy",
             "warehouse.gate.json": b'{"held": []}'}
    for name, data in files.items():
        (base_folder / name).write_bytes(data)
    (base_folder / "a-folder").mkdir()  # folders are not files beside the warehouse: not copied
    copy = copied_warehouse(base_folder / "warehouse.duckdb", copy_folder)
    assert copy == copy_folder / "warehouse.duckdb"
    assert {path.name: path.read_bytes() for path in copy_folder.iterdir()} == files
    copy.write_bytes(b"changed by a test")
    assert hashlib.sha256((base_folder / "warehouse.duckdb").read_bytes()).digest() == \
        hashlib.sha256(b"warehouse bytes").digest()


def test_point_at_sets_the_three_settings_and_the_patch_undoes_them(monkeypatch, sandbox):
    monkeypatch.delenv("SOURCES__INVOICING__BASE_URL", raising=False)
    with pytest.MonkeyPatch.context() as patch:
        point_at(patch, sandbox)
        assert (os.environ["SOURCES__INVOICING__BASE_URL"], os.environ["SOURCES__INVOICING__CLIENT_ID"],
                os.environ["SOURCES__INVOICING__CLIENT_SECRET"]) == (
            sandbox.base_url, sandbox.config.client_id, sandbox.config.client_secret)
    assert "SOURCES__INVOICING__BASE_URL" not in os.environ
