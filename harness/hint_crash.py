"""An applying run of webhook hints that SIGKILLs itself at a chosen step: after the warehouse commit
(`loaded`), after the models (`models`) or after publication (`published`), always before the hints are
acknowledged. Run as a separate process, configured like `sync` (SOURCES__INVOICING__* in the environment):

    python -m harness.hint_crash WAREHOUSE STEP
"""

from __future__ import annotations

import os
import signal
import sys

from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.hints import apply_pending
from pipelines.invoicing.portals import Portal

STEPS = ("loaded", "models", "published")


def main(argv: list[str]) -> int:
    """Applies the pending hints of the portal `default`, killed at step `argv[1]`; returns 3 if never killed."""
    warehouse, kill_at = argv
    if kill_at not in STEPS:
        raise SystemExit(f"step must be one of {', '.join(STEPS)}")

    def on_step(name: str) -> None:
        if name == kill_at:
            print(f"killed at {name}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    apply_pending(WarehouseTarget.duckdb_file(warehouse), Portal("default"), rate_limit_per_s=0, on_step=on_step)
    return 3


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
