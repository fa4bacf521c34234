"""Searches files and warehouse text for secrets (client secret, its Basic-auth form, bearer tokens)."""

from __future__ import annotations

import base64
import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import duckdb


@dataclass(frozen=True)
class Finding:
    """A secret found somewhere it must not be."""

    where: str
    secret_label: str


def secret_needles(client_id: str, client_secret: str, tokens: list[str]) -> dict[str, str]:
    """Every form in which the credentials could leak: raw, Basic-auth header, bearer tokens."""
    basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    needles = {"client secret": client_secret, "basic-auth credentials": basic}
    for index, token in enumerate(tokens):
        needles[f"bearer token #{index + 1}"] = token
    return needles


def scan_text(where: str, text: str, needles: dict[str, str]) -> list[Finding]:
    """Findings of any needle in one text."""
    return [Finding(where, label) for label, needle in needles.items() if needle and needle in text]


def scan_tree(
    root: Path, needles: dict[str, str], skip_suffixes: tuple[str, ...] = ()
) -> tuple[int, list[Finding]]:
    """Scans every file under `root` byte by byte; returns (files scanned, findings)."""
    encoded = {label: needle.encode() for label, needle in needles.items() if needle}
    scanned, findings = 0, []
    for directory, _, files in os.walk(root):
        for name in files:
            path = Path(directory) / name
            if name.endswith(skip_suffixes) or not path.is_file():
                continue
            data = readable_bytes(path)
            scanned += 1
            findings += [Finding(str(path), label) for label, needle in encoded.items() if needle in data]
    return scanned, findings


def readable_bytes(path: Path) -> bytes:
    """A file's bytes as a reader would see them: gzip unpacked (dlt compresses load files),
    parquet decoded to its values (its pages are compressed)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            pass
    if data[:4] == b"PAR1":
        import pyarrow.parquet as pq

        data += repr(pq.read_table(path).to_pylist()).encode()
    return data


def scan_warehouse(warehouse_path: Path, needles: dict[str, str]) -> tuple[int, list[Finding]]:
    """Searches every text column of every table in a DuckDB file (strings there are compressed,
    so a byte scan of the file would not see them). Returns (text columns scanned, findings)."""
    connection = duckdb.connect(str(warehouse_path), read_only=True)
    try:
        columns = connection.execute(
            "select table_schema, table_name, column_name from information_schema.columns "
            "where data_type in ('VARCHAR', 'JSON') or data_type like 'VARCHAR%'"
        ).fetchall()
        findings = []
        for schema, table, column in columns:
            for label, needle in needles.items():
                hits = connection.execute(
                    f'select count(*) from "{schema}"."{table}" where contains("{column}", ?)', [needle]
                ).fetchone()[0]
                if hits:
                    findings.append(
                        Finding(f"{warehouse_path}:{schema}.{table}.{column} ({hits} rows)", label)
                    )
        return len(columns), findings
    finally:
        connection.close()
