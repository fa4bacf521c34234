"""The names a model brings into SQL (its file's stem, the columns its front matter names): checked against one
pattern and quoted, because a models folder is input from someone else (docs/add-a-model.md) and a name pasted
into a statement is SQL of theirs run as the service (security review 2, C1).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# lowercase letters, digits and underscores, not starting with a digit: a name that needs no quoting in DuckDB
# (quoted anyway, so that a reserved word such as `order` still works)
NAME_PATTERN = re.compile(r"[a-z_][a-z0-9_]*")


class UnsafeNameError(ValueError):
    """A name from a model is not `[a-z_][a-z0-9_]*`."""


def checked_name(name: object, what: str) -> str:
    """`name` when it matches NAME_PATTERN; else UnsafeNameError saying `what` it is and the rule."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise UnsafeNameError(f"{what} {name!r} is not a plain name: lowercase letters, digits and underscores, "
                              "not starting with a digit ([a-z_][a-z0-9_]*)")
    return name


def quoted(name: str) -> str:
    """`name` as a DuckDB identifier: in double quotes, an embedded quote doubled."""
    return '"' + name.replace('"', '""') + '"'


def sql_text(value: str) -> str:
    """`value` as a SQL string literal (quotes doubled; DuckDB's plain literals take backslashes as they are)."""
    return "'" + value.replace("'", "''") + "'"


def quoted_relation(relation: str) -> str:
    """`schema.table` as `"schema"."table"`."""
    schema, table = relation.split(".", 1)
    return f"{quoted(schema)}.{quoted(table)}"


def missing_columns(names: Iterable[str], columns: Iterable[str]) -> list[str]:
    """The `names` that are not among `columns` (compared as DuckDB does: without regard to case), in order."""
    present = {column.lower() for column in columns}
    return [name for name in names if name.lower() not in present]


# (connection, {(schema, table): columns}) while `catalog_fixed` holds for that connection
_FIXED: ContextVar[tuple[object, dict[tuple[str, str], list[str]]] | None] = ContextVar("fixed_catalog",
                                                                                        default=None)


@contextmanager
def catalog_fixed(connection) -> Iterator[None]:
    """Within: `relation_columns(connection, ...)` answers from ONE read of the connection's current catalog.

    Why: the gate runs a hundred checks after a build, each asking first whether its relations exist; one
    information_schema query each was half of the checks' time (bench/RESULTS.md, the doorbell). Only for code
    that creates, drops and alters no relation on `connection` while inside (the checks only read)."""
    rows = connection.execute(
        "select schema_name, table_name, column_name from duckdb_columns() "
        "where database_name = current_database() order by schema_name, table_name, column_index"
    ).fetchall()
    columns: dict[tuple[str, str], list[str]] = {}
    for schema, table, column in rows:
        columns.setdefault((schema, table), []).append(column)
    token = _FIXED.set((connection, columns))
    try:
        yield
    finally:
        _FIXED.reset(token)


def relation_columns(connection, relation: str) -> list[str]:
    """The columns of `schema.table` (a table or a view) in the connection's current catalog, in order."""
    schema, table = relation.split(".", 1)
    fixed = _FIXED.get()
    if fixed is not None and fixed[0] is connection:
        return list(fixed[1].get((schema, table), []))
    # duckdb_columns(), not information_schema.columns (a view over it with joins): a third less per call
    rows = connection.execute(
        "select column_name from duckdb_columns() where schema_name = ? and table_name = ? "
        "and database_name = current_database() order by column_index",
        [schema, table],
    ).fetchall()
    return [row[0] for row in rows]
