"""Frozen windows and one endpoint's read, against the in-memory API: slices, state, fallback."""

from __future__ import annotations

import itertools
import math
from datetime import timedelta

import pytest

from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings
from pipelines.invoicing.read.feed import Feed
from pipelines.invoicing.read.windows import Slice, plan_slices, split_range
from pipelines.invoicing.settings import WINDOW_LAG_S, WINDOW_OVERLAP_S
from tests.pipelines.invoicing_fakes import (
    BASE_URL,
    CLIENT_ID,
    CLIENT_SECRET,
    SERVER_NOW,
    FakeApi,
    iso,
    make_records,
)

UNTIL = SERVER_NOW - timedelta(seconds=WINDOW_LAG_S)


def test_first_run_reads_everything_up_to_the_frozen_end():
    assert plan_slices({}, UNTIL, from_scratch=False) == [Slice(None, UNTIL)]


def test_next_run_starts_at_the_committed_bound_minus_the_overlap():
    state = {"cursor": iso(UNTIL - timedelta(hours=1))}
    assert plan_slices(state, UNTIL, from_scratch=False) == [
        Slice(UNTIL - timedelta(hours=1, seconds=WINDOW_OVERLAP_S), UNTIL)]
    assert plan_slices(state, UNTIL, from_scratch=True) == [Slice(None, UNTIL)]


def test_an_interrupted_window_resumes_its_unfinished_slices_then_reads_the_new_range():
    old_end = UNTIL - timedelta(minutes=10)
    state = {"cursor": None, "window": {"until": iso(old_end), "slices": [
        {"since": iso(old_end - timedelta(days=3)), "until": iso(old_end - timedelta(days=2)), "done": True},
        {"since": iso(old_end - timedelta(days=1)), "until": iso(old_end), "done": False}]}}
    assert plan_slices(state, UNTIL, from_scratch=False) == [
        Slice(old_end - timedelta(days=1), old_end),
        Slice(old_end - timedelta(seconds=WINDOW_OVERLAP_S), UNTIL)]


def test_split_range_covers_every_second_exactly_once():
    since = UNTIL - timedelta(seconds=1000)
    ranges = split_range(since, UNTIL, 7)
    assert ranges[0][0] == since and ranges[-1][1] == UNTIL
    for (_, end), (start, _) in itertools.pairwise(ranges):
        assert start == end + timedelta(seconds=1)
    assert split_range(UNTIL, UNTIL, 8) == [(UNTIL, UNTIL)]


def make_feed(api: FakeApi, **options) -> Feed:
    client = InvoicingClient(ClientSettings(BASE_URL, CLIENT_ID, CLIENT_SECRET, rate_limit_per_s=0),
                             transport=api.transport())
    return Feed(client, with_events=False, **options)


def drain(feed: Feed, name: str) -> list[dict]:
    rows = []
    for _ in range(100):
        feed.begin_chunk(math.inf, 5.0)
        for batch in feed.take(name):
            rows += batch or []  # None: no page ready yet
        if feed.reads[name].completed or feed.error:
            break
    assert feed.error is None
    return rows


def test_a_large_first_window_is_read_in_parallel_slices_and_completes_at_the_frozen_end():
    data = make_records(3000, SERVER_NOW - timedelta(days=20), per_second=1)
    data = [dict(r, lastUpdate=iso(SERVER_NOW - timedelta(days=20) + timedelta(minutes=10 * i))) for i, r in
            enumerate(data[:2800])]
    api = FakeApi({"/documents": data})
    feed = make_feed(api)
    feed.prepare()
    read = feed.read("documents", {})
    rows = drain(feed, "documents")
    assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in data)
    assert len(read.slices) == 0 and read.completed
    requested_since = {r.url.params.get("updatedSince") for r in api.requests if r.url.path.endswith("/documents")}
    assert len(requested_since) > 8  # several slices ran
    state = read.state()
    assert state["cursor"] == iso(UNTIL) and state["window"] is None


