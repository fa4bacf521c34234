"""Security review 2 (main `4f148c4`), L1-L3: a forged budget row, odd `Date` headers, hostile answers.

- L1: the shared budget's row (PostgreSQL, as the review wrote it; and the machine's file) with a forged grid:
  step 0 (was: `ZeroDivisionError` in every process), 100 s or -1 s (was: `acquire()` stalled past 20 s), and a
  slot count past the rate. Now the state is dropped for the process's own: a grant within a second, and the row
  no longer holds the forged grid.
- L2, L3: `invoicing-warehouse sync` (its entry point, in this process) through the tamper proxy in front of the
  sandbox, each from a copy of one successful sync (harness/bad_input_cases.py). `Date: ... -0000` or two `Date`
  headers (was: `TypeError`, exit 2 on every run) are absorbed: exit 0 and the warehouse equals the sandbox's
  records. A page longer than its `limit`, an answer past the byte cap, nesting 100,000 deep, `1e308` and `NaN`
  (was: 4.4 GB accepted, tracebacks, a NULL amount) are refused: non-zero exit, a message naming `GET /customers`,
  no traceback, and nothing lost (the warehouse and dlt's state identical before and after).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest

from harness.bad_input_cases import BadInputSuite
from harness.tamper_proxy import Exchange, TamperProxy
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.answers import parse_json
from pipelines.invoicing.http.database_budget import BudgetDatabase, DatabaseBudget
from pipelines.invoicing.http.host_budget import HostBudget
from pipelines.invoicing.http.ratelimit import Grant, RateLimiter

SECRET = "S3CRET-answers-attack-7d2a"
FORGED_GRIDS = {  # (base, step, per_window); "now": the store's clock, as the review wrote it
    "review: [now, 0, 10]": ("now", 0, 10),
    "review: [now, 100, 10]": ("now", 100, 10),
    "review: [now, -1, 10]": ("now", -1, 10),
    "step 0 on a phase": (0.5, 0, 10),
    "step 100 s on a phase": (0.5, 100, 10),
    "step -1 s on a phase": (0.5, -1, 10),
    "0 slots a window": (0.5, 0.08, 0),
    "1,000 slots a window": (0.5, 0.001, 1000),
}


def grant_within(seconds: float, limiter: RateLimiter) -> Grant | BaseException:
    """`limiter.acquire()` in a thread: its grant or its error; fails the row if it still waits after `seconds`."""
    outcome: list[Grant | BaseException] = []

    def take() -> None:
        try:
            outcome.append(limiter.acquire())
        except BaseException as error:  # noqa: BLE001  # the outcome is what the row asserts
            outcome.append(error)

    thread = threading.Thread(target=take, daemon=True)  # a stalled acquire cannot hang the suite
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"acquire() still waits after {seconds} s"
    return outcome[0]


@pytest.fixture(scope="module")
def budget_database(postgres_cluster) -> BudgetDatabase:
    dsn = postgres_cluster.create_database("attack_budget_rows")
    return BudgetDatabase(dsn, dsn, postgres_cluster.password)


@pytest.mark.parametrize("forged", FORGED_GRIDS, ids=list(FORGED_GRIDS))
def test_l1_a_forged_grid_in_the_budget_row_is_dropped(budget_database, forged):
    egress = f"198.51.100.{list(FORGED_GRIDS).index(forged) + 40}"
    budget = DatabaseBudget("http://127.0.0.1:9/api/v2", budget_database, egress=egress)
    RateLimiter(10, clock=budget.clock, shared=budget).acquire()  # the row, as a process leaves it
    base, step, per_window = FORGED_GRIDS[forged]
    with budget.hold() as state:  # what anyone with the database's password can write (security review 2)
        state["grid"] = [budget.clock() if base == "now" else base, step, per_window]
    started = time.monotonic()
    answer = grant_within(5, RateLimiter(10, clock=budget.clock, shared=budget))
    assert isinstance(answer, Grant), f"acquire() raised {answer!r}"
    assert time.monotonic() - started < 2
    with budget.hold() as state:
        assert state["grid"] is None  # dropped: the process's own state (not locked yet) was saved over it
    budget.close()


@pytest.mark.parametrize("forged", ["review: [now, 0, 10]", "step 100 s on a phase", "1,000 slots a window"])
def test_l1_a_forged_grid_in_the_budget_file_is_dropped(tmp_path, forged):
    budget = HostBudget("http://127.0.0.1:9/api/v2", tmp_path)
    RateLimiter(10, shared=budget).acquire()
    base, step, per_window = FORGED_GRIDS[forged]
    saved = json.loads(budget.path.read_text())
    saved["state"]["grid"] = [time.monotonic() if base == "now" else base, step, per_window]
    budget.path.write_text(json.dumps(saved))
    answer = grant_within(5, RateLimiter(10, shared=budget))
    assert isinstance(answer, Grant), f"acquire() raised {answer!r}"
    assert json.loads(budget.path.read_text())["state"]["grid"] is None


# ------------------------------------------------------------------------------------------------ L2, L3
@pytest.fixture(scope="module")
def suite(tmp_path_factory, module_sandbox_factory) -> BadInputSuite:
    """One small sandbox (its own limit off: no row is about pacing) and one successful sync every row copies."""
    sandbox = module_sandbox_factory(seed=41, scale=30, rate_limit_per_s=0, client_secret=SECRET, real_date=True)
    answers = BadInputSuite(sandbox, tmp_path_factory.mktemp("answers"), SECRET, sync_args=("--rate-limit", "0"))
    answers.prepare()
    return answers


def a_customer(suite: BadInputSuite) -> dict:
    """One of the sandbox's customers as it serves them (what a tampered page is made of)."""
    with suite.writer() as writer:
        return writer.get("customers", limit=1, orderBy="name", order=1)[0]


