"""Attack rows of the webhook path, one per finding of the security review (H1, H2, H3, L1, L2, L3, M6).

Each row is a probe sent to the receiver as served in production (the real app on the real server config,
receiver_server.server_config, on 127.0.0.1), the answer expected, and "nothing lost": a genuine delivery sent
in the same batch (a real change of a sandbox record, announced through the same receiver) is applied by the
same applying run, and after that run the warehouse's customers and items equal the sandbox's own records
(harness.warehouse_truth.mismatches: the sandbox is the truth, not the code under test). Expected answers come
from the review and the receiver's documented table: 422 for an id that is no record id, 431 for oversized
headers (RFC 6585), 400 for deeply nested JSON, 404 for any method but POST, a dropped connection for a half-sent
request.

One sandbox, one regular build and one applying run serve every row (module fixture `battle`): a row's
probe and its genuine delivery go into the one batch that run applies, so every row also shows that no probe
held the others' hints back. M6 runs `webhooks serve`'s own settings (`receiver_settings`, what the command starts from)
with the environment of a DuckLake (its catalog the session's real PostgreSQL), and checks that the hint lands in the
spool the documentation names for a lake (schema `invoicing_hints` of the catalog database), not beside `--warehouse`.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from harness.common import quiet
from harness.postgres_cluster import PostgresCluster
from harness.regular_build import regular_build
from harness.warehouse_truth import mismatches
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.cli import build_parser
from invoicing_warehouse.cli.webhooks_command import receiver_settings
from invoicing_warehouse.engine.readers import connect_reader
from invoicing_warehouse.engine.target import WarehouseTarget, parse_catalog_dsn
from invoicing_warehouse.runs.hints import HintRun, apply_pending
from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.hook_urls import hook_url
from pipelines.invoicing.portals import Portal
from pipelines.invoicing.webhooks.hint_spool import WHOLE_RESOURCE, HintSpool
from pipelines.invoicing.webhooks.receiver import Receiver
from pipelines.invoicing.webhooks.receiver_server import ServerLimits
from pipelines.invoicing.webhooks.spool_stores import PostgresSpool
from tests.support.fixture_factory import empty_warehouse
from tests.support.webhook_receiver import ServedReceiver, envelope, serving_app, serving_receiver

READ_TIMEOUT_S = 1.0  # the receiver's read timeout in this module (10 s in production)
FLOOD_BOUND = 30  # pending hints per portal in this module (50,000 in production)
FLOOD = 70  # distinct forged item ids sent by the flood row
HALF_SENT_WAIT_S = READ_TIMEOUT_S + 4.0  # bounded: the connection must be dropped well before this


@dataclass
class Battle:
    """What the module's batch did: every probe's observation, every row's genuine record, the applying run."""

    sandbox: SandboxServer
    warehouse: Path
    served: ServedReceiver
    postgres: PostgresCluster
    observed: dict[str, object] = field(default_factory=dict)
    genuine: dict[str, tuple[str, str]] = field(default_factory=dict)  # row -> (resource, record id)
    pending_before_apply: list = field(default_factory=list)
    run: HintRun | None = None


def _post(battle: Battle, body: object, portal: str | None = None) -> httpx.Response:
    with httpx.Client(timeout=30.0, trust_env=False) as http:
        return http.post(battle.served.url(portal), json=body)


def _genuine(battle: Battle, row: str, resource: str = "customers") -> None:
    """A real change in the sandbox that no other row makes (a new customer, or an item's new description),
    announced through the receiver as the service would (must be answered 200)."""
    portal, sandbox = battle.sandbox.portal, battle.sandbox
    sandbox.clock.advance(timedelta(seconds=1))
    if resource == "customers":
        record = portal.create("customers", {"name": f"Genuine {row}",
                                             "phone": f"+33 1 00 00 {len(battle.genuine):02d}"})
        event = "customer.created"
    else:
        used = {record_id for _, record_id in battle.genuine.values()}
        record = next(r for r in portal.snapshot(resource) if r["id"] not in used)
        record = portal.update(resource, record["id"], {"description": f"changed by row {row}"})
        event = "product.updated"
    body = envelope(f"genuine-{row}", event, record["id"])
    body["portalId"] = portal.get_portal()["id"]
    answer = _post(battle, body)
    assert answer.status_code == 200, answer.text
    battle.genuine[row] = (resource, record["id"])


def _raw(battle: Battle, request: bytes, wait_s: float = 10.0) -> tuple[bytes, float]:
    """Sends `request` on a socket of its own; returns (what the server answered before closing, seconds it
    took to close). Bounded by `wait_s`."""
    started = time.monotonic()
    host, port = battle.served.base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait_s) as connection:
        try:
            connection.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused while sending: what was answered is still readable below
        answer = b""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                chunk = connection.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            answer += chunk
    return answer, time.monotonic() - started


