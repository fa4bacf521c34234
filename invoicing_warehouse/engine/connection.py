"""The one door to the warehouse for SQL: `connect(target)` opens DuckDB on a file or on a DuckLake.

On a DuckLake the connection is an in-memory DuckDB with the lake attached and made current (`USE`), so
`invoicing_raw.documents`, `staging.x` and `marts.y` name the lake's tables and the SQL models run unchanged.
DuckDB cannot download extensions here: `ducklake` and `postgres` come from the PyPI wheels
`duckdb-extension-*` (pinned with DuckDB itself in pyproject.toml), installed into DuckDB's extension
folder once per process so that dlt's own connections autoload them too. A lake on object storage also loads
`httpfs` (its wheel too), checked the same way; a lake in a local folder never loads it.

Every lake connection is a new in-memory DuckDB instance (dlt's too: its DuckLake connections cannot be
duplicated), and DuckDB checks an extension's signature at each load into a new instance by hashing the whole
file: 78 MB for the two, 0.2 s per connection, and a dlt load opens seven or more. So DuckDB checks them once
per process (`install_lake_extensions`), and `open_lake_instance` loads the same files, unchanged since, without
the second hash.

What keeps that skip narrow (security review M8): a file's identity includes its inode change time, which
`os.utime` cannot put back; the lake instances never install or autoload any other extension (DuckDB's
repository is plain HTTP, trusted only through the signatures these instances skip); and once an instance is set
up (`seal`), its configuration is locked, so no statement can turn any of that back on.

The catalog's password never enters a connection string: `attach_lake` hands it to DuckDB as a temporary
(in-memory) PostgreSQL secret, and the ATTACH names only `dbname host port user`, which DuckDB may repeat in
its errors. Whatever still reaches an error is masked (`invoicing_warehouse.engine.redaction`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from invoicing_warehouse.engine.object_storage import HTTPFS, give_storage_credentials
from invoicing_warehouse.engine.private_files import make_private, private_dir, private_umask
from invoicing_warehouse.engine.redaction import redact
from invoicing_warehouse.engine.target import LAKE_NAME, WarehouseTarget

LAKE_EXTENSIONS = ("ducklake", "postgres")
OBJECT_STORE_EXTENSIONS = (*LAKE_EXTENSIONS, HTTPFS)  # a lake whose data path is object storage
# Set when a lake instance opens: nothing but the checked files is ever loaded into it, and nothing downloaded.
LAKE_INSTANCE_CONFIG = {
    "allow_unsigned_extensions": "true",  # skips the second hash of the checked files (see the module's doc)
    "autoinstall_known_extensions": "false",
    "autoload_known_extensions": "false",
}
_installed = threading.Lock()
# extension file -> (device, inode, size, modification ns, change ns) when DuckDB last checked its signature here
_checked_files: dict[str, tuple[int, int, int, int, int]] = {}
_checked_names: set[str] = set()  # the extensions those files are


class WarehouseUnavailable(RuntimeError):
    """The warehouse cannot be opened (catalog unreachable, bad password, file locked); no secret inside."""


def extensions_for(target: WarehouseTarget | None) -> tuple[str, ...]:
    """The extensions a lake instance for `target` loads: `httpfs` too when its data is on object storage."""
    return OBJECT_STORE_EXTENSIONS if target is not None and target.on_object_storage else LAKE_EXTENSIONS


def install_lake_extensions(extensions: tuple[str, ...] = LAKE_EXTENSIONS) -> None:
    """Installs the DuckLake and PostgreSQL extensions (and `httpfs` when asked) from their wheels, and has DuckDB
    check their signatures (once per process, and again when a file changed since or another is asked for)."""
    with _installed:
        if _checked_files and set(extensions) <= _checked_names and _files_unchanged():
            return
        extensions = tuple(dict.fromkeys((*extensions, *_checked_names)))  # check again what was checked
        import duckdb_extensions  # the wheels' installer: INSTALL '<file shipped in the wheel>'

        probe = duckdb.connect()  # signature checks on: DuckDB's default
        try:
            installed = {
                name for (name,) in probe.execute(
                    "select extension_name from duckdb_extensions() where installed").fetchall()
            }
            for name in extensions:
                # the postgres wheel's extension registers as postgres_scanner
                if name not in installed and f"{name}_scanner" not in installed:
                    duckdb_extensions.import_extension(name, con=probe)
                probe.execute(f"load {name}")  # hashes the file and checks its signature; raises if it fails
            files = [path for (path,) in probe.execute(
                "select install_path from duckdb_extensions() where loaded and install_path like '%.duckdb_extension'"
            ).fetchall()]
            _checked_files.clear()
            _checked_files.update({path: _identity(path) for path in files})
            _checked_names.clear()
            _checked_names.update(extensions)
        finally:
            probe.close()


def _identity(path: str) -> tuple[int, int, int, int, int]:
    # st_ctime_ns: a file rewritten in place with its size and mtime put back (os.utime) still changes it
    status = os.stat(path)
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns


def _files_unchanged() -> bool:
    try:
        return all(_identity(path) == identity for path, identity in _checked_files.items())
    except OSError:
        return False


def open_lake_instance(extensions: tuple[str, ...] = LAKE_EXTENSIONS) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB with the `ducklake` and `postgres` extensions loaded (and `httpfs` for a lake on
    object storage: `extensions_for`).

    The extension files were checked by DuckDB in this process (`install_lake_extensions`); while each is the
    same file (device, inode, size, modification and change times), the instance loads them without hashing them
    again (`allow_unsigned_extensions`, which is what skips the check). A changed file is checked again first.
    No other extension is installed or autoloaded (`LAKE_INSTANCE_CONFIG`). Only the product's own SQL and
    dlt's run on these instances; `seal` locks their configuration once they are set up."""
    install_lake_extensions(extensions)
    connection = duckdb.connect(config=dict(LAKE_INSTANCE_CONFIG))
    try:
        for name in extensions:
            connection.execute(f"load {name}")
    except BaseException:
        connection.close()
        raise
    return connection