@pytest.mark.parametrize("seconds", [1, 4])
def test_a_burst_of_changes_is_read_by_one_slice_in_the_fewest_pages(seconds):
    """A burst (1,000 changes within `seconds`, about a minute before the end of a 15-minute window) is read
    by one slice: its pages, dense as they are, say nothing of the quiet seconds after it."""
    burst_end = SERVER_NOW - timedelta(minutes=1)
    data = [dict(r, lastUpdate=iso(burst_end - timedelta(seconds=i * seconds // 1000)))
            for i, r in enumerate(make_records(1000, SERVER_NOW))]
    api = FakeApi({"/documents": data})
    feed = make_feed(api)
    feed.prepare()
    read = feed.read("documents", {"cursor": iso(UNTIL - timedelta(minutes=15))})
    rows = drain(feed, "documents")
    assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in data)
    assert read.completed
    # 100 records on the first page, 99 new on each later one (one re-read as the check): 900 more take 9
    # full pages and a short one. A split after a page at one second (or, in 4 seconds, after a page's two
    # seconds taken as the density of the rest of the window) also read empty slices of the window.
    assert len([r for r in api.requests if r.url.path.endswith("/documents")]) == 1 + 10


def test_state_committed_mid_window_resumes_without_loss_and_without_starting_over():
    data = [dict(r, lastUpdate=iso(SERVER_NOW - timedelta(days=5) + timedelta(minutes=3 * i)))
            for i, r in enumerate(make_records(2000, SERVER_NOW))]
    api = FakeApi({"/items": data})
    first = make_feed(api)
    first.prepare()
    read = first.read("items", {})
    first.begin_chunk(3, 10.0)  # a chunk of three pages is committed, then the process dies
    handed = [row for batch in first.take("items") if batch for row in batch]
    state = read.state()
    first.close()
    assert state["cursor"] is None and state["window"]["until"] == iso(UNTIL)
    assert 0 < len(handed) < len(data)

    resumed = make_feed(api)
    resumed.prepare()
    rest = drain_after(resumed, "items", state)
    assert {r["id"] for r in handed} | {r["id"] for r in rest} == {r["id"] for r in data}
    assert len(rest) < len(data)  # it did not start over


def drain_after(feed: Feed, name: str, state: dict) -> list[dict]:
    feed.read(name, state)
    return drain(feed, name)


def test_a_list_whose_window_is_ignored_falls_back_to_a_whole_read():
    data = make_records(250, SERVER_NOW - timedelta(days=40))
    api = FakeApi({"/suppliers": data}, ignore_window=True)
    feed = make_feed(api)
    feed.prepare()
    feed.read("suppliers", {"cursor": iso(SERVER_NOW - timedelta(days=1))})
    rows = drain(feed, "suppliers")
    assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in data)
    assert any("window not honoured" in note for note in feed.notes)
    assert feed.reads["suppliers"].state()["cursor"] == iso(UNTIL)


def test_a_quiet_window_skips_what_the_previous_run_saw_at_its_end():
    end = SERVER_NOW - timedelta(seconds=15)
    data = [{"id": f"{i:024x}", "lastUpdate": iso(end - timedelta(seconds=i))} for i in range(5)]
    api = FakeApi({"/items": data})
    feed = make_feed(api, page_sizes={"/items": 100})
    feed.prepare()
    seen = {r["id"]: r["lastUpdate"] for r in data[1:]}
    read = feed.read("items", {"cursor": iso(end), "overlap_seen": seen})
    rows = drain(feed, "items")
    assert [r["id"] for r in rows] == [data[0]["id"]]  # the one not seen at that lastUpdate
    # five records could be a clamp of /items (no page of it seen in this run): one more request proves the end
    assert sum(1 for r in api.requests if r.url.path.endswith("/items")) == 2
    assert set(read.state()["overlap_seen"]) == {r["id"] for r in data}


def test_sub_second_stamps_are_read_whole_with_a_cost_note_not_a_degraded_one():
    # N13: api-facts promise second precision; a server sending milliseconds is read by whole seconds (a
    # window restarting inside a second may look unhonoured and the list is read in full): slower, exact
    start = SERVER_NOW - timedelta(days=2)
    data = [dict(r, lastUpdate=r["lastUpdate"].replace("Z", f".{(i * 137) % 1000:03d}Z"))
            for i, r in enumerate(make_records(150, start, per_second=3))]
    api = FakeApi({"/items": data})
    feed = make_feed(api)
    feed.prepare()
    feed.read("items", {})
    rows = drain(feed, "items")
    assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in data)
    assert [n for n in feed.notes if n.startswith("items: sub-second lastUpdate")], feed.notes
    assert feed.degraded_notes == []
