"""The doctor's findings reach the sync: a server the doctor found refusing window parameters costs the
first sync no refused request (the sync would otherwise learn it from a 400 on that run)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from harness.warehouse_truth import mismatches
from invoicing_sandbox.contract import ContractProfile
from invoicing_warehouse.cli import main
from invoicing_warehouse.cli.sync_command import doctor_capabilities
from tests.pipelines.sandbox_syncs import sync

REFUSING = replace(ContractProfile.default(), window_params_refused_on=("suppliers", "supplier_documents"))


def _run_doctor(sandbox, tmp_path, monkeypatch) -> str:
    monkeypatch.setenv("SOURCES__INVOICING__BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_ID", sandbox.client_id)
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_SECRET", sandbox.client_secret)
    path = str(tmp_path / "doctor.json")
    assert main(["doctor", "--out", path, "--rate-limit", "0"]) == 0
    return path


def test_the_first_sync_uses_the_doctors_findings_and_makes_no_refused_request(
        start_sandbox, warehouse, tmp_path, monkeypatch, capsys):
    sandbox = start_sandbox(seed=5, scale=150, contract=REFUSING)
    known = doctor_capabilities(_run_doctor(sandbox, tmp_path, monkeypatch), sandbox.base_url)
    assert known is not None and known.of("/suppliers").window == "refused"

    report = sync(sandbox, warehouse, known_capabilities=known)
    assert report.refused == 0, report.notes
    assert mismatches(warehouse, sandbox.portal) == []


def test_findings_of_another_server_are_ignored(start_sandbox, tmp_path, monkeypatch, capsys):
    sandbox = start_sandbox(seed=5, scale=60, contract=REFUSING)
    path = _run_doctor(sandbox, tmp_path, monkeypatch)
    assert json.loads(Path(path).read_text(encoding="utf-8"))["base_url"] == sandbox.base_url
    assert doctor_capabilities(path, "http://127.0.0.1:1/api/v2") is None
    assert doctor_capabilities(str(tmp_path / "missing.json"), sandbox.base_url) is None
