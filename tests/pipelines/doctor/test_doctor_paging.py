"""`invoicing-warehouse doctor` per list: the largest page each list serves and whether it honours `skip`, in
the JSON findings (`lists.<name>.max_page`, `paging`, and the capabilities the sync seeds from) and as one
report line per list. Truth: the sandbox's switches (`max_page_size_per_list`, `paging_params_*_on`)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from invoicing_sandbox.contract import ContractProfile
from invoicing_warehouse.cli import main
from pipelines.invoicing.doctor.probe_report import report_lines


def _doctor(sandbox, tmp_path, monkeypatch, capsys) -> tuple[int, dict, str, int]:
    monkeypatch.setenv("SOURCES__INVOICING__BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_ID", sandbox.client_id)
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_SECRET", sandbox.client_secret)
    path = tmp_path / "doctor.json"
    before = sandbox.stats["requests"]
    code = main(["doctor", "--out", str(path), "--rate-limit", "0"])
    out = capsys.readouterr()
    return code, json.loads(path.read_text()), out.out + out.err, sandbox.stats["requests"] - before


@pytest.mark.parametrize(("policy", "cap", "suppliers"), [("clamp", 30, "ignored"), ("reject", 7, "refused")])
def test_the_doctor_reports_each_lists_page_and_skip(start_sandbox, tmp_path, monkeypatch, capsys, policy, cap,
                                                     suppliers):
    profile = replace(ContractProfile.default(), max_page_size_per_list=(("supplier_documents", cap),),
                      **{f"paging_params_{suppliers}_on": ("suppliers",)})
    sandbox = start_sandbox(seed=3, scale=300, contract=profile, page_size_policy=policy)
    assert len(sandbox.portal.snapshot("supplier_documents")) > cap  # so the cap shows on a full page
    code, report, printed, requests = _doctor(sandbox, tmp_path, monkeypatch, capsys)
    assert code == 0, printed
    assert requests <= 60, requests
    lists = report["lists"]
    assert (lists["supplier_documents"]["max_page"], lists["supplier_documents"]["max_page_exact"]) == (cap, True)
    assert (lists["documents"]["max_page"], lists["documents"]["max_page_exact"]) == (100, True)
    assert lists["supplier_documents"]["paging"] == "honoured"
    assert lists["documents"]["paging"] == "honoured"
    assert lists["suppliers"]["paging"] == suppliers
    assert report["capabilities"]["lists"]["/suppliers"]["paging"] == suppliers
    assert report["capabilities"]["lists"]["/supplier-documents"]["paging"] == "honoured"
    lines = {line.item: line for line in report_lines(report)}
    assert lines["supplier_documents.page size"].observed == f"serves {cap} records a page"
    assert lines["supplier_documents.page size"].status == "differs"  # not the size of the other lists
    assert lines["suppliers.limit/skip"].status == "differs"
    assert lines["documents.limit/skip"].status == "ok"
    assert "supplier_documents.page size" in printed and "suppliers.limit/skip" in printed


def test_on_the_default_sandbox_every_readable_list_honours_skip_at_one_page_size(start_sandbox, tmp_path,
                                                                                  monkeypatch, capsys):
    sandbox = start_sandbox(seed=3, scale=300)
    code, report, printed, requests = _doctor(sandbox, tmp_path, monkeypatch, capsys)
    assert code == 0, printed
    assert requests <= 60, requests
    readable = {name: probe for name, probe in report["lists"].items() if not probe["error"]}
    assert {probe["paging"] for probe in readable.values()} == {"honoured"}
    assert {probe["max_page"] for probe in readable.values() if probe["max_page_exact"]} == {100}
    statuses = {line.item: line.status for line in report_lines(report)}
    assert {status for item, status in statuses.items() if item.endswith((".page size", ".limit/skip"))} == {"ok"}
