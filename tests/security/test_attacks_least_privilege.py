"""Attack tests of the medium findings of security review 2 (`security-review-2.md`, main `4f148c4`): M1 a door per
portal, M2 a role per service, M3 settings files that are the user's, M4 a dashboard behind a sign-in. Each runs the
review's reproduction and asserts the answer and that nothing was lost.

Truths independent of the code under test: the review's own commands and observations, HMAC-SHA256 computed here
with `hmac` (the definition docs/webhook-receiver.md gives, also what `openssl dgst -hmac` prints), a listener
counting the connections it got, PostgreSQL's own refusal of a privilege, the sandbox's records. Real parts:
the receiver over real HTTP, a real PostgreSQL (harness/postgres_cluster.py), Debian's nginx. Everything on
127.0.0.1; every server started here is stopped here.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterator
from contextlib import closing
from datetime import date, timedelta
from pathlib import Path

import httpx
import pytest

from invoicing_warehouse.cli import build_parser, main
from invoicing_warehouse.cli.webhooks_command import receiver_settings
from invoicing_warehouse.engine import env_file
from pipelines.invoicing.webhooks.hint_spool import HintSpool
from pipelines.invoicing.webhooks.receiver import Receiver
from tests.security.test_attacks_config import Trap
from tests.support.two_portals import build_two_portals
from tests.support.webhook_receiver import envelope, serving_app

TOKEN = "least-privilege-token-0123456789abcdef"
GLOBEX_API_ID = "64f0c0ffee00000000000b0b"


def _door(portal: str) -> str:
    """The door of `portal` by the documented definition, computed here: HMAC-SHA256(key=token, msg=portal)."""
    return hmac.new(TOKEN.encode(), portal.encode(), hashlib.sha256).hexdigest()


@pytest.fixture
def environment_restored() -> Iterator[None]:
    """The process environment as it was (a `.env` read writes into it)."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# ---- M1: one portal's users cannot ring another portal's doorbell ------------------------------------------------


def test_m1_the_shared_token_and_another_portals_door_open_nothing(tmp_path):
    """Review: `webhooks serve --portals` with acme and globex; `POST /hooks/$T/globex` without `portalId` ->
    200 spooled. Now the token itself, and acme's door on globex's path, are unknown paths (404); globex's own door
    is accepted, and once globex's API id is learnt a delivery must carry it (422 without)."""
    portals = tmp_path / "portals.toml"
    portals.write_text('[portals.acme]\nbase_url = "https://api.example/api/v2"\n'
                       '[portals.globex]\nbase_url = "https://api.example/api/v2"\n')
    argv = ["webhooks", "serve", "--warehouse", str(tmp_path / "w.duckdb"), "--portals", str(portals)]
    parser, _ = build_parser(argv)
    settings = receiver_settings(parser.parse_args(argv), {"INVOICING_WEBHOOK_TOKEN": TOKEN})
    receiver = Receiver(settings)
    receiver.open()

    def bare(delivery_id: str, record_id: str) -> dict:
        body = envelope(delivery_id, "customer.updated", record_id)
        del body["portalId"]  # the review's delivery: no portalId
        return body

    try:
        with serving_app(receiver.app()) as port, httpx.Client(timeout=30.0, trust_env=False) as http:
            root = f"http://127.0.0.1:{port}/hooks"
            review = http.post(f"{root}/{TOKEN}/globex", json=bare("review", "aaaaaaaaaaaaaaaaaaaaaaaa"))
            acme_door = http.post(f"{root}/{_door('acme')}/globex", json=bare("acme-door", "bbbbbbbbbbbbbbbbbbbbbbbb"))
            genuine = http.post(f"{root}/{_door('globex')}/globex", json=bare("genuine", "cccccccccccccccccccccccc"))
            with HintSpool(settings.spool_path) as spool:  # what an applying run learns from globex's records
                spool.learn_portal("globex", GLOBEX_API_ID)
            unnamed = http.post(f"{root}/{_door('globex')}/globex", json=bare("unnamed", "dddddddddddddddddddddddd"))
            named = envelope("named", "customer.updated", "eeeeeeeeeeeeeeeeeeeeeeee")
            named["portalId"] = GLOBEX_API_ID
            after = http.post(f"{root}/{_door('globex')}/globex", json=named)
    finally:
        receiver.close()
    assert (review.status_code, review.json()) == (404, {"error": "not found"})  # was 200 spooled on 4f148c4
    assert (acme_door.status_code, acme_door.json()) == (404, {"error": "not found"})
    assert (genuine.status_code, genuine.json()) == (200, {"status": "spooled"})
    assert unnamed.status_code == 422 and "portalId" in unnamed.json()["error"]
    assert (after.status_code, after.json()) == (200, {"status": "spooled"})
    with HintSpool(settings.spool_path) as spool:  # nothing forged kept, nothing genuine lost
        assert sorted((h.portal_id, h.record_id) for h in spool.pending()) == [
            ("globex", "cccccccccccccccccccccccc"), ("globex", "eeeeeeeeeeeeeeeeeeeeeeee")]


