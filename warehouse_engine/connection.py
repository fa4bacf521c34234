"""The one door to the warehouse for SQL: `connect(target)` opens DuckDB on a file or on a DuckLake.

On a DuckLake the connection is an in-memory DuckDB with the lake attached and made current (`USE`), so
`invoicing_raw.documents`, `staging.x` and `marts.y` name the lake's tables and the SQL models run unchanged.
DuckDB cannot download extensions here: `ducklake` and `postgres` come from the PyPI wheels
`duckdb-extension-*` (pinned with DuckDB itself in pyproject.toml), installed into DuckDB's extension
folder once per process so that dlt's own connections autoload them too.

Every lake connection is a new in-memory DuckDB instance (dlt's too: its DuckLake connections cannot be
duplicated), and DuckDB checks an extension's signature at each load into a new instance by hashing the whole
file: 78 MB for the two, 0.2 s per connection, and a dlt load opens seven or more. So DuckDB checks them once
per process (`install_lake_extensions`), and `open_lake_instance` loads the same files, unchanged since, without
the second hash.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import duckdb

from warehouse_engine.target import LAKE_NAME, WarehouseTarget

LAKE_EXTENSIONS = ("ducklake", "postgres")
_installed = threading.Lock()
# extension file -> (device, inode, size, modification ns) when DuckDB last checked its signature in this process
_checked_files: dict[str, tuple[int, int, int, int]] = {}


class WarehouseUnavailable(RuntimeError):
    """The warehouse cannot be opened (catalog unreachable, bad password, file locked); no secret inside."""


def install_lake_extensions() -> None:
    """Installs the DuckLake and PostgreSQL extensions from their wheels, and has DuckDB check their signatures
    (once per process, and again when a file changed since)."""
    with _installed:
        if _checked_files and _files_unchanged():
            return
        import duckdb_extensions  # the wheels' installer: INSTALL '<file shipped in the wheel>'

        probe = duckdb.connect()  # signature checks on: DuckDB's default
        try:
            installed = {
                name for (name,) in probe.execute(
                    "select extension_name from duckdb_extensions() where installed").fetchall()
            }
            for name in LAKE_EXTENSIONS:
                # the postgres wheel's extension registers as postgres_scanner
                if name not in installed and f"{name}_scanner" not in installed:
                    duckdb_extensions.import_extension(name, con=probe)
                probe.execute(f"load {name}")  # hashes the file and checks its signature; raises if it fails
            files = [path for (path,) in probe.execute(
                "select install_path from duckdb_extensions() where loaded and install_path like '%.duckdb_extension'"
            ).fetchall()]
            _checked_files.clear()
            _checked_files.update({path: _identity(path) for path in files})
        finally:
            probe.close()


def _identity(path: str) -> tuple[int, int, int, int]:
    status = os.stat(path)
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


def _files_unchanged() -> bool:
    try:
        return all(_identity(path) == identity for path, identity in _checked_files.items())
    except OSError:
        return False


def open_lake_instance() -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB with the `ducklake` and `postgres` extensions loaded.

    The extension files were checked by DuckDB in this process (`install_lake_extensions`); while each is the
    same file (device, inode, size, modification time), the instance loads them without hashing them again
    (`allow_unsigned_extensions`, which is what skips the check). A changed file is checked again first.
    Only the product's own SQL and dlt's run on these instances."""
    install_lake_extensions()
    connection = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    try:
        for name in LAKE_EXTENSIONS:
            connection.execute(f"load {name}")
    except BaseException:
        connection.close()
        raise
    return connection


def attach_statement(target: WarehouseTarget, *, read_only: bool = False,
                     snapshot_version: int | None = None) -> str:
    """`ATTACH 'ducklake:postgres:...' AS invoicing_lake (...)`: holds the password, never print it."""
    assert target.catalog is not None and target.data_path is not None
    data_path = str(target.data_path).replace("'", "''")
    options = [f"DATA_PATH '{data_path}/'", f"METADATA_SCHEMA '{LAKE_NAME}'"]
    if read_only:
        options.append("READ_ONLY")
    if snapshot_version is not None:
        options.append(f"SNAPSHOT_VERSION {int(snapshot_version)}")
    connection_string = target.catalog.libpq().replace("'", "''")
    return f"ATTACH 'ducklake:postgres:{connection_string}' AS {LAKE_NAME} ({', '.join(options)})"


def connect(target: WarehouseTarget, *, read_only: bool = False,
            snapshot_version: int | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection on the warehouse, its tables under their usual names.

    `read_only`: a reader (on a DuckLake it sees each committed snapshot, and never blocks a writer).
    `snapshot_version`: a DuckLake only, the whole warehouse as it was at that snapshot (read-only).
    Raises WarehouseUnavailable with a message free of the catalog's password.
    """
    if not target.is_lake:
        if snapshot_version is not None:
            raise ValueError("time travel (snapshot_version) needs the DuckLake engine")
        assert target.path is not None
        if not read_only:
            Path(target.path).parent.mkdir(parents=True, exist_ok=True)
        return duckdb.connect(str(target.path), read_only=read_only)
    install_lake_extensions()
    assert target.data_path is not None
    if not read_only and snapshot_version is None:
        target.data_path.mkdir(parents=True, exist_ok=True)
    connection = open_lake_instance()
    try:
        connection.execute(attach_statement(target, read_only=read_only or snapshot_version is not None,
                                            snapshot_version=snapshot_version))
        connection.execute(f"use {LAKE_NAME}")
    except duckdb.Error as error:
        connection.close()
        raise WarehouseUnavailable(f"cannot open {target.describe()}: {scrub(str(error), target)}") from None
    return connection


def scrub(text: str, target: WarehouseTarget) -> str:
    """`text` with the catalog's password masked (DuckDB may echo the connection string in errors)."""
    password = target.catalog.password if target.catalog is not None else None
    return text.replace(password, "***") if password else text


def current_snapshot(connection: duckdb.DuckDBPyConnection) -> int:
    """The DuckLake's latest committed snapshot id, as this connection sees it."""
    row = connection.execute(f"select max(snapshot_id) from {LAKE_NAME}.snapshots()").fetchone()
    if row is None or row[0] is None:
        raise LookupError("the lake has no snapshot")
    return int(row[0])
