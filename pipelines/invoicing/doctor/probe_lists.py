"""The doctor's list probes: per list, does the server honour, ignore or refuse the window and the ordering,
the largest page it serves and whether it honours `skip`, and what do its records carry (every ledger field present,
null or absent; the time of day of date-only fields; the newest `lastUpdate` against the answer's `Date`)."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pipelines.invoicing.capabilities import Support
from pipelines.invoicing.dates import parse_timestamp
from pipelines.invoicing.doctor.contract import field_rows
from pipelines.invoicing.doctor.probe_http import Answer, ProbeSession, header_time

ORDERED = {"orderBy": "lastUpdate"}
ASKED_PAGE = 1000  # far above any sane maximum: the answer shows the clamp (or the 400 naming the maximum)
# date-only fields by list (the product reads them as calendar dates)
DATE_ONLY_FIELDS = {
    "documents": ("emitDate", "dueDate"),
    "transactions": ("date",),
    "transaction_usages": ("date", "transaction.date"),
    "supplier_documents": ("issueDate", "dueDate", "paymentDate"),
}


@dataclass
class ListProbe:
    """What one list showed: support of window and ordering, sample records, newest lastUpdate vs Date."""

    name: str
    path: str
    error: str | None = None  # the list itself could not be read (e.g. a scope it needs)
    window: Support = "unknown"
    ordering: Support = "unknown"
    descending: bool | None = None
    inclusive: bool | None = None
    refusal: str | None = None  # the API's message when a parameter was refused
    sample: list[dict] = field(default_factory=list)
    sample_params: dict[str, Any] = field(default_factory=dict)  # the request that gave `sample`
    pages: list[tuple[dict[str, Any], list[dict]]] = field(default_factory=list)  # ordered pages read
    newest_minus_date_s: float | None = None
    first_page: list[dict] = field(default_factory=list)  # the answer of `sample_params` alone
    # the largest page this list served (exact when the list went on past it, or a 400 named it)
    max_page: int | None = None
    max_page_exact: bool = False
    paging: Support = "unknown"  # limit/skip: "ignored" when skip 1 answers the skip-0 records
    paging_refusal: str | None = None

    def summary(self) -> dict[str, Any]:
        """The JSON-able part (no records)."""
        return {"path": self.path, "error": self.error, "window": self.window, "ordering": self.ordering,
                "descending": self.descending, "inclusive": self.inclusive, "refusal": self.refusal,
                "records_sampled": len(self.sample), "newest_minus_date_s": self.newest_minus_date_s,
                "max_page": self.max_page, "max_page_exact": self.max_page_exact, "paging": self.paging,
                "paging_refusal": self.paging_refusal}


def last_update(record: dict) -> str | None:
    """The record's lastUpdate text, or None."""
    value = record.get("lastUpdate")
    return value if isinstance(value, str) else None


def _sorted(records: list[dict], descending: bool = False) -> bool:
    stamps: list[str] = []
    for record in records:
        stamp = last_update(record)
        if stamp is None:
            return False
        stamps.append(stamp)
    pairs = list(itertools.pairwise(stamps))
    return all(b <= a for a, b in pairs) if descending else all(a <= b for a, b in pairs)