def _status(answer: bytes) -> int | None:
    parts = answer.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[0].startswith(b"HTTP/") else None


# --- the probes: each returns what the attacker saw -----------------------------------------------------------

def probe_forged_query_id(battle: Battle) -> object:
    return _post(battle, envelope("forged-query", "customer.updated", "?limit=1")).status_code


def probe_forged_traversal_id(battle: Battle) -> object:
    return _post(battle, envelope("forged-traversal", "customer.updated", "../../me")).status_code


def probe_big_headers(battle: Battle) -> object:
    """Headers over the cap, sent at once (one read: h11's own cap never sees them incomplete) and as 1 MiB."""
    path = battle.served.path().encode()
    head = b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: "
    one_read, _ = _raw(battle, head + b"a" * 20_000 + b"\r\nContent-Length: 2\r\n\r\n{}")
    huge, _ = _raw(battle, head + b"a" * (1024 * 1024) + b"\r\n\r\n")
    return _status(one_read), _status(huge)


def probe_half_sent_request(battle: Battle) -> object:
    path = battle.served.path().encode()
    half = b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 400\r\n\r\n{\"id\": \"half"
    answer, seconds = _raw(battle, half, wait_s=HALF_SENT_WAIT_S)
    return ("dropped" if answer == b"" and seconds < HALF_SENT_WAIT_S - 1 else f"{answer[:60]!r} {seconds:.1f}s")


def probe_long_ids(battle: Battle) -> object:
    return (_post(battle, envelope("long-65", "customer.updated", "a" * 65)).status_code,
            _post(battle, envelope("long-250k", "customer.updated", "b" * 250_000)).status_code)


def probe_flood(battle: Battle) -> object:
    portal_id = battle.sandbox.portal.get_portal()["id"]  # a flood from the token holder, in the right portal
    with httpx.Client(timeout=30.0, trust_env=False) as http:
        answers = {http.post(battle.served.url(), json={**envelope(f"flood-{n}", "product.updated",
                                                                   secrets.token_hex(12)), "portalId": portal_id}
                             ).status_code for n in range(FLOOD)}
    with HintSpool(battle.served.spool_path) as spool:
        battle.pending_before_apply = spool.pending()
    return answers


def probe_nested_json(battle: Battle) -> object:
    deep = "[" * 100_000 + "]" * 100_000
    body = ('{"id": "nested", "portalId": "p", "event": {"eventId": "customer.updated", "data": ' + deep + "}}")
    with httpx.Client(timeout=30.0, trust_env=False) as http:
        return http.post(battle.served.url(), content=body.encode(),
                         headers={"content-type": "application/json"}).status_code


def probe_other_methods(battle: Battle) -> object:
    with httpx.Client(timeout=30.0, trust_env=False) as http:
        unknown = http.post(f"{battle.served.base}/nothing")
        answers = {(method, http.request(method, battle.served.url()).status_code) for method in
                   ("GET", "PUT", "DELETE", "PATCH")}
        same_body = all(http.request(method, battle.served.url()).content == unknown.content
                        for method in ("GET", "PUT"))
    return answers | {("POST /nothing", unknown.status_code), ("same body as /nothing", same_body)}


def probe_wrong_portal_id(battle: Battle) -> object:
    record = battle.sandbox.portal.snapshot("customers")[0]["id"]  # a customer of the seed: no hint of it pending
    body = envelope("other-portal", "customer.updated", record)
    body["portalId"] = "f" * 24  # not the sandbox portal's id (its id is in api-facts' 24-hex form)
    refused = _post(battle, body).status_code
    with HintSpool(battle.served.spool_path) as spool:
        spooled = any(h.record_id == record for h in spool.pending())
    body["portalId"] = battle.sandbox.portal.get_portal()["id"]  # the same delivery id, now right: not a replay
    again = _post(battle, body).json()["status"]
    return refused, spooled, again


def probe_ducklake_spool(battle: Battle) -> object:
    """`webhooks serve`'s own settings (the function serve starts from) on a DuckLake, then a receiver on them."""
    lake = battle.warehouse.parent / "lake"
    token = secrets.token_urlsafe(24)
    catalog = battle.postgres.create_database("attacks_m6_lake")
    env = {"INVOICING_WAREHOUSE_ENGINE": "ducklake", "INVOICING_DUCKLAKE_CATALOG": catalog,
           "INVOICING_DUCKLAKE_DATA_PATH": str(lake / "data"), "INVOICING_DUCKLAKE_PASSWORD": battle.postgres.password,
           "INVOICING_WEBHOOK_TOKEN": token}
    # --warehouse names a file the lake must ignore: the hint has to go where the applying runs read
    argv = ["webhooks", "serve", "--warehouse", str(battle.warehouse.parent / "ignored.duckdb")]
    parser, _ = build_parser(argv)
    settings = receiver_settings(parser.parse_args(argv), env)
    receiver = Receiver(settings)
    receiver.open()
    try:
        with serving_app(receiver.app()) as port, httpx.Client(timeout=30.0, trust_env=False) as http:
            status = http.post(hook_url(f"http://127.0.0.1:{port}", token, None),
                               json=envelope("lake-1", "customer.updated", "0123456789abcdef01234567")).status_code
    finally:
        receiver.close()
    # docs/webhook-receiver.md: in the lake's catalog database, where every host's applying runs read
    documented = PostgresSpool(parse_catalog_dsn(catalog, battle.postgres.password))
    with HintSpool(documented) as spool:
        in_lake_spool = [h.record_id for h in spool.pending()]
    return status, in_lake_spool, (battle.warehouse.parent / "ignored.hints.sqlite").exists()


@dataclass(frozen=True)
class Row:
    """One finding: its probe, the answer expected, and the genuine record's resource of its batch."""

    finding: str
    probe: Callable[[Battle], object]
    expected: object
    resource: str = "customers"


ROWS = [
    Row("H1 forged id ?limit=1", probe_forged_query_id, 422),
    Row("H1 forged id ../../me", probe_forged_traversal_id, 422),
    Row("H2 headers over 16 KiB", probe_big_headers, (431, 431)),
    Row("H2 half-sent request", probe_half_sent_request, "dropped"),
    Row("H3 long ids", probe_long_ids, (422, 422)),
    Row("L1 nested JSON", probe_nested_json, 400),
    Row("L2 other methods", probe_other_methods,
        {("GET", 404), ("PUT", 404), ("DELETE", 404), ("PATCH", 404), ("POST /nothing", 404),
         ("same body as /nothing", True)}),
    Row("L3 portalId of another portal", probe_wrong_portal_id, (422, False, "spooled")),
    Row("M6 serve on a DuckLake", probe_ducklake_spool, (200, ["0123456789abcdef01234567"], False)),
    Row("H3 flood of distinct ids", probe_flood, {200}, resource="items"),  # last: it fills the bound
]


@pytest.fixture(scope="module")
def battle(tmp_path_factory, postgres_cluster, module_sandbox_factory) -> Iterator[Battle]:
    """A sandbox, its regular build, a receiver beside it; a warm-up run (the portal's API id learnt from the
    records), then every row's genuine delivery and probe in one batch, and the one run applying it."""
    folder = tmp_path_factory.mktemp("attacks")
    saved = {name: os.environ.get(name) for name in ("INVOICING_RATE_BUDGET_DIR", "DLT_DATA_DIR")}
    os.environ["INVOICING_RATE_BUDGET_DIR"] = str(folder / "rate-budget")
    os.environ["DLT_DATA_DIR"] = str(folder / "dlt")
    try:
        sandbox = module_sandbox_factory(seed=16, scale=40, rate_limit_per_s=0, latency_ms=0, quiet=True,
                                         real_date=True)
        warehouse = empty_warehouse(folder)
        regular_build(sandbox, warehouse)
        limits = ServerLimits(request_read_timeout_s=READ_TIMEOUT_S)
        with serving_receiver(folder, limits=limits, max_pending_per_portal=FLOOD_BOUND) as served:
            battle = Battle(sandbox, warehouse, served, postgres_cluster)
            _genuine(battle, "warm-up", "items")  # items: one model downstream, the cheapest run to learn from
            quiet(sandbox)
            warm = _apply(battle)
            assert warm.acknowledged == 1 and warm.load is not None and warm.load.api_portal_id
            for row in ROWS:
                _genuine(battle, row.finding, row.resource)
                battle.observed[row.finding] = row.probe(battle)
            quiet(sandbox)
            battle.run = _apply(battle)
            yield battle
    finally:  # the sandbox is stopped by the factory, after this
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _apply(battle: Battle) -> HintRun:
    sandbox = battle.sandbox
    return apply_pending(WarehouseTarget.duckdb_file(battle.warehouse), Portal("default"), rate_limit_per_s=0,
                         settings=ApiSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret))


