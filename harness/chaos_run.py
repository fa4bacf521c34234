"""Chaos runs (issue 7, point 1): a faulty, busy sandbox; incremental syncs while it mutates; then
a quiet incremental sync and a reconcile; then every raw table against the sandbox's ground truth
and the marts against the API's own figures.

Each sync is a run as `invoicing-warehouse sync` makes it: loaded, then built and published through the gate
(invoicing_warehouse/runs/gate.py). Beside exactness, a run counts as available when it would exit 0 (its sync ended,
after the scheduler's retry, and the gate neither failed a blocking check nor held a mart) and published the readers'
copy (issue 40, point 5: the target is every run of a seed whose warehouse ends exact).

Shared by the short form (tests/reliability/test_chaos_runs.py, a few small seeds) and the long
form (`python bench/chaos.py --seeds 50`).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from harness.marts_truth import compare_marts
from harness.warehouse_truth import Comparison, compare_raw_tables
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import SandboxServer
from invoicing_warehouse.engine.names import DEFAULT_PORTAL
from invoicing_warehouse.engine.sql_runner import build_models
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import build_and_publish, record_reads
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.load.sync import make_pipeline, run_sync

# Like the Dagster jobs' retry policy (dagster_project/jobs.py, 3 retries of transient failures), but once: a
# sync that gives up on a service failing request after request is run again; a second give-up is a finding.
SCHEDULER_RETRIES = 1
TRANSIENT_KINDS = ("server", "unreachable")

# The frozen window ends "a few seconds" before server time on purpose (records stamped in the
# current second may still be changing). After the mutations stop, the sandbox clock moves on by
# this much instead of the test sleeping, so the quiet sync's window covers the last mutation.
QUIET_CLOCK_STEP_S = 30.0
FAULT_KINDS = ("latency", "error_500", "error_502", "error_503", "dropped", "token_revoked", "rate_limited")


@dataclass
class ChaosSettings:
    """The faults of one chaos run (defaults: the short form)."""

    scale: int = 60
    incremental_syncs: int = 2
    mutations_per_s: float = 8.0
    max_page_size: int = 37  # clamps the client's `limit` to an odd size no client would choose
    latency_ms: float = 3.0
    latency_jitter_ms: float = 25.0
    error_rate: float = 0.04
    drop_rate: float = 0.02
    revoke_token_after_requests: int = 15  # most syncs make more requests than this: tokens die mid-run
    # the real service's limit, and the syncs' pacing: 429s are counted, not avoided by the sandbox (0: no limit and
    # no pacing, for a smoke run of bench/chaos.py)
    rate_limit_per_s: int = 10
    # the sandbox's contract profile (invoicing_sandbox/contract.py): "default", "strict", or a profile of one's own
    contract: str | ContractProfile = "default"
    error_statuses: tuple[int, ...] = (500, 502, 503)  # the 5xx `error_rate` draws from
    token_lifetime_s: int = 604799  # lowered to the profile's when it has a shorter one (strict: 20 s)
    # how far the sandbox clock moves on once the mutations stop, instead of the test sleeping
    quiet_clock_step_s: float = QUIET_CLOCK_STEP_S

    def config(self, seed: int) -> SandboxConfig:
        """The sandbox configuration of `seed` (mutations are started by the run, not the config)."""
        return SandboxConfig(
            seed=seed,
            scale=self.scale,
            fault_seed=seed * 7919 + 1,
            max_page_size=self.max_page_size,
            page_size_policy="clamp",
            latency_ms=self.latency_ms,
            latency_jitter_ms=self.latency_jitter_ms,
            error_rate=self.error_rate,
            error_statuses=self.error_statuses,
            token_lifetime_s=self.token_lifetime_s,
            drop_rate=self.drop_rate,
            revoke_token_after_requests=self.revoke_token_after_requests,
            rate_limit_per_s=self.rate_limit_per_s,
            contract=ContractProfile.named(self.contract),
        )


@dataclass
class ChaosOutcome:
    """What one seed's run did and found."""

    seed: int
    syncs: int = 0
    failed_syncs: list[str] = field(default_factory=list)
    # syncs that gave up on a service that kept failing (5xx, lost connections past the client's retries) and
    # were run again, as the Dagster jobs' retry policy does; a second give-up is a failed sync
    retried_syncs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # every sync's notes, `<label>: <note>`
    raw: Comparison = field(default_factory=Comparison)
    marts: Comparison = field(default_factory=Comparison)
    faults: Counter = field(default_factory=Counter)
    mutations: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    published_runs: int = 0  # runs that would exit 0 and published the readers' copy
    unavailable_runs: list[str] = field(default_factory=list)  # the others: `<label>: why`

    @property
    def mismatches(self) -> int:
        """Raw and mart mismatches together."""
        return len(self.raw.mismatches) + len(self.marts.mismatches)

    @property
    def exact(self) -> bool:
        """The warehouse ended exact: every record compared, no mismatch, no sync given up."""
        return self.raw.records_compared > 0 and self.mismatches == 0 and not self.failed_syncs


