"""`probe_server`: a read-only look at a live account in at most ~60 paced requests (the doctor's engine).

It learns what the sync relies on where the contract is silent (docs/contract.md): credentials and the
granted scope, the token's lifetime, the page size and whether a larger `limit` is clamped or refused, per
list whether the window and the ordering are honoured, ignored or refused, whether records sharing one
`lastUpdate` second keep one order, per list the largest page it serves and whether it honours `skip`,
whether deleted customers stay listed, the skew between `Date` and
`lastUpdate`, the rate-limit headers, and which ledger fields the records carry. The result is plain JSON
plus a `ServerCapabilities`, the sync's strategy cache. Only GET requests are made (and the token request).
"""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

from pipelines.invoicing.capabilities import ListCapabilities, ServerCapabilities
from pipelines.invoicing.dates import format_timestamp, parse_timestamp
from pipelines.invoicing.doctor.contract import LIST_PATHS
from pipelines.invoicing.doctor.known_columns import unknown_keys
from pipelines.invoicing.doctor.probe_http import OBSERVED_HEADERS, BudgetSpent, ProbeSession, header_time
from pipelines.invoicing.doctor.probe_lists import (
    ASKED_PAGE,
    ListProbe,
    date_only_times,
    field_presence,
    last_update,
    probe_list,
    probe_paging,
)
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.record_ids import child_path, record_path
from pipelines.invoicing.settings import ENDPOINTS, EVENTS

FALLBACK_PAGE = 100
MAX_CUSTOMER_PAGES = 4  # customers are read in full for the deletion probe (the sync does the same)
TIE_REREADS = 2  # a shuffled group of 3+ records shows a new order at once; 2 re-reads settle it
MAX_BY_ID = 2


def probe_server(session: ProbeSession, known_customer_ids: set[str] | frozenset[str] = frozenset()) -> dict:
    """Runs every probe; returns the findings (JSON-able) with `capabilities` and `fatal` (None when the
    sync can work). `known_customer_ids` (from a warehouse) help find customers the lists hide."""
    started = time.monotonic()
    findings: dict[str, Any] = {"fatal": None, "not_probed": []}
    try:
        _probe_access(session, findings)
        if findings["fatal"] is None:
            _probe_everything_else(session, findings, set(known_customer_ids))
    except BudgetSpent as spent:
        findings["not_probed"].append(str(spent))
    except InvoicingApiError as error:
        findings["fatal"] = {"kind": error.kind, "message": error.describe(), "consequence": _consequence(error)}
    findings["requests"] = session.requests
    findings["wall_s"] = round(time.monotonic() - started, 2)
    findings.setdefault("capabilities", ServerCapabilities().to_state())
    return findings


def _consequence(error: InvoicingApiError) -> str:
    return {
        "credentials": "the sync stops at its first request (the token or GET /me) with the same error",
        "scope": "the sync stops at GET /me: it needs the 'read' scope",
        "unreachable": "the sync cannot reach the service and stops before touching the warehouse",
        "malformed": "the sync stops with a `malformed` error: it needs JSON answers with a `data` property",
    }.get(error.kind, "the sync stops with the same error")


def _probe_access(session: ProbeSession, findings: dict) -> None:
    me = session.get(ENDPOINTS["user"].path)
    if me.error is not None:
        raise me.error
    token = session.token_answer() or {}
    findings["auth"] = _auth(token, me.headers)
    granted = str(token.get("scope") or "")
    if granted and "read" not in granted.split():
        findings["fatal"] = {"kind": "scope", "message": f"the token grants {granted!r}, not 'read'",
                             "consequence": _consequence(InvoicingApiError("scope", ENDPOINTS["user"].path))}
    findings["envelope"] = {"data": True}
    findings["headers"] = {name: me.headers.get(name) for name in OBSERVED_HEADERS}
    findings["server_time"] = me.headers.get("date")


def _auth(token: dict, headers: dict[str, str]) -> dict[str, Any]:
    expires_in = token.get("expires_in")
    server_time = header_time(headers)
    expire_at = headers.get("accesstoken-expireat")
    remaining = None
    if expire_at and server_time is not None:
        try:
            remaining = (parse_timestamp(expire_at) - server_time).total_seconds()
        except ValueError:
            remaining = None
    return {"scope": token.get("scope"), "token_type": token.get("token_type"),
            "expires_in": expires_in if isinstance(expires_in, (int, float)) else None,
            "expires_in_raw": None if isinstance(expires_in, (int, float)) else expires_in,
            "expire_at_minus_date_s": remaining}


