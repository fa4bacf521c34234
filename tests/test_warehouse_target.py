"""The warehouse engine's configuration (warehouse_engine/target.py): the DuckDB file by default, DuckLake
by the environment, clear errors naming what is missing, and the catalog's password never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from warehouse_engine.target import (
    CATALOG_ENV,
    DATA_PATH_ENV,
    ENGINE_ENV,
    PASSWORD_ENV,
    WarehouseConfigError,
    target_from_env,
)

SECRET = "s3cr3t-Pa55"


def test_without_configuration_the_warehouse_is_the_duckdb_file():
    assert target_from_env(None, {}).path == Path("data/warehouse.duckdb")
    target = target_from_env("x/w.duckdb", {ENGINE_ENV: "duckdb"})
    assert not target.is_lake and target.describe() == "x/w.duckdb"


def test_ducklake_from_the_environment_keeps_the_password_out_of_every_text(tmp_path):
    env = {ENGINE_ENV: "DuckLake", CATALOG_ENV: "postgresql://lake@db.internal:6543/catalog",
           DATA_PATH_ENV: str(tmp_path / "data"), PASSWORD_ENV: SECRET}
    target = target_from_env("ignored.duckdb", env)
    assert target.is_lake and target.path is None
    assert (target.catalog.user, target.catalog.host, target.catalog.port, target.catalog.database) == (
        "lake", "db.internal", 6543, "catalog")
    # the password is handed to DuckDB apart (a secret, warehouse_engine/connection.py), never in the string
    assert target.catalog.password == SECRET and SECRET not in target.catalog.libpq()
    assert target.catalog.libpq() == "dbname='catalog' host='db.internal' port='6543' user='lake'"
    assert target.data_path == (tmp_path / "data").resolve()
    for text in (repr(target), str(target), target.describe(), target.catalog.public()):
        assert SECRET not in text
    assert target.describe() == f"DuckLake postgresql://lake@db.internal:6543/catalog (data {tmp_path / 'data'})"
    # a password written in the DSN itself is taken, and still never shown
    inline = target_from_env(None, {**env, PASSWORD_ENV: "", CATALOG_ENV: f"postgres://lake:{SECRET}@h/db"})
    assert inline.catalog.password == SECRET and SECRET not in repr(inline) + inline.describe()


@pytest.mark.parametrize(("env", "says"), [
    ({ENGINE_ENV: "sqlite"}, "choose one of duckdb, ducklake"),
    ({ENGINE_ENV: "ducklake"}, f"needs {CATALOG_ENV} and {DATA_PATH_ENV}"),
    ({ENGINE_ENV: "ducklake", CATALOG_ENV: "postgresql://u@h/db"}, f"needs {DATA_PATH_ENV}"),
    ({ENGINE_ENV: "ducklake", CATALOG_ENV: f"mysql://u:{SECRET}@h/db", DATA_PATH_ENV: "d"},
     "must look like postgresql://user@host:port/dbname"),
    ({ENGINE_ENV: "ducklake", CATALOG_ENV: "postgresql://h:5432/db", DATA_PATH_ENV: "d"}, "names no user"),
])
def test_a_bad_configuration_says_what_to_fix_without_the_password(env, says):
    with pytest.raises(WarehouseConfigError) as refused:
        target_from_env(None, {PASSWORD_ENV: SECRET, **env})
    assert says in str(refused.value) and SECRET not in str(refused.value)
