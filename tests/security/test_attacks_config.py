"""Attack rows of the configuration findings of the security review (M3, M4, M5, M9, L4), one row per attack:
the probe, the answer expected, and "nothing lost" (the warehouse, the sandbox's records and the readers'
view stay as they were). Every truth is independent of the code under test: hand-written values, the sandbox's
own records of what it received, DuckLake's own list of snapshots, a listener counting the connections it got.

Real parts where users have them: the real dashboard process over real HTTP (M4), a real PostgreSQL catalog
(M9), the sandbox over real HTTP (L4), Dagster's own run-config validation (M3). Everything on 127.0.0.1;
every server started here is stopped here.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import hmac
import io
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import pandas as pd
import pytest
from dagster import DagsterInstance, DagsterInvalidConfigError

from harness.dashboard_process import dashboard_process
from harness.model_raw_tables import create_raw_tables, insert
from harness.tamper_proxy import Exchange, TamperProxy
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.cli import main
from pipelines.invoicing.load.sync import SyncReport
from tests.invoicing_sandbox.conftest import SMALL_SETTINGS

TOKEN = "attack-rows-token-0123456789abcdef"
FOREIGN_HOST = "evil.example"
DEPLOYED_SECRET = "deployed-client-secret-42"
PLAIN_HTTP_API = "http://invoicing.example/api/v2"  # .example: reserved, never resolves to anyone
WAIT_S = 20.0  # the bound of every wait of these rows


@dataclass
class Outcome:
    """What a probe saw: its answer (compared with the row's), and what it found changed that should not be."""

    answer: str
    lost: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Row:
    """One attack: the finding, what the attacker does, the answer expected, and the probe that does it."""

    finding: str
    attack: str
    expected: str
    probe: Callable[[pytest.FixtureRequest], Outcome]


# ---- helpers: listeners, a clean environment -------------------------------------------------------------------


class Trap:
    """A listener on 127.0.0.1 standing in for an attacker's host: counts the connections it gets."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """An API base URL on the trap (loopback: allowed by the URL rule, so only the run-config rule refuses)."""
        return f"http://127.0.0.1:{self.server.getsockname()[1]}/api/v2"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        """Stops listening (bounded join), counting first the connections still waiting in the listen queue: a
        connection a finished run made is either accepted or queued, so `accepted` is final after this."""
        self._stop.set()
        self._thread.join(timeout=WAIT_S)
        assert not self._thread.is_alive(), "the trap's listener did not stop"
        self.server.setblocking(False)
        while True:
            try:
                connection, _ = self.server.accept()
            except (BlockingIOError, OSError):
                break
            self.accepted += 1
            connection.close()
        self.server.close()


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """An empty working directory and no API or webhook settings of the developer's."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("SOURCES__INVOICING__", "INVOICING_WEBHOOK_", "INVOICING_WAREHOUSE_",
                            "INVOICING_DUCKLAKE_")):
            monkeypatch.delenv(name)
    return monkeypatch


