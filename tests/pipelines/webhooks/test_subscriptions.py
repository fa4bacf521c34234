"""`invoicing-warehouse webhooks register | list | remove` against the sandbox over real HTTP: idempotent,
the subscription's url and events as the sandbox records them, the write-scope credential kept apart from
the sync's (which still asks for `read` only), errors that name the setting and never print a secret."""

from __future__ import annotations

import os

import pytest

from harness.receiver_process import wait_until
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.cli import main
from pipelines.invoicing.load.sync import make_pipeline, run_sync
from pipelines.invoicing.webhooks.hint_events import EVENTS
from tests.invoicing_sandbox.conftest import SMALL_SETTINGS, client_for, created
from tests.support.webhook_receiver import serving_receiver

TOKEN = "subscription-test-token-0123456789"
# each test's `sandbox` (the root conftest's): the small one, empty (its subscriptions are what was registered)
pytestmark = pytest.mark.sandbox(**SMALL_SETTINGS, generate=False)


@pytest.fixture
def env(monkeypatch, tmp_path):
    """A clean environment in an empty directory (no portals file, no .dlt of the developer)."""
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith(("SOURCES__INVOICING__", "INVOICING_WEBHOOK_")):
            monkeypatch.delenv(name)
    return monkeypatch


def _configure(env, server: SandboxServer, prefix: str = "SOURCES__INVOICING") -> None:
    env.setenv("SOURCES__INVOICING__BASE_URL", server.base_url)
    # the sync's own client is not the webhook client: a wrong one proves it is not used here
    env.setenv("SOURCES__INVOICING__CLIENT_ID", "the-sync-client")
    env.setenv("SOURCES__INVOICING__CLIENT_SECRET", "the-sync-secret")
    env.setenv(f"{prefix}__WEBHOOK_CLIENT_ID", server.client_id)
    env.setenv(f"{prefix}__WEBHOOK_CLIENT_SECRET", server.client_secret)


def _cli(capsys, *args: str) -> tuple[int, str]:
    code = main(["webhooks", *args])
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert TOKEN not in output
    return code, output


def _recorded(server: SandboxServer) -> list[tuple[str, list[str], bool]]:
    return [(s["url"], s["events"], s["enabled"]) for s in server.portal.snapshot("webhooks")]


def test_register_list_remove_are_idempotent(sandbox, env, capsys):
    _configure(env, sandbox)
    url = f"http://127.0.0.1:8787/hooks/{TOKEN}"
    code, output = _cli(capsys, "register", "--url", url)
    assert code == 0 and output.startswith("created: ") and "/hooks/***" in output
    code, output = _cli(capsys, "register", "--url", url)
    assert code == 0 and output.startswith("exists: ")
    assert _recorded(sandbox) == [(url, sorted(EVENTS), True)]

    code, output = _cli(capsys, "list")
    assert code == 0 and "/hooks/***" in output and "1 subscription(s) of portal default" in output

    # other events for the same URL: one subscription afterwards, with those events
    code, output = _cli(capsys, "register", "--url", url, "--events", "invoice.paid", "document.updated")
    assert code == 0 and "created: " in output and "removed older subscription" in output
    assert _recorded(sandbox) == [(url, ["document.updated", "invoice.paid"], True)]

    other = f"http://127.0.0.1:8787/hooks/{TOKEN}/acme"
    assert _cli(capsys, "register", "--url", other)[0] == 0
    (other_id,) = [s["id"] for s in sandbox.portal.snapshot("webhooks") if s["url"] == other]
    code, output = _cli(capsys, "remove", "--url", url)
    assert code == 0 and output.startswith("removed: ")
    assert [u for u, _, _ in _recorded(sandbox)] == [other]
    code, output = _cli(capsys, "remove", "--url", url)
    assert code == 0 and "nothing to remove" in output
    assert _cli(capsys, "remove", "--id", other_id)[0] == 0
    code, output = _cli(capsys, "remove", "--id", other_id)
    assert code == 0 and "nothing to remove" in output
    assert _recorded(sandbox) == []