def _probe_everything_else(session: ProbeSession, findings: dict, known_customer_ids: set[str]) -> None:
    findings["page_size"] = _probe_page_size(session)
    page = findings["page_size"]["max"] or FALLBACK_PAGE
    lists: dict[str, ListProbe] = {}
    for name, path in LIST_PATHS.items():
        lists[name] = probe_list(session, name, path, page)
        probe_paging(session, lists[name])
    samples = {name: probe.sample for name, probe in lists.items()}
    findings["page_size"]["max_is_exact"] = len(samples["documents"]) > page
    samples["customers"] = _all_customers(session, lists["customers"], page)
    samples["supplier_document_events"] = _events(session, samples.get("supplier_documents", []))
    findings["lists"] = {name: probe.summary() for name, probe in lists.items()}
    findings["ties"] = _probe_ties(session, lists)
    findings["deleted_customers"] = _probe_deleted(session, samples, known_customer_ids)
    gaps = [p.newest_minus_date_s for p in lists.values() if p.newest_minus_date_s is not None]
    findings["clock"] = {"newest_minus_date_s": max(gaps) if gaps else None,
                         "date_header": findings["headers"].get("date") is not None}
    findings["precision"] = _precision(samples)
    findings["date_only"] = date_only_times(samples)
    findings["credit_note_sign"] = _credit_note_sign(samples.get("documents", []))
    findings["supplier_credit_note_sign"] = _supplier_credit_note_sign(samples.get("supplier_documents", []))
    findings["rate_limit_headers"] = sorted({name for e in session.transport.exchanges for name in e.headers
                                             if name.startswith("ratelimit") or name == "retry-after"})
    findings["fields"] = field_presence(samples)
    # fields served that the ledger does not know: judged by nobody yet (invoicing_warehouse/runs/schema_notices.py, the
    # sync's side)
    findings["new_fields"] = {name: keys for name, records in samples.items()
                              if (keys := unknown_keys(name, records))}
    findings["capabilities"] = _capabilities(findings, lists).to_state()


def _probe_page_size(session: ProbeSession) -> dict[str, Any]:
    """Effective size for an oversized `limit`, clamp or 400, and the default size without `limit`."""
    result: dict[str, Any] = {"asked": ASKED_PAGE, "policy": None, "served": None, "max": None,
                              "max_is_exact": False, "default": None, "message": None}
    big = session.get(ENDPOINTS["documents"].path, {"limit": ASKED_PAGE})
    if big.refused:
        assert big.error is not None  # a refusal is a 400 error
        result.update(policy="reject", message=big.error.api_message)
        big = session.get(ENDPOINTS["documents"].path, {"limit": FALLBACK_PAGE})
        if big.error is not None:
            return result
    elif big.error is not None:
        return result
    served = len(big.records)
    result["served"] = served
    result["policy"] = result["policy"] or ("clamp" if served < ASKED_PAGE else "honoured")
    result["max"] = served or None  # exact once the list shows more records than one page (below)
    plain = session.get(ENDPOINTS["documents"].path)
    result["default"] = len(plain.records) if plain.error is None else None
    return result


def _all_customers(session: ProbeSession, probe: ListProbe, page: int) -> list[dict]:
    records = list(probe.sample)
    if probe.error is not None or len(probe.sample_params) == 0:
        return records
    seen = {r.get("id") for r in records}
    skip = len(probe.sample) if len(probe.sample) >= page else 0
    for _ in range(MAX_CUSTOMER_PAGES if skip else 0):
        more = session.get(probe.path, {**probe.sample_params, "skip": skip})
        fresh = [r for r in more.records if r.get("id") not in seen]
        records.extend(fresh)
        seen.update(r.get("id") for r in fresh)
        if len(more.records) < page:
            break
        skip += len(more.records)
    return records


def _events(session: ProbeSession, documents: list[dict]) -> list[dict]:
    for document in documents[:3]:
        answer = session.get(child_path(EVENTS.path, str(document.get("id"))))
        if answer.records:
            return answer.records
    return []


