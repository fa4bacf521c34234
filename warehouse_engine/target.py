"""Where the warehouse lives: one DuckDB file (the default), or a DuckLake chosen by configuration.

A DuckLake keeps its catalog (tables, snapshots) in PostgreSQL and its data as Parquet files under a data
path (a local folder here, object storage in production). It gives what one file cannot: several writers at
once (one per portal), readers that see each committed snapshot without a copy, and time travel.

Chosen by the environment (read by `target_from_env`):
- `INVOICING_WAREHOUSE_ENGINE`: `duckdb` (default) or `ducklake`;
- `INVOICING_DUCKLAKE_CATALOG`: the catalog's PostgreSQL DSN, `postgresql://user@host:port/dbname`;
- `INVOICING_DUCKLAKE_DATA_PATH`: the folder of the Parquet files;
- `INVOICING_DUCKLAKE_PASSWORD` (or dlt's secret `warehouse.ducklake.password`): the catalog's password,
  kept out of the DSN so that the DSN can be printed. The password never appears in `repr`, `describe`,
  errors or Dagster metadata.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from warehouse_engine.names import DEFAULT_WAREHOUSE_PATH
from warehouse_engine.redaction import register_secret

ENGINE_ENV = "INVOICING_WAREHOUSE_ENGINE"
CATALOG_ENV = "INVOICING_DUCKLAKE_CATALOG"
DATA_PATH_ENV = "INVOICING_DUCKLAKE_DATA_PATH"
PASSWORD_ENV = "INVOICING_DUCKLAKE_PASSWORD"
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
    """One warehouse: a DuckDB file (`path`) or a DuckLake (`catalog` + `data_path`)."""

    engine: str = "duckdb"
    path: Path | None = None
    catalog: CatalogDsn | None = None
    data_path: Path | None = None

    @classmethod
    def duckdb_file(cls, path: str | Path = DEFAULT_WAREHOUSE_PATH) -> WarehouseTarget:
        """The default engine: one DuckDB file."""
        return cls("duckdb", path=Path(path))

    @classmethod
    def ducklake(cls, catalog: str | CatalogDsn, data_path: str | Path,
                 password: str | None = None) -> WarehouseTarget:
        """A DuckLake: catalog DSN (password apart, or in `password`) and the data folder."""
        dsn = catalog if isinstance(catalog, CatalogDsn) else parse_catalog_dsn(catalog, password)
        return cls("ducklake", catalog=dsn, data_path=Path(data_path).resolve())

    @property
    def is_lake(self) -> bool:
        """True for a DuckLake."""
        return self.engine == "ducklake"

    def describe(self) -> str:
        """What to print: the file, or the lake's catalog (without password) and data folder."""
        if self.is_lake:
            assert self.catalog is not None
            return f"DuckLake {self.catalog.public()} (data {self.data_path})"
        return str(self.path)

    def work_dir(self) -> Path:
        """A local folder for dlt's working state: beside the file, or beside the lake's data folder."""
        if self.is_lake:
            assert self.data_path is not None
            return self.data_path.parent / f".{self.data_path.name}.dlt"
        assert self.path is not None
        path = self.path.resolve()
        return path.parent / f".{path.stem}.dlt"


def target_from_env(warehouse_path: str | Path | None = None,
                    environ: dict[str, str] | None = None) -> WarehouseTarget:
    """The configured warehouse: DuckLake when `INVOICING_WAREHOUSE_ENGINE=ducklake`, else the DuckDB file
    `warehouse_path` (default data/warehouse.duckdb). Raises WarehouseConfigError naming what is missing."""
    env = os.environ if environ is None else environ
    engine = (env.get(ENGINE_ENV) or "duckdb").strip().lower()
    if engine not in ENGINES:
        raise WarehouseConfigError(f"{ENGINE_ENV}={engine!r}: choose one of {', '.join(ENGINES)}")
    if engine == "duckdb":
        return WarehouseTarget.duckdb_file(warehouse_path or DEFAULT_WAREHOUSE_PATH)
    missing = [name for name in (CATALOG_ENV, DATA_PATH_ENV) if not env.get(name)]
    if missing:
        raise WarehouseConfigError(f"{ENGINE_ENV}=ducklake needs {' and '.join(missing)}")
    return WarehouseTarget.ducklake(env[CATALOG_ENV], env[DATA_PATH_ENV],
                                    env.get(PASSWORD_ENV) or _dlt_secret_password())


def _dlt_secret_password() -> str | None:
    """The catalog password from dlt's secrets (`.dlt/secrets.toml`), when the environment has none."""
    import dlt  # only a DuckLake without the env password pays dlt's import here

    value: object = dlt.secrets.get(PASSWORD_SECRET)
    return str(value) if value else None


def catalog_from_env(environ: dict[str, str] | None = None) -> CatalogDsn | None:
    """The lake's catalog DSN with its password (as `target_from_env` finds them) when the DuckLake engine is
    configured with a catalog, else None: other stores (the shared rate budget) may live in that database."""
    env = os.environ if environ is None else environ
    if (env.get(ENGINE_ENV) or "duckdb").strip().lower() != "ducklake" or not env.get(CATALOG_ENV):
        return None
    return parse_catalog_dsn(env[CATALOG_ENV], env.get(PASSWORD_ENV) or _dlt_secret_password())
