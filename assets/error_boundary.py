"""What an asset, op, check or sensor raises reaches Dagster's event log (and its UI, its run storage) through the
one scrubber (`invoicing_warehouse.engine.redaction`).

Dagster stores a failed step's exception with its whole chain (cause and context, unless suppressed) and its
stack. A failure deep below (a DuckDB ATTACH error repeats its connection string, a dlt `PipelineStepFailed`
carries it on) may hold a secret that no handler of ours caught: `redacted_errors` looks at the whole chain as
Dagster would print it and, when the scrubber would change it, raises instead a `Failure` of the redacted
message, without the chain (`from None`); the retry policy still applies (`allow_retries` kept, or True). A
chain that holds no secret is raised unchanged, its type and retry semantics as they were.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from dagster import Failure

from invoicing_warehouse.engine.redaction import contains_secret, redact


@contextmanager
def redacted_errors() -> Iterator[None]:
    """Runs the block; an exception whose chain holds a secret leaves it as a redacted `Failure`."""
    try:
        yield
        return
    except Exception as error:  # every kind: whatever leaves reaches the event log
        chain = "".join(traceback.format_exception(error))
        if not contains_secret(chain):
            raise
        if isinstance(error, Failure):
            replacement = Failure(description=redact(error.description or ""), metadata=error.metadata,
                                  allow_retries=error.allow_retries)
        else:
            replacement = Failure(description=redact(f"{type(error).__name__}: {error}"), allow_retries=True)
    # raised outside the handler, so that Dagster finds no chain to store
    raise replacement