def _probe_ties(session: ProbeSession, lists: dict[str, ListProbe]) -> dict[str, Any]:
    """The largest same-second group fully inside an ordered sample, read again up to TIE_REREADS times."""
    best = None
    for name, probe in lists.items():
        if probe.ordering != "honoured" or probe.error:
            continue
        for params, records in probe.pages:
            groups: dict[str, list[str | None]] = {}
            for record in records:
                groups.setdefault(last_update(record) or "", []).append(record.get("id"))
            full = len(records) >= params.get("limit", 0)
            for second, ids in groups.items():
                if len(ids) < 2 or (full and second == last_update(records[-1])):
                    continue  # a group cut by the page's end is not wholly on the page
                if best is None or len(ids) > len(best[3]):
                    best = (name, params, second, ids)
    if best is None:
        return {"list": None, "second": None, "size": 0, "reads": 0, "stable": None}
    name, params, second, first = best
    probe, reads, stable = lists[name], 1, True
    for _ in range(TIE_REREADS):
        again = session.get(probe.path, params)
        reads += 1
        order = [r.get("id") for r in again.records if last_update(r) == second]
        if order != first:
            stable = False
            break
    return {"list": name, "second": second, "size": len(first), "reads": reads, "stable": stable}


def _probe_deleted(session: ProbeSession, samples: dict[str, list[dict]], known: set[str]) -> dict[str, Any]:
    """Listed with a timestamp, flagged without one, or hidden (a known/referenced id missing, GET by id)."""
    customers = samples.get("customers", [])
    listed = {r.get("id") for r in customers}
    deleted = [r for r in customers if r.get("deleted") is True]
    stamped = [r for r in deleted if r.get("deletedAt")]
    referenced = {named_id for name in ("documents", "transactions", "transaction_usages")
                  for r in samples.get(name, []) if isinstance(named_id := r.get("customerId"), str)}
    candidates = sorted((known | referenced) - listed)
    hidden = gone = 0
    for customer_id in candidates[:MAX_BY_ID]:
        answer = session.get(record_path(ENDPOINTS["customers"].path, customer_id))
        if answer.error is not None and answer.error.status == 404:
            gone += 1
        elif isinstance(answer.data, dict) and answer.data.get("deleted") is True:
            hidden += 1
    if hidden:
        mode = "hidden"
    elif deleted:
        mode = "listed" if len(stamped) == len(deleted) else "flagged"
    else:
        mode = "unknown"
    return {"mode": mode, "listed": len(customers), "listed_deleted": len(deleted),
            "listed_deleted_with_timestamp": len(stamped), "missing_from_list": len(candidates),
            "checked_by_id": min(len(candidates), MAX_BY_ID), "hidden_deleted": hidden, "gone_404": gone}


def _precision(samples: dict[str, list[dict]]) -> dict[str, Any]:
    stamps = [stamp for records in samples.values() for r in records if (stamp := last_update(r))]
    fractional = sum(1 for s in stamps if "." in s)
    return {"sampled": len(stamps), "sub_second": fractional}


def _credit_note_sign(documents: list[dict]) -> dict[str, int]:
    signs = {"positive": 0, "negative": 0}
    for record in documents:
        value = record.get("amountVatNet")
        if record.get("subtype") == "CREDIT_NOTE" and isinstance(value, (int, float, Decimal)) and value:
            signs["positive" if value > 0 else "negative"] += 1
    return signs


def _supplier_credit_note_sign(documents: list[dict]) -> dict[str, int]:
    # a supplier credit note by its type's letters, as stg_invoicing__supplier_documents finds it
    signs = {"positive": 0, "negative": 0}
    for record in documents:
        value = record.get("amountVat", record.get("amount"))
        kind = "".join(ch for ch in str(record.get("type") or "") if ch.isalpha()).lower()
        if kind == "creditnote" and isinstance(value, (int, float, Decimal)) and value:
            signs["positive" if value > 0 else "negative"] += 1
    return signs


def _capabilities(findings: dict, lists: dict[str, ListProbe]) -> ServerCapabilities:
    ties = findings["ties"]
    capabilities = {}
    for name, probe in lists.items():
        stable = ties["stable"] if ties["list"] == name else None
        capabilities[probe.path] = ListCapabilities(window=probe.window, ordering=probe.ordering,
                                                    stable_ties=stable, paging=probe.paging)
    server_time = header_time({"date": findings.get("server_time") or ""})
    return ServerCapabilities(lists=capabilities, deleted_customers=findings["deleted_customers"]["mode"],
                              token_lifetime_s=findings["auth"]["expires_in"],
                              observed_at=format_timestamp(server_time) if server_time else None)
