"""Several writers on one DuckLake: telling a commit that lost a race with another writer from any other
error, and running such a step again (the sync's loads, its upkeep and the publication of a run).

Several writers on one lake (one pipeline per portal) may commit at the same moment. DuckLake retries
a commit that touches other tables itself; what it cannot merge fails the later commit ("conflict"), and
two first runs may race to create the same schema, table or column (dlt's SchemaUpdateError). Every such
failure leaves the load package pending and the state uncommitted, so loading it again is safe: dlt reads
the destination again and applies only what is missing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

import duckdb
from dlt.common.destination.exceptions import SchemaUpdateError

T = TypeVar("T")

CONFLICT_RETRIES = 6
CONFLICT_BACKOFF_S = 0.5
_CONFLICT_WORDS = ("conflict", "already exists", "concurrent", "another transaction")


def is_commit_conflict(error: BaseException) -> bool:
    """True when `error` (or an error it was raised from) is a lost race with another writer of the lake."""
    seen: BaseException | None = error
    for _ in range(20):  # a bounded walk down the chain of causes
        if seen is None:
            return False
        if isinstance(seen, (SchemaUpdateError, duckdb.TransactionException)):
            return True
        if isinstance(seen, duckdb.Error) and any(word in str(seen).lower() for word in _CONFLICT_WORDS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def retry_on_conflict(step: Callable[[], T], *, failed_once: bool = False,
                      on_retry: Callable[[int, BaseException], None] | None = None) -> T:
    """Runs `step`; when it loses a race with another writer, runs it again (at most CONFLICT_RETRIES
    times, after 0.5 s, 1 s, 2 s ... with jitter so that two writers do not collide again).
    `failed_once`: the caller's own first try already lost one race, so wait before the first run."""
    for attempt in range(CONFLICT_RETRIES + 1):
        if failed_once or attempt:
            time.sleep(CONFLICT_BACKOFF_S * 2 ** attempt * (0.5 + random.random()))
        try:
            return step()
        except Exception as error:
            if attempt == CONFLICT_RETRIES or not is_commit_conflict(error):
                raise
            if on_retry is not None:
                on_retry(attempt + 1, error)
    raise AssertionError("unreachable: the last attempt returns or raises")
