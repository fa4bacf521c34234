"""The sync under change (mutations during the read), killed mid-run, and refused: exact or untouched."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.common import free_port
from harness.warehouse_truth import mismatches, table_fingerprint
from pipelines.invoicing.http.token_cache import forget_kept_tokens
from tests.pipelines.sandbox_syncs import quiet, sync

ROOT = Path(__file__).resolve().parents[3]



def cli(warehouse: str, base_url: str, client_id: str, secret: str, *extra: str, wait: bool = True):
    env = {**os.environ, "SOURCES__INVOICING__BASE_URL": base_url, "SOURCES__INVOICING__CLIENT_ID": client_id,
           "SOURCES__INVOICING__CLIENT_SECRET": secret}
    command = [sys.executable, "-m", "invoicing_warehouse.cli", "sync", "--warehouse", warehouse,
               "--rate-limit", "0", *extra]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not wait:
        return process
    out, err = process.communicate(timeout=180)
    return process.returncode, out, err


def mutated_then_settled(start_sandbox, warehouse: str, seed: int, rate: float, contract: str = "default") -> None:
    sandbox = start_sandbox(seed=seed, scale=200, latency_ms=3, contract=contract)
    sandbox.start_mutations(rate)
    try:
        sync(sandbox, warehouse)  # the first sync reads while the application user writes
        sync(sandbox, warehouse)  # and an incremental one too
    finally:
        sandbox.stop_mutations()
    quiet(sandbox)
    sync(sandbox, warehouse)  # one quiet incremental sync
    report = sync(sandbox, warehouse, reconcile=True)
    assert sum(sandbox.mutator.counts.values()) > 20
    assert mismatches(warehouse, sandbox.portal, contract=contract) == []
    return report


@pytest.mark.parametrize("contract", ["default", "strict"])  # invoicing_sandbox/contract.py profiles
# seed 12, a second data variety of the same assertions, runs with `pytest -m soak` (docs/testing.md, "Longer runs")
@pytest.mark.parametrize("seed", [11, pytest.param(12, marks=pytest.mark.soak)])
def test_exact_after_syncing_under_mutations_then_a_quiet_sync_and_a_reconcile(
    start_sandbox, warehouse, seed, contract
):
    mutated_then_settled(start_sandbox, warehouse, seed, rate=25.0, contract=contract)


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(20, 30))
def test_exact_under_heavy_mutations_many_seeds(start_sandbox, warehouse, seed):
    mutated_then_settled(start_sandbox, warehouse, seed, rate=80.0)


def test_a_sync_killed_at_a_random_point_resumes_without_starting_over(start_sandbox, warehouse):
    killed_and_resumed(start_sandbox, warehouse, seed=21)


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(40, 46))
def test_killed_at_many_random_points(start_sandbox, warehouse, seed):
    killed_and_resumed(start_sandbox, warehouse, seed=seed)


def killed_and_resumed(start_sandbox, warehouse: str, seed: int) -> None:
    sandbox = start_sandbox(seed=seed, scale=400, max_page_size=20, latency_ms=20)
    process = cli(warehouse, sandbox.base_url, sandbox.client_id, sandbox.client_secret, "--chunk-pages", "1",
                  wait=False)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)
    reader.start()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        pages = [int(line.split("pages")[1].split()[0]) for line in list(lines)
                 if "documents " in line and "pages" in line]
        if pages and max(pages) >= 4:  # page 4 handed to dlt: chunks 1-3 are committed
            break
        time.sleep(0.05)
    time.sleep(random.Random(seed).uniform(0, 1.5))
    assert process.poll() is None, "the sync ended before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    total_documents = len(sandbox.portal.snapshot("documents"))

    report = sync(sandbox, warehouse)
    assert 0 < report.records_read["documents"] < total_documents, "the resumed run started over"
    assert mismatches(warehouse, sandbox.portal) == []


class Killed(BaseException):
    """Stands for a SIGKILL at one instant: no `except Exception` of dlt or the product catches it."""


def test_a_run_killed_between_the_two_steps_of_dlts_normalize_commit_is_finished_by_the_next(
        start_sandbox, warehouse, monkeypatch):
    # dlt commits a normalized package in two steps ("do not kill this process" between them): the package is
    # renamed into `load/normalized/`, then the extracted one is deleted. A kill between them leaves both; the
    # next run must load the normalized package, not normalize the extracted one again (dlt's rename then
    # finds its directory taken: "Directory not empty", and every later run failed the same way).
    from dlt.common.storages.load_storage import LoadStorage

    sandbox = start_sandbox(seed=21, scale=60, max_page_size=20)
    commit = LoadStorage.commit_new_load_package
    commits: list[str] = []

    def commit_then_die(self, load_id, *args, **kwargs):
        commit(self, load_id, *args, **kwargs)
        commits.append(load_id)
        if len(commits) == 2:  # the first chunk is loaded: the warehouse holds state the next run resumes from
            raise Killed

    monkeypatch.setattr(LoadStorage, "commit_new_load_package", commit_then_die)
    with pytest.raises(Killed):
        sync(sandbox, warehouse, chunk_pages=1)
    monkeypatch.setattr(LoadStorage, "commit_new_load_package", commit)
    work_dir = Path(warehouse).parent / ".warehouse.dlt" / "invoicing"
    extracted = sorted(p.name for p in (work_dir / "normalize" / "extracted").iterdir())
    normalized = sorted(p.name for p in (work_dir / "load" / "normalized").iterdir())
    assert extracted and extracted == normalized  # the crash window: both copies of one package

    report = sync(sandbox, warehouse)
    assert report.finished_pending
    assert mismatches(warehouse, sandbox.portal) == []
    assert not list((work_dir / "normalize" / "extracted").iterdir())


def _state_file(warehouse: str) -> bytes:
    return (Path(warehouse).parent / ".warehouse.dlt" / "invoicing" / "state.json").read_bytes()


def test_refused_runs_leave_warehouse_and_state_untouched(start_sandbox, warehouse, monkeypatch, capsys):
    from invoicing_warehouse.cli import main

    def command(base_url: str, secret: str) -> tuple[int, str, str]:
        monkeypatch.setenv("SOURCES__INVOICING__BASE_URL", base_url)
        monkeypatch.setenv("SOURCES__INVOICING__CLIENT_ID", sandbox.client_id)
        monkeypatch.setenv("SOURCES__INVOICING__CLIENT_SECRET", secret)
        code = main(["sync", "--warehouse", warehouse, "--rate-limit", "0"])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    sandbox = start_sandbox(seed=31, scale=120)
    sync(sandbox, warehouse)
    quiet(sandbox)
    before, state_before = table_fingerprint(warehouse), _state_file(warehouse)

    code, out, err = command(sandbox.base_url, "not-the-secret-42")
    assert code == 1 and "Traceback" not in err and "not-the-secret-42" not in out + err
    assert "POST /oauth2/token: HTTP 401" in err and "client authentication failed" in err

    # a client no longer allowed `read`, where no token was kept (another machine, or the kept one spent):
    # the service goes on honouring a token it issued, so the refusal comes with the next token request
    assert forget_kept_tokens() == 1
    sandbox.config.allowed_scopes = ("write",)
    code, out, err = command(sandbox.base_url, sandbox.client_secret)
    assert code == 1 and "Traceback" not in err
    assert "scope 'read' is not allowed for this client" in err and "'read' scope" in err
    sandbox.config.allowed_scopes = ("read", "write")

    closed_port = free_port()  # bound, then released: nothing listens on it
    code, out, err = command(f"http://127.0.0.1:{closed_port}/api/v2", sandbox.client_secret)
    assert code == 1 and "Traceback" not in err
    assert f"127.0.0.1:{closed_port}" in err and "ConnectError" in err and "BASE_URL" in err

    assert table_fingerprint(warehouse) == before
    assert _state_file(warehouse) == state_before

    code, out, err = command(sandbox.base_url, sandbox.client_secret)
    assert code == 0, err
    assert "sync finished" in out and "429s 0" in out and sandbox.client_secret not in out + err


def test_the_secret_never_reaches_dlt_state_trace_or_the_warehouse(start_sandbox, warehouse):
    sandbox = start_sandbox(seed=32, scale=60, client_secret="very-secret-value-123")
    sync(sandbox, warehouse)
    files = [p for p in Path(warehouse).parent.rglob("*") if p.is_file()]
    assert any(p.name == "trace.pickle" for p in files)
    for path in files:
        assert b"very-secret-value-123" not in path.read_bytes(), path
