"""A token kept between processes (pipelines/invoicing/http/token_cache.py): sealed with the client secret, reused by
the next process over real HTTP, and replaced when the service refuses it. Counted on the sandbox's own
`tokens_issued`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import SandboxServer
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.http.token_cache import CachedToken, TokenCache

PROJECT_ROOT = Path(__file__).resolve().parents[3]
BASE_URL = "http://127.0.0.1:8123/api/v2"
SECRET = "client-secret-of-the-portal-0123"
TOKEN = "f" * 40

# One short process of an applying run: a client that keeps its token, one GET, what its token cost.
ONE_PROCESS = """
import json, sys
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
settings = ClientSettings(sys.argv[1], sys.argv[2], sys.argv[3], rate_limit_per_s=0, keep_token=True)
with InvoicingClient(settings) as client:
    me = client.get("/me")
    print(json.dumps({"fetched": client.auth.tokens_fetched, "reused": client.auth.tokens_reused,
                      "portal": bool(me)}))
"""


def test_the_kept_token_is_sealed_with_the_client_secret(tmp_path):
    cache = TokenCache(BASE_URL, "client-a", SECRET, "read", tmp_path)
    cache.store(CachedToken(TOKEN, 604799, time.time() + 604799, date_lead_s=10.0))
    sealed = cache.path.read_bytes()
    assert TOKEN.encode() not in sealed and SECRET.encode() not in sealed and b"client-a" not in sealed
    assert cache.path.stat().st_mode & 0o777 == 0o600
    kept = cache.load()
    assert kept is not None and kept.access_token == TOKEN and 604790 < kept.remaining_s() <= 604799
    assert kept.date_lead_s == 10.0

    assert TokenCache(BASE_URL, "client-a", "a-rotated-secret-0123456789", "read", tmp_path).load() is None
    assert TokenCache(BASE_URL, "client-a", SECRET, "read write", tmp_path).load() is None  # another scope's
    assert TokenCache(BASE_URL.replace("8123", "8124"), "client-a", SECRET, "read", tmp_path).load() is None

    damaged = bytearray(sealed)
    damaged[-1] ^= 1
    cache.path.write_bytes(bytes(damaged))
    assert cache.load() is None

    cache.store(CachedToken(TOKEN, 604799, time.time() - 1))  # spent
    assert cache.load() is None


def _process(sandbox: SandboxServer, budget_dir: Path) -> dict:
    env = {**os.environ, "INVOICING_RATE_BUDGET_DIR": str(budget_dir), "PYTHONPATH": str(PROJECT_ROOT)}
    done = subprocess.run([sys.executable, "-c", ONE_PROCESS, sandbox.base_url, sandbox.client_id,
                           sandbox.client_secret], check=False, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.sandbox(seed=3, scale=5, rate_limit_per_s=0, latency_ms=0)
def test_the_next_process_reuses_the_kept_token_and_replaces_a_refused_one(sandbox, tmp_path):
    first = _process(sandbox, tmp_path)
    second = _process(sandbox, tmp_path)
    assert first == {"fetched": 1, "reused": 0, "portal": True}
    assert second == {"fetched": 0, "reused": 1, "portal": True}
    assert sandbox.stats["tokens_issued"] == 1

    cache = TokenCache(sandbox.base_url, sandbox.client_id, sandbox.client_secret, "read", tmp_path)
    issued = cache.load()
    # a token the service never issued (revoked, or a restarted service's)
    cache.store(CachedToken(TOKEN, 604799, time.time() + 604799))
    refused = _process(sandbox, tmp_path)
    assert refused == {"fetched": 1, "reused": 1, "portal": True}  # the 401 cost one token request
    assert sandbox.stats["tokens_issued"] == 2
    replaced = cache.load()
    assert replaced is not None and issued is not None and replaced.access_token not in (TOKEN, issued.access_token)
    assert _process(sandbox, tmp_path) == {"fetched": 0, "reused": 1, "portal": True}
    assert sandbox.stats["tokens_issued"] == 2


def test_the_next_process_takes_the_date_lead_the_token_was_measured_with(tmp_path):
    """The strict profile's `Date` runs 10 s ahead of its token clock; the fetching client measures that on the
    token's first answer. A later client measures again once the service's clock has moved on (here, 5 s by
    its own clock and none by ours: it reads about 15 s), and keeps the smaller figure: the kept one."""
    config = SandboxConfig(seed=3, scale=5, rate_limit_per_s=0, latency_ms=0, contract=ContractProfile.strict())
    with SandboxServer(config) as sandbox:
        with InvoicingClient(ClientSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret,
                                            rate_limit_per_s=0, keep_token=True)) as first:
            first.get("/me")
        sandbox.clock.advance(timedelta(seconds=5))
        with InvoicingClient(ClientSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret,
                                            rate_limit_per_s=0, keep_token=True)) as second:
            second.get("/me")
    assert 8.0 <= first.auth.date_lead_s <= 10.0 and first.auth.tokens_fetched == 1
    assert second.auth.tokens_reused == 1 and second.auth.tokens_fetched == 0
    assert second.auth.date_lead_s == first.auth.date_lead_s


def test_a_kept_lead_its_next_process_does_not_confirm_is_dropped(tmp_path):
    """A lead kept with the token (here a false 19 s, as one measured on a 503 stamped with its present) is
    never taken alone: the next process's own first successful answer says the clocks agree, so its windows
    end where `Date` says, not 19 s earlier."""
    config = SandboxConfig(seed=3, scale=5, rate_limit_per_s=0, latency_ms=0, token_lifetime_s=600)
    with SandboxServer(config) as sandbox:
        with InvoicingClient(ClientSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret,
                                            rate_limit_per_s=0, keep_token=True)) as first:
            first.get("/me")
        cache = TokenCache(sandbox.base_url, sandbox.client_id, sandbox.client_secret, "read")
        kept = cache.load()
        assert kept is not None and kept.date_lead_s <= 1.0
        cache.store(CachedToken(kept.access_token, kept.lifetime_s, kept.expires_at, date_lead_s=19.0))
        with InvoicingClient(ClientSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret,
                                            rate_limit_per_s=0, keep_token=True)) as second:
            second.get("/me")
    assert second.auth.tokens_reused == 1 and second.auth.tokens_fetched == 0
    assert second.auth.date_lead_s <= 1.0
