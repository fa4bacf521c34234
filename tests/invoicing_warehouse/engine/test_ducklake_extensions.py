"""The lake's DuckDB instances (invoicing_warehouse/engine/connection.py, pipelines/invoicing/load/lake.py): DuckDB
checks the extensions' signatures once per process, later instances load the same files without hashing them again, a
file changed since is checked again (and refused when its signature fails), and dlt's loads borrow such instances.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dlt
from dlt.destinations import ducklake

from invoicing_warehouse.engine.connection import connect
from pipelines.invoicing.load.lake import LakeConnections, lake_destination

ROOT = Path(__file__).resolve().parents[3]

# Runs in a process of its own whose HOME (so DuckDB's extension folder) is new: the file tampered with is a
# copy, never the machine's.
TAMPERING = """
import os, sys
import duckdb
from invoicing_warehouse.engine.connection import OBJECT_STORE_EXTENSIONS, open_lake_instance

def loaded(connection):
    return sorted(n for (n,) in connection.execute(
        "select extension_name from duckdb_extensions() where loaded and install_path like '%.duckdb_extension'"
    ).fetchall())

first = open_lake_instance()
print("first", loaded(first))
path = first.execute(
    "select install_path from duckdb_extensions() where extension_name = 'ducklake'").fetchone()[0]
first.close()
second = open_lake_instance()
print("second", loaded(second))
second.close()
def replace(path, data):
    with open(path + ".new", "wb") as out:
        out.write(data)
    os.replace(path + ".new", path)  # a new file, as an upgrade or an attacker would leave it

def tampered(path):
    original = open(path, "rb").read()
    data = bytearray(original)
    data[len(data) // 2] ^= 0xFF  # one byte of the code, the signature at the end unchanged
    replace(path, bytes(data))
    return original

original = tampered(path)
try:
    open_lake_instance().close()
    print("tampered loaded")
except duckdb.Error as error:
    print("tampered refused:", str(error).splitlines()[0])
replace(path, original)  # the genuine file again: checked again, and loaded
third = open_lake_instance(OBJECT_STORE_EXTENSIONS)  # a lake on object storage: httpfs too, checked the same way
print("third", loaded(third))
httpfs = third.execute(
    "select install_path from duckdb_extensions() where extension_name = 'httpfs'").fetchone()[0]
third.close()
tampered(httpfs)
try:
    open_lake_instance(OBJECT_STORE_EXTENSIONS).close()
    print("tampered httpfs loaded")
except duckdb.Error as error:
    print("tampered httpfs refused:", str(error).splitlines()[0])
"""


def test_a_changed_extension_file_is_checked_again_and_refused_when_its_signature_fails(tmp_path):
    environment = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", TAMPERING], check=False, env=environment, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    assert lines[:2] == ["first ['ducklake', 'postgres_scanner']", "second ['ducklake', 'postgres_scanner']"]
    assert lines[2].startswith("tampered refused:"), lines
    assert "signature" in lines[2].lower(), lines
    assert lines[3] == "third ['ducklake', 'httpfs', 'postgres_scanner']", lines
    assert lines[4].startswith("tampered httpfs refused:") and "signature" in lines[4].lower(), lines
    assert (tmp_path / ".duckdb" / "extensions").is_dir()  # the copy was the one tampered with


def test_dlt_loads_into_a_lake_borrow_from_the_checked_once_pool_as_the_same_ducklake_destination(lake, tmp_path):
    pipeline = dlt.pipeline("extensions_probe", destination=lake_destination(lake, "extensions_probe"),
                            dataset_name="invoicing_raw", pipelines_dir=str(tmp_path / "pipelines"))
    pipeline.run([{"id": "A", "n": 1}, {"id": "B", "n": 2}], table_name="probe")
    assert pipeline.destination.destination_type == ducklake().destination_type  # config sections, state
    assert pipeline.state["destination_type"] == ducklake().destination_type
    with pipeline.destination_client() as client:
        assert isinstance(client.config.credentials.conn_pool, LakeConnections)
    with connect(lake, read_only=True) as connection:
        assert connection.execute("select id, n from invoicing_raw.probe order by id").fetchall() == [
            ("A", 1), ("B", 2)]