def test_m1_register_subscribes_the_portals_door_and_replaces_the_shared_token_url(tmp_path, monkeypatch, capsys):
    """`webhooks register --receiver ROOT` subscribes ROOT/hooks/<door>[/<portal>] (the sandbox's own record of the
    subscription), and removes the URL an older version subscribed with the shared token, after the new one exists;
    `--url` with the shared token is refused (the receiver would answer 404 to every delivery)."""
    from invoicing_sandbox.server import SandboxServer
    from tests.invoicing_sandbox.conftest import small_config

    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("SOURCES__INVOICING__", "INVOICING_WEBHOOK_")):
            monkeypatch.delenv(name)
    server = SandboxServer(small_config(), generate=False).start()
    try:
        monkeypatch.setenv("SOURCES__INVOICING__BASE_URL", server.base_url)
        monkeypatch.setenv("SOURCES__INVOICING__WEBHOOK_CLIENT_ID", server.client_id)
        monkeypatch.setenv("SOURCES__INVOICING__WEBHOOK_CLIENT_SECRET", server.client_secret)
        root = "http://127.0.0.1:8787"
        assert main(["webhooks", "register", "--url", f"{root}/hooks/{TOKEN}"]) == 0  # an older version's URL
        monkeypatch.setenv("INVOICING_WEBHOOK_TOKEN", TOKEN)
        assert main(["webhooks", "register", "--url", f"{root}/hooks/{TOKEN}"]) == 2
        assert main(["webhooks", "register", "--receiver", root]) == 0
        output = capsys.readouterr()
        urls = [subscription["url"] for subscription in server.portal.snapshot("webhooks")]
    finally:
        server.stop()
    assert urls == [f"{root}/hooks/{_door('default')}"]
    assert TOKEN not in output.out + output.err and _door("default") not in output.out + output.err


# ---- M3: `.env` from the project root only, and only the user's ----------------------------------------------------


def _victim(monkeypatch, tmp_path: Path) -> Path:
    """The victim's environment (API credentials, no base URL: it comes from configuration), a stand-in checkout
    without `.env` as the project root, and the working directory a folder someone else controls."""
    for name in list(os.environ):
        if name.startswith(("SOURCES__INVOICING__", "INVOICING_WAREHOUSE_", "INVOICING_DUCKLAKE_")) \
                or name == env_file.ENV_FILE_ENV:
            monkeypatch.delenv(name)
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_ID", "prod-client")
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_SECRET", "prod-secret-DO-NOT-LEAK")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.setattr(env_file, "PROJECT_ROOT", checkout)
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.chdir(shared)
    return checkout


def test_m3_a_env_planted_in_the_working_directory_is_not_read(tmp_path, monkeypatch, capsys, environment_restored):
    """Review: a directory holding `.env` = `SOURCES__INVOICING__BASE_URL=<attacker>`; `sync` run there sent the
    client id and secret to the attacker. Now the working directory's `.env` is never read: the attacker's
    listener gets no connection, and sync stops naming the missing setting."""
    _victim(monkeypatch, tmp_path)
    trap = Trap()
    try:
        (tmp_path / "shared" / ".env").write_text(f"SOURCES__INVOICING__BASE_URL={trap.url}\n")
        code = main(["sync", "--warehouse", str(tmp_path / "w.duckdb")])
    finally:
        trap.close()
    output = capsys.readouterr()
    assert trap.accepted == 0  # 4f148c4: the token request went there, Basic credentials and all
    assert code == 1 and "SOURCES__INVOICING__BASE_URL" in output.err
    assert "SOURCES__INVOICING__BASE_URL" not in os.environ and "prod-secret" not in output.out + output.err
    assert not (tmp_path / "w.duckdb").exists()


