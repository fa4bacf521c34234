"""Where the warehouse lives: one DuckDB file (the default), or a DuckLake chosen by configuration.

A DuckLake keeps its catalog (tables, snapshots) in PostgreSQL and its data as Parquet files under a data
path: a local folder, or object storage (`s3://bucket/prefix/`, the production setup when the lake is shared by
several hosts; object_storage.py says how DuckDB reaches it). It gives what one file cannot: several writers at
once (one per portal), readers that see each committed snapshot without a copy, and time travel.

Chosen by the environment (read by `target_from_env`):
- `INVOICING_WAREHOUSE_ENGINE`: `duckdb` (default) or `ducklake`;
- `INVOICING_DUCKLAKE_CATALOG`: the catalog's PostgreSQL DSN, `postgresql://user@host:port/dbname`;
- `INVOICING_DUCKLAKE_DATA_PATH`: the folder of the Parquet files, or an object-storage URL (`s3://`, `s3a://`,
  `gcs://`, `gs://`, `r2://`: the schemes DuckDB's httpfs writes);
- `INVOICING_DUCKLAKE_STATE_DIR` (default `data`): for a lake on object storage, the local folder of this host's
  working files (dlt's pipeline state, the gate's state, the hint spool, exports), in a folder named after the
  catalog's database (`data/<dbname>`). A lake in a local folder keeps them beside that folder, as before;
- `INVOICING_DUCKLAKE_PASSWORD` (or dlt's secret `warehouse.ducklake.password`): the catalog's password,
  kept out of the DSN so that the DSN can be printed. The password never appears in `repr`, `describe`,
  errors or Dagster metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from invoicing_warehouse.engine.environment.engine_settings import (
    DUCKLAKE_CATALOG,
    DUCKLAKE_DATA_PATH,
    DUCKLAKE_PASSWORD,
    DUCKLAKE_STATE_DIR,
    WAREHOUSE_ENGINE,
)
from invoicing_warehouse.engine.environment.kinds import SettingError
from invoicing_warehouse.engine.environment.reader import environment
from invoicing_warehouse.engine.names import DEFAULT_WAREHOUSE_PATH
from invoicing_warehouse.engine.redaction import register_secret
from invoicing_warehouse.engine.warehouse_files import WarehouseFiles

ENGINE_ENV = WAREHOUSE_ENGINE.name
CATALOG_ENV = DUCKLAKE_CATALOG.name
DATA_PATH_ENV = DUCKLAKE_DATA_PATH.name
PASSWORD_ENV = DUCKLAKE_PASSWORD.name
STATE_DIR_ENV = DUCKLAKE_STATE_DIR.name
DEFAULT_STATE_DIR = Path(DEFAULT_WAREHOUSE_PATH).parent  # data/, where the DuckDB file's working files are too
# The object stores DuckDB's httpfs extension reads and writes (az:// and abfss:// need its azure extension,
# which the product does not ship).
OBJECT_STORE_SCHEMES = ("s3", "s3a", "s3n", "gcs", "gs", "r2")
PASSWORD_SECRET = "warehouse.ducklake.password"
# The lake's name: its ATTACH alias and its metadata schema in the catalog database.
LAKE_NAME = "invoicing_lake"
ENGINES = ("duckdb", "ducklake")


class WarehouseConfigError(ValueError):
    """The warehouse configuration cannot be used (unknown engine, missing or malformed DSN or folder)."""


@dataclass(frozen=True)
class CatalogDsn:
    """The parts of a PostgreSQL DSN, the password apart (never printed)."""

    user: str
    host: str
    port: int
    database: str
    password: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        register_secret(self.password)  # masked in every text the product prints (redaction.py)

    def public(self) -> str:
        """The DSN without its password: safe to print."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.database}"

    def libpq(self) -> str:
        """`dbname='...' host='...' port='...' user='...'` for DuckDB's postgres extension, without the password
        (connection.py hands it over in a DuckDB secret). Every value is quoted as libpq reads it, so a space,
        a quote or a `key=value` inside one stays that value and never adds an option."""
        parts = {"dbname": self.database, "host": self.host, "port": str(self.port), "user": self.user}
        return " ".join(f"{key}={libpq_quote(value)}" for key, value in parts.items())


