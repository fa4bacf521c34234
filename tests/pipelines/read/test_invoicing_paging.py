"""Keyset paging under a clamping server, huge timestamp ties, and data changing between pages."""

from __future__ import annotations

import random
from datetime import timedelta

import httpx
import pytest

from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.read.paging import ListRequests, PageSizes, WindowNotHonoured, keyset_pages, skip_pages
from tests.pipelines.invoicing_fakes import (
    BASE_URL,
    CLIENT_ID,
    CLIENT_SECRET,
    SERVER_NOW,
    FakeApi,
    iso,
    make_records,
)

UNTIL = SERVER_NOW - timedelta(seconds=5)
START = SERVER_NOW - timedelta(days=3)


def read_all(api: FakeApi, path: str = "/documents", since=None, sizes: PageSizes | None = None):
    sizes = sizes or PageSizes()
    with InvoicingClient(ClientSettings(BASE_URL, CLIENT_ID, CLIENT_SECRET, rate_limit_per_s=0),
                         transport=api.transport()) as client:
        pages = list(keyset_pages(ListRequests(client.get, path, sizes, "documents"), since, UNTIL))
    records = [r for p in pages for r in p.records]
    return records, pages


def list_requests(api: FakeApi, path: str = "/documents") -> list:
    return [r for r in api.requests if r.url.path.endswith(path)]


def test_every_request_asks_ascending_lastupdate_order_explicitly():
    api = FakeApi({"/documents": make_records(250, START)})
    read_all(api)
    for request in list_requests(api):
        assert request.url.params["orderBy"] == "lastUpdate" and request.url.params["order"] == "1"
        assert request.url.params["updatedUntil"] == iso(UNTIL)


def test_a_server_that_clamps_the_limit_loses_nothing():
    data = make_records(1000, START, per_second=3)
    api = FakeApi({"/documents": data}, page_max=37)
    records, pages = read_all(api)
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in data)
    assert len(records) == 1000
    # one record of overlap per page: 37 asked-and-clamped, 36 new per page after the first
    assert len(list_requests(api)) <= 1000 // 36 + 3
    assert pages[-1].done


def test_a_short_first_page_is_not_taken_for_the_end_until_the_page_size_is_known():
    api = FakeApi({"/documents": make_records(37, START)}, page_max=37)
    records, _ = read_all(api)
    assert len(records) == 37
    assert len(list_requests(api)) == 2  # 37 could be a clamp: one more request proves the end


def test_a_page_size_confirmed_on_this_list_in_this_run_ends_a_window_in_one_request():
    api = FakeApi({"/documents": make_records(40, START)})
    sizes = PageSizes()
    sizes.observe("/documents", 100, 100)  # this list filled a page of 100 earlier in the run
    records, pages = read_all(api, sizes=sizes)
    assert len(records) == 40 and len(pages) == 1 and pages[0].done
    assert len(list_requests(api)) == 1


def test_a_page_size_confirmed_on_another_list_ends_nothing():
    # /items served pages of 100 in this run; /documents serves at most 30 (its own maximum, clamped)
    data = make_records(95, START)
    api = FakeApi({"/documents": data}, page_max=30)
    sizes = PageSizes()
    sizes.observe("/items", 100, 100)
    records, _ = read_all(api, sizes=sizes)
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in data)


def test_a_page_size_from_an_earlier_run_never_ends_a_read():
    # pages of 100 last run (on this list and as the old cross-list "*"); at most 12 now, below 20
    data = make_records(40, START)
    api = FakeApi({"/documents": data}, page_max=12)
    records, _ = read_all(api, sizes=PageSizes({"/documents": 100, "*": 100}))
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in data)
    # a window of 12 under the same hints, served whole: 12 could be a clamp, one more request proves the end
    api = FakeApi({"/documents": make_records(12, START)})
    records, _ = read_all(api, sizes=PageSizes({"/documents": 100, "*": 100}))
    assert len(records) == 12 and len(list_requests(api)) == 2


def test_a_maximum_that_shrank_since_the_last_run_loses_nothing():
    data = make_records(130, START)
    api = FakeApi({"/documents": data}, page_max=30)  # the server served 50 last run, 30 now
    records, _ = read_all(api, sizes=PageSizes({"/documents": 50, "*": 50}))
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in data)


def test_a_400_on_a_large_limit_whose_message_names_no_limit_halves_it():
    data = make_records(130, START)
    api = FakeApi({"/documents": data}, page_max=50)
    original = api._list

    def strict(path, request):
        if int(request.url.params["limit"]) > 50:
            return httpx.Response(400, json={"error": "bad request", "code": 400})
        return original(path, request)

    api._list = strict
    records, _ = read_all(api)
    assert len(records) == 130
    assert {r.url.params["limit"] for r in list_requests(api)} == {"100", "50"}


def test_thousands_of_records_sharing_one_second():
    tied = make_records(3000, START, per_second=10_000, prefix="a")
    around = make_records(50, START - timedelta(hours=1), prefix="b") + make_records(
        50, START + timedelta(hours=1), prefix="c")
    api = FakeApi({"/documents": tied + around})
    records, _ = read_all(api)
    assert len(records) == 3100 and len({r["id"] for r in records}) == 3100
    tie_requests = [r for r in list_requests(api) if r.url.params.get("updatedSince") == iso(START)]
    assert any(int(r.url.params["skip"]) > 2000 for r in tie_requests)  # skip walks inside the group