def run_chaos_seed(seed: int, workdir: Path, settings: ChaosSettings | None = None) -> ChaosOutcome:
    """One chaos run for `seed`, warehouse and dlt state under `workdir` (DLT_DATA_DIR is the caller's)."""
    settings = settings or ChaosSettings()
    outcome = ChaosOutcome(seed)
    started = time.monotonic()
    warehouse = Path(workdir) / f"chaos-{seed}.duckdb"
    target = WarehouseTarget.duckdb_file(warehouse)
    with SandboxServer(settings.config(seed)) as sb:
        def sync(label: str, **options) -> None:
            outcome.syncs += 1
            for attempt in range(1 + SCHEDULER_RETRIES):
                try:
                    report = run_sync(
                        make_pipeline(warehouse),
                        base_url=sb.base_url,
                        client_id=sb.client_id,
                        client_secret=sb.client_secret,
                        # the client paces at the service's limit, as a portal's `rate_limit` makes it
                        rate_limit_per_s=settings.rate_limit_per_s,
                        **options,
                    )
                except InvoicingApiError as error:
                    if error.kind in TRANSIENT_KINDS and attempt < SCHEDULER_RETRIES:
                        # the service kept failing past the client's retries: the schedule runs it again
                        outcome.retried_syncs.append(f"{label}: {error}"[:500])
                        continue
                    outcome.failed_syncs.append(f"{label}: {type(error).__name__}: {error}"[:500])
                except Exception as error:  # a sync that gives up under faults is a finding, not a crash  # noqa: BLE001
                    outcome.failed_syncs.append(f"{label}: {type(error).__name__}: {error}"[:500])
                else:
                    outcome.notes.extend(f"{label}: {note}" for note in report.notes)
                    if report.failed:  # a partial run: lists failed alone, the schedule reads them again
                        failed = f"{label}: lists failed alone: {', '.join(sorted(report.failed))}"
                        if attempt < SCHEDULER_RETRIES:
                            outcome.retried_syncs.append(failed[:500])
                            continue
                        outcome.failed_syncs.append(failed[:500])
                    else:
                        publish(label, full_read=bool(options.get("reconcile")), degraded=report.degraded_notes)
                        return
                # a sync that failed, or ended partial (its own exit code): a run that does not exit 0
                outcome.unavailable_runs.append(f"{label}: the sync failed")
                return

        def publish(label: str, *, full_read: bool, degraded: list[str]) -> None:
            """The rest of the CLI's `sync` run: the reads recorded, every model built, the gate."""
            record_reads(target, DEFAULT_PORTAL, degraded, full_read=full_read)
            try:
                gate = build_and_publish(target, note=f"chaos {label}", as_of=sb.clock.today().date())
            except Exception as error:  # a build that fails is a run that exits 1  # noqa: BLE001
                outcome.unavailable_runs.append(f"{label}: {type(error).__name__}: {error}"[:500])
                return
            if gate.ok and gate.published is not None:
                outcome.published_runs += 1
            else:
                why = "; ".join(gate.lines()) or "nothing published"
                outcome.unavailable_runs.append(f"{label}: {why}"[:500])

        sb.start_mutations(settings.mutations_per_s)
        sync("first sync, mutating")
        for index in range(settings.incremental_syncs):
            sync(f"incremental {index + 1}, mutating")
        sb.stop_mutations()
        sb.config.clock_offset_s = float(sb.config.clock_offset_s or 0) + settings.quiet_clock_step_s
        sync("quiet incremental")
        sync("reconcile", reconcile=True)
        outcome.faults = Counter({kind: int(sb.stats.get(kind, 0)) for kind in FAULT_KINDS})
        outcome.mutations = Counter(dict(sb.mutator.counts)) if sb.mutator is not None else Counter()
        outcome.raw = compare_raw_tables(warehouse, sb.portal, contract=settings.contract)
        with duckdb.connect(str(warehouse)) as connection:
            try:
                build_models(connection, as_of=sb.clock.today().date())
            except Exception as error:  # reported with the outcome; the raw comparison still stands  # noqa: BLE001
                outcome.failed_syncs.append(f"models: {type(error).__name__}: {error}"[:500])
            else:
                outcome.marts = compare_marts(connection, sb)
    outcome.seconds = time.monotonic() - started
    return outcome