def libpq_quote(value: str) -> str:
    """`value` as one libpq connection-string value: in single quotes, `\\` and `'` escaped by a backslash."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def parse_catalog_dsn(dsn: str, password: str | None = None) -> CatalogDsn:
    """Parses `postgresql://user[:password]@host[:port]/dbname`; `password` overrides the DSN's own."""
    parts = urlsplit(dsn.strip())
    if parts.scheme not in ("postgres", "postgresql") or not parts.hostname or not parts.path.strip("/"):
        raise WarehouseConfigError(
            f"{CATALOG_ENV} must look like postgresql://user@host:port/dbname, not {_masked(dsn)!r}"
        )
    if not parts.username:
        raise WarehouseConfigError(f"{CATALOG_ENV} names no user: postgresql://USER@host:port/dbname")
    try:
        port = parts.port or 5432
    except ValueError:
        raise WarehouseConfigError(f"{CATALOG_ENV}: the port is not a number in {_masked(dsn)!r}") from None
    return CatalogDsn(unquote(parts.username), parts.hostname, port, parts.path.strip("/"),
                      password or (unquote(parts.password) if parts.password else None))


def _masked(dsn: str) -> str:
    parts = urlsplit(dsn.strip())
    if parts.password:
        return dsn.replace(f":{parts.password}@", ":***@")
    return dsn


@dataclass(frozen=True)
class WarehouseTarget:
    """One warehouse: a DuckDB file (`path`) or a DuckLake (`catalog` + `data_path`, a local folder, or
    `data_url`, object storage, with `state_dir` the local folder of this host's working files)."""

    engine: str = "duckdb"
    path: Path | None = None
    catalog: CatalogDsn | None = None
    data_path: Path | None = None
    data_url: str | None = None
    state_dir: Path | None = None

    @classmethod
    def duckdb_file(cls, path: str | Path = DEFAULT_WAREHOUSE_PATH) -> WarehouseTarget:
        """The default engine: one DuckDB file."""
        return cls("duckdb", path=Path(path))

    @classmethod
    def ducklake(cls, catalog: str | CatalogDsn, data_path: str | Path,
                 password: str | None = None, state_dir: str | Path | None = None) -> WarehouseTarget:
        """A DuckLake: catalog DSN (password apart, or in `password`) and the data folder or object-storage URL.
        `state_dir` (object storage only; default `data`): where this host keeps the lake's working files."""
        dsn = catalog if isinstance(catalog, CatalogDsn) else parse_catalog_dsn(catalog, password)
        url = object_store_url(data_path)
        if url is None:
            return cls("ducklake", catalog=dsn, data_path=Path(data_path).resolve())
        local = Path(state_dir or DEFAULT_STATE_DIR).resolve() / dsn.database
        return cls("ducklake", catalog=dsn, data_url=url, state_dir=local)

    @property
    def is_lake(self) -> bool:
        """True for a DuckLake."""
        return self.engine == "ducklake"

    @property
    def on_object_storage(self) -> bool:
        """True for a DuckLake whose data path is an object-storage URL."""
        return self.data_url is not None

    def data_location(self) -> str:
        """The lake's data path as DuckDB and dlt take it: the folder, or the URL, ending in `/`."""
        assert self.is_lake and (self.data_path is not None or self.data_url is not None)
        return self.data_url if self.data_url is not None else f"{self.data_path}/"

    def local_anchor(self) -> Path:
        """The local path the warehouse's working files are named after (`.<name>.dlt`, `<name>.gate.json`
        beside it; a DuckDB file's `<name>.hints.sqlite` too, a lake's hints wait in its catalog database): the DuckDB
        file, the lake's data folder, or for a lake on object storage `<state_dir>/lake` (no file of the lake itself is
        there)."""
        if not self.is_lake:
            assert self.path is not None
            return self.path
        if self.data_path is not None:
            return self.data_path
        assert self.state_dir is not None
        return self.state_dir / "lake"

    def describe(self) -> str:
        """What to print: the file, or the lake's catalog (without password) and data folder or URL."""
        if self.is_lake:
            assert self.catalog is not None
            data = self.data_url if self.data_url is not None else self.data_path
            return f"DuckLake {self.catalog.public()} (data {data})"
        return str(self.path)

    def work_dir(self) -> Path:
        """A local folder for dlt's working state: beside the file, or beside the lake's data folder (on object
        storage: in `state_dir`, `data/<dbname>/.lake.dlt` by default)."""
        return self.files().dlt_work_dir

    def files(self) -> WarehouseFiles:
        """The files beside this warehouse (its readers' copy, gate state, runs log, hints spool, markers)."""
        return WarehouseFiles(self.local_anchor(), lake=self.is_lake)


