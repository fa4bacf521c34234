"""Crash safety (issue 7, point 2): `invoicing-warehouse sync` SIGKILLed at random moments of its
extract, normalize and load phases, run again, and compared with the sandbox's ground truth.

The sandbox is served by the calling process; the sync runs as a separate process, as in production.
Its progress output names resources, not dlt's steps, so the phase is read from dlt's working
directory, which every step changes visibly (dlt 1.31 layout, checked by `pipeline_phase`):
- extract: a package being written under `normalize/` (a folder other than `extracted/`);
- normalize: an extracted package waiting in `normalize/extracted/`, or one in `load/new/`;
- load: a normalized package in `load/normalized/` (jobs moving to `completed_jobs/`).
Before any of them the run is in "prepare" (token, server time, finishing a killed run's package).

A calibration run (not killed) gives each phase's duration. A kill aimed at a phase waits for the
phase to appear, then for a random part of its calibrated duration, then sends SIGKILL; the phase
the process was really in at that instant is recorded beside it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from harness.sync_process import Workspace, run_sync_and_kill
from harness.warehouse_truth import Comparison, compare_raw_tables
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import SandboxServer

PHASES = ("extract", "normalize", "load")


@dataclass
class CrashSettings:
    """Size of one crash run (defaults: the short form)."""

    scale: int = 60
    contract: str = "default"  # the sandbox's contract profile (invoicing_sandbox/contract.py): "default" or "strict"
    kills: int = 2
    kills_per_trial: int = 1  # kills before the run that is allowed to finish
    targets: tuple[str, ...] = PHASES  # phases aimed at, in turn
    # A calibration run (clean, compared too) measures each phase so that kills land at random
    # points inside it; without one, kills land within these guesses after the phase shows.
    calibrate: bool = True
    guessed_phase_seconds: tuple[tuple[str, float], ...] = (
        ("extract", 1.0),
        ("normalize", 0.3),
        ("load", 0.6),
    )
    # Extra arguments of every sync run: the short form passes `--rate-limit 0` (the sandbox's own limit
    # is off and its kills aim at normalize and load, which pacing does not change); the soak form paces.
    sync_args: tuple[str, ...] = ()


@dataclass
class Kill:
    """One SIGKILL: the phase aimed at, when, and the phase the process was in."""

    target_phase: str
    at_s: float
    killed: bool
    phase_at_kill: str


@dataclass
class CrashOutcome:
    """What one seed's crash run did and found."""

    seed: int
    calibration_s: float = 0.0
    phase_seconds: dict[str, float] = field(default_factory=dict)
    kills: list[Kill] = field(default_factory=list)
    failed_runs: list[str] = field(default_factory=list)
    comparison: Comparison = field(default_factory=Comparison)

    @property
    def mismatches(self) -> int:
        """Mismatches over every trial plus runs that did not succeed."""
        return len(self.comparison.mismatches) + len(self.failed_runs)


def _entries(folder: Path) -> list[str]:
    try:
        return [p.name for p in folder.iterdir() if not p.name.startswith(".")]
    except OSError:
        return []


def pipeline_phase(workspace_root: Path) -> str:
    """The dlt step a sync writing under `workspace_root` is in, read from its working directory."""
    for pipeline_dir in [*workspace_root.glob(".*.dlt/*"), *workspace_root.glob("dlt/pipelines/*")]:
        if _entries(pipeline_dir / "load" / "normalized"):
            return "load"
        if _entries(pipeline_dir / "load" / "new") or _entries(pipeline_dir / "normalize" / "extracted"):
            return "normalize"
        if [name for name in _entries(pipeline_dir / "normalize") if name != "extracted"]:
            return "extract"
    return "prepare"


class PhaseClock:
    """Watches a run's phases (polled by the kill loop) and decides when to kill."""

    def __init__(self, root: Path, target: str | None = None, delay_s: float = 0.0) -> None:
        self.root = root
        self.target = target
        self.delay_s = delay_s
        self.phase = "prepare"
        self.first_seen: dict[str, float] = {}
        self.last_seen: dict[str, float] = {}

    def __call__(self, elapsed: float) -> bool:
        self.phase = pipeline_phase(self.root)
        self.first_seen.setdefault(self.phase, elapsed)
        self.last_seen[self.phase] = elapsed
        return (
            self.target is not None
            and self.target in self.first_seen
            and (elapsed >= self.first_seen[self.target] + self.delay_s)
        )

    def durations(self) -> dict[str, float]:
        """Seconds each phase was observed (first to last sighting)."""
        return {phase: self.last_seen[phase] - self.first_seen[phase] for phase in self.first_seen}