def _cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _files(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


# ---- M3: the API's address and secret never come from run config ---------------------------------------------


def _deployed_definitions(tmp_path: Path):
    from assets.resources import InvoicingApiResource, WarehouseResource
    from dagster_project.definitions import build_definitions
    from pipelines.invoicing.portals import Portal

    deployed = InvoicingApiResource(base_url="http://127.0.0.1:9/api/v2", client_id="deployed-id",
                                    client_secret=DEPLOYED_SECRET)
    return build_definitions({"invoicing_api": deployed,
                              "warehouse": WarehouseResource(path=str(tmp_path / "warehouse.duckdb"))},
                             {"default": Portal("default")})


def _run_with_config(request: pytest.FixtureRequest, api_config: dict) -> Outcome:
    tmp_path: Path = request.getfixturevalue("tmp_path")
    request.getfixturevalue("clean_env").setenv("SOURCES__INVOICING__CLIENT_SECRET", DEPLOYED_SECRET)
    before = _files(tmp_path)
    trap = Trap()
    try:
        config = {key: (trap.url if value == "<trap>" else value) for key, value in api_config.items()}
        job = _deployed_definitions(tmp_path).resolve_job_def("sync_job")
        with DagsterInstance.ephemeral() as instance:
            try:
                job.execute_in_process(run_config={"resources": {"invoicing_api": {"config": config}}},
                                       instance=instance, partition_key="default")
                answer = "the run started"
            except DagsterInvalidConfigError as refused:
                message = str(refused)
                answer = "refused before the run" if all(key in message for key in config) else message
                assert DEPLOYED_SECRET not in message
    finally:
        trap.close()  # the run has ended (in this process): every connection it made is counted now
    lost = [f"{trap.accepted} connection(s) to the attacker's host"] if trap.accepted else []
    lost += [f"files changed: {_files(tmp_path)}"] if _files(tmp_path) != before else []
    return Outcome(answer, lost)


def run_config_base_url(request: pytest.FixtureRequest) -> Outcome:
    return _run_with_config(request, {"base_url": "<trap>"})


def run_config_secret_from_env(request: pytest.FixtureRequest) -> Outcome:
    return _run_with_config(request, {"base_url": "<trap>", "client_id": "x",
                                      "client_secret": {"env": "SOURCES__INVOICING__CLIENT_SECRET"}})


# ---- M3 / L4: plain http:// to another machine refused wherever a base URL is configured -----------------------


def http_base_url_in_env(request: pytest.FixtureRequest) -> Outcome:
    env, tmp_path, capsys = (request.getfixturevalue(name) for name in ("clean_env", "tmp_path", "capsys"))
    env.setenv("SOURCES__INVOICING__BASE_URL", PLAIN_HTTP_API)
    env.setenv("SOURCES__INVOICING__CLIENT_ID", "some-id")
    env.setenv("SOURCES__INVOICING__CLIENT_SECRET", DEPLOYED_SECRET)
    code, output = _cli(capsys, "sync", "--warehouse", str(tmp_path / "data" / "warehouse.duckdb"))
    named = "SOURCES__INVOICING__BASE_URL" in output and "plain http://" in output
    lost = [f"the secret was printed: {output}"] if DEPLOYED_SECRET in output else []
    # the warehouse and dlt's state are never made (the mark that makes the next sync publish may be: it is
    # written before any portal syncs, whatever then fails)
    made = [name for name in _files(tmp_path) if name != "data/.warehouse.duckdb.unpublished"]
    lost += [f"files made: {made}"] if made else []
    return Outcome(f"exit {code}" + (", naming the setting" if named else f": {output}"), lost)


def http_base_url_in_portals_file(request: pytest.FixtureRequest) -> Outcome:
    from pipelines.invoicing.errors import InvoicingApiError
    from pipelines.invoicing.portals import load_portals

    tmp_path, capsys = request.getfixturevalue("tmp_path"), request.getfixturevalue("capsys")
    request.getfixturevalue("clean_env")
    sandbox_file = tmp_path / "sandbox.toml"
    sandbox_file.write_text('[portals.lab]\nbase_url = "http://127.0.0.1:8765/api/v2"\n')
    assert load_portals(sandbox_file)["lab"].base_url == "http://127.0.0.1:8765/api/v2"  # loopback stays allowed
    answers = []
    for name, url in (("acme", PLAIN_HTTP_API), ("beta", "https://user:pw-in-the-url@api.example/api/v2")):
        bad = tmp_path / f"{name}.toml"
        bad.write_text(f'[portals.{name}]\nbase_url = "{url}"\n')
        try:
            load_portals(bad)
            answers.append(f"{name} accepted")
        except InvoicingApiError as error:
            answers.append(f"{name} refused" if f"[portals.{name}]" in str(error) else str(error))
            assert "pw-in-the-url" not in str(error)
    code, output = _cli(capsys, "sync", "--portals", str(tmp_path / "acme.toml"),
                        "--warehouse", str(tmp_path / "data" / "warehouse.duckdb"))
    made = [name for name in _files(tmp_path) if name.startswith("data/")]
    lost = [f"files made: {made}"] if made else []
    return Outcome(f"{', '.join(answers)}; sync exit {code}" + ("" if "plain http://" in output else output), lost)


def http_base_url_in_dagster_resource(request: pytest.FixtureRequest) -> Outcome:
    from assets.resources import InvoicingApiResource
    from pipelines.invoicing.errors import InvoicingApiError

    env = request.getfixturevalue("clean_env")
    answers = []
    try:
        InvoicingApiResource(base_url=PLAIN_HTTP_API, client_id="id", client_secret=DEPLOYED_SECRET)
        answers.append("given: accepted")
    except InvoicingApiError as error:
        answers.append("given: refused" if "plain http://" in str(error) else str(error))
    env.setenv("SOURCES__INVOICING__BASE_URL", PLAIN_HTTP_API)  # the deployment's environment
    env.setenv("SOURCES__INVOICING__CLIENT_ID", "id")
    env.setenv("SOURCES__INVOICING__CLIENT_SECRET", DEPLOYED_SECRET)
    try:
        InvoicingApiResource().settings()
        answers.append("environment: accepted")
    except InvoicingApiError as error:
        answers.append("environment: refused" if "SOURCES__INVOICING__BASE_URL" in str(error) else str(error))
        assert DEPLOYED_SECRET not in str(error)
    return Outcome("; ".join(answers))


# ---- M4: the dashboard answers only for its own host names ----------------------------------------------------


@pytest.fixture(scope="module")
def dashboard_url(tmp_path_factory) -> Iterator[str]:
    """The real dashboard process (`invoicing-warehouse dashboard`, default --host) on a free port; the Host
    check does not depend on the figures, so it serves a warehouse not built yet (it says which command to run)."""
    folder = tmp_path_factory.mktemp("dashboard")
    with dashboard_process(folder / "warehouse.duckdb", folder / "dashboard.log") as url:
        yield url


def _websocket_status(url: str, host: str) -> str:
    """The status line of a WebSocket upgrade of Streamlit's stream, `Host` and `Origin` naming `host`."""
    port = int(url.rsplit(":", 1)[1])
    key = base64.b64encode(os.urandom(16)).decode()
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as connection:
        connection.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                            f"Origin: http://{host}:{port}\r\n\r\n").encode())
        return connection.recv(4096).split(b"\r\n", 1)[0].decode()