@pytest.mark.parametrize("row", ROWS, ids=[row.finding for row in ROWS])
def test_attack_row(battle, row):
    assert battle.observed[row.finding] == row.expected
    # nothing lost: the row's genuine change is in the readers' copy as the sandbox serves it ...
    resource, record_id = battle.genuine[row.finding]
    column = "phone" if resource == "customers" else "description"
    served = next(r for r in battle.sandbox.portal.snapshot(resource) if r["id"] == record_id)
    with connect_reader(WarehouseTarget.duckdb_file(battle.warehouse)) as reader:
        loaded = reader.execute(f"select {column} from invoicing_raw.{resource} where id = ?", [record_id]).fetchone()
    assert loaded == (served[column],)
    # ... the run applied the whole batch and left nothing behind, and the tables equal the sandbox's records
    with HintSpool(battle.served.spool_path) as spool:
        assert spool.pending(now=time.time() + 10_000) == [] and spool.dead_letters() == []
    assert mismatches(battle.warehouse, battle.sandbox.portal, tables=("customers", "items")) == []


def test_the_flood_collapsed_into_one_reread_of_its_resource(battle):
    """H3: the spool stopped at its bound (plus one re-read hint per resource), and the run answered the
    re-read with an incremental read of items (not one GET per forged id)."""
    pending = battle.pending_before_apply
    assert len(pending) <= FLOOD_BOUND + 1
    assert [(h.resource, h.record_id) for h in pending if h.whole_resource] == [("items", WHOLE_RESOURCE)]
    assert battle.run is not None and battle.run.reread_resources == ["items"]
    assert battle.run.load is not None and battle.run.load.fetched < FLOOD  # the customers' hints only
    assert not any(len(h.record_id) > 64 for h in pending)