def test_m3_a_env_writable_by_others_or_not_the_users_is_refused_and_nothing_of_it_read(
        tmp_path, monkeypatch, capsys, environment_restored):
    checkout = _victim(monkeypatch, tmp_path)
    trap = Trap()
    try:
        dot_env = checkout / ".env"
        dot_env.write_text(f"SOURCES__INVOICING__BASE_URL={trap.url}\nINVOICING_PLANTED=1\n")
        os.chmod(dot_env, 0o666)
        code = main(["sync", "--warehouse", str(tmp_path / "w.duckdb")])
        output = capsys.readouterr()
        assert code == 2 and f"chmod 600 {dot_env}" in output.err and "writable by others" in output.err
        os.chmod(dot_env, 0o620)
        assert main(["status", "--warehouse", str(tmp_path / "w.duckdb")]) == 2
        assert "writable by its group" in capsys.readouterr().err
        assert trap.accepted == 0 and "INVOICING_PLANTED" not in os.environ
        # a file named on purpose that belongs to another user (geteuid stands in for a second account)
        os.chmod(dot_env, 0o600)
        monkeypatch.setenv(env_file.ENV_FILE_ENV, str(dot_env))
        real_uid = os.geteuid()
        monkeypatch.setattr(env_file.os, "geteuid", lambda: real_uid + 1)
        with pytest.raises(env_file.EnvFileRefused, match="not to you"):
            env_file.load_env_file()
        monkeypatch.setattr(env_file.os, "geteuid", lambda: real_uid)
        assert "INVOICING_PLANTED" not in os.environ
        # the user's own file, 0600: read (the environment still wins)
        assert sorted(env_file.load_env_file()) == ["INVOICING_PLANTED", "SOURCES__INVOICING__BASE_URL"]
        assert os.environ["INVOICING_PLANTED"] == "1"
    finally:
        trap.close()
    # named but missing: an error naming the setting, not a silent default
    monkeypatch.setenv(env_file.ENV_FILE_ENV, str(tmp_path / "nowhere.env"))
    with pytest.raises(env_file.EnvFileRefused, match=env_file.ENV_FILE_ENV):
        env_file.load_env_file()


# ---- M2: a role per service: the internet-facing receiver cannot touch the catalog --------------------------------

ROLES_SQL = Path(__file__).resolve().parents[2] / "docs" / "deploy" / "postgres" / "roles.sql"


def _refused(connection, sql: str) -> str:
    """PostgreSQL's own answer to `sql` on `connection` (autocommit): 'refused' for a privilege error."""
    import psycopg2.errors

    try:
        connection.cursor().execute(sql)
    except psycopg2.errors.InsufficientPrivilege:
        return "refused"
    return "done"