def probe_list(session: ProbeSession, name: str, path: str, page: int) -> ListProbe:
    """Ordering (ascending and descending pages), then the window `[t, t]` around a sampled record."""
    probe = ListProbe(name, path)
    params = {**ORDERED, "order": 1, "limit": page}
    ascending = session.get(path, params)
    maximum = _named_maximum(ascending)
    if maximum is not None:  # this list's own maximum is below `page`, and it refuses larger limits
        probe.max_page, probe.max_page_exact, page = maximum, True, maximum
        params = {**params, "limit": page}
        ascending = session.get(path, params)
    if ascending.refused and _names_paging(ascending):  # limit/skip unknown here: the default page only
        assert ascending.error is not None  # a refusal is a 400 error
        probe.paging, probe.paging_refusal = "refused", ascending.error.api_message
        params = {**ORDERED, "order": 1}
        ascending = session.get(path, params)
    if ascending.refused:
        assert ascending.error is not None  # a refusal is a 400 error
        probe.ordering, probe.refusal = "refused", ascending.error.api_message
        params = {} if probe.paging == "refused" else {"limit": page}
        ascending = session.get(path, params)
    if ascending.error is not None:
        probe.error = f"{ascending.error.kind}: HTTP {ascending.error.status}: {ascending.error.api_message}"
        return probe
    probe.sample, probe.sample_params, probe.first_page = ascending.records, params, ascending.records
    newest = [(ascending, ascending.records)]
    if probe.ordering != "refused":
        probe.ordering = "honoured" if _sorted(ascending.records) else "ignored"
        probe.pages.append((params, ascending.records))
    if probe.ordering != "refused" and probe.paging != "refused" and len(ascending.records) >= page:
        # the newest records are not on the first ascending page: read the list from its other end
        descending_params = {**ORDERED, "order": -1, "limit": page}
        descending = session.get(path, descending_params)
        if descending.error is None:
            probe.pages.append((descending_params, descending.records))
            probe.descending = _sorted(descending.records, descending=True) and (
                len(descending.records) < 2 or descending.records != ascending.records)
            newest.append((descending, descending.records))
            probe.sample = probe.sample + [r for r in descending.records
                                           if r.get("id") not in {s.get("id") for s in probe.sample}]
    probe.newest_minus_date_s = _newest_minus_date(newest)
    _probe_window(session, probe, page)
    return probe


def _names_paging(answer: Answer) -> bool:
    """A 400 naming `limit` or `skip` but no maximum: the list does not page by these names."""
    message = (answer.error.api_message or "") if answer.error is not None else ""
    return bool(re.search(r"\b(limit|skip)\b", message)) and _named_maximum(answer) is None


def _named_maximum(answer: Answer) -> int | None:
    """The maximum a 400 names ("limit must be at most 30"), else None."""
    if not answer.refused or answer.error is None:
        return None
    named = re.search(r"at most (\d+)", answer.error.api_message or "")
    return int(named.group(1)) if named else None


def probe_paging(session: ProbeSession, probe: ListProbe) -> None:
    """The largest page the list serves and whether it honours `skip`, in one to three requests.

    A first page as large as the limit asked is asked again with a limit far above any maximum (the clamp
    shows, or the 400 names the maximum). Then the same request with `skip=1`: a 400 says paging is refused,
    the same records say `skip` (and `limit`) are ignored, and a page as large as the first shows the list
    goes on past it: the first page's size is then exactly the maximum."""
    if probe.paging == "refused":
        probe.max_page = len(probe.first_page) or None  # the default page: whether it is all, nobody knows
        return
    if probe.error is not None:
        if "HTTP 400" not in probe.error:
            return  # not readable at all (e.g. the scope it needs): nothing to say about its paging
        plain = session.get(probe.path)  # refused with `limit` (and without the ordering): paging refused
        if plain.error is None:
            probe.paging, probe.paging_refusal = "refused", probe.error
            probe.max_page = len(plain.records) or None
        return
    params, first = dict(probe.sample_params), probe.first_page
    if probe.max_page is None and len(first) >= params["limit"]:
        big = session.get(probe.path, {**params, "limit": ASKED_PAGE})
        maximum = _named_maximum(big)
        if maximum is not None:
            probe.max_page, probe.max_page_exact = maximum, True
        elif big.error is None:
            params, first = {**params, "limit": ASKED_PAGE}, big.records
    if probe.max_page is None:
        probe.max_page = len(first) or None
    if not first:
        return  # an empty list: skip proves nothing
    again = session.get(probe.path, {**params, "skip": 1})
    if again.refused:
        assert again.error is not None  # a refusal is a 400 error
        probe.paging, probe.paging_refusal = "refused", again.error.api_message
        return
    if again.error is not None:
        return
    ids = {r.get("id") for r in again.records}
    if ids == {r.get("id") for r in first}:
        probe.paging = "ignored"
        return
    probe.paging = "honoured"
    probe.max_page_exact = probe.max_page_exact or len(again.records) >= len(first)


