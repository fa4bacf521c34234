"""The background application user: deterministic steps, every kind of change, invariants, prompt stop."""

import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.generator import generate
from invoicing_sandbox.mutator import WEIGHTS, Mutator

# alone, after the parallel phase (scripts/test): the mutator's rate is counted against the clock
pytestmark = pytest.mark.serial

try:
    from .test_domain_invariants import check_invariants
except ImportError:  # tests/invoicing_sandbox is not a package
    from test_domain_invariants import check_invariants

END = datetime(2026, 3, 10, 12, 0, tzinfo=timezone.utc)


def generated(scale=300):
    clock = Clock(fixed=END)
    portal = Portal(clock, SandboxConfig())
    generate(portal, seed=4, scale=scale, end=END)
    return portal, clock


def run_steps(portal, clock, steps, seed=9):
    mutator = Mutator(portal, rate_per_s=0, seed=seed)
    kinds = []
    for _ in range(steps):
        clock.advance(timedelta(seconds=1))
        kinds.append(mutator.step())
    return mutator, kinds


def test_steps_are_deterministic():
    first, clock_a = generated()
    second, clock_b = generated()
    _, kinds_a = run_steps(first, clock_a, 150)
    _, kinds_b = run_steps(second, clock_b, 150)
    assert kinds_a == kinds_b
    assert first.snapshot("documents") == second.snapshot("documents")
    assert first.snapshot("customers") == second.snapshot("customers")


def test_every_kind_of_change_happens_and_invariants_hold():
    portal, clock = generated()
    events = []
    portal.listeners.append(lambda name, data: events.append(name))
    mutator, kinds = run_steps(portal, clock, 900)
    assert set(mutator.counts) == set(WEIGHTS), set(WEIGHTS) - set(mutator.counts)
    assert "none" not in kinds
    check_invariants(portal)
    assert {
        "document.created",
        "invoice.paid",
        "customer.updated",
        "supplier-document.status-change",
        "supplier.deleted",
        "quotation.accepted",
        "product.updated",
    } <= set(events)


def test_each_step_moves_a_last_update_to_now():
    portal, clock = generated(100)
    mutator = Mutator(portal, rate_per_s=0, seed=1)
    resources = ("items", "customers", "documents", "transactions", "suppliers", "supplier_documents")
    for _ in range(40):
        clock.advance(timedelta(seconds=1))
        kind = mutator.step()
        stamp = clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        touched = [r for name in resources for r in portal.snapshot(name) if r["lastUpdate"] == stamp]
        deleted = kind in ("delete_item", "delete_draft", "delete_supplier")
        assert touched or deleted, kind


def test_thread_runs_at_its_rate_and_stops_promptly():
    portal, _ = generated(60)
    portal.clock = Clock()  # real time, as when serving
    mutator = Mutator(portal, rate_per_s=40, seed=2)
    mutator.start()
    time.sleep(0.5)
    began = time.monotonic()
    mutator.stop()
    assert time.monotonic() - began < 1.0
    done = sum(mutator.counts.values())
    assert 5 <= done <= 40
    time.sleep(0.1)
    assert sum(mutator.counts.values()) == done


def test_readers_and_the_mutator_run_concurrently():
    portal, _ = generated(300)
    portal.clock = Clock()  # real time, as when serving
    mutator = Mutator(portal, rate_per_s=200, seed=3)
    errors, pages = [], []

    def read() -> None:
        try:
            for skip in range(0, 3000, 100):
                params = {"orderBy": "lastUpdate", "limit": "100", "skip": str(skip)}
                pages.append(portal.list("documents", params))
                portal.list("customers", {"orderBy": "dueAmount", "order": "-1"})
        except Exception as error:  # reported below
            errors.append(error)

    reader = threading.Thread(target=read)
    mutator.start()
    reader.start()
    reader.join(20)
    time.sleep(0.2)
    mutator.stop()
    assert not errors and len(pages) == 30
    assert sum(mutator.counts.values()) > 10
    check_invariants(portal)
