"""How a lake instance reaches a DuckLake whose data path is object storage (`s3://bucket/prefix/`, target.py).

DuckDB reads and writes the Parquet files itself through its `httpfs` extension (from its pinned PyPI wheel,
signature-checked like the others: connection.py). dlt writes through the same instances, so there is one way
in and one set of credentials.

Credentials, the standard way:
- the AWS variables, when `AWS_ACCESS_KEY_ID` is set: `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (temporary
  credentials), `AWS_REGION` (or `AWS_DEFAULT_REGION`), and `AWS_ENDPOINT_URL` (or `AWS_ENDPOINT_URL_S3`) for an
  S3-compatible server (MinIO, Ceph, R2, GCS's interoperability endpoint): `http://` turns TLS off, and such a
  server is addressed in path style (`endpoint/bucket/key`), which they all take. They become a temporary secret
  of each lake instance (memory only, scoped to the lake's bucket), as the catalog's password does;
- else a DuckDB secret the operator made once, `CREATE PERSISTENT SECRET (TYPE s3, KEY_ID ..., SECRET ...,
  SCOPE 's3://bucket')` in DuckDB's own secret folder (`~/.duckdb/stored_secrets`, the owner's only), which
  every DuckDB instance of that user finds (checked by hand: no AWS variable, a persistent secret, files in the
  bucket). `PROVIDER credential_chain` (instance roles, `~/.aws` profiles) needs DuckDB's `aws` extension, which
  the product does not ship: such a deployment exports the role's temporary keys into the AWS variables.
The keys never appear in a text the product prints: `register_secret` masks them (redaction.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

import duckdb

from invoicing_warehouse.engine.environment.external_settings import (
    AWS_ACCESS_KEY_ID,
    AWS_DEFAULT_REGION,
    AWS_ENDPOINT_URL,
    AWS_ENDPOINT_URL_S3,
    AWS_REGION,
    AWS_SECRET_ACCESS_KEY,
    AWS_SESSION_TOKEN,
)
from invoicing_warehouse.engine.environment.reader import environment
from invoicing_warehouse.engine.redaction import register_secret
from invoicing_warehouse.engine.sql_names import sql_text
from invoicing_warehouse.engine.target import WarehouseTarget

HTTPFS = "httpfs"
# DuckDB's secret type for each scheme httpfs serves (target.OBJECT_STORE_SCHEMES)
SECRET_TYPES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gcs": "gcs", "gs": "gcs", "r2": "r2"}


def storage_secret_statement(target: WarehouseTarget, environ: Mapping[str, str] | None = None) -> str | None:
    """`CREATE OR REPLACE TEMPORARY SECRET ...` for the lake's bucket from the AWS variables, or None when
    `AWS_ACCESS_KEY_ID` is not set (DuckDB then uses a secret of its own, if the operator made one)."""
    settings = environment(environ)
    key_id = settings.text(AWS_ACCESS_KEY_ID) or ""
    if target.data_url is None or not key_id:
        return None
    scheme, bucket = urlsplit(target.data_url).scheme, urlsplit(target.data_url).netloc
    secret = settings.text(AWS_SECRET_ACCESS_KEY) or ""
    token = settings.text(AWS_SESSION_TOKEN) or ""
    for value in (secret, token):  # the key id names the key (AWS prints it too); these two are the secret
        register_secret(value)
    options = [f"TYPE {SECRET_TYPES[scheme]}", f"KEY_ID {sql_text(key_id)}", f"SECRET {sql_text(secret)}",
               f"SCOPE {sql_text(f'{scheme}://{bucket}')}"]
    if token:
        options.append(f"SESSION_TOKEN {sql_text(token)}")
    region = settings.text(AWS_REGION) or settings.text(AWS_DEFAULT_REGION)
    if region:
        options.append(f"REGION {sql_text(region)}")
    endpoint = settings.text(AWS_ENDPOINT_URL_S3) or settings.text(AWS_ENDPOINT_URL)
    if endpoint:
        parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        options += [f"ENDPOINT {sql_text(parts.netloc + parts.path.rstrip('/'))}", "URL_STYLE 'path'",
                    f"USE_SSL {'false' if parts.scheme == 'http' else 'true'}"]
    return f"CREATE OR REPLACE TEMPORARY SECRET invoicing_lake_storage ({', '.join(options)})"


def give_storage_credentials(connection: duckdb.DuckDBPyConnection, target: WarehouseTarget) -> None:
    """Gives the lake's object-storage credentials from the AWS variables (if set) to this instance, as a
    temporary secret (memory, never a file); nothing for a lake in a local folder."""
    statement = storage_secret_statement(target)
    if statement is not None:
        connection.execute(statement)