def foreign_host_header(request: pytest.FixtureRequest) -> Outcome:
    url = request.getfixturevalue("dashboard_url")
    port = int(url.rsplit(":", 1)[1])
    answers = []
    for host in (FOREIGN_HOST, "127.0.0.1"):
        page = httpx.get(url + "/", headers={"Host": f"{host}:{port}"}, timeout=WAIT_S, trust_env=False)
        health = httpx.get(url + "/_stcore/health", headers={"Host": f"{host}:{port}"}, timeout=WAIT_S,
                           trust_env=False)
        leaked = "<html" in page.text.lower() or "streamlit" in page.text.lower()
        answers.append(f"{host}: page {page.status_code}{' with the app' if leaked else ''}, "
                       f"health {health.status_code}, stream {_websocket_status(url, host).split(' ', 2)[1]}")
    # nothing lost: the dashboard still serves its own host after the refusals
    after = httpx.get(url + "/_stcore/health", timeout=WAIT_S, trust_env=False)
    return Outcome("; ".join(answers), [] if after.text == "ok" else [f"health after: {after.status_code}"])


# ---- M5: CSV downloads never carry a live formula -------------------------------------------------------------


FORMULAS = ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3", "\tTAB", "\rCR"]
# not first, so not a formula: but a bare CR would start a new row in a spreadsheet, with the formula first
HIDDEN_ROW = 'Dupont\r=HYPERLINK("http://x","y")'