def test_a_disabled_subscription_is_replaced(sandbox, env, capsys):
    _configure(env, sandbox)
    url = f"http://127.0.0.1:8787/hooks/{TOKEN}"
    assert _cli(capsys, "register", "--url", url)[0] == 0
    (subscription,) = sandbox.portal.snapshot("webhooks")
    for _ in range(100):  # the service disables a subscription after 100 failed deliveries
        sandbox.portal.webhook_delivery_result(subscription["id"], False)
    assert _recorded(sandbox) == [(url, sorted(EVENTS), False)]
    code, output = _cli(capsys, "register", "--url", url)
    assert code == 0 and "created: " in output
    assert _recorded(sandbox) == [(url, sorted(EVENTS), True)]


def test_unknown_events_and_bad_urls_are_refused_before_any_request(sandbox, env, capsys):
    _configure(env, sandbox)
    code, output = _cli(capsys, "register", "--url", f"http://127.0.0.1:1/hooks/{TOKEN}", "--events",
                        "invoice.exploded")
    assert code == 2 and "invoice.exploded" in output
    code, output = _cli(capsys, "register", "--url", f"ftp://127.0.0.1/hooks/{TOKEN}")
    assert code == 2 and "/hooks/***" in output
    assert sandbox.stats["requests"] == 0


def test_missing_webhook_credentials_name_the_setting(sandbox, env, capsys):
    _configure(env, sandbox)
    env.delenv("SOURCES__INVOICING__WEBHOOK_CLIENT_SECRET")
    code, output = _cli(capsys, "list")
    assert code == 1 and "SOURCES__INVOICING__WEBHOOK_CLIENT_SECRET" in output and "'write' scope" in output
    assert sandbox.client_secret not in output and sandbox.stats["requests"] == 0


@pytest.mark.sandbox(**SMALL_SETTINGS, allowed_scopes=("read",), real_date=True)  # seeded: the sync reads items
def test_a_read_only_client_is_refused_with_the_scope_to_ask_for_while_the_sync_needs_only_read(
        sandbox, env, capsys, tmp_path):
    server = sandbox
    _configure(env, server)
    code, output = _cli(capsys, "register", "--url", f"http://127.0.0.1:8787/hooks/{TOKEN}")
    assert code == 1 and "'write' scope" in output and "SOURCES__INVOICING__WEBHOOK_CLIENT_ID" in output
    assert server.client_secret not in output and _recorded(server) == []
    # the same client, allowed `read` only, syncs: the sync's token request asks for `read` and nothing more
    report = run_sync(make_pipeline(str(tmp_path / "warehouse.duckdb")), base_url=server.base_url,
                      client_id=server.client_id, client_secret=server.client_secret, rate_limit_per_s=0,
                      resources=["items"])
    assert report.rows.get("items", 0) == len(server.portal.snapshot("items")) > 0


def test_a_portal_of_the_portals_file_uses_its_own_webhook_client(sandbox, env, capsys, tmp_path):
    (tmp_path / "portals.toml").write_text(f'[portals.acme]\nbase_url = "{sandbox.base_url}"\n')
    code, output = _cli(capsys, "list", "--portal", "acme")
    assert code == 1 and "SOURCES__INVOICING__PORTALS__ACME__WEBHOOK_CLIENT_ID" in output
    _configure(env, sandbox, prefix="SOURCES__INVOICING__PORTALS__ACME")
    url = f"http://127.0.0.1:8787/hooks/{TOKEN}/acme"
    code, output = _cli(capsys, "register", "--portal", "acme", "--url", url)
    assert code == 0 and "created: " in output
    assert _recorded(sandbox) == [(url, sorted(EVENTS), True)]


def test_a_registered_receiver_gets_the_sandboxs_writes_as_hints(sandbox, env, capsys, tmp_path):
    _configure(env, sandbox)
    with serving_receiver(tmp_path) as served:
        code, output = _cli(capsys, "register", "--url", served.url())
        assert code == 0 and served.token not in output
        with client_for(sandbox) as api:
            customer = created(api.post("/customers", json={"name": "Client sonné"}), 201)
            item = created(api.post("/items", json={"name": "Sonnette", "type": "product", "price": 10,
                                                    "vat": 20}), 201)
        expected = {("customers", customer["id"], "customer.created"), ("items", item["id"], "product.created")}
        assert wait_until(lambda: {(h.resource, h.record_id, h.event) for h in served.pending()} == expected)
