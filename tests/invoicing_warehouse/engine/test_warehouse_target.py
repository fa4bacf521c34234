"""The warehouse engine's configuration (invoicing_warehouse/engine/target.py): the DuckDB file by default, DuckLake
by the environment, clear errors naming what is missing, and the catalog's password never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from invoicing_warehouse.engine.target import (
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
    # the password is handed to DuckDB apart (a secret, invoicing_warehouse/engine/connection.py), never in the string
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
    ({ENGINE_ENV: "sqlite"}, f"{ENGINE_ENV} must be one of duckdb, ducklake, got 'sqlite'"),
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


def test_an_object_storage_data_path_keeps_this_hosts_working_files_in_the_state_folder(tmp_path, monkeypatch):
    from invoicing_warehouse.engine.target import STATE_DIR_ENV
    from invoicing_warehouse.runs.gate_state import state_path
    from pipelines.invoicing.webhooks.hint_spool import spool_location_for
    from pipelines.invoicing.webhooks.spool_stores import PostgresSpool

    monkeypatch.chdir(tmp_path)
    env = {ENGINE_ENV: "ducklake", CATALOG_ENV: "postgresql://lake@db.internal/firm_lake",
           DATA_PATH_ENV: "s3://firm-lake/invoicing", PASSWORD_ENV: SECRET}
    target = target_from_env(None, env)
    assert target.on_object_storage and target.data_path is None
    assert target.data_url == target.data_location() == "s3://firm-lake/invoicing/"
    assert target.describe() == "DuckLake postgresql://lake@db.internal:5432/firm_lake (data s3://firm-lake/invoicing/)"
    # default: data/<catalog database>/ under the working directory, as the DuckDB file's data/warehouse.duckdb
    state = tmp_path / "data" / "firm_lake"
    assert target.state_dir == state
    assert target.work_dir() == state / ".lake.dlt"
    # the lake's hints wait in its catalog database, which every host reaches (hint_spool.py)
    assert spool_location_for(target, {}) == PostgresSpool(target.catalog)
    assert state_path(target) == state / "lake.gate.json"
    elsewhere = target_from_env(None, {**env, STATE_DIR_ENV: str(tmp_path / "srv")})
    assert elsewhere.work_dir() == tmp_path / "srv" / "firm_lake" / ".lake.dlt"
    for scheme in ("s3a", "gcs", "gs", "r2"):
        assert target_from_env(None, {**env, DATA_PATH_ENV: f"{scheme}://b/p/"}).data_url == f"{scheme}://b/p/"
    # a lake in a local folder keeps them beside it, as before
    local = target_from_env(None, {**env, DATA_PATH_ENV: str(tmp_path / "lake" / "data")})
    assert local.work_dir() == tmp_path / "lake" / ".data.dlt" and local.data_location() == f"{tmp_path}/lake/data/"


@pytest.mark.parametrize(("data_path", "says"), [
    ("az://container/lake", "az:// is not an object store the lake can use here"),
    ("https://example.com/lake", "https:// is not an object store"),
    (f"s3://AKIAXYZ:{SECRET}@bucket/lake", "never in the URL"),
    (f"s3://bucket/lake?secret={SECRET}", "never in the URL"),
    ("s3:///lake", "must look like s3://bucket/prefix/"),
    ("file:///srv/lake", "as a path"),
])
def test_an_object_storage_url_the_lake_cannot_use_is_refused_without_echoing_a_key(data_path, says):
    with pytest.raises(WarehouseConfigError) as refused:
        target_from_env(None, {ENGINE_ENV: "ducklake", CATALOG_ENV: "postgresql://u@h/db", DATA_PATH_ENV: data_path})
    assert says in str(refused.value) and SECRET not in str(refused.value)


def test_the_aws_variables_become_a_secret_scoped_to_the_bucket_and_masked_everywhere():
    from invoicing_warehouse.engine.object_storage import storage_secret_statement
    from invoicing_warehouse.engine.redaction import redact
    from invoicing_warehouse.engine.target import WarehouseTarget

    target = WarehouseTarget.ducklake("postgresql://u@h/db", "s3://firm-lake/invoicing/")
    secret_key, token = "wJalrXUtnFEMI/K7MDENG+bPxRfiCY-" + SECRET, "FwoGZXIvYXdzEJr-" + SECRET
    env = {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": secret_key, "AWS_SESSION_TOKEN": token,
           "AWS_REGION": "eu-west-3", "AWS_ENDPOINT_URL": "http://127.0.0.1:9000/"}
    statement = storage_secret_statement(target, env)
    assert statement == (
        "CREATE OR REPLACE TEMPORARY SECRET invoicing_lake_storage (TYPE s3, KEY_ID 'AKIAEXAMPLE', "
        f"SECRET '{secret_key}', SCOPE 's3://firm-lake', SESSION_TOKEN '{token}', REGION 'eu-west-3', "
        "ENDPOINT '127.0.0.1:9000', URL_STYLE 'path', USE_SSL false)")
    assert secret_key not in redact(f"error: {statement}") and token not in redact(statement)
    # AWS itself: TLS, virtual-host style (DuckDB's default); GCS's HMAC keys: DuckDB's gcs type
    aws = storage_secret_statement(target, {"AWS_ACCESS_KEY_ID": "AKIA2", "AWS_SECRET_ACCESS_KEY": "k" * 40})
    assert "ENDPOINT" not in aws and "URL_STYLE" not in aws
    gcs = WarehouseTarget.ducklake("postgresql://u@h/db", "gcs://bucket/")
    assert "TYPE gcs" in storage_secret_statement(gcs, {"AWS_ACCESS_KEY_ID": "GOOG1",
                                                        "AWS_SECRET_ACCESS_KEY": "x" * 40})
    # no key in the environment: no secret of ours (DuckDB's own persistent secret, if any, is used)
    assert storage_secret_statement(target, {"AWS_REGION": "eu-west-3"}) is None
    assert storage_secret_statement(WarehouseTarget.ducklake("postgresql://u@h/db", "/srv/lake"), env) is None
