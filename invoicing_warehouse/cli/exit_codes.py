"""The exit codes of the commands that sync and publish (`sync`, `sync --follow`, `models`), and how several
combine: a failure outweighs a partial run, which outweighs success."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the gate's modules load only when a command publishes
    from invoicing_warehouse.runs.gate import GateOutcome

OK = 0  # synced (or built) and every figure published
FAILED = 1  # an expected failure (nothing synced), or figures the gate held back (a check, a read in doubt)
UNEXPECTED = 2  # an unexpected failure (a traceback was printed)
PARTIAL = 3  # a list's read failed alone: the marts built on it keep their last good figures, the rest published
SEVERITY = (OK, PARTIAL, FAILED, UNEXPECTED)  # mildest first

HELP = ("exit codes: 0 synced and published; 3 partial: a list's read failed alone, the marts built on it keep "
        "their last good figures, the rest was published, the next run reads it again; 1 a failure (nothing "
        "synced) or figures held back by the gate; 2 an unexpected failure")

MODELS_HELP = ("exit codes: 0 built and published; 3 partial: the only marts held are built on a list whose last "
               "read failed, the rest was published; 1 a blocking check failed (nothing published), figures held "
               "for a read in doubt, or the models cannot be built")


def worst(codes: Iterable[int]) -> int:
    """The most severe of `codes` (SEVERITY); OK when there is none."""
    return max(codes, key=SEVERITY.index, default=OK)


def of_gate(outcome: GateOutcome) -> int:
    """A gate's answer as an exit code: OK, PARTIAL when it held only marts built on a failed read, else FAILED."""
    if outcome.ok:
        return OK
    return PARTIAL if outcome.only_partial else FAILED