def formula_cells(request: pytest.FixtureRequest) -> Outcome:
    from invoicing_warehouse.dashboard.formatting import to_csv

    def frame() -> pd.DataFrame:  # the shape of a download: names from third parties, amounts, counts, dates
        return pd.DataFrame({
            "customer_name": [*FORMULAS, HIDDEN_ROW],
            "email": ["=1+1@x.test", "a@b.test", None, "c@d.test", "e@f.test", "g@h.test", "i@j.test"],
            "total_open": [Decimal("-120.50"), Decimal("0.00"), Decimal("1234.56"), Decimal("-0.01"),
                           Decimal(7), Decimal("-3.10"), Decimal("99.99")],
            "overdue_invoice_count": [1, 0, 2, -1, 3, 4, 5],
            "due_date": pd.to_datetime(["2026-01-31"] * 7).date,
        })

    given = frame()
    rows = list(csv.DictReader(io.StringIO(to_csv(given).decode("utf-8"))))
    names = [row["customer_name"] for row in rows]
    amounts = [Decimal(row["total_open"]) for row in rows]
    counts = [int(row["overdue_invoice_count"]) for row in rows]
    neutral = names == ["'" + text for text in FORMULAS] + [HIDDEN_ROW] and rows[0]["email"] == "'=1+1@x.test"
    numbers = (amounts == [Decimal("-120.50"), Decimal("0.00"), Decimal("1234.56"), Decimal("-0.01"), Decimal(7),
                           Decimal("-3.10"), Decimal("99.99")] and counts == [1, 0, 2, -1, 3, 4, 5]
               and {row["due_date"] for row in rows} == {"2026-01-31"})
    answer = ("text cells neutralised" if neutral else f"cells: {names}") + \
        ("; numbers and dates as they were" if numbers else f"; amounts {amounts}, counts {counts}")
    return Outcome(answer, [] if given.equals(frame()) else ["the frame shown on the page was changed"])


# ---- M9: the lake's snapshots expire safely; a publication never holds another writer's half load ------------


# the lakes: `lake` of tests/conftest.py, a new catalog database each in the session's PostgreSQL
MART_ROWS = 40  # above DuckLake's inlining limit (10 rows): every rebuild writes a Parquet file
BUILDS = 4


def _snapshots(connection) -> list[tuple[int, str | None]]:
    return connection.execute("select snapshot_id, commit_message from invoicing_lake.snapshots() "
                              "order by snapshot_id").fetchall()


def snapshot_growth(request: pytest.FixtureRequest) -> Outcome:
    from invoicing_warehouse.engine.connection import connect
    from invoicing_warehouse.engine.readers import connect_reader, publish

    target = request.getfixturevalue("lake")
    with connect(target) as writer:
        writer.execute("create schema if not exists marts")
    for build in range(1, BUILDS + 1):  # rebuilds of a mart, each published: the marts' own growth
        with connect(target) as writer:
            writer.execute(f"create or replace table marts.totals as select range as id, range * {build} as amount "
                           f"from range({MART_ROWS})")
        publish(target, f"build {build}")
    with connect(target) as writer:  # a load after the last publication: readers must not see it
        writer.execute("insert into marts.totals values (1000, 1)")
        before = _snapshots(writer)
    files_before = _files(target.data_path)
    # the operator's command, on the lake the environment names; a horizon of 1.7 s, and every snapshot older
    env, capsys = request.getfixturevalue("clean_env"), request.getfixturevalue("capsys")
    for name, value in (("INVOICING_WAREHOUSE_ENGINE", "ducklake"), ("INVOICING_DUCKLAKE_CATALOG",
                                                                     target.catalog.public()),
                        ("INVOICING_DUCKLAKE_DATA_PATH", str(target.data_path)),
                        ("INVOICING_DUCKLAKE_PASSWORD", target.catalog.password)):
        env.setenv(name, value)
    time.sleep(2.0)
    code, output = _cli(capsys, "lake", "maintain", "--older-than-days", "0.00002")
    assert code == 0 and "expired" in output and target.catalog.password not in output, output
    with connect(target) as writer:
        after = _snapshots(writer)
    last_published = max(snapshot for snapshot, message in before if message == "published")
    expected_after = [(s, m) for s, m in before if s >= last_published]  # DuckLake's own list, before
    answer = (f"{len(before)} snapshots -> the last published and after ({len(after)})"
              if after == expected_after else f"snapshots after: {after}, expected {expected_after}")
    answer += "; old files removed" if len(_files(target.data_path)) < len(files_before) \
        else f"; files {len(files_before)} -> {len(_files(target.data_path))}"
    with connect_reader(target) as reader:  # what readers see: the last build, by hand
        seen = reader.execute("select count(*), sum(amount) from marts.totals").fetchone()
    truth = (MART_ROWS, BUILDS * sum(range(MART_ROWS)))
    return Outcome(answer, [] if seen == truth else [f"readers see {seen}, the last publication is {truth}"])


