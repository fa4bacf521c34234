"""Dagster resources: where the API is (with its credentials) and where the warehouse is.

The API's address and credentials are never run configuration: whoever may launch a run in the Dagster UI
could otherwise point the run at a host of theirs and have the client secret sent there (security review
M3). `invoicing_api` is a resource without any configurable field (`api_resource`: a run config naming one is
refused before the run starts); its values are the deployment's: dlt's settings (`SOURCES__INVOICING__*` in
the environment, `.dlt/secrets.toml`), read through credentials.py when a run needs them, or the values the
code itself gives (the demo's and the tests' sandbox). Portals of the portals file read theirs the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb
from dagster import ConfigurableResource, ResourceDefinition
from pydantic import Field

from invoicing_warehouse.engine.connection import connect
from invoicing_warehouse.engine.environment.engine_settings import WAREHOUSE_PATH
from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.names import DEFAULT_WAREHOUSE_PATH
from invoicing_warehouse.engine.target import WarehouseTarget, target_from_env
from pipelines.invoicing.credentials import ApiSettings, resolve_settings
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.url_policy import shown, url_problem

WAREHOUSE_PATH_ENV = WAREHOUSE_PATH.name
DEFAULT_RATE_LIMIT_PER_S = 10.0  # the real service allows 10 requests/s per source IP


@dataclass(frozen=True)
class InvoicingApiResource:
    """The Invoicing API v2 account of the portal `default`: explicit values given in code, else dlt's
    settings of the deployment (read when a run asks, `settings()`). Not configurable per run; `repr`
    leaves the secret out."""

    base_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = None
    rate_limit_per_s: float = DEFAULT_RATE_LIMIT_PER_S

    def __post_init__(self) -> None:
        problem = url_problem(self.base_url) if self.base_url is not None else None
        if problem is not None:
            raise InvoicingApiError("configuration", "invoicing_api resource",
                                    detail=f"base URL {shown(self.base_url or '')!r} {problem}")

    def __repr__(self) -> str:
        return (f"InvoicingApiResource(base_url={self.base_url!r}, client_id={self.client_id!r}, "
                f"client_secret=***, rate_limit_per_s={self.rate_limit_per_s})")

    def settings(self) -> ApiSettings:
        """The address and credentials to use (credentials.py: what is not given comes from dlt's settings,
        the environment or `.dlt/secrets.toml`); raises InvoicingApiError naming a missing setting or a base
        URL that would send them in clear."""
        return resolve_settings(self.base_url, self.client_id, self.client_secret)


def api_resource(api: InvoicingApiResource) -> ResourceDefinition:
    """`api` as a Dagster resource with an empty config schema: a run config that sets anything on it (a
    base URL, a client id or secret, even `{"env": ...}`) is refused when the run is launched or validated."""
    return ResourceDefinition(lambda _context: api, config_schema={},
                              description="The Invoicing API v2 account (address and credentials from the "
                                          "deployment's settings; not configurable per run).")


class WarehouseResource(ConfigurableResource):
    """The warehouse: the DuckDB file `path`, or the DuckLake when INVOICING_WAREHOUSE_ENGINE=ducklake
    (its catalog and data folder from the environment, invoicing_warehouse/engine/target.py). DuckDB allows one
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


def default_resources() -> dict:
    """The deployed configuration: the API account from dlt's settings (`SOURCES__INVOICING__*` or
    `.dlt/secrets.toml`, resolved when a run needs them; not configurable per run), the warehouse path from
    INVOICING_WAREHOUSE_PATH or data/warehouse.duckdb."""
    return {
        "invoicing_api": InvoicingApiResource(),
        "warehouse": WarehouseResource(
            path=current_environment().value(WAREHOUSE_PATH)
            or DEFAULT_WAREHOUSE_PATH
        ),
    }