def on_customer_pages(change: Callable[[Exchange], None], path: str = "/customers") -> Callable[[Exchange], None]:
    def tamper(exchange: Exchange) -> None:
        if exchange.method == "GET" and exchange.path == path and exchange.status == 200:
            change(exchange)
            exchange.tampered = True
    return tamper


def without_a_date(suite: BadInputSuite, name: str, tamper: Callable[[Exchange], None]) -> None:
    """A sync through the proxy goes on as when the service sends no `Date` (the contract's answer for its absence:
    windows frozen from the local clock, the read flagged, the gate holding the marts, exit 1 at most), with no
    error and every raw table equal to the sandbox's records."""
    workspace = suite.clone(name)
    suite.advance_clock()
    with TamperProxy(suite.sb.base_url, tamper) as proxy:
        result = suite.run(workspace, suite.env(workspace, base_url=proxy.base_url))
        assert proxy.tampered_requests, "the proxy changed no answer"
    assert result.returncode in (0, 1) and "no Date header" in result.output, result.output[-3000:]
    assert "Traceback" not in result.output and "TypeError" not in result.output
    assert "failed unexpectedly" not in result.output
    assert suite.truth_mismatches(workspace) == []


def refused(suite: BadInputSuite, name: str, tamper: Callable[[Exchange], None], *words: str,
            list_name: str = "customers",
            **env: str) -> None:
    """A sync through the proxy is refused naming `GET /<list_name>` and `words`, without a traceback, and nothing
    is lost: that list's raw table as it was, every raw table equal to the sandbox's records (the other lists,
    read whole, may be loaded: a list fails alone)."""
    workspace = suite.clone(name)
    suite.advance_clock()
    before = suite.fingerprint(workspace)
    with TamperProxy(suite.sb.base_url, tamper) as proxy:
        result = suite.run(workspace, {**suite.env(workspace, base_url=proxy.base_url), **env})
        assert proxy.tampered_requests, "the proxy changed no answer"
    output = result.output
    assert result.returncode != 0, output[-3000:]
    assert f"GET /{list_name}" in output and all(word in output for word in words), output[-3000:]
    assert "Traceback" not in output and SECRET not in output, output[output.find("Traceback"):][:3000]
    after = suite.fingerprint(workspace)
    assert after[f"db:invoicing_raw.{list_name}"] == before[f"db:invoicing_raw.{list_name}"]
    assert suite.truth_mismatches(workspace) == []


