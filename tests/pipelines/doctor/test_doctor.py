"""`invoicing-warehouse doctor` over real HTTP against the default and the strict sandbox: the report on
each profile names every switch that differs between the two presets (the presets are the truth), within
60 requests counted by the sandbox, and bad credentials exit 1 with a clear message and no secret."""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import datetime

import duckdb
import httpx
import pytest

from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.served import INVENTED_FIELDS
from invoicing_warehouse.cli import main
from pipelines.invoicing.doctor.probe_report import report_lines

DEFAULT_TOKEN_LIFETIME_S = 604799
DEFAULT_MAX_PAGE = 100
SKEW_MARGIN_S = 9  # the time between the test's last write and the doctor's customer read, under load
LEDGER_FAMILIES = {"document_messages": "documents"}  # INVENTED_FIELDS family -> ledger resource


def _prepare(sandbox) -> tuple[set[str], str]:
    """Four customers written in one frozen second (a tie group), then one of them deleted; returns the
    customer ids a warehouse would have known before the deletion, and the deleted id."""
    with httpx.Client(base_url=sandbox.base_url, trust_env=False,
                      headers={"Authorization": f"Bearer {sandbox.token('read write')}"}) as api:
        sandbox.clock.freeze(sandbox.clock.now())
        try:
            created = [api.post("/customers", json={"name": f"Tie {i}", "email": f"tie{i}@example.fr"})
                       .json()["data"]["id"] for i in range(4)]
        finally:
            sandbox.clock.unfreeze()
        known = {c["id"] for c in sandbox.portal.snapshot("customers") if not c.get("deleted")}
        assert api.delete(f"/customers/{created[0]}").status_code in (200, 204)
    return known, created[0]


def _doctor(sandbox, tmp_path, monkeypatch, capsys, known: set[str], secret: str | None = None):
    warehouse = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(warehouse)) as connection:  # a warehouse that synced these customers
        connection.execute("create schema invoicing_raw")
        connection.execute("create table invoicing_raw.customers (portal_id text, id text, _deleted_at timestamptz)")
        for customer_id in known:
            connection.execute("insert into invoicing_raw.customers values ('default', ?, null)", [customer_id])
    monkeypatch.setenv("SOURCES__INVOICING__BASE_URL", sandbox.base_url)
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_ID", sandbox.client_id)
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_SECRET", secret or sandbox.client_secret)
    path = tmp_path / "doctor.json"
    before = sandbox.stats["requests"]
    code = main(["doctor", "--out", str(path), "--warehouse", str(warehouse), "--rate-limit", "0"])
    out = capsys.readouterr()
    return code, json.loads(path.read_text()), out.out + out.err, sandbox.stats["requests"] - before


def _expect_fields(report: dict, profile: ContractProfile) -> None:
    for family, names in INVENTED_FIELDS.items():
        resource = LEDGER_FAMILIES.get(family, family)
        for name in names:
            seen = report["fields"].get(f"{resource}.{name}")
            if seen is None or seen["status"] == "no sample":
                continue  # not a ledger row, or a list the read scope cannot sample (webhooks)
            expected = {"absent"} if family in profile.invented_fields_omitted else {"present", "null"}
            assert seen["status"] in expected, (resource, name, seen)


def _expect_skew(report: dict, profile: ContractProfile) -> None:
    gap = report["clock"]["newest_minus_date_s"]
    assert -profile.date_header_skew_s - SKEW_MARGIN_S < gap <= -profile.date_header_skew_s


def _expect_windows(report: dict, profile: ContractProfile) -> None:
    for name in ("suppliers", "supplier_documents"):
        expected = "refused" if name in profile.window_params_refused_on else "honoured"
        assert report["lists"][name]["window"] == expected
        assert report["lists"][name]["ordering"] == expected
    # GET /webhooks needs the write scope: a read-only doctor reports it unread on every profile
    assert "scope" in report["lists"]["webhooks"]["error"]