def _probe_window(session: ProbeSession, probe: ListProbe, page: int) -> None:
    dated = [r for r in probe.sample if last_update(r)]
    if not dated:
        return
    target = dated[len(dated) // 2]
    moment = last_update(target)
    window = {"updatedSince": moment, "updatedUntil": moment}
    answer = session.get(probe.path, window if probe.paging == "refused" else {**window, "limit": page})
    if answer.refused:
        assert answer.error is not None  # a refusal is a 400 error
        probe.window = "refused"
        probe.refusal = probe.refusal or answer.error.api_message
        return
    if answer.error is not None:
        return
    records = answer.records
    if any(_instant(last_update(r)) != _instant(moment) for r in records):
        probe.window = "ignored"
        return
    probe.window = "honoured"
    probe.inclusive = any(r.get("id") == target.get("id") for r in records)


def _instant(text: str | None):
    try:
        return parse_timestamp(text) if text else None
    except ValueError:
        return text


def _newest_minus_date(answers: list[tuple[Answer, list[dict]]]) -> float | None:
    """max(lastUpdate) − Date over the answers (seconds; positive: lastUpdate's clock runs ahead)."""
    best = None
    for answer, records in answers:
        server_time = header_time(answer.headers)
        stamps = [_instant(last_update(r)) for r in records if last_update(r)]
        stamps = [s for s in stamps if s is not None and not isinstance(s, str)]
        if server_time is None or not stamps:
            continue
        gap = (max(stamps) - server_time).total_seconds()
        best = gap if best is None else max(best, gap)
    return best


def value_at(record: dict, json_path: str) -> tuple[bool, Any]:
    """(carried, value) of a dotted path: carried is False when a key on the way is absent."""
    current: Any = record
    for part in json_path.split("."):
        if not isinstance(current, dict) or part not in current:
            return False, None
        current = current[part]
    return True, current


def field_presence(samples: dict[str, list[dict]]) -> dict[str, dict[str, Any]]:
    """For every ledger field row: present (some record has a value), null (carried, always null), absent
    (no record carries the key) or `no sample`, with the counts behind it."""
    result = {}
    for row in field_rows():
        records = samples.get(row.resource)
        if not records:
            result[row.key] = {"status": "no sample", "sampled": 0, "carried": 0, "non_null": 0}
            continue
        carried = non_null = 0
        for record in records:
            has, value = value_at(record, row.json_path)
            carried += has
            non_null += has and value is not None
        status = "present" if non_null else "null" if carried else "absent"
        result[row.key] = {"status": status, "sampled": len(records), "carried": carried, "non_null": non_null}
    return result


def date_only_times(samples: dict[str, list[dict]]) -> dict[str, Any]:
    """Time of day (UTC) of every date-only value sampled, per field, and the midnight convention seen."""
    per_field: dict[str, dict[str, int]] = {}
    for name, paths in DATE_ONLY_FIELDS.items():
        for json_path in paths:
            times: Counter[str] = Counter()
            for record in samples.get(name, []):
                _, value = value_at(record, json_path)
                if isinstance(value, str) and "T" in value:
                    times[value.split("T", 1)[1][:5]] += 1
            if times:
                per_field[f"{name}.{json_path}"] = dict(times)
    seen = set().union(*(set(t) for t in per_field.values())) if per_field else set()
    if not seen:
        zone = "unknown"
    elif seen == {"00:00"}:
        zone = "UTC midnight"
    elif seen <= {"22:00", "23:00"}:
        zone = "Europe/Paris midnight"
    else:
        zone = "mixed"
    return {"zone": zone, "fields": per_field}
