"""The demo portal looks like a real French small business (issue 17 point 1, invoicing_sandbox/README.md "Demo data
calibration"): at demo scale, as of the sandbox's today, for several seeds,
- customers with an overdue invoice are 15-35 % of the customers owing something,
- open receivables more than 90 days past due are at most 10 % of the open amount,
- approved supplier payables already past due are at most 25 % of them (disputed bills wait on purpose),
and the payment behaviour behind them matches the published figures it is calibrated on: about one invoice
in three settled after its due date, 10-16 days late on average, DSO 35-65 days.

The figures are computed from the sandbox's own records with the aging rules of sql/ written out by hand
(harness/demo_figures.py); tests/sql/test_demo_figures_marts.py checks that the marts give the same.
"""

from datetime import UTC, datetime, timedelta

import pytest

from harness.demo_figures import demo_figures
from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.domain import Portal
from invoicing_sandbox.generator import generate
from invoicing_warehouse.demo.command import DEFAULT_SCALE

TODAY = datetime(2026, 11, 24, tzinfo=UTC)  # the sandbox's today: midnight UTC, where the history ends


def _figures(seed: int, today: datetime):
    portal = Portal(Clock(fixed=today), SandboxConfig())
    generate(portal, seed=seed, scale=DEFAULT_SCALE, end=today)
    return demo_figures(portal, today.date())


@pytest.mark.parametrize("seed", [1, 2, 3, 7])
def test_demo_portal_figures_are_those_of_a_real_business(seed):
    figures = _figures(seed, TODAY)
    assert figures.customers_with_open >= 40 and figures.payables >= 10, figures.summary()  # enough to judge
    assert 0.15 <= figures.overdue_customer_share <= 0.35, figures.summary()
    assert figures.over_90_share <= 0.10, figures.summary()
    assert figures.payables_past_due_share <= 0.25, figures.summary()
    # the calibration itself: a third of invoices paid late, about two weeks late, terms of 30-60 days
    late_share = 1 - figures.settled_on_time / figures.settled_invoices
    assert 0.25 <= late_share <= 0.40, figures.summary()
    assert 10 <= figures.mean_days_late <= 16, figures.summary()
    assert 35 <= figures.dso_days <= 65, figures.summary()


def test_history_follows_the_sandbox_today_and_the_seasons():
    """Moving the sandbox's today moves the whole history with it (same figures' shape a year later), and
    August invoices fewer than the busy months around it."""
    later = _figures(1, TODAY + timedelta(days=365))
    assert 0.15 <= later.overdue_customer_share <= 0.35, later.summary()
    assert later.over_90_share <= 0.10 and later.payables_past_due_share <= 0.25, later.summary()

    portal = Portal(Clock(fixed=TODAY), SandboxConfig())
    generate(portal, seed=1, scale=DEFAULT_SCALE, end=TODAY)
    emitted = [d["emitDate"][:7] for d in portal.snapshot("documents") if d["type"] == "INVOICE"]
    assert min(emitted) >= (TODAY - timedelta(days=731)).strftime("%Y-%m")
    for year in ("2025",):
        august = emitted.count(f"{year}-08")
        busy = (emitted.count(f"{year}-06") + emitted.count(f"{year}-09") + emitted.count(f"{year}-10")) / 3
        assert august < 0.8 * busy, (august, busy)
