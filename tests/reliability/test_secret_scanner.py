"""Positive control of the secret scan used by test_secret_leaks.py: it must find a planted secret
in every kind of place it searches (plain files, dlt's gzip load files, parquet, DuckDB text)."""

from __future__ import annotations

import gzip

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from tests.support.secret_scan import scan_tree, scan_warehouse, secret_needles

SECRET = "S3CRET-canary-7f3a"


def test_scanner_finds_a_planted_secret(tmp_path):
    """Positive control: the scanner sees the secret in plain, gzip and parquet files and in DuckDB text."""
    needles = secret_needles("client", SECRET, ["a" * 40])
    (tmp_path / "plain.json").write_text(f'{{"x": "{SECRET}"}}')
    (tmp_path / "package.jsonl.gz").write_bytes(gzip.compress(("a" * 40).encode()))
    pq.write_table(pa.table({"note": [f"token {'a' * 40}"] * 1000}), tmp_path / "rows.parquet")
    scanned, findings = scan_tree(tmp_path, needles)
    assert scanned == 3
    assert {f.secret_label for f in findings} == {"client secret", "bearer token #1"}
    assert len(findings) == 3
    database = tmp_path / "w.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute(
            "create schema s; create table s.t as select 'x' || ? as v from range(5000)", [SECRET]
        )
    _, db_findings = scan_warehouse(database, needles)
    assert [f.secret_label for f in db_findings] == ["client secret"]
