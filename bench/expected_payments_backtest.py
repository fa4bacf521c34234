"""Backtest of marts.expected_payments: how far its expected payment dates fall from the real ones.

For each seed: the demo portal's sandbox (harness/demo_warehouse.py: seed, scale, its clock fixed at DEMO_NOW) is
synced into a fresh warehouse; for each cut date C the models are built as of C (they learn only from invoices
paid by C) and the invoices open on C that were paid after C, by the sandbox's today, are the test set: the
error of a prediction is |predicted date - last payment date| in days (the paid date as
marts.payment_history dates it as of today). Compared, on the same invoices:
- `mart`: marts.expected_payments.expected_payment_date as built on C (the product's rule);
- `due date`: the "paid on its due date" baseline;
- `due date, not before C+1`: the baseline moved to C + 1 when the due date is past (the mart's own floor);
- alternatives recomputed here from the history on C, to choose the rule: the anchor (due date or emit date),
  the threshold of full credibility K (customer weight min(n, K) / K), the median against the mean.
Invoices still open today are left out (no truth yet) and counted.

    .venv/bin/python bench/expected_payments_backtest.py [--seeds 1,2] [--scale 1000] [--cuts 240,180,120,60,30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.demo_warehouse import DEMO_NOW, build_demo_warehouse
from invoicing_warehouse.engine.sql_runner import build_models

HISTORY = "select customer_id, days_after_due, days_after_emit from marts.payment_history"
OPEN = """select invoice_id, customer_id, emit_date, due_date, expected_payment_date, basis
          from marts.expected_payments where due_date is not null"""
TRUTH = "select invoice_id, paid_date from marts.payment_history"


def _history_rule(history: list[tuple], anchor: int, credibility: int, centre) -> tuple[dict, float]:
    """Per customer (estimate, count) and the portal's estimate of days after the anchor (1 = due, 2 = emit)."""
    by_customer: dict[str, list[int]] = defaultdict(list)
    for row in history:
        by_customer[row[0]].append(row[anchor])
    portal = centre([row[anchor] for row in history]) if history else 0.0
    estimates = {}
    for customer, days in by_customer.items():
        weight = min(len(days), credibility) / credibility
        estimates[customer] = weight * centre(days) + (1 - weight) * portal
    return estimates, portal


def _round_half_away(value: float) -> int:
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)


def _alternative(history, open_rows, cut: date, anchor: int, credibility: int, centre) -> dict[str, date]:
    estimates, portal = _history_rule(history, anchor, credibility, centre)
    predicted = {}
    for invoice_id, customer_id, emit_date, due_date, *_ in open_rows:
        base = due_date if anchor == 1 else emit_date
        days = _round_half_away(estimates.get(customer_id, portal))
        predicted[invoice_id] = max(base + timedelta(days=days), cut + timedelta(days=1))
    return predicted


def _conditional(history, open_rows, cut: date, credibility: int) -> dict[str, date]:
    """The median days after due of the paid invoices that took longer than this one already has (it is still
    open on C: paid after C), the customer's shrunk toward the portal's like the mart's rule."""
    by_customer: dict[str, list[int]] = defaultdict(list)
    for row in history:
        by_customer[row[0]].append(row[1])
    every = [row[1] for row in history]
    predicted = {}
    for invoice_id, customer_id, _, due_date, *_ in open_rows:
        already = (cut - due_date).days
        portal_tail = [d for d in every if d > already]
        customer_tail = [d for d in by_customer.get(customer_id, []) if d > already]
        portal = statistics.median(portal_tail) if portal_tail else already + 1
        weight = min(len(customer_tail), credibility) / credibility
        days = weight * (statistics.median(customer_tail) if customer_tail else 0) + (1 - weight) * portal
        predicted[invoice_id] = max(due_date + timedelta(days=_round_half_away(days)), cut + timedelta(days=1))
    return predicted


def backtest(warehouse: Path, cut: date, today: date) -> tuple[dict[str, float], int, int, dict[str, int]]:
    """MAE in days of each predictor on the invoices open on `cut` and paid after it by `today`; the number of
    such invoices, of those still open today, and the mart's bases among the measured invoices."""
    with duckdb.connect(str(warehouse)) as conn:
        conn.execute(f"set variable as_of_date = date '{today.isoformat()}'")
        truth = dict(conn.execute(TRUTH).fetchall())
        build_models(conn, as_of=cut)
        conn.execute(f"set variable as_of_date = date '{cut.isoformat()}'")
        history = conn.execute(HISTORY).fetchall()
        open_rows = conn.execute(OPEN).fetchall()
    measured = [row for row in open_rows if row[0] in truth and truth[row[0]] > cut]
    still_open = sum(1 for row in open_rows if row[0] not in truth)
    predictors: dict[str, dict[str, date]] = {
        "mart (due date + customer/portal median, K=5)": {row[0]: row[4] for row in measured},
        "baseline: due date": {row[0]: row[3] for row in measured},
        "baseline: due date, not before C+1": {row[0]: max(row[3], cut + timedelta(days=1)) for row in measured},
    }
    for label, anchor, credibility, centre in (
        ("alt: emit date + median, K=5", 2, 5, statistics.median),
        ("alt: due date + median, K=1", 1, 1, statistics.median),
        ("alt: due date + median, K=3", 1, 3, statistics.median),
        ("alt: due date + median, K=10", 1, 10, statistics.median),
        ("alt: due date + mean, K=5", 1, 5, statistics.fmean),
        ("alt: due date + portal median only", 1, 10**9, statistics.median),
    ):
        predictors[label] = _alternative(history, measured, cut, anchor, credibility, centre)
    for credibility in (3, 5, 10):
        predictors[f"alt: due date + median of the later-paid, K={credibility}"] = _conditional(
            history, measured, cut, credibility)
    errors = {
        label: statistics.fmean(abs((predicted[row[0]] - truth[row[0]]).days) for row in measured)
        for label, predicted in predictors.items()
    } if measured else {}
    bases: dict[str, int] = defaultdict(int)
    for row in measured:
        bases[row[5]] += 1
    return errors, len(measured), still_open, dict(bases)


def main() -> int:
    """Prints, per seed and cut date, the MAE of each predictor; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2", help="sandbox seeds (1: the demo portal's)")
    parser.add_argument("--scale", type=int, default=1000, help="documents (1000: the demo's)")
    parser.add_argument("--cuts", default="240,180,120,60,30", help="cut dates, in days before the sandbox's today")
    args = parser.parse_args()
    today = DEMO_NOW.date()
    totals: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for seed in (int(s) for s in args.seeds.split(",")):
        with tempfile.TemporaryDirectory(prefix="backtest-") as folder:
            warehouse = Path(folder) / "warehouse.duckdb"
            build_demo_warehouse(warehouse, seed=seed, scale=args.scale)
            for days_before in (int(d) for d in args.cuts.split(",")):
                cut = today - timedelta(days=days_before)
                errors, count, still_open, bases = backtest(warehouse, cut, today)
                print(f"seed {seed}, scale {args.scale}, cut {cut} (today {today}): {count} invoices open on the "
                      f"cut and paid after it ({still_open} still open today, left out); mart bases {bases}")
                for label, error in errors.items():
                    print(f"  {label:<48} MAE {error:6.2f} days")
                    totals[label].append((error, count))
    print("all seeds and cuts, weighted by invoices:")
    for label, pairs in totals.items():
        count = sum(n for _, n in pairs)
        print(f"  {label:<48} MAE {sum(e * n for e, n in pairs) / count:6.2f} days over {count} invoices")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
