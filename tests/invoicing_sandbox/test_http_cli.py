"""`invoicing-warehouse sandbox` as a user runs it: a subprocess that prints its URL and stops cleanly."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from invoicing_sandbox.command import add_arguments, config_from

START_TIMEOUT_S = 30
# the project's console script, installed beside the interpreter by `scripts/bootstrap`
CONSOLE_SCRIPT = Path(sys.executable).with_name("invoicing-warehouse")


def start_cli(*options: str, until: str = "openapi") -> tuple[subprocess.Popen, dict[str, str]]:
    """Starts the subcommand and reads its `key: value` lines up to the key `until` (bounded)."""
    process = subprocess.Popen(
        [
            str(CONSOLE_SCRIPT),
            "sandbox",
            "--port",
            "0",
            "--scale",
            "30",
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    printed: dict[str, str] = {}
    done = threading.Event()

    def read() -> None:
        for line in process.stdout:
            key, _, value = line.strip().partition(": ")
            printed[key] = value
            if key == until:
                break
        done.set()

    threading.Thread(target=read, daemon=True).start()
    if not done.wait(START_TIMEOUT_S):
        process.kill()
        process.wait(5)
        raise AssertionError(
            f"the sandbox did not print its URL in {START_TIMEOUT_S} s: {process.stderr.read()}"
        )
    return process, printed


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_cli_serves_prints_credentials_and_stops_on_signal(stop_signal):
    process, printed = start_cli(
        "--client-id", "cli-client", "--client-secret", "cli-secret", "--rate-limit", "0"
    )
    try:
        assert printed["base_url"].startswith("http://127.0.0.1:") and printed["base_url"].endswith("/api/v2")
        assert (printed["client_id"], printed["client_secret"]) == ("cli-client", "cli-secret")
        grant = httpx.post(
            printed["base_url"] + "/oauth2/token",
            auth=("cli-client", "cli-secret"),
            data={"grant_type": "client_credentials", "scope": "read"},
            timeout=10,
        )
        assert grant.status_code == 200
        me = httpx.get(
            printed["base_url"] + "/me",
            timeout=10,
            headers={"Authorization": f"Bearer {grant.json()['access_token']}"},
        )
        assert me.status_code == 200 and me.json()["data"]["email"]
        assert "ratelimit-limit" not in me.headers  # --rate-limit 0
        process.send_signal(stop_signal)
        started = time.monotonic()
        assert process.wait(15) == 0
        assert time.monotonic() - started < 10
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
        process.stdout.close()
        process.stderr.close()


def test_every_option_reaches_the_config():
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(
        [
            "--seed",
            "5",
            "--scale",
            "200",
            "--rate-limit",
            "4",
            "--latency-ms",
            "20",
            "--jitter-ms",
            "5",
            "--error-rate",
            "0.1",
            "--drop-rate",
            "0.05",
            "--page-size-policy",
            "reject",
            "--max-page-size",
            "50",
            "--revoke-token-after",
            "30",
            "--clock-offset-s",
            "-120",
            "--token-lifetime-s",
            "600",
            "--mutations-per-s",
            "2",
            "--webhook-time-factor",
            "0.01",
        ]
    )
    config = config_from(args)
    assert (config.seed, config.scale, config.rate_limit_per_s) == (5, 200, 4)
    assert (config.latency_ms, config.latency_jitter_ms, config.error_rate, config.drop_rate) == (
        20,
        5,
        0.1,
        0.05,
    )
    assert (config.page_size_policy, config.max_page_size, config.revoke_token_after_requests) == (
        "reject",
        50,
        30,
    )
    assert (config.clock_offset_s, config.token_lifetime_s, config.mutations_per_s) == (-120, 600, 2)
    assert config.webhook_time_factor == 0.01
