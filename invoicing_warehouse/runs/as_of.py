"""The marts as of another report date, built in memory over the readers' copy and never published: what the
dashboard shows for a past date and month-end, and what `invoicing-warehouse export --as-of` writes.

The same SQL models (`invoicing_warehouse.engine.sql_runner.build_models`) are built into an in-memory catalog whose
`invoicing_raw` views read the copy, so the figures equal `invoicing-warehouse models --as-of D`; the build goes
through the gate's blocking checks (invoicing_warehouse/runs/gate.py) and refuses the marts the gate holds (a read that
may be incomplete): a refused build raises AsOfRefused naming why, and no figure of that date is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path

import duckdb

from invoicing_warehouse.engine.names import MARTS_SCHEMA, REFERENCE_SCHEMA
from invoicing_warehouse.engine.scratch_catalog import SCRATCH_CATALOG, raw_views
from invoicing_warehouse.engine.sql_runner import build_models, discover_models
from invoicing_warehouse.runs.gate import check_built


class AsOfRefused(RuntimeError):
    """The checks hold a build as of a date back (or it rests on a held mart); the message says which."""


def every_mart() -> tuple[str, ...]:
    """The marts' bare names (`receivables`, ...), sorted."""
    return tuple(sorted(model.name for model in discover_models() if model.schema == MARTS_SCHEMA))


def attached(snapshot_path: Path) -> duckdb.DuckDBPyConnection:
    """The readers' copy of a file warehouse attached read-only to an in-memory database, its catalog made
    current (so that a build may create tables beside it)."""
    connection = duckdb.connect()
    try:
        quoted = str(snapshot_path).replace("'", "''")
        connection.execute(f"attach '{quoted}' as published_copy (read_only)")
        connection.execute("use published_copy")
    except BaseException:
        connection.close()
        raise
    return connection


def marts_as_of(reader: duckdb.DuckDBPyConnection, as_of: date,
                held: Mapping[str, str]) -> duckdb.DuckDBPyConnection:
    """A new in-memory connection whose `marts` and `reference` schemas hold every mart and reference table built
    as of `as_of` over the copy `reader` has current; `held`: the marts the gate holds, and why. Raises
    AsOfRefused when a blocking check fails on the build or a mart rests on a held read."""
    raw_views(reader)
    build_models(reader, as_of=as_of)
    failures = [failure.line() for failure in check_built(reader)]
    failures += [f"{mart} rests on a read that may be incomplete: {why}" for mart, why in sorted(held.items())]
    if failures:
        raise AsOfRefused(f"No figures as of {as_of.isoformat()}: the checks hold this build back.\n\n"
                          + "\n\n".join(f"- {line}" for line in failures))
    built = duckdb.connect()
    # the reference tables too: a page shows the rates its interest rests on beside the marts
    references = [model.name for model in discover_models() if model.schema == REFERENCE_SCHEMA]
    for schema, names in ((MARTS_SCHEMA, every_mart()), (REFERENCE_SCHEMA, references)):
        built.execute(f"create schema {schema}")
        for name in names:
            table = reader.execute(f"select * from {SCRATCH_CATALOG}.{schema}.{name}").to_arrow_table()
            built.register("built_table", table)
            built.execute(f"create table {schema}.{name} as select * from built_table")
            built.unregister("built_table")
    return built
