"""A list that refuses `limit`/`skip` (400) or ignores them (every request answers the default page from the
first record) cannot be read past one answer: the sync says so with a degraded note naming the raw table
(`<table>: ...`, the convention the publication gate reads). A list it can still read whole (a window by
whole seconds) gets no note and is exact; a server honouring paging gets no degraded note at all.
Truth: the sandbox's own records (`Portal.snapshot`) and its switches (`invoicing_sandbox/contract.py`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.warehouse_truth import COMPARED, mismatches
from invoicing_sandbox.contract import ContractProfile
from tests.pipelines.sandbox_syncs import quiet, sync

TABLES = ("suppliers", "supplier_documents")


def degraded_for(report, table: str) -> list[str]:
    return [note for note in report.degraded_notes if note.startswith(f"{table}: ")]


@pytest.mark.parametrize("how", ["refused", "ignored"])
@pytest.mark.parametrize("table", TABLES)
def test_a_list_read_by_skip_whose_paging_is_not_honoured_is_degraded(start_sandbox, warehouse, how, table):
    # as on the strict server, the window parameters of the supplier lists are refused: they are read by skip
    profile = replace(ContractProfile.default(), window_params_refused_on=TABLES,
                      **{f"paging_params_{how}_on": (table,)})
    sandbox = start_sandbox(seed=3, scale=300, contract=profile)
    report = sync(sandbox, warehouse)
    assert degraded_for(report, table), report.notes
    assert all(note.startswith(f"{table}: ") for note in report.degraded_notes), report.degraded_notes
    assert report.capabilities.of("/" + table.replace("_", "-")).paging == how
    # the other list of the pair is read whole
    other = next(t for t in TABLES if t != table)
    assert mismatches(warehouse, sandbox.portal, tables=(other,)) == []


def test_a_windowed_list_whose_paging_is_refused_is_degraded(start_sandbox, warehouse):
    profile = replace(ContractProfile.default(), paging_params_refused_on=("supplier_documents",))
    sandbox = start_sandbox(seed=3, scale=300, contract=profile)
    report = sync(sandbox, warehouse)
    assert degraded_for(report, "supplier_documents"), report.notes
    served = len(sandbox.portal.snapshot("supplier_documents"))
    assert served > 20  # so one default page of 20 really misses rows: the note is no false alarm
    assert report.rows["supplier_documents"] < served
    # the next run says it again: an incomplete list never turns silent
    quiet(sandbox)
    again = sync(sandbox, warehouse)
    assert degraded_for(again, "supplier_documents"), again.notes


def test_a_windowed_list_that_ignores_paging_is_still_read_whole_by_seconds(start_sandbox, warehouse):
    # with the window honoured, each page restarts at the second of the last record read: no skip is needed
    # unless one second holds a whole page, so the read is exact and no false alarm blocks the payables
    profile = replace(ContractProfile.default(), paging_params_ignored_on=("supplier_documents",))
    sandbox = start_sandbox(seed=3, scale=300, contract=profile)
    report = sync(sandbox, warehouse)
    assert mismatches(warehouse, sandbox.portal) == []
    assert report.degraded_notes == [], report.degraded_notes
    for document in sandbox.portal.snapshot("supplier_documents")[:30]:
        sandbox.portal.tag_supplier_document(document["id"], ["checked"])
    quiet(sandbox)
    second = sync(sandbox, warehouse)
    assert mismatches(warehouse, sandbox.portal) == []
    assert second.rows["supplier_documents"] == 30


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_server_that_honours_paging_leaves_no_degraded_note(start_sandbox, warehouse, contract):
    sandbox = start_sandbox(seed=3, scale=300, contract=contract)
    first = sync(sandbox, warehouse)
    assert first.degraded_notes == [], first.degraded_notes
    for document in sandbox.portal.snapshot("supplier_documents")[:5]:
        sandbox.portal.tag_supplier_document(document["id"], ["checked"])
    quiet(sandbox)
    second = sync(sandbox, warehouse)
    assert second.degraded_notes == [], second.degraded_notes
    assert mismatches(warehouse, sandbox.portal, contract=contract) == []


def test_the_portals_path_reports_the_degraded_note_too(start_sandbox, tmp_path):
    from pipelines.invoicing.credentials import ApiSettings
    from pipelines.invoicing.load.portal_sync import sync_portal
    from pipelines.invoicing.portals import Portal

    profile = replace(ContractProfile.default(), paging_params_refused_on=("supplier_documents",))
    sandbox = start_sandbox(seed=3, scale=150, contract=profile)
    settings = ApiSettings(sandbox.base_url, sandbox.client_id, sandbox.client_secret)
    report = sync_portal(str(tmp_path / "w.duckdb"), Portal("acme", sandbox.base_url), settings=settings,
                         rate_limit_per_s=0)
    assert degraded_for(report, "supplier_documents"), report.notes


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_list_that_ignores_paging_while_records_change_is_degraded_and_the_others_stay_exact(
        start_sandbox, warehouse, contract):
    # review F16: the application user writes through the whole first sync (supplier documents received,
    # approved, paid, tagged): the first page of the list shifts between requests, so `skip` answered by a
    # first page that is no longer the same must still be seen as ignored, never as a page further on
    profile = replace(ContractProfile.named(contract), window_params_refused_on=TABLES,
                      paging_params_ignored_on=("supplier_documents",))
    sandbox = start_sandbox(seed=3, scale=150, contract=profile, mutations_per_s=8.0)
    first = sync(sandbox, warehouse)
    assert degraded_for(first, "supplier_documents"), first.notes
    assert sum(sandbox.mutator.counts.values()) > 0  # the records did change during the read
    sandbox.stop_mutations()
    quiet(sandbox)
    # a reconcile: drafts deleted during the first read are only seen gone by a whole read (README: reconcile)
    second = sync(sandbox, warehouse, reconcile=True)
    assert degraded_for(second, "supplier_documents"), second.notes  # never turns silent
    assert all(note.startswith("supplier_documents: ") for note in second.degraded_notes), second.degraded_notes
    others = [t for t in COMPARED if t not in ("supplier_documents", "supplier_document_events")]
    assert mismatches(warehouse, sandbox.portal, tables=others, contract=contract) == []
