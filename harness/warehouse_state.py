"""A fingerprint of everything a failed run must leave as it was: the DuckDB file's tables
(data and columns, dlt's `_dlt_pipeline_state`, `_dlt_loads`, `_dlt_version` included) and the
state dlt keeps in the pipeline's local working directory (`state.json`, stored schemas)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb


def warehouse_fingerprint(warehouse_path: Path) -> dict[str, str]:
    """`schema.table` -> digest of its column list and of all its rows in a stable order."""
    if not Path(warehouse_path).exists():
        return {}
    connection = duckdb.connect(str(warehouse_path), read_only=True)
    try:
        tables = connection.execute(
            "select table_schema, table_name from information_schema.tables order by all"
        ).fetchall()
        prints = {}
        for schema, table in tables:
            columns = connection.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_schema = ? and table_name = ? order by ordinal_position",
                [schema, table],
            ).fetchall()
            digest = hashlib.sha256(repr(columns).encode())
            rows = connection.execute(f'select * from "{schema}"."{table}"').fetchall()
            for row in sorted(repr(row) for row in rows):
                digest.update(row.encode())
            prints[f"{schema}.{table}"] = f"{len(rows)} rows {digest.hexdigest()[:16]}"
        return prints
    finally:
        connection.close()


def pipeline_dir_fingerprint(working_dir: Path) -> dict[str, str]:
    """Digest of dlt's local state: `state.json` and the stored schemas of the pipeline dir."""
    working_dir = Path(working_dir)
    prints = {}
    candidates = [working_dir / "state.json", *sorted((working_dir / "schemas").glob("*"))]
    for path in candidates:
        if path.is_file():
            prints[str(path.relative_to(working_dir))] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return prints


def differences(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Human-readable differences between two fingerprints."""
    changed = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            changed.append(f"{key}: {before.get(key)} -> {after.get(key)}")
    return changed