def test_m2_each_service_role_holds_only_its_grants_on_a_real_postgresql(tmp_path):
    """Review: the receiver's own `PostgresSpoolConnection` ran `delete from ducklake_snapshot` (0 rows, rolled
    back): one owner role for catalog, spool and budget. With docs/deploy/postgres/roles.sql run as written, the
    receiver's role spools a hint and is refused every statement on the catalog; the budget's role paces and is
    refused the catalog and the spool; the readers' role reads the published lake and the spool and writes nothing;
    the writer applies and acknowledges the receiver's hint. Nothing of the catalog was changed by the refusals."""
    import psycopg2

    from harness.postgres_cluster import PostgresCluster
    from invoicing_warehouse.engine.connection import connect
    from invoicing_warehouse.engine.readers import connect_reader, publish
    from invoicing_warehouse.engine.target import WarehouseTarget, parse_catalog_dsn
    from pipelines.invoicing.http.database_budget import BudgetDatabase, DatabaseBudget
    from pipelines.invoicing.webhooks.hint_spool import SPOOLED, Hint
    from pipelines.invoicing.webhooks.spool_stores import PostgresSpool, PostgresSpoolConnection

    passwords = {role: f"{role}-pw-{os.urandom(6).hex()}" for role in
                 ("invoicing_receiver", "invoicing_budget", "invoicing_reader")}
    with PostgresCluster(database="invoicing_lake", user="invoicing") as cluster:
        cluster.run_script(ROLES_SQL.read_text(encoding="utf-8"), "invoicing_lake")
        cluster.run_script("".join(f"alter role {role} password '{pw}';\n" for role, pw in passwords.items()),
                           "invoicing_lake")

        def dsn(role: str) -> str:
            return f"postgresql://{role}@127.0.0.1:{cluster.port}/invoicing_lake"

        def sql_as(role: str):
            connection = psycopg2.connect(host="127.0.0.1", port=cluster.port, user=role, dbname="invoicing_lake",
                                          password=passwords.get(role, cluster.password))
            connection.autocommit = True
            return connection

        writer = WarehouseTarget.ducklake(dsn("invoicing"), tmp_path / "lake-data", password=cluster.password)
        with connect(writer) as lake:  # the writer's lake: a mart, published
            lake.execute("create schema if not exists marts")
            lake.execute("create table marts.totals as select range as id, range * 2 as amount from range(10)")
        publish(writer, "build 1")
        with closing(sql_as("invoicing")) as owner:
            snapshots_before = _count(owner, "select count(*) from invoicing_lake.ducklake_snapshot")

        # the receiver: spools a hint in a spool it creates, and the review's probe on its own connection
        receiver_spool = PostgresSpool(parse_catalog_dsn(dsn("invoicing_receiver"), passwords["invoicing_receiver"]))
        with HintSpool(receiver_spool) as spool:
            spooled = spool.receive("d1", Hint("acme", "customers", "0123456789abcdef01234567", "customer.updated"))
        probe = PostgresSpoolConnection(receiver_spool)
        try:
            receiver_on_catalog = [_refused(probe._connection, sql) for sql in (
                "delete from invoicing_lake.ducklake_snapshot", "select count(*) from invoicing_lake.ducklake_snapshot",
                "create table invoicing_lake.written_by_receiver (x int)")]
        finally:
            probe.close()

        # the budget: paces in its own schema; the catalog and the spool are not its
        budget = DatabaseBudget("https://api.example/api/v2", BudgetDatabase(dsn("invoicing_budget"),
                                dsn("invoicing_budget"), passwords["invoicing_budget"]), egress="nat-a")
        try:
            with budget.hold() as state:
                state["probe"] = 1
        finally:
            budget.close()
        with closing(sql_as("invoicing_budget")) as budget_sql:
            budget_on_others = [_refused(budget_sql, sql) for sql in (
                "delete from invoicing_lake.ducklake_snapshot", "delete from invoicing_hints.hints")]
        with closing(sql_as("invoicing_receiver")) as receiver_sql:
            receiver_on_budget = _refused(receiver_sql, "select * from invoicing_budget.invoicing_rate_budget")

        # the readers: the published lake and the spool, read; nothing written
        reader = WarehouseTarget.ducklake(dsn("invoicing_reader"), tmp_path / "lake-data",
                                          password=passwords["invoicing_reader"])
        with connect_reader(reader) as lake:
            read = lake.execute("select count(*), sum(amount) from marts.totals").fetchone()
        with closing(sql_as("invoicing_reader")) as reader_sql:
            pending_seen = _count(reader_sql, "select count(*) from invoicing_hints.hints")
            reader_writes = [_refused(reader_sql, sql) for sql in (
                "delete from invoicing_lake.ducklake_snapshot", "delete from invoicing_hints.hints")]

        # the writer's applying run: the receiver's hint, read and acknowledged
        with HintSpool(PostgresSpool(parse_catalog_dsn(dsn("invoicing"), cluster.password))) as spool:
            pending = spool.pending()
            acknowledged = spool.acknowledge(pending)
        with closing(sql_as("invoicing")) as owner:
            snapshots_after = _count(owner, "select count(*) from invoicing_lake.ducklake_snapshot")
            stray = _count(owner, "select count(*) from pg_tables where tablename = 'written_by_receiver'")

    assert spooled == SPOOLED
    assert receiver_on_catalog == ["refused", "refused", "refused"]  # 4f148c4: one role, the delete ran
    assert budget_on_others == ["refused", "refused"] and receiver_on_budget == "refused"
    assert read == (10, 90) and pending_seen == 1 and reader_writes == ["refused", "refused"]
    assert [(h.portal_id, h.record_id) for h in pending] == [("acme", "0123456789abcdef01234567")]
    assert acknowledged == 1
    assert (snapshots_after, stray) == (snapshots_before, 0)


