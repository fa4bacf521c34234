"""dlt's `ducklake` destination for a DuckLake warehouse target (warehouse_engine/target.py).

The lake is the one `warehouse_engine.connection.connect` attaches: same name (`invoicing_lake`, which is
also its metadata schema in the PostgreSQL catalog), same data folder. The extensions come from the PyPI
wheels; they are installed before dlt opens its first connection, whose ATTACH then autoloads them.
"""

from __future__ import annotations

from typing import Any

from dlt.common.configuration.specs.connection_string_credentials import ConnectionStringCredentials
from dlt.destinations import ducklake
from dlt.destinations.impl.ducklake.configuration import DuckLakeCredentials

from warehouse_engine.connection import install_lake_extensions
from warehouse_engine.target import LAKE_NAME, WarehouseTarget


def lake_destination(target: WarehouseTarget, pipeline_name: str) -> Any:
    """A `ducklake` destination on `target`; its staging dataset is the pipeline's own
    (`invoicing_raw_staging_<pipeline>`), so pipelines loading one lake at once never truncate each
    other's staging tables."""
    assert target.catalog is not None and target.data_path is not None
    install_lake_extensions()
    target.data_path.mkdir(parents=True, exist_ok=True)
    catalog = ConnectionStringCredentials({
        "drivername": "postgres",
        "username": target.catalog.user,
        "password": target.catalog.password,
        "host": target.catalog.host,
        "port": target.catalog.port,
        "database": target.catalog.database,
    })
    credentials = DuckLakeCredentials(ducklake_name=LAKE_NAME, catalog=catalog, storage=str(target.data_path))
    return ducklake(credentials=credentials, staging_dataset_name_layout=f"%s_staging_{pipeline_name}")