def target_from_env(warehouse_path: str | Path | None = None,
                    environ: Mapping[str, str] | None = None) -> WarehouseTarget:
    """The configured warehouse: DuckLake when `INVOICING_WAREHOUSE_ENGINE=ducklake`, else the DuckDB file
    `warehouse_path` (default data/warehouse.duckdb). Raises WarehouseConfigError naming what is missing."""
    settings = environment(environ)
    try:
        engine = settings.value(WAREHOUSE_ENGINE)
    except SettingError as error:
        raise WarehouseConfigError(str(error)) from None
    if engine == "duckdb":
        return WarehouseTarget.duckdb_file(warehouse_path or DEFAULT_WAREHOUSE_PATH)
    catalog, data_path = settings.text(DUCKLAKE_CATALOG), settings.text(DUCKLAKE_DATA_PATH)
    if catalog is None or data_path is None:
        missing = [s.name for s, v in ((DUCKLAKE_CATALOG, catalog), (DUCKLAKE_DATA_PATH, data_path)) if v is None]
        raise WarehouseConfigError(f"{ENGINE_ENV}=ducklake needs {' and '.join(missing)}")
    return WarehouseTarget.ducklake(catalog, data_path, settings.text(DUCKLAKE_PASSWORD) or _dlt_secret_password(),
                                    state_dir=settings.text(DUCKLAKE_STATE_DIR))


def object_store_url(data_path: str | Path) -> str | None:
    """`data_path` as an object-storage URL ending in `/` (`s3://bucket/prefix/`), or None for a local folder.
    Raises WarehouseConfigError for a URL DuckDB's httpfs cannot write (another scheme, no bucket, a query
    string or credentials inside it)."""
    if isinstance(data_path, Path) or "://" not in str(data_path):
        return None
    raw = str(data_path).strip()
    parts = urlsplit(raw)
    scheme = parts.scheme.lower()
    if scheme == "file":
        raise WarehouseConfigError(f"{DATA_PATH_ENV}: give a local folder as a path, not as {raw!r}")
    if scheme not in OBJECT_STORE_SCHEMES:
        raise WarehouseConfigError(
            f"{DATA_PATH_ENV}: {scheme}:// is not an object store the lake can use here; choose a local folder or "
            f"one of {', '.join(s + '://' for s in OBJECT_STORE_SCHEMES)}")
    if not parts.netloc or "@" in parts.netloc or ":" in parts.netloc or parts.query or parts.fragment:
        # a key in the URL would be printed with it (describe, errors): credentials go in AWS_* or a DuckDB secret
        raise WarehouseConfigError(
            f"{DATA_PATH_ENV} must look like {scheme}://bucket/prefix/ (credentials in AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY or a DuckDB secret, never in the URL)")
    prefix = parts.path.strip("/")
    return f"{scheme}://{parts.netloc}/{prefix + '/' if prefix else ''}"


def _dlt_secret_password() -> str | None:
    """The catalog password from dlt's secrets (`.dlt/secrets.toml`), when the environment has none."""
    import dlt  # only a DuckLake without the env password pays dlt's import here

    value: object = dlt.secrets.get(PASSWORD_SECRET)
    return str(value) if value else None


def catalog_from_env(environ: Mapping[str, str] | None = None) -> CatalogDsn | None:
    """The lake's catalog DSN with its password (as `target_from_env` finds them) when the DuckLake engine is
    configured with a catalog, else None: other stores (the shared rate budget) may live in that database."""
    settings = environment(environ)
    catalog = settings.text(DUCKLAKE_CATALOG)
    if (settings.text(WAREHOUSE_ENGINE) or "").lower() != "ducklake" or catalog is None:
        return None
    return parse_catalog_dsn(catalog, settings.text(DUCKLAKE_PASSWORD) or _dlt_secret_password())