def run_crash_seed(
    seed: int, workdir: Path, settings: CrashSettings | None = None, rng: random.Random | None = None
) -> CrashOutcome:
    """Calibration run, then `settings.kills` kills spread over the phases, each trial in a fresh
    workspace finished by an unkilled rerun and compared with the truth."""
    settings = settings or CrashSettings()
    rng = rng or random.Random(seed)
    outcome = CrashOutcome(seed)
    workdir = Path(workdir)
    config = SandboxConfig(
        seed=seed, scale=settings.scale, rate_limit_per_s=0, contract=ContractProfile.named(settings.contract)
    )
    with SandboxServer(config) as sb:

        def env(workspace: Workspace) -> dict[str, str]:
            return workspace.env(sb.base_url, sb.client_id, sb.client_secret)

        if settings.calibrate:
            calibration = Workspace(workdir / f"seed{seed}-calibration")
            watcher = PhaseClock(calibration.root)
            result = run_sync_and_kill(calibration, env(calibration), *settings.sync_args, kill_when=watcher)
            if result.returncode != 0:
                outcome.failed_runs.append(f"calibration exit {result.returncode}: {result.output[-500:]}")
                return outcome
            outcome.calibration_s = result.seconds
            outcome.phase_seconds = watcher.durations()
            _compare(outcome, calibration, sb, settings.contract)
        else:
            outcome.phase_seconds = dict(settings.guessed_phase_seconds)
        trials = max(1, settings.kills // settings.kills_per_trial)
        for trial in range(trials):
            workspace = Workspace(workdir / f"seed{seed}-trial{trial}")
            for index in range(settings.kills_per_trial):
                target = settings.targets[(trial * settings.kills_per_trial + index) % len(settings.targets)]
                delay = rng.uniform(0.0, 0.8 * outcome.phase_seconds.get(target, 0.0))
                clock = PhaseClock(workspace.root, target, delay)
                killed = run_sync_and_kill(workspace, env(workspace), *settings.sync_args, kill_when=clock)
                at = clock.first_seen.get(target, killed.seconds) + delay
                outcome.kills.append(Kill(target, round(at, 2), killed.returncode == -9, clock.phase))
            rerun = run_sync_and_kill(workspace, env(workspace), *settings.sync_args)
            if rerun.returncode != 0:
                outcome.failed_runs.append(
                    f"rerun after kill, exit {rerun.returncode}: {rerun.output[-800:]}"
                )
                continue
            _compare(outcome, workspace, sb, settings.contract)
    return outcome


def _compare(outcome: CrashOutcome, workspace: Workspace, sb, contract: str) -> None:
    outcome.comparison.merge(compare_raw_tables(workspace.warehouse, sb.portal, contract=contract))


def format_crash_outcomes(outcomes: list[CrashOutcome]) -> str:
    """The printed figures: kills by phase (aimed and actual), records compared, mismatches."""
    kills = [kill for outcome in outcomes for kill in outcome.kills]
    landed = [kill for kill in kills if kill.killed]
    lines = [
        (f"crash runs: {len(outcomes)} seeds, {len(kills)} SIGKILLs aimed, {len(landed)} landed "
        f"(the others found the run already finished)"),
        "kills by phase at the kill: "
        + ", ".join(
            f"{phase} {sum(k.phase_at_kill == phase for k in landed)}" for phase in ("prepare", *PHASES)
        ),
        "kills by phase aimed at: "
        + ", ".join(f"{phase} {sum(k.target_phase == phase for k in kills)}" for phase in PHASES),
        f"records compared after the reruns: {sum(o.comparison.records_compared for o in outcomes)}",
        f"mismatches: {sum(o.mismatches for o in outcomes)}",
    ]
    for outcome in outcomes:
        lines.append(
            f"  seed {outcome.seed}: calibration run {outcome.calibration_s:.1f}s (0: none), phases "
            + ", ".join(f"{p} {s:.1f}s" for p, s in outcome.phase_seconds.items() if p != "prepare")
        )
        for kill in outcome.kills:
            lines.append(
                f"    SIGKILL aimed at {kill.target_phase} ({kill.at_s:.2f}s): "
                + (f"landed in {kill.phase_at_kill}" if kill.killed else "run had already ended")
            )
        for failure in outcome.failed_runs:
            lines.append(f"    failed: {failure}")
        for mismatch in outcome.comparison.mismatches[:10]:
            lines.append(f"    {mismatch}")
    return "\n".join(lines)
