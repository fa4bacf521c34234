"""The names a model brings into SQL (its file's stem, the columns its front matter names): checked against one
pattern and quoted, because a models folder is input from someone else (docs/add-a-model.md) and a name pasted
into a statement is SQL of theirs run as the service (security review 2, C1).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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


def relation_columns(connection, relation: str) -> list[str]:
    """The columns of `schema.table` (a table or a view) in the connection's current catalog, in order."""
    schema, table = relation.split(".", 1)
    rows = connection.execute(
        "select column_name from information_schema.columns where table_schema = ? and table_name = ? "
        "and table_catalog = current_database() order by ordinal_position",
        [schema, table],
    ).fetchall()
    return [row[0] for row in rows]
