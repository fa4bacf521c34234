"""The two contenders of `bench/compare_generic.py`, each run as one sync in a child process.

`run_contender` is the child's entry point: it imports only what its contender needs, times the whole sync
(extract, normalize and load), and returns plain figures the parent can pickle.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, is_dataclass
from typing import Any

# This project's pipeline (issue 4) and dlt's generic rest_api source (bench/generic_rest_api.py).
CONTENDERS = ("pipeline", "generic")


def _plain(value: Any) -> Any:
    """A JSON-friendly copy of a report object (dataclass, mapping, or anything with a repr)."""
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _run_pipeline(base_url: str, client_id: str, client_secret: str, db_path: str, full: bool,
                  resources: list[str], rate_limit_per_s: float) -> dict:
    from pipelines.invoicing.load.sync import make_pipeline, run_sync

    pipeline = make_pipeline(db_path)
    started = time.perf_counter()
    report = run_sync(pipeline, resources=resources, full_refresh=full, base_url=base_url,
                      client_id=client_id, client_secret=client_secret, rate_limit_per_s=rate_limit_per_s)
    wall_s = time.perf_counter() - started
    return {"wall_s": wall_s, "client": _plain(report)}


def _run_generic(base_url: str, client_id: str, client_secret: str, db_path: str, work_dir: str,
                 resources: list[str]) -> dict:
    from bench.generic_rest_api import make_generic_pipeline, run_generic

    pipeline = make_generic_pipeline(db_path, work_dir)
    started = time.perf_counter()
    info = run_generic(pipeline, base_url, client_id, client_secret, resources=resources)
    wall_s = time.perf_counter() - started
    trace = pipeline.last_trace
    counts = trace.last_normalize_info.row_counts if trace and trace.last_normalize_info else {}
    client: dict[str, Any] = {"rows": _plain(dict(counts)), "loads": len(info.loads_ids)}
    for step in trace.steps if trace else []:
        if step.step in ("extract", "normalize", "load") and step.finished_at:
            client[f"{step.step}_s"] = (step.finished_at - step.started_at).total_seconds()
    return {"wall_s": wall_s, "client": client}


def run_contender(name: str, base_url: str, client_id: str, client_secret: str, db_path: str,
                  work_dir: str, full: bool, resources: list[str], rate_limit_per_s: float = 10.0) -> dict:
    """Runs one sync of contender `name` (full into an empty file, or incremental on the existing one)
    over the raw tables `resources`. The pipeline paces itself at `rate_limit_per_s` (the sandbox's limit; 0: not
    at all); the generic source has no pacing of its own and meets the limit as 429s."""
    # dlt warns about every column that stayed null in a load; the benchmark's output is its table.
    os.environ.setdefault("RUNTIME__LOG_LEVEL", "ERROR")
    if name == "pipeline":
        return _run_pipeline(base_url, client_id, client_secret, db_path, full, resources, rate_limit_per_s)
    if name == "generic":
        return _run_generic(base_url, client_id, client_secret, db_path, work_dir, resources)
    raise ValueError(f"unknown contender {name!r}; expected one of {CONTENDERS}")
