"""List queries: validate the query string, then walk a pre-sorted order and build only the page."""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping

from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.errors import bad_request, not_found
from invoicing_sandbox.served import served_params

from .filters import FILTERS, parse_enum, parse_time
from .orders import CUSTOMER_TRANSACTION_ORDERS, DEFAULT_ORDER, KEY_FUNCTIONS

SHARED_PARAMETERS = ("orderBy", "order", "limit", "skip", "updatedSince", "updatedUntil")
# below this many candidates, sorting them beats walking the whole order with predicates
_SMALL_CANDIDATE_SET = 2000
# deep pages of a filtered list: the full match list is computed once and kept until the next write
_CACHE_FROM_SKIP = 1000
_CACHE_SIZE = 16


def _parse_count(name: str, text: str) -> int:
    try:
        value = int(text.strip())
    except (ValueError, AttributeError):
        raise bad_request(f"query parameter {name} must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise bad_request(f"query parameter {name} must be a non-negative integer, got {text!r}")
    return value


def page_size(params: Mapping[str, str], config, maximum: int | None = None) -> int:
    """`limit`: default and maximum (`maximum`, else the config's); above the maximum it is clamped or
    refused."""
    maximum = maximum if maximum is not None else config.max_page_size
    if "limit" not in params:
        return min(config.default_page_size, maximum)
    limit = _parse_count("limit", params["limit"])
    if limit == 0:
        raise bad_request("query parameter limit must be at least 1")
    if limit > maximum:
        if config.page_size_policy == "reject":
            raise bad_request(f"query parameter limit must be at most {maximum}, got {limit}")
        return maximum
    return limit


def _parent_scope(state, resource: str, parent: tuple[str, str] | None):
    """(predicate, candidates, parameters the nested list does not accept, allowed orders) of a parent."""
    if parent is None:
        return None, None, (), tuple(KEY_FUNCTIONS[resource])
    kind, parent_id = parent
    if kind == "customers" and resource == "transactions":
        state.record("customers", parent_id)
        return (
            (lambda r: r["customerId"] == parent_id),
            state.transactions_by_customer.get(parent_id, ()),
            ("customerId",),
            CUSTOMER_TRANSACTION_ORDERS,
        )
    if kind == "documents" and resource == "transaction_usages":
        state.record("documents", parent_id)
        return (
            (lambda r: parent_id in (r.get("invoiceId"), r.get("creditNoteId"))),
            state.usages_by_document.get(parent_id, ()),
            ("customerId", "documentId"),
            tuple(KEY_FUNCTIONS[resource]),
        )
    raise not_found("")


def list_ids(
    state,
    resource: str,
    params: Mapping[str, str],
    parent: tuple[str, str] | None = None,
    contract: ContractProfile | None = None,
) -> list[str]:
    """Ids of the requested page, in order; `contract` (the HTTP layer's) changes what is listed: deleted
    customers hidden, ties shuffled, its page-size maximum, its refused parameters and spellings."""
    if contract is None or contract.is_default:
        return _list_ids(state, resource, params, parent)
    params = served_params(resource, params, contract)
    hide_deleted = resource == "customers" and contract.deleted_customers == "hidden"
    maximum = state.config.served_max_page_size(resource)
    if contract.tie_order == "id":
        return _list_ids(state, resource, params, parent, maximum, hide_deleted)
    # shuffled ties: the whole ordered list, each run of equal sort keys in a new order, then the page
    limit = page_size(params, state.config, maximum)
    skip = _parse_count("skip", params["skip"]) if "skip" in params else 0
    everything = max(1, len(state.stores[resource].records) if resource in state.stores else 1)
    whole = {name: value for name, value in params.items() if name not in ("limit", "skip")}
    whole["limit"] = str(everything)
    ids = _list_ids(state, resource, whole, parent, everything, hide_deleted)
    order_by = params.get("orderBy") or DEFAULT_ORDER[resource]
    keys = state.stores[resource].index(order_by).keys
    draw = random.Random(contract.tie_seed * 1_000_003 + next(state.tie_draws))
    shuffled: list[str] = []
    for _, run in itertools.groupby(ids, key=keys.__getitem__):
        group = list(run)
        draw.shuffle(group)
        shuffled.extend(group)
    return shuffled[skip : skip + limit]


def _list_ids(
    state,
    resource: str,
    params: Mapping[str, str],
    parent: tuple[str, str] | None = None,
    maximum: int | None = None,
    hide_deleted: bool = False,
) -> list[str]:
    if resource not in FILTERS:
        raise not_found("")
    filters = FILTERS[resource]
    parent_predicate, parent_candidates, refused, orders = _parent_scope(state, resource, parent)
    for name in params:
        if (name not in SHARED_PARAMETERS and name not in filters) or name in refused:
            raise bad_request(f"unknown query parameter {name}")
    order_by = parse_enum("orderBy", params.get("orderBy") or DEFAULT_ORDER[resource], orders)
    descending = parse_enum("order", params.get("order", "1"), ("1", "-1")) == "-1"
    limit = page_size(params, state.config, maximum)
    skip = _parse_count("skip", params["skip"]) if "skip" in params else 0

    predicates, candidate_sets = [], []
    if hide_deleted:
        predicates.append(_not_deleted)
    if parent_predicate is not None:
        predicates.append(parent_predicate)
        candidate_sets.append(parent_candidates)
    for name, value in params.items():
        if name in filters:
            predicate, candidates = filters[name](value, state)
            predicates.append(predicate)
            if candidates is not None:
                candidate_sets.append(candidates)

    store = state.stores[resource]
    order = store.index(order_by)
    entries = order.entries
    start, stop = 0, len(entries)
    since = parse_time("updatedSince", params["updatedSince"]) if "updatedSince" in params else None
    until = parse_time("updatedUntil", params["updatedUntil"]) if "updatedUntil" in params else None
    in_window = None
    if since is not None or until is not None:

        def in_window(record: dict) -> bool:
            stamp = record["lastUpdate"]
            return (since is None or stamp >= since) and (until is None or stamp <= until)

        low, high = (1, since or ""), (1, until or "\U0010ffff")
        if order_by == "lastUpdate":  # the window is a slice of the order itself
            start, stop = order.window(low, high)
        else:
            window = store.index("lastUpdate")
            w_start, w_stop = window.window(low, high)
            predicates.append(in_window)
            if w_stop - w_start < _SMALL_CANDIDATE_SET:
                candidate_sets.append([rid for _, rid in window.entries[w_start:w_stop]])

    if candidate_sets:
        smallest = min(candidate_sets, key=len)
        if len(smallest) < _SMALL_CANDIDATE_SET:
            keys = order.keys
            ordered = sorted(((keys[rid], rid) for rid in smallest if rid in keys), reverse=descending)
            if in_window is not None and in_window not in predicates:
                predicates.append(in_window)  # the slice [start, stop) is not applied on this path
            return _walk(ordered, 0, len(ordered), False, predicates, store.records, skip, limit)
    if predicates and skip >= _CACHE_FROM_SKIP and "documentStatus" not in params:  # LATE moves with the date
        cache = state.list_cache
        key = (
            resource,
            parent,
            hide_deleted,
            order_by,
            descending,
            start,
            stop,
            tuple(sorted((k, v) for k, v in params.items() if k not in ("limit", "skip"))),
            tuple(s.version for s in state.stores.values()),
        )
        matches = cache.get(key)
        if matches is None:
            matches = _walk(entries, start, stop, descending, predicates, store.records, 0, len(entries))
            cache[key] = matches
            while len(cache) > _CACHE_SIZE:
                cache.popitem(last=False)
        return matches[skip : skip + limit]
    return _walk(entries, start, stop, descending, predicates, store.records, skip, limit)


def _not_deleted(record: dict) -> bool:
    return not record.get("deleted")


def _walk(
    entries: list,
    start: int,
    stop: int,
    descending: bool,
    predicates: list,
    records: dict,
    skip: int,
    limit: int,
) -> list[str]:
    if not predicates:
        if descending:
            high = stop - skip
            low = max(start, high - limit)
            return [rid for _, rid in reversed(entries[low : max(low, high)])]
        first = start + skip
        return [rid for _, rid in entries[first : min(stop, first + limit)]]
    if limit <= 0:
        return []
    positions = range(stop - 1, start - 1, -1) if descending else range(start, stop)
    page: list[str] = []
    for position in positions:
        rid = entries[position][1]
        record = records[rid]
        if all(predicate(record) for predicate in predicates):
            if skip:
                skip -= 1
                continue
            page.append(rid)
            if len(page) >= limit:
                break
    return page