def _count(connection, sql: str) -> int:
    cursor = connection.cursor()
    cursor.execute(sql)
    return int(cursor.fetchone()[0])


# ---- M4: a dashboard limited to some portals shows no other portal's rows ------------------------------------------


@pytest.fixture(scope="module")
def two_portals(tmp_path_factory) -> tuple[Path, date]:
    """A warehouse of two portals, acme and globex (tests/support/two_portals.py); (its path, its report date)."""
    warehouse = tmp_path_factory.mktemp("two-portals") / "warehouse.duckdb"
    return warehouse, build_two_portals(warehouse)


def _visible_portals(connection) -> tuple[set[str], list[str]]:
    """(every portal_id of every table the connection sees, the tables it sees without a portal_id column)."""
    tables = connection.execute("select table_schema, table_name from information_schema.tables "
                                "where table_catalog = current_database()").fetchall()
    seen: set[str] = set()
    without = []
    for schema, table in tables:
        columns = [row[0] for row in connection.execute(
            "select column_name from information_schema.columns where table_catalog = current_database() "
            "and table_schema = ? and table_name = ?", [schema, table]).fetchall()]
        if "portal_id" not in columns:
            without.append(f"{schema}.{table}")
            continue
        query = f'select distinct portal_id from "{schema}"."{table}"'
        seen |= {row[0] for row in connection.execute(query).fetchall()}
    return seen, without


def test_m4_a_dashboard_limited_to_one_portal_shows_no_other_portals_rows(two_portals, monkeypatch):
    """Review: the dashboard shows every portal to whoever reaches it. With INVOICING_DASHBOARD_PORTALS=acme,
    every connection the pages query (the published marts, and the marts built as of another date) sees acme's
    rows only, and no table without a portal; the figures of acme equal the readers' copy read with DuckDB here;
    globex's are empty. Unset, both portals are shown (nothing changed for a firm's own dashboard)."""
    import duckdb

    from invoicing_warehouse.dashboard import cache, queries
    from invoicing_warehouse.dashboard.source import Source, Unavailable
    from invoicing_warehouse.dashboard.trends import month_end_figures

    warehouse, as_of = two_portals
    with duckdb.connect(str(warehouse.with_name("warehouse.read.duckdb")), read_only=True) as copy:
        truth = dict(copy.execute("select portal_id, open_receivables from marts.dso").fetchall())
        raw_truth = copy.execute("select count(*) from invoicing_raw.customers where portal_id = 'acme'").fetchone()[0]
    assert sorted(truth) == ["acme", "globex"] and truth["globex"] > 0

    monkeypatch.delenv("INVOICING_DASHBOARD_PORTALS", raising=False)
    with cache.marts(cache.View(str(warehouse), "unscoped", None, "acme")) as connection:
        assert queries.portals(connection) == ["acme", "globex"]

    monkeypatch.setenv("INVOICING_DASHBOARD_PORTALS", "acme")
    key = Source(warehouse).snapshot_key()
    earlier = as_of - timedelta(days=10)
    for report_date in (None, earlier):  # the published marts, then the marts built as of another date
        with cache.marts(cache.View(str(warehouse), key, report_date, "acme")) as connection:
            seen, without = _visible_portals(connection)
            assert (seen, without) == ({"acme"}, []), report_date
            assert queries.portals(connection) == ["acme"]
            globex = queries.receivables(connection, "globex")
            assert (globex.total_open, globex.overdue_customers.total, globex.customers.total) == (0, 0, 0)
            if report_date is None:
                assert queries.receivables(connection, "acme").total_open == truth["acme"]
                raw = connection.execute("select count(*) from invoicing_raw.customers").fetchone()[0]
                assert raw == raw_truth
    trends = month_end_figures(Source(warehouse), as_of)
    assert set(trends["portal_id"]) == {"acme"} and len(trends) > 0

    monkeypatch.setenv("INVOICING_DASHBOARD_PORTALS", "acme;drop table x")
    with pytest.raises(Unavailable, match="INVOICING_DASHBOARD_PORTALS"):
        Source(warehouse).connect()
