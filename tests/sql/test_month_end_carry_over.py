"""The gate carries over the month-ends of the trend whose raw rows did not change
(invoicing_warehouse/runs/month_end_inputs.py): every published trend equals a full recomputation of the twelve
month-ends on the same raw tables, on both sandbox profiles, after changes dated today (all twelve carried), a
back-dated payment (built again from its month on) and random changes; and the reach rules are pinned to the models' SQL
they were read against."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta

import pytest

from harness.hinted_changes import EVENTED, HintedMutator
from harness.regular_build import sync_sandbox
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.mutator import Mutator
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.dashboard.source import Source
from invoicing_warehouse.engine.readers import connect_reader
from invoicing_warehouse.engine.sql_runner import discover_models
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs import month_end_inputs
from invoicing_warehouse.runs.gate import build_and_publish, warehouse_checks
from invoicing_warehouse.runs.month_end_trends import COLUMNS, TABLE, figures, month_ends, needed_models

START = datetime(2026, 3, 18, 10, 0, tzinfo=UTC)  # mid-month: a change dated today reaches no month-end
AS_OF = START.date()
LINKED = {"new_version", "convert_quotation", "credit_note"}


def test_the_reach_rules_were_read_against_these_models():
    raw = {table.split(".", 1)[1] for model in discover_models() if model.key in needed_models()
           for table in model.raw_dependencies}
    assert raw == set(month_end_inputs.READS), "the trend reads other raw tables: give each a reach rule"
    pin = hashlib.sha256(month_end_inputs.models_text(needed_models()).encode()).hexdigest()[:16]
    assert month_end_inputs.reviewed(needed_models()), (
        "a model the month-end trend rests on changed: until the reach rules of "
        "invoicing_warehouse/runs/month_end_inputs.py are read "
        f"again against it (and REVIEWED_MODELS set to {pin!r}), the gate carries no month-end over")


def _published(target) -> list[tuple]:
    """The trend in the readers' copy."""
    with connect_reader(target) as reader:
        return reader.execute(f"select {', '.join(COLUMNS)}, report_date from {TABLE} "
                              "order by month_end, portal_id").fetchall()


def _recomputed(target) -> list[tuple]:
    """The twelve month-ends built again from the readers' copy's raw tables (the dashboard's path for another
    date, which carries nothing over)."""
    reader = Source(target.path).connect(attach=True)
    try:
        return [(*row, AS_OF) for row in figures(reader, AS_OF, {}, warehouse_checks)]
    finally:
        reader.close()


def _publish(sb, target, clock, *, compared: bool = True) -> int:
    """Syncs the sandbox's changes and publishes through the gate; the trend published equals a full
    recomputation (`compared`); returns how many month-ends the gate carried over."""
    clock.advance(timedelta(minutes=5))  # past the sync's settle lag: the changes are read
    sync_sandbox(sb, target)
    outcome = build_and_publish(target, note="test", as_of=AS_OF)
    assert outcome.ok and outcome.published and outcome.trend_refused is None, outcome.lines()
    if compared:
        assert _published(target) == _recomputed(target)
    return outcome.trend_carried


def _open_invoices(sb, emitted_after: date, emitted_before: date) -> list[dict]:
    """The sandbox's open invoices emitted between the two dates (its own records), oldest id first."""
    return [document for _, document in sorted(sb.portal.stores["documents"].records.items())
            if sb.portal.is_open_invoice(document) and not document.get("prevDoc")
            and emitted_after < date.fromisoformat(document["emitDate"][:10]) < emitted_before]


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_carried_trend_equals_a_full_recomputation(contract, tmp_path, monkeypatch):
    monkeypatch.setenv("INVOICING_PUBLISH_TRENDS", "1")
    clock = Clock(fixed=START)
    target = WarehouseTarget.duckdb_file(tmp_path / "warehouse.duckdb")
    ends = month_ends(AS_OF)
    config = SandboxConfig(seed=5, scale=60, rate_limit_per_s=0, contract=ContractProfile.named(contract))
    with SandboxServer(config, clock=clock) as sb:
        assert _publish(sb, target, clock, compared=False) == 0  # the first trend: every month-end built
        assert any(row[2] for row in _published(target)), "nothing open: the equality would prove little"

        # today's writes: a customer, and a part payment of an invoice emitted months ago (its customer's
        # dueAmount and the invoice's totalPayments, remaining and lastUpdate move; no month-end does)
        sb.portal.create("customers", {"name": "Carry-over Test SARL"})
        old, back = _open_invoices(sb, ends[1], ends[-1])[:2]
        sb.portal.pay_document(old["id"], {"amount": 1, "method": "TRANSFER"})
        assert _publish(sb, target, clock) == 12

        # a payment dated back into the past: its month-end and every later one are built again
        paid_on = date.fromisoformat(back["emitDate"][:10]) + timedelta(days=1)
        sb.portal.pay_document(back["id"], {"amount": 1, "method": "TRANSFER", "date": paid_on.isoformat()})
        carried = _publish(sb, target, clock)
        assert 0 < carried < 12
        assert carried <= sum(end < paid_on for end in ends)  # none from the payment's month-end on

        # a draft invoice created, then validated: no model of the trend reads a draft linked to no version
        # (whatever its emit date), and the validated invoice enters the digests at its emit date, today, after the
        # last month-end: every month-end carried over both times (before, the draft reached every month-end from
        # its emit date on, as an emitted document)
        before = set(sb.portal.stores["documents"].records)
        assert Mutator(sb.portal, 0, seed=3)._create_invoice()
        (draft,) = set(sb.portal.stores["documents"].records) - before
        assert _publish(sb, target, clock) == 12
        sb.portal.validate_document(draft)  # emitted today, as the sandbox dates a draft on its creation
        assert _publish(sb, target, clock) == 12

        # a quotation given a new version dated back into a past month (the old one CANCELED: the links move
        # month-ends from that month on), then that version refused: a linked quotation is read only through its
        # links (id, links, superseded, deleted), which the refusal leaves as they were: every month-end carried
        # over (before: built again from the back-dated month on, as a linked invoice's change)
        before = set(sb.portal.stores["documents"].records)
        assert Mutator(sb.portal, 0, seed=4)._create_quotation()
        (quotation,) = set(sb.portal.stores["documents"].records) - before
        sb.portal.validate_document(quotation)
        version = sb.portal.new_version(quotation, {"title": "Version corrigée", "emitDate": ends[-3].isoformat()})
        assert _publish(sb, target, clock) <= sum(end < ends[-3] for end in ends)
        sb.portal.refuse_quotation(version["id"])
        assert _publish(sb, target, clock) == 12

        # random changes of every kind the service announces (deletions, drafts, reminders...), and those whose
        # reach goes through another record: new versions, converted quotations, credit notes and their use
        HintedMutator(sb.portal, 0, seed=17).steps(12)
        linked = HintedMutator(sb.portal, 0, seed=23, without=frozenset(EVENTED) - LINKED).steps(4)
        assert LINKED & set(linked), linked
        _publish(sb, target, clock)
