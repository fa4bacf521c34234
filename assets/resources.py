"""Dagster resources: where the API is (with its credentials) and where the warehouse is.

Secrets come from the environment through `EnvVar` (the same variable names dlt reads, so one `.env`
serves `dagster dev`, `dg dev` and `invoicing-warehouse sync`); Dagster shows the variable names in
the UI, never their values.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
from dagster import ConfigurableResource, EnvVar
from pydantic import Field

from warehouse_engine.connection import connect
from warehouse_engine.names import DEFAULT_WAREHOUSE_PATH
from warehouse_engine.target import WarehouseTarget, target_from_env

WAREHOUSE_PATH_ENV = "INVOICING_WAREHOUSE_PATH"
API_ENV = {
    "base_url": "SOURCES__INVOICING__BASE_URL",
    "client_id": "SOURCES__INVOICING__CLIENT_ID",
    "client_secret": "SOURCES__INVOICING__CLIENT_SECRET",
}


class InvoicingApiResource(ConfigurableResource):
    """The Invoicing API v2 account to read: base URL and OAuth2 client credentials."""

    base_url: str = Field(description="API base address including /api/v2, e.g. https://api.infast.fr/api/v2")
    client_id: str = Field(description="OAuth2 client id")
    client_secret: str = Field(description="OAuth2 client secret (set it through an environment variable)")
    rate_limit_per_s: float = Field(
        default=10.0, description="requests per second for the whole run (the real service allows 10)"
    )


class WarehouseResource(ConfigurableResource):
    """The warehouse: the DuckDB file `path`, or the DuckLake when INVOICING_WAREHOUSE_ENGINE=ducklake
    (its catalog and data folder from the environment, warehouse_engine/target.py). DuckDB allows one
    writing process per file: runs that write it are serialised by the run queue (see dagster.yaml), and
    each step opens and closes its own connection so that steps of one run never hold two."""

    path: str = Field(default=DEFAULT_WAREHOUSE_PATH, description="DuckDB file of the warehouse")

    @property
    def file(self) -> Path:
        """The warehouse path as a Path (relative paths are relative to the working directory)."""
        return Path(self.path)

    def target(self) -> WarehouseTarget:
        """The configured warehouse (the file `path` unless the environment chooses DuckLake)."""
        return target_from_env(self.path)

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection to the warehouse, closed on exit. Creates the parent folder when writing."""
        connection = connect(self.target(), read_only=read_only)
        try:
            yield connection
        finally:
            connection.close()


def default_resources() -> dict[str, ConfigurableResource]:
    """The deployed configuration: API settings from the environment (`SOURCES__INVOICING__*`,
    resolved when a run starts), warehouse path from INVOICING_WAREHOUSE_PATH or data/warehouse.duckdb."""
    return {
        "invoicing_api": InvoicingApiResource(
            base_url=EnvVar(API_ENV["base_url"]),
            client_id=EnvVar(API_ENV["client_id"]),
            client_secret=EnvVar(API_ENV["client_secret"]),
        ),
        "warehouse": WarehouseResource(
            path=EnvVar(WAREHOUSE_PATH_ENV).get_value(default=DEFAULT_WAREHOUSE_PATH)
            or DEFAULT_WAREHOUSE_PATH
        ),
    }
