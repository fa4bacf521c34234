"""`invoicing-warehouse webhooks serve` as a real process: it refuses to start without a token, never prints
the token, and every delivery it answered 200 is in the spool after a SIGKILL right after the answers."""

from __future__ import annotations

import os
import subprocess

import httpx
import pytest

from harness.receiver_process import ReceiverExited, ReceiverProcess
from harness.sync_process import COMMAND
from pipelines.invoicing.webhooks.hint_spool import HintSpool, spool_path
from tests.support.webhook_receiver import envelope

TOKEN = "tok-" + "x7Q2" * 8
DELIVERIES = 60


def test_serve_refuses_to_start_without_a_usable_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVOICING_WEBHOOK_")}
    for token, says in ((None, "INVOICING_WEBHOOK_TOKEN is not set"), ("short-1", "at least 32"),
                        ("has/a/slash-in-it-and-long", "URL-safe"), ("ab" * 20, "repeats too few characters")):
        if token is not None:
            env["INVOICING_WEBHOOK_TOKEN"] = token
        done = subprocess.run([*COMMAND, "webhooks", "serve", "--port", "0", "--warehouse",
                               str(tmp_path / "w.duckdb")], env=env, capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 2 and says in done.stderr, done.stderr
        assert token is None or token not in done.stdout + done.stderr
    assert not spool_path(tmp_path / "w.duckdb").exists()


def test_a_receiver_that_exits_before_listening_raises_with_its_output(tmp_path):
    short = "bench-" + "9f3a" * 4  # 22 characters: the token the doorbell bench once passed
    with pytest.raises(ReceiverExited) as exited:
        ReceiverProcess(tmp_path / "warehouse.duckdb", short)
    message = str(exited.value)
    assert "exited with code 2 before listening" in message, message
    assert "use at least 32" in message, message  # the command's own reason, for the person who reads it
    assert short not in message


def test_every_delivery_answered_200_survives_a_sigkill(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    (tmp_path / "portals.toml").write_text('[portals.acme]\nbase_url = "http://127.0.0.1:9/api/v2"\n'
                                           '[portals.default]\nbase_url = "http://127.0.0.1:9/api/v2"\n')
    receiver = ReceiverProcess(warehouse, TOKEN, "--portals", str(tmp_path / "portals.toml"))
    answered = []
    try:
        with httpx.Client(timeout=30.0, trust_env=False) as http:
            for n in range(DELIVERIES):
                portal = "acme" if n % 3 == 0 else None
                answer = http.post(receiver.url(portal), json=envelope(f"d{n:03d}", "document.updated", f"r{n:03d}"))
                assert answer.status_code == 200, answer.text
                answered.append(("acme" if portal else "default", f"r{n:03d}"))
            refused = http.post(receiver.url("globex"), json=envelope("d-refused"))
            assert refused.status_code == 404
            # the command serves on the bounded server (receiver_server.py): headers over 16 KiB are refused
            oversized = http.post(receiver.url(), json=envelope("d-big"), headers={"X-Filler": "a" * 32_768})
            assert oversized.status_code == 431
    finally:
        assert receiver.kill() == -9  # right after the last answer: no graceful shutdown, no flush
    with HintSpool(spool_path(warehouse)) as spool:
        assert sorted((h.portal_id, h.record_id) for h in spool.pending()) == sorted(answered)
    assert TOKEN not in receiver.output
    assert "/hooks/***" in receiver.output
