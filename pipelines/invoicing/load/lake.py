"""dlt's `ducklake` destination for a DuckLake warehouse target (invoicing_warehouse/engine/target.py).

The lake is the one `invoicing_warehouse.engine.connection.connect` attaches: same name (`invoicing_lake`, which is
also its metadata schema in the PostgreSQL catalog), same data folder. The extensions come from the PyPI
wheels; `open_lake_instance` installs them before dlt's first connection.

dlt's DuckLake pool opens a new in-memory DuckDB for each connection it lends, seven or more a load;
`LakeConnections` lends instances from `open_lake_instance` instead (invoicing_warehouse/engine/connection.py says why).

dlt never holds the catalog's password: its catalog credentials have none (so nothing of dlt's, its trace,
state, config traces or error texts, can repeat it), and each instance `LakeConnections` lends has the lake
already attached by `attach_lake` (password in a DuckDB secret of that instance). dlt's own
`ATTACH IF NOT EXISTS ... AS invoicing_lake` then finds it attached and does nothing.

The same holds for a lake on object storage: dlt holds no storage credentials either. Its client would make a
storage secret of its own on each connection (from dlt's filesystem credentials, or DuckDB's `credential_chain`,
which needs an extension the product does not ship); `LakeClient` skips that, since `attach_lake` gave the
instance its storage secret (object_storage.py) before dlt sees it. dlt writes the Parquet files to the bucket
through that instance.
"""

from __future__ import annotations

from typing import Any

import duckdb
from dlt.common.configuration.specs.connection_string_credentials import ConnectionStringCredentials
from dlt.destinations import ducklake
from dlt.destinations.impl.duckdb.configuration import DuckDbConnectionPool
from dlt.destinations.impl.ducklake.configuration import DuckLakeCredentials
from dlt.destinations.impl.ducklake.ducklake import DuckLakeClient
from dlt.destinations.impl.ducklake.sql_client import DuckLakeSqlClient

from invoicing_warehouse.engine.connection import attach_lake, extensions_for, open_lake_instance, seal
from invoicing_warehouse.engine.private_files import private_dir
from invoicing_warehouse.engine.target import LAKE_NAME, WarehouseTarget


def lake_destination(target: WarehouseTarget, pipeline_name: str) -> Any:
    """A `ducklake` destination on `target`; its staging dataset is the pipeline's own
    (`invoicing_raw_staging_<pipeline>`), so pipelines loading one lake at once never truncate each
    other's staging tables."""
    assert target.catalog is not None
    if target.data_path is not None:
        private_dir(target.data_path)
    catalog = ConnectionStringCredentials({  # no password: LakeConnections attaches the lake itself
        "drivername": "postgres",
        "username": target.catalog.user,
        "host": target.catalog.host,
        "port": target.catalog.port,
        "database": target.catalog.database,
    })
    credentials = DuckLakeCredentials(ducklake_name=LAKE_NAME, catalog=catalog, storage=_storage(target))
    destination = CheckedOnceDuckLake(credentials=credentials,
                                      staging_dataset_name_layout=f"%s_staging_{pipeline_name}")
    destination.lake_target = target
    return destination


def _storage(target: WarehouseTarget) -> str:
    """The data path as dlt's `storage`: the folder (as before: it is in the pipelines' state), or the URL."""
    return target.data_url if target.data_url is not None else str(target.data_path)


DUCKLAKE_TYPE = "dlt.destinations.ducklake"


class LakeConnections(DuckDbConnectionPool):
    """dlt's DuckLake connection pool, lending as dlt's does a new in-memory instance per borrow (configured as
    dlt configures it), but one from `open_lake_instance`: no second signature hash of the extensions, the lake
    attached with the password kept out of dlt, the configuration locked."""

    def __init__(self, credentials: DuckLakeCredentials, target: WarehouseTarget) -> None:
        super().__init__(credentials, always_open_connection=True)
        self.target = target

    def borrow_conn(self, global_config: dict[str, Any] | None = None, local_config: dict[str, Any] | None = None,
                    pragmas: list[str] | None = None) -> duckdb.DuckDBPyConnection:
        """A new instance with the extensions, settings and statements dlt's pool applies to a new one, then the
        lake attached, then the configuration locked (`seal`). The order matters: dlt's settings are global ones
        (`SET GLOBAL ...`), refused once locked; its `USE` and `search_path`, which follow the borrow, are not."""
        settings = {**(self.credentials.global_config or {}), **(global_config or {})}
        settings.pop("custom_user_agent", None)  # a connect-time option of dlt's, which this instance goes without
        connection = open_lake_instance(extensions_for(self.target))
        try:
            for extension in self.credentials.extensions or ():
                connection.sql(f"LOAD {extension}")
            self._apply_config(connection, "GLOBAL", settings)
            self._execute_statements(connection)
            self._apply_local_config(connection, local_config or {}, pragmas or [])
            attach_lake(connection, self.target)
            seal(connection)
        except BaseException:
            connection.close()
            raise
        with self._conn_lock:
            self._conn_borrows += 1
        return connection


class LakeSqlClient(DuckLakeSqlClient):
    """dlt's DuckLake SQL client on instances from `LakeConnections`, which carry the object store's secret
    already: dlt makes none of its own."""

    # dlt's own two classes disagree on the return type (bool in DuckDB's client, None in DuckLake's): DuckLake's here
    def create_secret(self, scope: str, credentials: Any, secret_name: str | None = None,  # type: ignore[override]
                      persist_secrets: bool = False) -> None:
        """Nothing to create: `attach_lake` gave this instance the lake's storage secret (or DuckDB's own)."""


class LakeClient(DuckLakeClient):
    """dlt's DuckLake client with `LakeSqlClient`."""

    def __init__(self, schema: Any, config: Any, capabilities: Any) -> None:
        super().__init__(schema, config, capabilities)
        self.sql_client = LakeSqlClient(
            dataset_name=self.sql_client.dataset_name,
            staging_dataset_name=self.sql_client.staging_dataset_name,
            credentials=config.credentials,
            capabilities=capabilities,
            override_data_path=config.override_data_path,
            automatic_migration=config.automatic_migration,
        )


class CheckedOnceDuckLake(ducklake):
    """dlt's `ducklake` destination whose clients borrow from `LakeConnections`; the same destination to dlt
    (type `dlt.destinations.ducklake`, so config sections and pipeline state are those of `ducklake`).
    `lake_target` (set by `lake_destination`) is the lake the pool attaches."""

    lake_target: WarehouseTarget | None = None

    @property
    def destination_type(self) -> str:
        return DUCKLAKE_TYPE

    @property
    def client_class(self) -> type:
        return LakeClient

    def configuration(self, initial_config: Any, accept_partial: bool = False) -> Any:
        """dlt's resolved configuration, its credentials lending from a `LakeConnections` pool."""
        config = super().configuration(initial_config, accept_partial)
        pool = config.credentials.conn_pool if config.credentials is not None else None
        # a configuration resolved again keeps its pool: a client may hold a connection borrowed from it
        if pool is not None and not isinstance(pool, LakeConnections):
            if self.lake_target is None:
                raise ValueError("a CheckedOnceDuckLake needs its lake_target: make it with lake_destination()")
            config.credentials.conn_pool = LakeConnections(config.credentials, self.lake_target)
        return config


def shares_writers(pipeline: Any) -> bool:
    """True when the pipeline loads a DuckLake, where other writers may commit at the same time. A DuckDB
    file has one writer: a conflict there is a bug to report, not a race to retry."""
    return str(pipeline.destination.destination_type).endswith("ducklake")
