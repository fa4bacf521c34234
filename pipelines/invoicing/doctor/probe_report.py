"""The doctor's findings against the ledger: one line per ledger row it probed (observed, status, and what
the product does about it, from `LEDGER`), for people; the findings themselves stay the JSON record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipelines.invoicing.doctor.contract import LEDGER, LIST_PATHS, LedgerRow
from pipelines.invoicing.settings import WINDOW_LAG_S


@dataclass(frozen=True)
class ReportLine:
    """One probed ledger row: `status` is ok, differs or absent."""

    item: str
    observed: str
    status: str
    behaviour: str


def _lists_with(findings: dict, key: str, value: str) -> list[str]:
    return [name for name, probe in findings.get("lists", {}).items() if probe.get(key) == value]


def _support(findings: dict, key: str) -> tuple[str, str]:
    refused, ignored = _lists_with(findings, key, "refused"), _lists_with(findings, key, "ignored")
    unread = [n for n, p in findings.get("lists", {}).items() if p.get("error")]
    parts = [f"refused on {', '.join(refused)}"] if refused else []
    parts += [f"ignored on {', '.join(ignored)}"] if ignored else []
    parts += [f"not probed on {', '.join(unread)} (list not readable)"] if unread else []
    return ("; ".join(parts) or "honoured on every list"), ("differs" if refused or ignored else "ok")


def _token(findings: dict) -> tuple[str, str]:
    auth = findings["auth"]
    if auth["expires_in"] is None:
        return f"expires_in missing or unreadable ({auth['expires_in_raw']!r})", "absent"
    observed = f"{auth['expires_in']:g} s; AccessToken-ExpireAt − Date = {auth['expire_at_minus_date_s']} s"
    return observed, "ok" if auth["expires_in"] >= 120 else "differs"


def _page(findings: dict) -> tuple[str, str]:
    page = findings["page_size"]
    size = f"{page['max']}" if page["max_is_exact"] else f"at least {page['max']}"
    observed = f"limit={page['asked']} gives {page['served']} ({page['policy']}); max {size}; default " \
               f"{page['default']}" + (f"; API says {page['message']!r}" if page["message"] else "")
    return observed, "ok" if page["policy"] == "clamp" and page["max"] == 100 else "differs"


def _ties(findings: dict) -> tuple[str, str]:
    ties = findings["ties"]
    if ties["stable"] is None:
        return "no same-second group found on the sampled pages", "ok"
    observed = f"{ties['size']} {ties['list']} at {ties['second']}, read {ties['reads']} times: " + (
        "same order" if ties["stable"] else "order changed")
    return observed, "ok" if ties["stable"] else "differs"


def _deleted(findings: dict) -> tuple[str, str]:
    deleted = findings["deleted_customers"]
    observed = (f"{deleted['mode']}: {deleted['listed_deleted']} listed deleted "
                f"({deleted['listed_deleted_with_timestamp']} with deletedAt), {deleted['hidden_deleted']} "
                f"found only by id")
    return observed, "ok" if deleted["mode"] in ("listed", "unknown") else "differs"


def _clock(findings: dict) -> tuple[str, str]:
    gap = findings["clock"]["newest_minus_date_s"]
    if gap is None:
        return "no lastUpdate read", "absent"
    return (f"newest lastUpdate − Date = {gap:g} s (Date's lead shows only right after a write)",
            "differs" if gap > WINDOW_LAG_S else "ok")


def _date_only(findings: dict) -> tuple[str, str]:
    zone = findings["date_only"]["zone"]
    return zone, "ok" if zone == "UTC midnight" else "differs"


def _header(name: str) -> Callable[[dict], tuple[str, str]]:
    def observe(findings: dict) -> tuple[str, str]:
        value = findings["headers"].get(name.lower())
        if value is None and name.lower() in findings.get("rate_limit_headers", []):
            return "seen on some answers", "ok"
        return (value, "ok") if value is not None else ("not sent", "absent")
    return observe


def _list_page(name: str) -> Callable[[dict], tuple[str, str] | None]:
    def observe(findings: dict) -> tuple[str, str] | None:
        probe = findings.get("lists", {}).get(name) or {}
        if probe.get("max_page") is None:
            return None  # not readable, or empty: nothing seen
        size = f"{probe['max_page']}" if probe.get("max_page_exact") else f"at least {probe['max_page']}"
        others = {p.get("max_page") for p in findings["lists"].values() if p.get("max_page_exact")}
        small = probe.get("max_page_exact") and probe["max_page"] < 20  # below the sandbox's default page
        return f"serves {size} records a page", "differs" if len(others) > 1 or small else "ok"
    return observe


def _list_paging(name: str) -> Callable[[dict], tuple[str, str] | None]:
    def observe(findings: dict) -> tuple[str, str] | None:
        probe = findings.get("lists", {}).get(name) or {}
        paging = probe.get("paging", "unknown")
        if paging == "unknown":
            return None
        said = f"; API says {probe['paging_refusal']!r}" if probe.get("paging_refusal") else ""
        observed = {"honoured": "skip honoured", "ignored": "skip ignored (skip 1 answers the skip-0 records)",
                    "refused": "limit/skip refused"}[paging] + said
        return observed, "ok" if paging == "honoured" else "differs"
    return observe


PROBES: dict[str, Callable[[dict], tuple[str, str] | None]] = {
    "auth.access_token": lambda f: ("issued", "ok"),
    "auth.expires_in": _token,
    "auth.scope": lambda f: (str(f["auth"]["scope"]), "ok" if f["auth"]["scope"] else "absent"),
    "auth.AccessToken-ExpireAt": _header("AccessToken-ExpireAt"),
    "http.data": lambda f: ("every answer has `data`", "ok"),
    "http.Date": _header("Date"),
    "http.RateLimit-Limit": _header("RateLimit-Limit"),
    "http.RateLimit-Remaining": _header("RateLimit-Remaining"),
    "http.RateLimit-TTL": _header("RateLimit-TTL"),
    "http.Retry-After": _header("Retry-After"),
    "http.lastUpdate clock = Date clock": _clock,
    "http.second precision": lambda f: ((f"{f['precision']['sub_second']} of {f['precision']['sampled']} "
                                        "lastUpdate values with a fraction"),
                                        "differs" if f["precision"]["sub_second"] else "ok"),
    "http.date-only at UTC midnight": _date_only,
    "lists.page size": _page,
    "lists.updatedSince/updatedUntil": lambda f: _support(f, "window"),
    "lists.orderBy=lastUpdate": lambda f: _support(f, "ordering"),
    "lists.order=1 ascending": lambda f: _support(f, "ordering"),
    "lists.inclusive window bounds": lambda f: (
        "exclusive on " + ", ".join(n for n, p in f["lists"].items() if p.get("inclusive") is False)
        if any(p.get("inclusive") is False for p in f["lists"].values()) else "inclusive where honoured", "ok"),
    "lists.stable tie order": _ties,
    "customers.deleted customers listed": _deleted,
    "documents.credit note sign": lambda f: (
        f"{f['credit_note_sign']['positive']} positive, {f['credit_note_sign']['negative']} negative",
        "differs" if f["credit_note_sign"]["negative"] else "ok"),
    "supplier_documents.credit note sign": lambda f: (
        f"{f['supplier_credit_note_sign']['positive']} positive, {f['supplier_credit_note_sign']['negative']} negative",
        "differs" if f["supplier_credit_note_sign"]["negative"] else "ok")
        if "supplier_credit_note_sign" in f else None,
    "webhooks.read scope": lambda f: (f["lists"]["webhooks"]["error"] or "readable with 'read'", "ok"),
    **{f"{name}.page size": _list_page(name) for name in LIST_PATHS},
    **{f"{name}.limit/skip": _list_paging(name) for name in LIST_PATHS},
}


def _field_line(row: LedgerRow, presence: dict[str, Any]) -> tuple[str, str] | None:
    if presence["status"] == "no sample":
        return None
    observed = f"{presence['status']} ({presence['non_null']} with a value, {presence['carried']} carry the " \
               f"key, of {presence['sampled']})"
    return observed, "absent" if presence["status"] == "absent" else "ok"


def report_lines(findings: dict) -> list[ReportLine]:
    """One line per ledger row the findings say something about, in ledger order."""
    lines: list[ReportLine] = []
    if findings.get("fatal"):
        return lines
    for row in LEDGER:
        if row.key in PROBES:
            probed = PROBES[row.key](findings)
            if probed is None:
                continue
            observed, status = probed
        elif row.key in findings.get("fields", {}):
            seen = _field_line(row, findings["fields"][row.key])
            if seen is None:
                continue
            observed, status = seen
        else:
            continue
        lines.append(ReportLine(row.key, observed, status, row.behaviour))
    return lines