def format_outcomes(outcomes: list[ChaosOutcome]) -> str:
    """The printed figures: runs, records compared, mismatches, faults by kind, 429s."""
    faults: Counter[str] = Counter()
    mutations: Counter[str] = Counter()
    for outcome in outcomes:
        faults.update(outcome.faults)
        mutations.update(outcome.mutations)
    raw_records = sum(o.raw.records_compared for o in outcomes)
    mart_records = sum(o.marts.records_compared for o in outcomes)
    exact = [o for o in outcomes if o.exact]
    lines = [
        (f"chaos runs: {len(outcomes)} seeds ({', '.join(str(o.seed) for o in outcomes[:10])}"
        f"{', ...' if len(outcomes) > 10 else ''}), {sum(o.syncs for o in outcomes)} syncs, "
        f"{sum(len(o.failed_syncs) for o in outcomes)} failed syncs, "
        f"{sum(len(o.retried_syncs) for o in outcomes)} run again after the service kept failing, "
        f"{sum(o.seconds for o in outcomes):.0f} s"),
        (f"records compared: {raw_records + mart_records} ({raw_records} raw records and child rows, "
        f"{sum(o.raw.fields_compared for o in outcomes)} fields; {mart_records} mart rows)"),
        f"mismatches: {sum(o.mismatches for o in outcomes)}",
        (f"availability: {_availability(outcomes)} of all runs; {_availability(exact)} of the runs of the "
         f"{len(exact)} seed(s) whose warehouse ended exact (target: all)"),
        "faults injected: "
        + ", ".join(f"{kind} {faults[kind]}" for kind in FAULT_KINDS if kind != "rate_limited"),
        f"429s received: {faults['rate_limited']}",
        "mutations during syncs: " + (", ".join(f"{k} {v}" for k, v in sorted(mutations.items())) or "none"),
    ]
    for outcome in outcomes:
        for failure in outcome.failed_syncs:
            lines.append(f"  seed {outcome.seed} failed sync: {failure}")
        for retried in outcome.retried_syncs:
            lines.append(f"  seed {outcome.seed} sync run again: {retried}")
        for mismatch in (outcome.raw.mismatches + outcome.marts.mismatches)[:10]:
            lines.append(f"  seed {outcome.seed}: {mismatch}")
        for unavailable in outcome.unavailable_runs[:10]:
            lines.append(f"  seed {outcome.seed} run not published or not exit 0: {unavailable}")
    return "\n".join(lines)


def _availability(outcomes: list[ChaosOutcome]) -> str:
    """`N/M runs exited 0 and published (P %)` over `outcomes`."""
    runs = sum(o.syncs for o in outcomes)
    published = sum(o.published_runs for o in outcomes)
    share = f"{published / runs * 100:.0f} %" if runs else "no run"
    return f"{published}/{runs} runs exited 0 and published ({share})"