def reader_on_an_older_publication(request: pytest.FixtureRequest) -> Outcome:
    from invoicing_warehouse.engine.connection import connect
    from invoicing_warehouse.engine.lake_maintenance import maintain
    from invoicing_warehouse.engine.readers import publish

    target = request.getfixturevalue("lake")
    with connect(target) as writer:
        writer.execute("create table early as select range as id from range(20)")
        writer.execute("create table totals as select range as id from range(30)")
    publish(target, "first")
    with connect(target) as writer:
        (first,) = writer.execute("select max(snapshot_id) from invoicing_lake.snapshots() "
                                  "where commit_message = 'published'").fetchone()
    reader = connect(target, snapshot_version=first)  # a dashboard page opened on the first publication
    try:
        time.sleep(1.1)  # the second publication comes a second later
        with connect(target) as writer:
            writer.execute("create or replace table totals as select range as id from range(50)")
        publish(target, "second")
        with connect(target) as writer:
            (second_at,) = writer.execute("select max(snapshot_time) from invoicing_lake.snapshots() "
                                          "where commit_message = 'published'").fetchone()
            before = _snapshots(writer)
        # a week after the second publication, less half a second: the first one was the last publication until
        # within the horizon, so a reader may still be on it
        report = maintain(target, now=second_at + timedelta(days=7) - timedelta(seconds=0.5))
        with connect(target) as writer:
            after = _snapshots(writer)
        still_read = reader.execute("select count(*) from totals").fetchone()
    finally:
        reader.close()
    expected_after = [(s, m) for s, m in before if s >= first]
    answer = "kept the reader's publication and after, expired the older" \
        if after == expected_after and report.expired == [s for s, _ in before if s < first] \
        else f"after {after}, expired {report.expired}"
    return Outcome(answer, [] if still_read == (30,) else [f"the reader on the first publication reads {still_read}"])