def attach_statement(target: WarehouseTarget, *, read_only: bool = False,
                     snapshot_version: int | None = None) -> str:
    """`ATTACH 'ducklake:postgres:dbname=... host=... port=... user=...' AS invoicing_lake (...)`: no password
    (`attach_lake` gives it to DuckDB apart, in a secret)."""
    assert target.catalog is not None
    data_path = target.data_location().replace("'", "''")
    options = [f"DATA_PATH '{data_path}'", f"METADATA_SCHEMA '{LAKE_NAME}'"]
    if read_only:
        options.append("READ_ONLY")
    if snapshot_version is not None:
        options.append(f"SNAPSHOT_VERSION {int(snapshot_version)}")
    connection_string = target.catalog.libpq().replace("'", "''")
    return f"ATTACH 'ducklake:postgres:{connection_string}' AS {LAKE_NAME} ({', '.join(options)})"


def give_catalog_password(connection: duckdb.DuckDBPyConnection, target: WarehouseTarget) -> None:
    """Gives the catalog's password (if any) to this instance's postgres extension as a temporary secret (memory,
    never a file), which it adds to the options of every later PostgreSQL connection string without one."""
    assert target.catalog is not None
    if target.catalog.password:
        password = target.catalog.password.replace("'", "''")
        # unnamed: the postgres extension merges only its default secret into an ATTACH without a SECRET option
        connection.execute(f"CREATE OR REPLACE TEMPORARY SECRET (TYPE postgres, PASSWORD '{password}')")


def attach_lake(connection: duckdb.DuckDBPyConnection, target: WarehouseTarget, *, read_only: bool = False,
                snapshot_version: int | None = None) -> None:
    """Attaches the lake to a lake instance and makes it current (`USE`). The catalog's password goes into a
    temporary PostgreSQL secret of this instance only (memory, never a file), which the postgres extension
    adds to the connection string's options; the object store's keys (AWS variables) into another
    (object_storage.py). Raises WarehouseUnavailable, its message free of the password and the keys."""
    assert target.catalog is not None
    try:
        give_catalog_password(connection, target)
        give_storage_credentials(connection, target)
        connection.execute(attach_statement(target, read_only=read_only, snapshot_version=snapshot_version))
        connection.execute(f"use {LAKE_NAME}")
    except duckdb.Error as error:
        raise WarehouseUnavailable(f"cannot open {target.describe()}: {scrub(str(error), target)}") from None


