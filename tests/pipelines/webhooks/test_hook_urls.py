"""The receiver's token stays out of every text: masked URLs, a raw `webhooks` row, the token's checks."""

from __future__ import annotations

from pipelines.invoicing.hook_urls import hmac_secret_problem, masked, token_problem
from pipelines.invoicing.read.rows import to_row
from pipelines.invoicing.settings import ENDPOINTS

TOKEN = "Zt0k3n-AbCdEfGhIjKlMn_oPqRsTuVwXyZ0123"


def test_masked_hides_the_token_and_keeps_the_rest():
    assert masked(f"http://127.0.0.1:8787/hooks/{TOKEN}") == "http://127.0.0.1:8787/hooks/***"
    assert masked(f"https://h.example/base/hooks/{TOKEN}/acme?x=1") == "https://h.example/base/hooks/***/acme?x=1"
    assert masked("/hooks/") == "/hooks/***"
    assert masked("http://127.0.0.1/other/path") == "http://127.0.0.1/other/path"


def test_a_subscription_read_into_the_warehouse_keeps_no_token():
    endpoint = ENDPOINTS["webhooks"]
    record = {"id": "w1", "url": f"http://127.0.0.1:8787/hooks/{TOKEN}/acme", "events": ["invoice.paid"],
              "lastUpdate": "2026-11-24T10:00:00Z"}
    row = to_row(endpoint, record)
    assert row["url"] == "http://127.0.0.1:8787/hooks/***/acme"
    assert TOKEN not in repr(row)


def test_token_problems_name_what_to_do_and_never_the_token():
    assert token_problem(TOKEN) is None
    for bad in (None, "", "short", "with space inside it long", "a/b/c/d/e/f/g/h/i/j"):
        problem = token_problem(bad)
        assert problem is not None and "secrets.token_urlsafe" in problem
        assert not bad or bad not in problem


def test_short_or_repetitive_tokens_and_hmac_secrets_are_refused_at_configuration_time():
    """L9: what `webhooks serve` refuses before it listens (exit 2), naming the fix, never the value."""
    for bad in ("Zt0k3n-AbCdEfGhIjKlMn", "ab" * 20, "a" * 40):  # 21 characters; 2 and 1 distinct
        problem = token_problem(bad)
        assert problem is not None and "secrets.token_urlsafe" in problem and bad not in problem
    assert hmac_secret_problem(None) is None and hmac_secret_problem(TOKEN) is None
    for bad in ("s3cret", "x" * 64):
        problem = hmac_secret_problem(bad)
        assert problem is not None and "INVOICING_WEBHOOK_HMAC_SECRET" in problem and bad not in problem


def test_each_portal_has_its_own_door_the_documented_openssl_command_computes():
    """M1 (review 2): the door of a portal is HMAC-SHA256(token, portal name) in hex. The expected values were
    printed by `printf %s acme | openssl dgst -sha256 -hmac "$TOKEN"` (docs/webhook-receiver.md), not by this code."""
    from pipelines.invoicing.hook_urls import hook_url, is_portal_door, portal_door

    acme = "16ca5813bea2fff0b82d0ff9d6e03d33f8733d9ec8bfedf9c5df52b63ba94448"
    default = "fcdc8cba8eba988ec694a3f20f612a4d0218a01e9030d4ceea61022c623b1bcf"
    assert portal_door(TOKEN, "acme") == acme and portal_door(TOKEN, None) == default
    assert hook_url("https://hooks.example.com/", TOKEN, "acme") == f"https://hooks.example.com/hooks/{acme}/acme"
    assert hook_url("https://hooks.example.com", TOKEN, None) == f"https://hooks.example.com/hooks/{default}"
    assert is_portal_door(acme, TOKEN, "acme")
    assert not is_portal_door(acme, TOKEN, "globex") and not is_portal_door(TOKEN, TOKEN, "acme")
    assert masked(hook_url("https://h.example", TOKEN, "acme")) == "https://h.example/hooks/***/acme"