def half_loaded_publication(request: pytest.FixtureRequest) -> Outcome:
    """Writer B loads portal beta in two commits (customers, then documents) while writer A builds and publishes:
    A's publication holds B's whole load or none of it, never customers without documents."""
    import invoicing_warehouse.runs.sync
    from invoicing_warehouse.engine.connection import connect, give_catalog_password, open_lake_instance
    from invoicing_warehouse.engine.readers import connect_reader, published_snapshot
    from invoicing_warehouse.runs.gate import build_and_publish
    from pipelines.invoicing.portals import Portal

    target = request.getfixturevalue("lake")
    monkeypatch = request.getfixturevalue("monkeypatch")
    with connect(target) as writer:
        create_raw_tables(writer)
    half_loaded, a_done = threading.Event(), threading.Event()
    seen_waiting: list[bool] = []

    def a_waits_for_the_lock() -> bool:
        """Whether a session waits for an advisory lock (PostgreSQL's own pg_locks), bounded by WAIT_S."""
        probe = open_lake_instance()
        try:
            give_catalog_password(probe, target)
            libpq = target.catalog.libpq().replace("'", "''")
            probe.execute(f"attach '{libpq}' as catalog (type postgres)")
            deadline = time.monotonic() + WAIT_S
            while time.monotonic() < deadline and not a_done.is_set():
                (waiting,) = probe.execute("select * from postgres_query('catalog', 'select count(*) from pg_locks "
                                           "where locktype = ''advisory'' and not granted')").fetchone()
                if waiting:
                    return True
                time.sleep(0.05)
            return False
        finally:
            probe.close()

    def load_in_two_commits(lake, portal, **options):  # stands in for dlt's chunked load, commit by commit
        with connect(lake) as writer:
            insert(writer, "customers", [{"id": f"c{n}", "name": f"Beta {n}", "portal_id": "beta"} for n in (1, 2)])
        half_loaded.set()
        seen_waiting.append(a_waits_for_the_lock())
        with connect(lake) as writer:
            insert(writer, "documents", [{"id": f"d{n}", "customer_id": "c1", "portal_id": "beta"}
                                         for n in (1, 2, 3)])
        return SyncReport(rows={"customers": 2, "documents": 3})  # what it loaded, as a real run reports it

    monkeypatch.setattr(invoicing_warehouse.runs.sync, "sync_portal", load_in_two_commits)
    writer_b = threading.Thread(target=invoicing_warehouse.runs.sync.sync_and_record, args=(target, Portal("beta")))
    writer_b.start()
    try:
        assert half_loaded.wait(WAIT_S), "writer B never committed its first half"
        outcome = build_and_publish(target, note="writer A")
        a_done.set()
    finally:
        a_done.set()
        writer_b.join(timeout=WAIT_S * 3)
    assert not writer_b.is_alive()
    with connect_reader(target) as reader:
        published = reader.execute("select (select count(*) from invoicing_raw.customers where portal_id = 'beta'), "
                                   "(select count(*) from invoicing_raw.documents where portal_id = 'beta')"
                                   ).fetchone()
    with connect(target) as writer:
        latest = writer.execute("select (select count(*) from invoicing_raw.customers), "
                                "(select count(*) from invoicing_raw.documents)").fetchone()
        at = published_snapshot(writer)
    whole = {(0, 0): "none of B's load", (2, 3): "B's whole load"}  # by hand: 2 customers, 3 documents
    answer = (f"A waited for B's load, then published {whole[published]}"
              if seen_waiting == [True] and published in whole and outcome.published
              else f"A waiting seen: {seen_waiting}; readers see customers, documents = {published}")
    return Outcome(answer, [] if latest == (2, 3) and at is not None else [f"lake holds {latest}, published {at}"])


# ---- L4: webhook subscriptions never send the token in clear, never print it ---------------------------------

# the rows' `sandbox` (the root conftest's, asked for by name): the small one, empty (its webhook subscriptions
# are the truth of what was registered)
pytestmark = pytest.mark.sandbox(**SMALL_SETTINGS, generate=False)


def _webhook_env(request: pytest.FixtureRequest, base_url: str, server: SandboxServer):
    env = request.getfixturevalue("clean_env")
    env.setenv("SOURCES__INVOICING__BASE_URL", base_url)
    env.setenv("SOURCES__INVOICING__WEBHOOK_CLIENT_ID", server.client_id)
    env.setenv("SOURCES__INVOICING__WEBHOOK_CLIENT_SECRET", server.client_secret)
    env.setenv("INVOICING_WEBHOOK_TOKEN", TOKEN)
    return env


def _subscriptions(server: SandboxServer) -> list[str]:
    return [subscription["url"] for subscription in server.portal.snapshot("webhooks")]


def register_plain_http(request: pytest.FixtureRequest) -> Outcome:
    server, capsys = request.getfixturevalue("sandbox"), request.getfixturevalue("capsys")
    _webhook_env(request, server.base_url, server)
    code, output = _cli(capsys, "webhooks", "register", "--url", f"http://hooks.example.com/hooks/{TOKEN}")
    answer = f"exit {code}" + (", plain http named" if "plain http://" in output else f": {output}")
    lost = [f"the token was printed: {output}"] if TOKEN in output else []
    lost += [f"{server.stats['requests']} request(s) reached the API"] if server.stats["requests"] else []
    return Outcome(answer, lost + [f"subscribed: {_subscriptions(server)}"] if _subscriptions(server) else lost)


