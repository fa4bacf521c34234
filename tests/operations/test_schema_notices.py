"""Schema notices (invoicing_warehouse/runs/schema_notices.py): a sandbox serving one field no contract names (the
profile's `extra_fields`) makes the sync say so once, in its output, and not on the next run; Dagster's WARN check
`fields_known` names the column; the doctor lists the field. The truth is the one field the test adds: the
sandbox's other fields are all known, so nothing else may be named."""

from __future__ import annotations

import contextlib
import dataclasses
import io
from pathlib import Path

import pytest
from dagster import AssetKey, AssetSelection, AssetSpec, Definitions, define_asset_job

from assets.checks import fields_known_check
from assets.resources import WarehouseResource
from invoicing_sandbox.contract import ContractProfile
from invoicing_warehouse.cli import main
from tests.support.fixture_factory import point_at

NEW = "new field served"


# the module's `shared_sandbox`: the default contract, plus one field it does not name
pytestmark = pytest.mark.sandbox(seed=32, scale=20, rate_limit_per_s=0, latency_ms=0, contract=dataclasses.replace(
    ContractProfile.default(), extra_fields=(("documents", "loyaltyTier", "gold"),)))


@pytest.fixture(scope="module")
def synced(shared_sandbox, tmp_path_factory) -> tuple[Path, str, str]:
    """The warehouse and the output of two syncs, one after the other."""
    folder = tmp_path_factory.mktemp("notices")
    warehouse = folder / "warehouse.duckdb"
    outputs = []
    with pytest.MonkeyPatch.context() as patch:
        point_at(patch, shared_sandbox)
        patch.chdir(folder)
        for _ in range(2):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                assert main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0"]) == 0
            outputs.append(out.getvalue() + err.getvalue())
    return warehouse, outputs[0], outputs[1]


def test_the_sync_notes_a_new_field_once(synced):
    _, first, second = synced
    notes = [line for line in first.splitlines() if NEW in line]
    assert len(notes) == 1, first
    assert "column documents.loyalty_tier is not in the contract ledger" in notes[0]
    assert NEW not in second, second


def test_the_webhooks_scope_note_is_said_once_not_on_every_sync(synced):
    """GET /webhooks needs the `write` scope the sync never asks for (the spec's default scope): a condition of the
    account that every run meets again, said on the first run only (issue 44)."""
    _, first, second = synced
    scope_note = "webhooks: not read: /webhooks needs the 'read write' scope"
    assert scope_note in first, first
    assert scope_note not in second, second


def test_a_standing_note_is_said_again_when_its_condition_comes_back(tmp_path):
    from invoicing_warehouse.engine.target import WarehouseTarget
    from invoicing_warehouse.runs.run_log import standing_notes_once

    target = WarehouseTarget.duckdb_file(tmp_path / "w.duckdb")
    note = "webhooks: not read: /webhooks needs the 'read write' scope"
    assert standing_notes_once(target, "acme", [note]) == [note]
    assert standing_notes_once(target, "acme", [note]) == []
    assert standing_notes_once(target, "globex", [note]) == [note]  # another portal's account
    assert standing_notes_once(target, "acme", []) == []  # the scope granted: nothing to say
    assert standing_notes_once(target, "acme", [note]) == [note]  # refused again: said again


def test_dagster_warns_naming_the_new_column(synced):
    warehouse, _, _ = synced
    check = fields_known_check()
    job = define_asset_job("known_only", selection=AssetSelection.checks(check))
    keys = [AssetKey(["invoicing_raw", table]) for table in ("documents", "customers")]
    defs = Definitions(assets=[AssetSpec(key) for key in keys], asset_checks=[check], jobs=[job],
                       resources={"warehouse": WarehouseResource(path=str(warehouse))})
    result = defs.resolve_job_def("known_only").execute_in_process(raise_on_error=False)
    evaluations = {e.asset_key.path[-1]: e for e in result.get_asset_check_evaluations()}
    assert evaluations["customers"].passed
    documents = evaluations["documents"]
    assert not documents.passed and documents.severity.value == "WARN"
    assert documents.metadata["new_columns"].value == ["loyalty_tier"]


def test_the_doctor_lists_the_new_field(shared_sandbox, tmp_path, monkeypatch, capsys):
    point_at(monkeypatch, shared_sandbox)
    monkeypatch.chdir(tmp_path)
    assert main(["doctor", "--rate-limit", "0", "--out", str(tmp_path / "findings.json")]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if NEW in line]
    assert listed == ["new field served, not in the ledger (docs/contract.md): documents.loyaltyTier"]


def test_the_doctors_json_flag_prints_the_findings_on_stdout(shared_sandbox, tmp_path, monkeypatch, capsys):
    """`--json` means one thing on every command: a JSON document on stdout (issue 44); `--out` is the file."""
    import json

    point_at(monkeypatch, shared_sandbox)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "findings.json"
    assert main(["doctor", "--rate-limit", "0", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["new_fields"] == {"documents": ["loyaltyTier"]}