def test_pages_skip_the_records_of_a_second_already_read_but_the_last():
    data = make_records(3000, START, per_second=60)  # every page ends inside a second of 60 records
    api = FakeApi({"/documents": data})
    records, _ = read_all(api)
    assert len(records) == 3000 and len({r["id"] for r in records}) == 3000
    # 100 new records on the first page, 99 on each later one (it re-reads one as the check): 2,900 more
    # take 29 full pages and a short one of 30. Restarting every page at its second with skip 0 took 50.
    assert len(list_requests(api)) == 1 + 30


def test_a_tie_order_that_changes_under_the_read_is_caught_by_the_count_of_the_second():
    second = START + timedelta(hours=1)
    early = make_records(70, START, prefix="b")
    group = make_records(60, second, per_second=60, prefix="a")
    later = make_records(50, second + timedelta(seconds=1), prefix="c")
    api = FakeApi({"/documents": early + group + later})
    swapped = {group[5]["id"]: group[45]["id"], group[45]["id"]: group[5]["id"]}

    def reorder(api: FakeApi, call: int) -> None:
        if call == 1:  # after the first page read 30 of the group: two records trade places in its order
            api.tie_key = lambda record: swapped.get(record["id"], record["id"])

    api.between_pages = reorder
    records, _ = read_all(api)
    # The second page still starts with the record read last (the 30th), so the check of positions passes;
    # it holds 31 records of the group at skip 29, one of them read before: 59 ids of 60.
    assert {r["id"] for r in records} == {r["id"] for r in early + group + later}
    assert len(records) == 180


def test_window_bounds_are_inclusive_and_records_outside_are_not_read():
    data = make_records(10, UNTIL - timedelta(seconds=4)) + [{"id": "f" * 24,
                                                              "lastUpdate": iso(UNTIL + timedelta(seconds=1))}]
    api = FakeApi({"/documents": data})
    records, _ = read_all(api, since=UNTIL - timedelta(seconds=2))
    assert sorted(r["lastUpdate"] for r in records) == [iso(UNTIL - timedelta(seconds=2))] + [
        iso(UNTIL - timedelta(seconds=1))] + [iso(UNTIL)]


@pytest.mark.parametrize("seed", range(8))
def test_records_changing_appearing_and_vanishing_between_pages_are_never_missed(seed):
    rng = random.Random(seed)
    data = make_records(1500, START, per_second=rng.choice([1, 5, 40, 300]))
    api = FakeApi({"/documents": [dict(r) for r in data]}, page_max=rng.choice([100, 37]))
    touched: set[str] = set()
    later = iter(range(10**6))

    def churn(api: FakeApi, call: int) -> None:
        rows = api.lists["/documents"]
        for _ in range(rng.randint(0, 6)):
            victim = rng.choice(rows)
            touched.add(victim["id"])
            if rng.random() < 0.3:
                rows.remove(victim)  # deleted upstream
            else:  # updated: lastUpdate moves to "now", past the frozen window
                victim["lastUpdate"] = iso(SERVER_NOW + timedelta(seconds=next(later) % 50))
        for _ in range(rng.randint(0, 2)):  # created now, past the window
            rows.append({"id": f"e{next(later):023x}", "lastUpdate": iso(SERVER_NOW)})

    api.between_pages = churn
    records, _ = read_all(api)
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), "a record was returned twice"
    untouched = {r["id"] for r in data} - touched
    assert untouched <= set(ids), f"{len(untouched - set(ids))} untouched records were missed"
    assert all(not r["id"].startswith("e") for r in records)


def test_a_late_visible_record_inside_the_window_ahead_of_the_position_is_read():
    data = make_records(300, START)
    api = FakeApi({"/documents": data})

    def appear(api: FakeApi, call: int) -> None:
        if call == 1:
            api.lists["/documents"].append({"id": "d" * 24, "lastUpdate": iso(START + timedelta(seconds=250))})

    api.between_pages = appear
    records, _ = read_all(api)
    assert "d" * 24 in {r["id"] for r in records} and len(records) == 301


def test_a_server_that_ignores_the_window_is_detected():
    data = make_records(20, START - timedelta(days=30)) + make_records(20, START, prefix="x")
    api = FakeApi({"/documents": data}, ignore_window=True)
    with pytest.raises(WindowNotHonoured):
        read_all(api, since=START)


def test_skip_scan_reads_a_list_whose_window_cannot_be_trusted():
    data = make_records(230, START)
    api = FakeApi({"/suppliers": data}, ignore_window=True)
    with InvoicingClient(ClientSettings(BASE_URL, CLIENT_ID, CLIENT_SECRET, rate_limit_per_s=0),
                         transport=api.transport()) as client:
        pages = list(skip_pages(ListRequests(client.get, "/suppliers", PageSizes(), "suppliers")))
    ids = [r["id"] for p in pages for r in p.records]
    assert sorted(ids) == sorted(r["id"] for r in data)


def test_a_server_that_refuses_a_large_limit_gets_the_size_it_names():
    data = make_records(130, START)
    api = FakeApi({"/documents": data}, page_max=50)
    refusal = httpx.Response(400, json={"error": "query parameter limit must be at most 50, got 100", "code": 400})
    original = api._list

    def strict(path, request):
        if int(request.url.params["limit"]) > 50:
            return refusal
        return original(path, request)

    api._list = strict
    records, _ = read_all(api)
    assert len(records) == 130
    assert {r.url.params["limit"] for r in list_requests(api)} == {"100", "50"}