def register_error_echoing_the_url(request: pytest.FixtureRequest) -> Outcome:
    server, capsys = request.getfixturevalue("sandbox"), request.getfixturevalue("capsys")
    receiver = "http://127.0.0.1:8787"

    def refuse_quoting_the_url(exchange: Exchange) -> None:  # a service that quotes what it refused
        if exchange.method == "GET" and exchange.path == "/webhooks":
            exchange.status = 400
            exchange.set_json({"error": f"cannot verify {receiver}/hooks/{TOKEN}",
                               "details": [{"path": "url", "message": f"token {TOKEN} unknown"}]})

    with TamperProxy(server.base_url, tamper=refuse_quoting_the_url) as proxy:
        _webhook_env(request, proxy.base_url, server)
        code, output = _cli(capsys, "webhooks", "register", "--receiver", receiver)
        quoted = proxy.tampered_requests == ["GET /webhooks"]
    answer = f"exit {code}" + (", the API's message shown masked" if quoted and "/hooks/***" in output else
                                 f": {output}")
    lost = [f"the token was printed: {output}"] if TOKEN in output else []
    return Outcome(answer, lost + ([f"subscribed: {_subscriptions(server)}"] if _subscriptions(server) else []))


def register_token_from_environment(request: pytest.FixtureRequest) -> Outcome:
    server, capsys = request.getfixturevalue("sandbox"), request.getfixturevalue("capsys")
    _webhook_env(request, server.base_url, server)
    code, output = _cli(capsys, "webhooks", "register", "--receiver", "http://127.0.0.1:8787")
    # the sandbox's own record of what it was asked to deliver to, against the URL written by hand: the portal's
    # door is HMAC-SHA256(token, portal name) (review 2, M1; docs/webhook-receiver.md)
    door = hmac.new(TOKEN.encode(), b"default", hashlib.sha256).hexdigest()
    answer = f"exit {code}, subscribed {_subscriptions(server) == [f'http://127.0.0.1:8787/hooks/{door}']}"
    return Outcome(answer, [f"the token was printed: {output}"] if TOKEN in output else [])


ROWS = [
    Row("M3", "run config points base_url at the attacker's host", "refused before the run", run_config_base_url),
    Row("M3", "run config takes the client secret from the environment", "refused before the run",
        run_config_secret_from_env),
    Row("M3/L4", "plain http:// base URL in the environment", "exit 1, naming the setting", http_base_url_in_env),
    Row("M3/L4", "plain http:// or credentials in a portals file's base_url",
        "acme refused, beta refused; sync exit 1", http_base_url_in_portals_file),
    Row("M3/L4", "plain http:// base URL given to the Dagster resource", "given: refused; environment: refused",
        http_base_url_in_dagster_resource),
    Row("M4", "DNS rebinding: a foreign Host header over real HTTP",
        f"{FOREIGN_HOST}: page 421, health 421, stream 403; 127.0.0.1: page 200 with the app, health 200, stream 101",
        foreign_host_header),
    Row("M5", "formula cells in names and e-mails of a CSV download",
        "text cells neutralised; numbers and dates as they were", formula_cells),
    # by hand: snapshot 0 (the new lake), 1 (schema marts), 2 per build (the table, its publication), 1 (a late load)
    Row("M9", "snapshots pile up for ever", "11 snapshots -> the last published and after (2); old files removed",
        snapshot_growth),
    Row("M9", "expiry while a reader is on the previous publication",
        "kept the reader's publication and after, expired the older", reader_on_an_older_publication),
    Row("M9", "publication while another writer is half way through its load",
        "A waited for B's load, then published B's whole load", half_loaded_publication),
    Row("L4", "register a plain http:// receiver URL", "exit 2, plain http named", register_plain_http),
    Row("L4", "an API error quoting the subscription URL and token", "exit 1, the API's message shown masked",
        register_error_echoing_the_url),
    Row("L4", "the token on the command line (visible in ps)", "exit 0, subscribed True",
        register_token_from_environment),
]


@pytest.mark.parametrize("row", ROWS, ids=[f"{row.finding}-{row.attack}" for row in ROWS])
def test_attack(row: Row, request: pytest.FixtureRequest) -> None:
    outcome = row.probe(request)
    assert outcome.answer == row.expected
    assert outcome.lost == []