def seal(connection: duckdb.DuckDBPyConnection) -> None:
    """Locks a set-up lake instance's configuration: no later statement can allow another extension, turn
    autoloading on or change where DuckDB looks for extensions. `USE` and `search_path` still work."""
    connection.execute("SET lock_configuration = true")


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
        private_umask()  # the file and its WAL: the owner's only (private_files.py)
        if not read_only:
            path = Path(target.path)
            if not path.parent.exists():
                private_dir(path.parent)
            make_private(path)  # a warehouse an older version left 0644
        return duckdb.connect(str(target.path), read_only=read_only)
    extensions = extensions_for(target)
    install_lake_extensions(extensions)
    if not read_only and snapshot_version is None and target.data_path is not None:
        private_dir(target.data_path)  # a local folder's files: the owner's only
    connection = open_lake_instance(extensions)
    try:
        attach_lake(connection, target, read_only=read_only or snapshot_version is not None,
                    snapshot_version=snapshot_version)
        seal(connection)
    except BaseException:
        connection.close()
        raise
    return connection


# the instance-wide settings a dlt connection changes (dlt's `session_timezone`: SET GLOBAL TimeZone)
INSTANCE_SETTINGS = ("TimeZone",)


class HeldInstance:
    """The warehouse file's DuckDB instance held open by `one_instance` (None on a DuckLake), with the
    instance-wide settings it had when opened."""

    def __init__(self, connection: duckdb.DuckDBPyConnection | None) -> None:
        self.connection = connection
        self.settings: dict[str, str] = {}
        if connection is not None:
            for name in INSTANCE_SETTINGS:
                row = connection.execute("select current_setting(?)", [name]).fetchone()
                self.settings[name] = str(row[0]) if row is not None else ""

    def restore_settings(self) -> None:
        """Puts the instance-wide settings back as they were when it was opened (after a dlt load changed them)."""
        if self.connection is None:
            return
        for name, value in self.settings.items():
            self.connection.execute(f"set global {name} = ?", [value])


@contextmanager
def one_instance(target: WarehouseTarget) -> Iterator[HeldInstance]:
    """Keeps the warehouse file's DuckDB instance open for the block: every `duckdb.connect` of that file in
    this process meanwhile (dlt's, the gate's, the publication's) joins it instead of opening the file again.

    Why: a hint run opened and closed the file seven or more times (dlt's loads, the build, the trend, the
    publication), each open reading the catalog again and each last close checkpointing: 30-80 ms each on the
    bench's warehouse (bench/RESULTS.md, the doorbell's p95). DuckDB shares one instance per file and process
    (its instance cache, by the file's real path); the publication still checkpoints before it copies, and
    the block's end closes the instance (a checkpoint). The file is locked for the block only, as during any
    run: between runs other processes open it as before.

    dlt sets the instance's global TimeZone (UTC) on each connection it opens, where a fresh instance has the
    process's own: call `restore_settings()` after a load, so that the SQL after it runs under the settings
    every connection had before. On a DuckLake (an in-memory instance per connection), or before the file
    exists (a connection would create it), nothing is held."""
    if target.is_lake or target.path is None or not Path(target.path).exists():
        yield HeldInstance(None)
        return
    connection = connect(target)
    try:
        yield HeldInstance(connection)
    finally:
        connection.close()


def scrub(text: str, target: WarehouseTarget | None = None) -> str:
    """`text` with the catalog's password and every other secret masked (`invoicing_warehouse.engine.redaction`)."""
    password = target.catalog.password if target is not None and target.catalog is not None else None
    if password:
        text = text.replace(password, "***")
    return redact(text)


def current_snapshot(connection: duckdb.DuckDBPyConnection) -> int:
    """The DuckLake's latest committed snapshot id, as this connection sees it."""
    row = connection.execute(f"select max(snapshot_id) from {LAKE_NAME}.snapshots()").fetchone()
    if row is None or row[0] is None:
        raise LookupError("the lake has no snapshot")
    return int(row[0])
