"""Issue 30, points 2, 3, 6 (the lake instances) and 7: the local attacks of the security review (H4, M1, M2, M8,
L5-L8, L10), one row each: the probe, the answer the product gives now, and "nothing lost" (the warehouse, the
sync state, a kept file stay as they were; where a sync runs, its rows equal the sandbox's own records).

Every server is on 127.0.0.1 and stopped by the row that started it (the session's PostgreSQL by its fixture);
every wait is bounded. The rows run in this process where they can; one DuckLake load (M8), one refused CLI sync
(H4). The owner checks run as root here: a folder or a file is handed to uid 65534 to stand for another user.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import secrets
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
import httpx
import pytest

from harness.common import quiet
from harness.sync_process import Workspace, run_sync_command
from harness.warehouse_truth import compare_raw_tables
from invoicing_warehouse.engine.connection import _identity, connect, open_lake_instance
from invoicing_warehouse.engine.target import (
    CATALOG_ENV,
    DATA_PATH_ENV,
    ENGINE_ENV,
    PASSWORD_ENV,
    WarehouseTarget,
)
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.http.host_budget import HostBudget
from pipelines.invoicing.http.private_state import LocalStateError
from pipelines.invoicing.http.ratelimit import MAX_PAUSE_S, RateLimiter
from pipelines.invoicing.http.token_cache import CachedToken, TokenCache
from tests.support.secret_scan import scan_text, scan_tree

ROOT = Path(__file__).resolve().parents[2]
BASE_URL = "http://127.0.0.1:9/api/v2"  # nothing listens there: the rows that need no server never call it
SECRET = "client-secret-of-the-attack-rows"
OTHER_UID = 65534  # nobody: "another user"


@dataclass(frozen=True)
class Attack:
    """One row: the finding, what is tried, the answer expected now; `run` probes and asserts both the answer and
    that nothing was lost."""

    finding: str
    probe: str
    expected: str
    run: Callable[[pytest.FixtureRequest, Path], None]

    @property
    def id(self) -> str:
        return self.finding


@pytest.fixture(autouse=True)
def umask_restored() -> Iterator[None]:
    """The product tightens the process's umask (private_files.py); the rows start from the usual 022 and leave
    the session as they found it."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@contextmanager
def sandbox_server(**settings) -> Iterator:
    """A small sandbox on 127.0.0.1, stopped on exit."""
    from invoicing_sandbox.config import SandboxConfig
    from invoicing_sandbox.server import SandboxServer

    server = SandboxServer(SandboxConfig(**{"seed": 3, "scale": 30, "rate_limit_per_s": 0, **settings})).start()
    try:
        quiet(server)
        yield server
    finally:
        server.stop()


def private_folder(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True)
    return path


def within(seconds: float, probe: Callable[[], object]) -> object:
    """Runs `probe` in a thread and returns what it returned or raised; fails if it is still running after
    `seconds` (the thread is a daemon: a hung probe cannot hang the suite)."""
    outcome: list[object] = []

    def target() -> None:
        try:
            outcome.append(probe())
        except BaseException as error:  # noqa: BLE001  # the outcome is what the row asserts
            outcome.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the probe still runs after {seconds} s"
    return outcome[0]