def test_l2_a_date_without_a_zone_is_treated_as_absent(suite):
    def no_zone(exchange: Exchange) -> None:
        for name in [name for name in exchange.headers if name.lower() == "date"]:
            exchange.headers[name] = exchange.headers[name].replace("GMT", "-0000")
            exchange.tampered = True
    without_a_date(suite, "date_no_zone", no_zone)


def test_l2_two_date_headers_are_treated_as_absent(suite):
    def twice(exchange: Exchange) -> None:
        dates = [value for name, value in exchange.headers.items() if name.lower() == "date"]
        exchange.extra_headers = [("Date", "Mon, 01 Jan 2001 00:00:00 GMT"), *[("Date", value) for value in dates]]
        exchange.headers = {name: value for name, value in exchange.headers.items() if name.lower() != "date"}
        exchange.tampered = True
    without_a_date(suite, "date_twice", twice)


def test_l3_a_page_longer_than_its_limit_is_malformed(suite):
    customer = a_customer(suite)

    def flood(exchange: Exchange) -> None:  # the review's 400,000 for limit=100, at a twentieth of the size
        exchange.body = json.dumps({"data": [customer] * 20_000}).encode()
    refused(suite, "page_too_long", on_customer_pages(flood), "20000 records for limit=")


def test_l3_an_answer_past_the_byte_cap_is_refused_unread(suite):
    customer = a_customer(suite)

    def heavy(exchange: Exchange) -> None:  # one record whose name is 3 MB: within the limit, past the cap
        exchange.body = json.dumps({"data": [{**customer, "name": "x" * 3_000_000}]}).encode()
    refused(suite, "answer_too_large", on_customer_pages(heavy), "larger than 1,048,576 bytes",
            INVOICING_MAX_ANSWER_BYTES=str(1 << 20))


def test_l3_nesting_100000_deep_is_malformed(suite):
    def deep(exchange: Exchange) -> None:
        exchange.body = b'{"data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    refused(suite, "deep_nesting", on_customer_pages(deep), "nests deeper")


@pytest.mark.parametrize("number", ["1e308", "NaN"])
def test_l3_a_number_no_record_holds_is_malformed(suite, number):
    customer = a_customer(suite)

    def huge(exchange: Exchange) -> None:
        record = json.dumps({**customer, "dueAmount": "NUMBER"})
        exchange.body = ('{"data": [' + record.replace('"NUMBER"', number) + "]}").encode()
    refused(suite, f"number_{number}", on_customer_pages(huge), number)


def test_l3_a_number_past_its_column_is_malformed(suite):
    with suite.writer() as writer:
        item = writer.get("items", limit=1, orderBy="name", order=1)[0]

    def rate(exchange: Exchange) -> None:  # a VAT rate of 1,000,000 %: within 1e14, past decimal(9,4)
        exchange.body = json.dumps({"data": [{**item, "vat": 1_000_000}]}).encode()
    refused(suite, "rate_past_its_column", on_customer_pages(rate, "/items"), "vat = 1000000 does not fit",
            list_name="items")


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "-1e14", "123456789012345678901234567890", "1" * 5000])
def test_l3_other_numbers_no_record_holds_are_malformed_naming_the_endpoint(number):
    with pytest.raises(InvoicingApiError) as raised:
        parse_json(b'{"data": [{"id": "a", "dueAmount": ' + number.encode() + b"}]}", "GET /customers", 200)
    assert raised.value.kind == "malformed" and "GET /customers" in str(raised.value)
    # and the figures a record does hold stay exact decimals
    assert parse_json(b'{"data": {"dueAmount": 99999999999999.99, "count": 12}}', "GET /x", 200) == {
        "data": {"dueAmount": Decimal("99999999999999.99"), "count": 12}}


def test_the_rows_leave_the_sandbox_and_the_golden_sync_as_they_were(suite):
    assert suite.truth_mismatches(suite.golden) == []  # the rows' proxies changed answers, never the records
    assert Path(suite.golden.warehouse).exists()