EXPECTATIONS = {
    "invented_fields_omitted": _expect_fields,
    "deleted_customers": lambda r, p: r["deleted_customers"]["mode"] == p.deleted_customers or pytest.fail(
        f"deleted customers: {r['deleted_customers']} for {p.deleted_customers}"),
    "tie_order": lambda r, p: r["ties"]["stable"] is (p.tie_order == "id") or pytest.fail(str(r["ties"])),
    "date_header_skew_s": _expect_skew,
    "window_params_refused_on": _expect_windows,
    "token_lifetime_s": lambda r, p: r["auth"]["expires_in"] == (p.token_lifetime_s or DEFAULT_TOKEN_LIFETIME_S)
    or pytest.fail(str(r["auth"])),
    "max_page_size": lambda r, p: (r["page_size"]["max"], r["page_size"]["max_is_exact"]) == (
        p.max_page_size or DEFAULT_MAX_PAGE, True) or pytest.fail(str(r["page_size"])),
    "date_only_zone": lambda r, p: r["date_only"]["zone"] == f"{p.date_only_zone} midnight"
    or pytest.fail(str(r["date_only"])),
    "max_page_size_per_list": lambda r, p: all(
        (r["lists"][name]["max_page"], r["lists"][name]["max_page_exact"]) == (size, True)
        for name, size in p.max_page_size_per_list) or pytest.fail(str(r["lists"])),
}
# report lines that say `differs` exactly when the switch is not the default's
DIFFERING_LINES = {"auth.expires_in", "lists.page size", "lists.updatedSince/updatedUntil",
                   "lists.orderBy=lastUpdate", "lists.stable tie order", "customers.deleted customers listed",
                   "http.date-only at UTC midnight", "supplier_documents.page size"}


def test_every_switch_differing_between_the_presets_has_an_expectation():
    default, strict = ContractProfile.default(), ContractProfile.strict()
    differing = {f.name for f in fields(ContractProfile) if getattr(default, f.name) != getattr(strict, f.name)}
    assert differing == set(EXPECTATIONS)


@pytest.mark.parametrize("profile_name", ["default", "strict"])
def test_doctor_report_names_each_difference_of_the_profile(profile_name, start_sandbox, tmp_path, monkeypatch,
                                                             capsys):
    profile = ContractProfile.named(profile_name)
    sandbox = start_sandbox(seed=7, scale=200, contract=profile)
    known, deleted = _prepare(sandbox)
    started = datetime.now()
    code, report, printed, requests = _doctor(sandbox, tmp_path, monkeypatch, capsys, known)
    assert code == 0, printed
    assert requests <= 60, requests
    assert report["requests"] == requests  # the doctor counts what the sandbox counts
    for expect in EXPECTATIONS.values():
        expect(report, profile)
    statuses = {line.item: line.status for line in report_lines(report)}
    for item in DIFFERING_LINES:
        assert statuses[item] == ("ok" if profile.is_default else "differs"), (item, statuses[item])
        assert item in printed
    assert report["deleted_customers"]["hidden_deleted"] == (1 if profile.deleted_customers == "hidden" else 0)
    assert sandbox.client_secret not in printed and sandbox.client_secret not in json.dumps(report)
    assert "access_token" not in json.dumps(report)
    print(f"doctor on {profile_name}: {requests} requests, {report['wall_s']} s "
          f"(test wall {(datetime.now() - started).total_seconds():.1f} s); deleted {deleted}")


def test_doctor_exits_1_on_bad_credentials_without_leaking_them(start_sandbox, tmp_path, monkeypatch, capsys):
    sandbox = start_sandbox(seed=7, scale=60)
    wrong = "not-the-secret-4f1c"
    code, report, printed, requests = _doctor(sandbox, tmp_path, monkeypatch, capsys, set(), secret=wrong)
    assert code == 1
    assert "the sync cannot work" in printed and "HTTP 401" in printed
    assert "SOURCES__INVOICING__CLIENT_SECRET" in printed  # what to fix
    assert "first request" in report["fatal"]["consequence"]
    assert report["fatal"]["kind"] == "credentials"
    assert wrong not in printed and wrong not in json.dumps(report)
    assert requests <= 3


def test_the_doctor_counts_supplier_credit_notes_by_sign_whatever_the_spelling_of_their_type():
    from pipelines.invoicing.doctor.probe import _supplier_credit_note_sign

    sample = [{"type": "creditNote", "amountVat": -120}, {"type": "CREDIT_NOTE", "amount": -10},
              {"type": "credit note", "amountVat": 30}, {"type": "invoice", "amountVat": -5},
              {"type": "creditNote", "amountVat": 0}]
    assert _supplier_credit_note_sign(sample) == {"positive": 1, "negative": 2}