# ------------------------------------------------------------------------------------------------ H4
def catalog_password_leaks_nowhere(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from dagster import DagsterInstance, materialize
    from dlt.pipeline.exceptions import PipelineStepFailed
    from dlt.pipeline.trace import load_trace

    from assets.ingestion import build_ingestion_assets
    from assets.resources import InvoicingApiResource, WarehouseResource
    from pipelines.invoicing.load.sync import make_pipeline
    from pipelines.invoicing.portals import Portal

    cluster = request.getfixturevalue("postgres_cluster")
    monkeypatch = request.getfixturevalue("monkeypatch")
    password = f"Wr0ng pass'word=x {secrets.token_hex(6)}"  # a space and a quote: L6's shape too
    dsn = cluster.create_database(f"attack_h4_{secrets.token_hex(4)}")
    data_path = tmp_path / "lake-data"
    wrong = WarehouseTarget.ducklake(dsn, data_path, password=password)
    refused = "password authentication failed"

    # dlt itself: its run fails at the catalog, its trace is kept in its working folder
    pipeline = make_pipeline(wrong)
    with pytest.raises(PipelineStepFailed) as failed:
        pipeline.run([{"id": "A"}], table_name="probe")
    assert refused in str(failed.value) and password not in str(failed.value)
    trace = load_trace(pipeline.working_dir)
    assert trace is not None and any(refused in (step.step_exception or "") for step in trace.steps)

    with sandbox_server() as sandbox:
        # the command line, as a user runs it
        workspace = Workspace(tmp_path / "cli")
        env = workspace.env(sandbox.base_url, sandbox.client_id, sandbox.client_secret,
                            **{ENGINE_ENV: "ducklake", CATALOG_ENV: dsn, DATA_PATH_ENV: str(data_path),
                               PASSWORD_ENV: password})
        cli = run_sync_command(workspace, env, "--rate-limit", "0")
        assert cli.returncode != 0 and refused in cli.output, cli.output[-2000:]

        # Dagster: the ingestion asset of the portal, its event log and run storage
        for name, value in ((ENGINE_ENV, "ducklake"), (CATALOG_ENV, dsn), (DATA_PATH_ENV, str(data_path)),
                            (PASSWORD_ENV, password), ("DAGSTER_HOME", str(tmp_path / "dagster_home"))):
            monkeypatch.setenv(name, value)
        (tmp_path / "dagster_home").mkdir()
        with DagsterInstance.get() as instance:
            result = materialize(
                [build_ingestion_assets({"default": Portal("default")})], instance=instance,
                partition_key="default", raise_on_error=False,
                resources={"invoicing_api": InvoicingApiResource(base_url=sandbox.base_url, client_id=sandbox.client_id,
                                                                 client_secret=sandbox.client_secret,
                                                                 rate_limit_per_s=0),
                           "warehouse": WarehouseResource(path=str(tmp_path / "unused.duckdb"))})
            events = [repr(record) for record in instance.all_logs(result.run_id)]
            runs = [repr(run) for run in instance.get_runs()]
    assert not result.success and any(refused in text for text in events)

    needles = {"catalog password": password}
    findings = scan_text("dlt's exception", str(failed.value), needles) + scan_text("CLI output", cli.output, needles)
    findings += [f for text in events for f in scan_text("Dagster event log", text, needles)]
    findings += [f for text in runs for f in scan_text("Dagster run storage", text, needles)]
    files, found = scan_tree(tmp_path, needles)  # dlt's folders (trace.pickle, load packages), DAGSTER_HOME, ...
    assert files >= 8 and (Path(pipeline.working_dir) / "trace.pickle").is_file()
    assert not findings + found, [f"{f.secret_label} in {f.where}" for f in findings + found]
    # nothing lost: no lake was made, no data file written, no state committed
    assert not any(path.is_file() for path in data_path.rglob("*"))
    assert catalog_schemas(cluster, dsn) == []


def catalog_schemas(cluster, dsn: str) -> list[str]:
    """The DuckLake metadata schemas of the catalog database (read with the right password)."""
    right = WarehouseTarget.ducklake(dsn, "/nonexistent", password=cluster.password)
    connection = open_lake_instance()
    try:
        connection.execute(f"CREATE TEMPORARY SECRET (TYPE postgres, PASSWORD '{cluster.password}')")
        connection.execute(f"ATTACH '{right.catalog.libpq().replace(chr(39), chr(39) * 2)}' AS catalog "
                           "(TYPE postgres, READ_ONLY)")
        return [name for (name,) in connection.execute(
            "select schema_name from information_schema.schemata where catalog_name = 'catalog' "
            "and schema_name = 'invoicing_lake'").fetchall()]
    finally:
        connection.close()


# ------------------------------------------------------------------------------------------------ M1
def planted_symlinks_are_refused(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    folder = private_folder(tmp_path / "state")
    precious = tmp_path / "precious.txt"
    precious.write_text("the victim's file")
    budget = HostBudget(BASE_URL, folder)
    budget.path.symlink_to(precious)
    with pytest.raises(LocalStateError) as refused, budget.hold():
        pass
    assert "symbolic link" in str(refused.value) and str(budget.path) in str(refused.value)
    cache = TokenCache(BASE_URL, "client-a", SECRET, "read", folder)
    cache.path.symlink_to("/dev/zero")  # read to the end, it would fill the memory
    answer = within(5, cache.load)
    assert isinstance(answer, LocalStateError) and "symbolic link" in str(answer) and str(cache.path) in str(answer)
    assert precious.read_text() == "the victim's file" and budget.path.is_symlink()  # nothing written through


def planted_fifos_are_refused(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    folder = private_folder(tmp_path / "state")
    kept = TokenCache(BASE_URL, "client-b", SECRET, "read", folder)
    kept.store(CachedToken("t" * 40, 3600, time.time() + 3600))
    cache = TokenCache(BASE_URL, "client-a", SECRET, "read", folder)
    os.mkfifo(cache.path)
    answer = within(5, cache.load)  # the FIFO once hung load() for good
    assert isinstance(answer, LocalStateError) and "FIFO" in str(answer) and str(cache.path) in str(answer)
    budget = HostBudget(BASE_URL, folder)
    os.mkfifo(budget.path)

    def hold() -> None:
        with budget.hold():
            pass

    answer = within(5, hold)
    assert isinstance(answer, LocalStateError) and "FIFO" in str(answer)
    assert kept.load() is not None and kept.load().access_token == "t" * 40  # nothing lost


def foreign_folders_and_files_are_refused(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    foreign = private_folder(tmp_path / "foreign")
    os.chown(foreign, OTHER_UID, OTHER_UID)
    with pytest.raises(LocalStateError) as refused:
        HostBudget(BASE_URL, foreign)
    assert f"owned by uid {OTHER_UID}" in str(refused.value) and str(foreign) in str(refused.value)
    shared = private_folder(tmp_path / "shared")
    shared.chmod(0o1777)  # /tmp's mode: the old default
    with pytest.raises(LocalStateError) as refused:
        TokenCache(BASE_URL, "client-a", SECRET, "read", shared)
    assert "written by group or others" in str(refused.value)
    folder = private_folder(tmp_path / "state")
    budget = HostBudget(BASE_URL, folder)
    budget.path.write_text('{"planted": true}')
    os.chown(budget.path, OTHER_UID, OTHER_UID)
    with pytest.raises(LocalStateError) as refused, budget.hold():
        pass
    assert f"owned by uid {OTHER_UID}" in str(refused.value) and str(budget.path) in str(refused.value)
    assert budget.path.read_text() == '{"planted": true}'  # another's file: neither read nor replaced


def a_held_lock_is_waited_for_a_bounded_time(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    folder = private_folder(tmp_path / "state")
    budget = HostBudget(BASE_URL, folder, lock_wait_s=0.3)
    with budget.hold() as state:
        state["kept"] = 1
    holder = os.open(budget.path, os.O_RDWR)  # another open file: flock excludes it as it would a process
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        started = time.monotonic()

        def hold() -> None:
            with budget.hold():
                pass

        answer = within(5, hold)
        waited = time.monotonic() - started
        assert isinstance(answer, LocalStateError) and "locked by another process for more than 0.3 s" in str(answer)
        assert str(budget.path) in str(answer) and 0.3 <= waited < 2.0
    finally:
        os.close(holder)
    with budget.hold() as state:
        assert state == {"kept": 1}  # nothing lost


# ------------------------------------------------------------------------------------------------ M2
def throttled_client(retry_after: str) -> tuple[InvoicingClient, list[float]]:
    """A client on a simulated clock whose first API answer is a 429 with `Retry-After: retry_after`."""
    now = [1000.0]
    slept: list[float] = []
    answered: list[str] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/oauth2/token"):
            return httpx.Response(200, json={"access_token": "a" * 40, "expires_in": 3600})
        answered.append(request.url.path)
        if len(answered) == 1:
            return httpx.Response(429, headers={"Retry-After": retry_after}, json={"error": "slow down"})
        return httpx.Response(200, json={"data": {"id": "me", "name": "Portal"}})

    client = InvoicingClient(ClientSettings(BASE_URL, "client-a", SECRET, shared_budget=False),
                             transport=httpx.MockTransport(answer), sleep=sleep, clock=lambda: now[0])
    return client, slept


def retry_after_infinite(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    client, slept = throttled_client("inf")
    with client:
        assert client.get("/me") == {"id": "me", "name": "Portal"}  # nothing lost: the answer came
    assert 0 < sum(slept) <= client.settings.backoff_cap_s  # not a number of seconds to honour: the backoff instead


def retry_after_thirty_years(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    client, slept = throttled_client("1e9")
    with client:
        assert client.get("/me") == {"id": "me", "name": "Portal"}
    assert MAX_PAUSE_S - 1 <= sum(slept) <= MAX_PAUSE_S + 1  # honoured, up to the cap


def forged_pause_in_the_budget_file(value: Callable[[float], float]) -> Callable[[pytest.FixtureRequest, Path], None]:
    def run(request: pytest.FixtureRequest, tmp_path: Path) -> None:
        folder = private_folder(tmp_path / "state")
        first = RateLimiter(10, shared=HostBudget(BASE_URL, folder))
        first.acquire()
        budget = HostBudget(BASE_URL, folder)
        saved = json.loads(budget.path.read_text())
        saved["state"]["paused_until"] = value(time.monotonic())
        budget.path.write_text(json.dumps(saved))  # json writes inf as Infinity, as the probe found it
        victim = RateLimiter(10, shared=HostBudget(BASE_URL, folder))
        started = time.monotonic()
        grant = within(5, victim.acquire)
        assert not isinstance(grant, BaseException), grant
        assert time.monotonic() - started < 2.0 and grant.seq >= 1  # paced, not frozen: nothing lost
        kept = json.loads(budget.path.read_text())["state"]["paused_until"]
        assert math.isfinite(kept) and kept <= time.monotonic() + MAX_PAUSE_S  # the forgery is gone
    return run


# ------------------------------------------------------------------------------------------------ M8
def lake_instances_are_locked_down(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pipelines.invoicing.load.sync import make_pipeline

    lake = request.getfixturevalue("lake")
    pipeline = make_pipeline(lake)  # dlt's pool lends sealed instances: its load still works
    pipeline.run([{"id": "A", "n": 1}, {"id": "B", "n": 2}], table_name="probe")
    with connect(lake) as connection:
        settings = connection.execute(
            "select current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions'), "
            "current_setting('lock_configuration')").fetchone()
        assert settings == (False, False, True)
        for statement in ("SET autoload_known_extensions = true", "SET autoinstall_known_extensions = true",
                          "SET allow_community_extensions = true", "SET lock_configuration = false",
                          "SET custom_extension_repository = 'http://127.0.0.1:9'"):
            with pytest.raises(duckdb.InvalidInputException, match="locked"):
                connection.execute(statement)
    with connect(lake, read_only=True) as connection:  # nothing lost
        assert connection.execute("select id, n from invoicing_raw.probe order by id").fetchall() == [
            ("A", 1), ("B", 2)]
    # a file rewritten in place, its size and modification time put back, is no longer the file checked
    checked = tmp_path / "extension.bin"
    checked.write_bytes(b"x" * 4096)
    before = os.stat(checked)
    identity = _identity(str(checked))
    time.sleep(0.05)  # past the file system's clock tick
    with open(checked, "r+b") as out:
        out.write(b"y")
    os.utime(checked, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(checked)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert _identity(str(checked)) != identity


# ------------------------------------------------------------------------------------------------ L5
def data_files_are_the_owners_only(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from invoicing_warehouse.cli.doctor_command import write_private_text
    from invoicing_warehouse.engine.publish import publish_snapshot
    from pipelines.invoicing.load.sync import make_pipeline, run_sync
    from pipelines.invoicing.webhooks.hint_spool import HintSpool

    warehouse = tmp_path / "data" / "warehouse.duckdb"
    with sandbox_server() as sandbox:
        run_sync(make_pipeline(warehouse), base_url=sandbox.base_url, client_id=sandbox.client_id,
                 client_secret=sandbox.client_secret, rate_limit_per_s=50)
        publish_snapshot(warehouse)
        HintSpool.for_warehouse(warehouse).close()
        write_private_text(tmp_path / "data" / "doctor.json", "{}\n")
        comparison = compare_raw_tables(warehouse, sandbox.portal)
    assert comparison.mismatches == [], comparison.summary()  # nothing lost: the sync is exact
    state = Path(os.environ["INVOICING_RATE_BUDGET_DIR"])
    written = [path for root in (tmp_path / "data", state) for path in [root, *root.rglob("*")]]
    kinds = {path.name.split(".")[-1] for path in written if path.is_file()}
    assert {"duckdb", "sqlite", "json", "bin", "pickle"} <= kinds, kinds  # warehouse, spool, doctor, token, dlt
    loose = [f"{path} {path.stat().st_mode & 0o777:o}" for path in written
             if path.stat().st_mode & 0o777 != (0o700 if path.is_dir() else 0o600)]
    assert loose == []


# ------------------------------------------------------------------------------------------------ L6
def catalog_password_with_a_space_and_a_quote(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    cluster = request.getfixturevalue("postgres_cluster")
    role = f"quoted_{secrets.token_hex(4)}"
    password = "pa ss'wd sslmode=require host=127.0.0.2"  # as options, these would fail the connection
    cluster.create_role(role, password)
    dsn = cluster.create_database(f"attack_l6_{secrets.token_hex(4)}", owner=role)
    target = WarehouseTarget.ducklake(dsn, tmp_path / "lake-data", password=password)
    assert "password" not in target.catalog.libpq() and "sslmode" not in target.catalog.libpq()
    with connect(target) as connection:
        connection.execute("create table kept as select 42 as answer")
    with connect(target, read_only=True) as connection:
        assert connection.execute("select answer from kept").fetchall() == [(42,)]  # nothing lost


# ------------------------------------------------------------------------------------------------ L7
def portals_rate_limit_not_finite(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from pipelines.invoicing.portals import load_portals

    for value in ("inf", "nan", "-inf", "-1"):
        path = tmp_path / f"portals-{value}.toml"
        text = f'[portals.acme]\nbase_url = "https://api.example/api/v2"\nrate_limit = {value}\n'
        path.write_text(text)
        assert tomllib.loads(text)["portals"]["acme"]["rate_limit"] is not None  # TOML reads every one of them
        with pytest.raises(InvoicingApiError) as refused:
            load_portals(path)
        message = str(refused.value)
        assert refused.value.kind == "portals" and str(path) in message
        assert "[portals.acme] rate_limit must be a number of requests/s, finite" in message
        assert path.read_text() == text  # nothing lost


# ------------------------------------------------------------------------------------------------ L8
def a_killed_publications_copy_is_removed(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from invoicing_warehouse.engine.publish import publish_snapshot

    warehouse = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute("create table kept as select range as n from range(1000)")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=30)  # its pid is now a dead one (reused only after the whole pid range)
    abandoned = tmp_path / f".warehouse.read.duckdb.{gone.pid}.tmp"
    abandoned.write_bytes(b"\0" * 65536)
    living = tmp_path / f".warehouse.read.duckdb.{os.getppid()}.tmp"  # a publication still copying
    living.write_bytes(b"\0" * 16)
    snapshot = publish_snapshot(warehouse)
    assert not abandoned.exists() and living.exists()
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        assert connection.execute("select count(*), sum(n) from kept").fetchone() == (1000, 499500)  # nothing lost


# ------------------------------------------------------------------------------------------------ L10
def dlt_telemetry_is_off(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from dlt.common.configuration.resolve import resolve_configuration
    from dlt.common.configuration.specs import RuntimeConfiguration

    from pipelines.invoicing.load.sync import make_pipeline

    config = tomllib.loads((ROOT / ".dlt" / "config.toml").read_text())
    assert config["runtime"]["dlthub_telemetry"] is False
    make_pipeline(tmp_path / "warehouse.duckdb")
    assert resolve_configuration(RuntimeConfiguration()).dlthub_telemetry is False  # what dlt starts it with
    assert not (tmp_path / "warehouse.duckdb").exists()  # nothing made: making the pipeline writes no warehouse


ATTACKS = [
    Attack("H4", "catalog at the session's PostgreSQL, wrong password with a space and a quote: a dlt run, "
           "`invoicing-warehouse sync`, the Dagster ingestion asset",
           "each fails naming `password authentication failed`; the password is in no output, no Dagster event "
           "or run, no file of the tmp tree (dlt's trace.pickle and load packages, gzip opened)",
           catalog_password_leaks_nowhere),
    Attack("M1-symlink", "the budget file a symlink to the victim's file; the token cache a symlink to /dev/zero",
           "LocalStateError naming the file: 'is a symbolic link'; the victim's file unchanged",
           planted_symlinks_are_refused),
    Attack("M1-fifo", "a FIFO at the token-cache path and at the budget path",
           "LocalStateError 'is a FIFO' at once (was: load() hung); another kept token still loads",
           planted_fifos_are_refused),
    Attack("M1-foreign-owner", "the state folder owned by uid 65534; a folder of mode 1777; the budget file "
           "owned by uid 65534", "LocalStateError naming the path and the owner or the mode; the file untouched",
           foreign_folders_and_files_are_refused),
    Attack("M1-held-lock", "another open file holds the budget's flock", "LocalStateError 'locked by another "
           "process for more than 0.3 s' naming the file, after 0.3 s (was: hung); the state kept",
           a_held_lock_is_waited_for_a_bounded_time),
    Attack("M2-response-inf", "a 429 answered `Retry-After: inf`", "ignored: the backoff (<= 8 s), then the answer",
           retry_after_infinite),
    Attack("M2-response-1e9", "a 429 answered `Retry-After: 1e9`", f"paused {MAX_PAUSE_S:g} s (the cap), then "
           "the answer", retry_after_thirty_years),
    Attack("M2-file-inf", "the budget file's paused_until = Infinity", "the state dropped: the next grant at once, "
           "the file rewritten finite", forged_pause_in_the_budget_file(lambda now: math.inf)),
    Attack("M2-file-1e9", "the budget file's paused_until = now + 1e9", "the state dropped: the next grant at "
           "once", forged_pause_in_the_budget_file(lambda now: now + 1e9)),
    Attack("M8", "SET autoload/autoinstall/community extensions/repository/lock on a lake connection; a file "
           "rewritten with its size and mtime put back", "refused ('configuration has been locked'), autoload and "
           "autoinstall off; the file's identity changed (st_ctime_ns); dlt's load through the sealed pool exact",
           lake_instances_are_locked_down),
    Attack("L5", "a sync, a publication, the spool, doctor.json, the token cache and budget under umask 022",
           "every file 0600, every folder 0700; the sync's rows equal the sandbox's", data_files_are_the_owners_only),
    Attack("L6", "catalog password `pa ss'wd sslmode=require host=127.0.0.2`", "connects (no option added); the "
           "connection string holds no password", catalog_password_with_a_space_and_a_quote),
    Attack("L7", "portals TOML `rate_limit = inf`, `nan`, `-inf`, `-1`", "InvoicingApiError naming the file, "
           "[portals.acme] and rate_limit", portals_rate_limit_not_finite),
    Attack("L8", "a `.warehouse.read.duckdb.<dead pid>.tmp` left by a killed publication",
           "removed by the next publication; a live pid's copy kept; the snapshot exact",
           a_killed_publications_copy_is_removed),
    Attack("L10", "dlt's telemetry setting of a pipeline the product makes", "off (.dlt/config.toml and the "
           "product's default)", dlt_telemetry_is_off),
]


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.id)
def test_a_local_attack_gets_its_answer_and_loses_nothing(attack: Attack, request: pytest.FixtureRequest,
                                                           tmp_path: Path) -> None:
    attack.run(request, tmp_path)
