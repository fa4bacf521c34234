"""Issue 7, point 1, short form: chaos runs for a small seed on each contract profile (a second seed of the
short form, on both profiles, and the long form run with `pytest -m soak tests/reliability`; the long form is
also `python bench/chaos.py --seeds 50`).

Each seed: a sandbox mutating in the background (creates, edits, new versions, payments,
deletions) with latency and jitter, 5xx answers, dropped connections, `limit` clamped to 37 and
tokens revoked every 15 requests; syncs while it mutates; then mutations off, one incremental sync
and a reconcile; then every raw table against the sandbox's records field by field, and the marts
against the API's dueAmount and LATE list. Every sync goes through the gate as `invoicing-warehouse sync` does:
beside exactness, the availability figure counts the runs that would exit 0 and published (issue 40, point 5;
the soak form holds every run of an exact seed to it, the target).
"""

from __future__ import annotations

import pytest

from harness.chaos_run import ChaosSettings, format_outcomes, run_chaos_seed

SHORT_SEEDS = (101, pytest.param(202, marks=pytest.mark.soak))  # 202: another data variety, soak only
SOAK_SEEDS = tuple(range(1, 51))


def _check(outcomes) -> None:
    print("\n" + format_outcomes(outcomes))
    for outcome in outcomes:
        assert not outcome.failed_syncs, outcome.failed_syncs
        assert outcome.raw.records_compared > 0
        assert outcome.mismatches == 0, outcome.raw.summary() + "\n" + outcome.marts.summary()
        # every run is counted once: published and exit 0, or said why not
        assert outcome.published_runs + len(outcome.unavailable_runs) == outcome.syncs, outcome.unavailable_runs
    # The run must really have been chaotic, or a clean result proves nothing.
    faults = {
        kind: sum(o.faults[kind] for o in outcomes) for kind in ("error_500", "dropped", "token_revoked")
    }
    assert sum(o.faults["error_500"] + o.faults["error_502"] + o.faults["error_503"] for o in outcomes) > 0
    assert faults["dropped"] > 0 and faults["token_revoked"] > 0, faults
    assert sum(sum(o.mutations.values()) for o in outcomes) > 0


@pytest.mark.parametrize("contract", ["default", "strict"])  # invoicing_sandbox/contract.py profiles
@pytest.mark.parametrize("seed", SHORT_SEEDS)
def test_chaos_runs_short_form(tmp_path, contract, seed):
    settings = ChaosSettings(scale=40, incremental_syncs=1, contract=contract)
    _check([run_chaos_seed(seed, tmp_path / str(seed), settings)])


@pytest.mark.soak
@pytest.mark.timeout(6 * 3600)  # the project default of 300 s is for the short form
def test_chaos_runs_soak(tmp_path):
    settings = ChaosSettings(
        scale=150, incremental_syncs=3, mutations_per_s=10.0, revoke_token_after_requests=40
    )
    outcomes = [run_chaos_seed(seed, tmp_path / str(seed), settings) for seed in SOAK_SEEDS]
    _check(outcomes)
    # availability: every run of a seed whose warehouse ended exact exits 0 and publishes
    unavailable = [f"seed {o.seed}: {why}" for o in outcomes if o.exact for why in o.unavailable_runs]
    assert not unavailable, "\n".join(unavailable[:20])