class RefusingTransport(httpx.BaseTransport):
    """The sandbox over real HTTP, except that GETs of one record are answered 422 (a record the service
    refuses alone); every request's raw path is kept."""

    def __init__(self, refused_id: str) -> None:
        self.inner = httpx.HTTPTransport()
        self.refused_id = refused_id
        self.paths: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode()
        self.paths.append(path)
        if path.endswith(f"/items/{self.refused_id}"):
            return httpx.Response(422, json={"error": "unprocessable", "code": 422}, request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def test_a_hint_the_api_refuses_alone_is_retried_then_kept_dead_and_never_blocks_its_batch(battle, monkeypatch):
    """H1 on the applying side: a record the API refuses alone (422) and an id an older receiver spooled
    (`../../me`: no record id, asked nothing) are set aside; the genuine hint of the same batch is applied.
    The refused one is tried 3 times in all (dead_letters.MAX_ATTEMPTS, the retry delay shortened here), then
    kept dead; the forged one dies at once without a request."""
    from pipelines.invoicing.http.client import InvoicingClient
    from pipelines.invoicing.http.client_settings import ClientSettings
    from pipelines.invoicing.webhooks import dead_letters
    from pipelines.invoicing.webhooks.hint_spool import Hint

    sandbox, portal = battle.sandbox, battle.sandbox.portal
    used = {record_id for _, record_id in battle.genuine.values()}
    refused, genuine = [item["id"] for item in portal.snapshot("items") if item["id"] not in used][:2]
    sandbox.clock.advance(timedelta(seconds=1))
    portal.update("items", genuine, {"description": "changed beside a refused one"})
    with HintSpool(battle.served.spool_path) as spool:
        for n, record_id in enumerate((refused, "../../me", genuine)):
            spool.append(f"aside-{n}", Hint("default", "items", record_id, "product.updated"))
    quiet(sandbox)
    monkeypatch.setattr(dead_letters, "RETRY_DELAY_S", 0.0)
    transport = RefusingTransport(refused)
    with InvoicingClient(ClientSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret, rate_limit_per_s=0),
                         transport=transport) as client:
        runs = [apply_pending(WarehouseTarget.duckdb_file(battle.warehouse), Portal("default"), client=client,
                              settings=ApiSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret))
                for _ in range(4)]
    assert [(run.hints, run.set_aside, run.dead) for run in runs] == [(3, 2, 1), (1, 1, 0), (1, 1, 1), (0, 0, 0)]
    assert transport.paths.count(f"/api/v2/items/{refused}") == 3
    assert not any(path.endswith("/me") or "%2F" in path for path in transport.paths)  # never asked
    with HintSpool(battle.served.spool_path) as spool:
        letters = {letter.record_id: letter for letter in spool.dead_letters()}
        assert spool.pending(now=time.time() + 10_000) == []
    assert set(letters) == {refused, "../../me"}
    assert (letters[refused].attempts, letters[refused].last_error) == (3, "GET /items/{id}: HTTP 422")
    assert letters["../../me"].attempts == 1
    with connect_reader(WarehouseTarget.duckdb_file(battle.warehouse)) as reader:
        assert reader.execute("select description from invoicing_raw.items where id = ?",
                              [genuine]).fetchone() == ("changed beside a refused one",)
    assert mismatches(battle.warehouse, portal, tables=("items",)) == []
