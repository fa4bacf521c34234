"""The lake's lock (invoicing_warehouse/engine/lake_lock.py) on a real PostgreSQL catalog: loads share it, a build that
reads the raw tables (a mart's Dagster step) waits for them, and a wait past its bound fails saying so, with no
secret in the message and nothing built."""

from __future__ import annotations

from dagster import DagsterInstance, materialize

from assets.models import build_model_asset
from assets.resources import WarehouseResource
from invoicing_warehouse.engine.connection import connect
from invoicing_warehouse.engine.lake_lock import SHARED, lake_lock
from invoicing_warehouse.engine.sql_runner import discover_models
from invoicing_warehouse.engine.target import CATALOG_ENV, DATA_PATH_ENV, ENGINE_ENV, PASSWORD_ENV


def _messages(error) -> str:
    """The error's message and its causes' (Dagster wraps what the step raised)."""
    parts = []
    for _ in range(10):  # a bounded walk down the causes
        if error is None:
            break
        parts.append(error.message)
        error = error.cause
    return " | ".join(parts)


def test_a_marts_dagster_step_waits_for_a_load_under_way_and_gives_up_past_the_bound(lake, postgres_cluster,
                                                                                     monkeypatch):
    for name, value in ((ENGINE_ENV, "ducklake"), (CATALOG_ENV, lake.catalog.public()),
                        (DATA_PATH_ENV, str(lake.data_path)), (PASSWORD_ENV, postgres_cluster.password),
                        ("INVOICING_LAKE_LOCK_WAIT_S", "0.5")):
        monkeypatch.setenv(name, value)
    connect(lake).close()  # the catalog exists before the "load" takes the lock
    models = discover_models()
    (receivables,) = [model for model in models if model.key == "marts.receivables"]
    step = build_model_asset(receivables, {model.key for model in models})
    with lake_lock(lake, SHARED), DagsterInstance.ephemeral() as instance:  # a portal's load, half way
        result = materialize([step], resources={"warehouse": WarehouseResource(path="unused.duckdb")},
                             instance=instance, raise_on_error=False)
        failures = [_messages(event.event_specific_data.error) for event in result.all_events
                    if event.is_step_failure]
    assert not result.success
    assert len(failures) == 1 and "exclusive lock was not granted within 0.5 s" in failures[0]
    assert postgres_cluster.password not in failures[0]
    with connect(lake, read_only=True) as reader:  # nothing was built
        assert reader.execute("select count(*) from information_schema.tables "
                              "where table_schema = 'marts'").fetchone() == (0,)
