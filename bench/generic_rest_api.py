"""The generic way: dlt's `rest_api` source pointed at the Invoicing API v2, as its documentation recommends.

This is the contender the benchmark (`bench/compare_generic.py`) runs against this project's pipeline. It is
written the way a user following dlt's REST API source documentation would write it, nothing tuned:

- auth: OAuth2 client credentials. dlt's `OAuth2ClientCredentials` sends the client id and secret in the form
  body; the API wants them as HTTP Basic (spec, Authentication 2), so a small subclass overrides
  `build_access_token_request`, the extension point dlt's documentation shows for this case;
- paging: `OffsetPaginator` on `limit`/`skip`, limit 100, no total in the body (`total_path=None`), so it
  stops on the first empty page;
- incremental: a `lastUpdate` cursor, sent as `updatedSince={incremental.start_value}`, records ordered by
  `lastUpdate` ascending; primary key `id`, write disposition `merge`;
- retries: dlt's default `RESTClient` session (429 and 5xx retried with exponential backoff, 5 attempts);
- one DuckDB file of its own, dataset `invoicing_raw`, dlt's default loader file format.
"""

from __future__ import annotations

from base64 import b64encode
from pathlib import Path
from typing import Any

import dlt
from dlt.common.configuration import configspec
from dlt.sources.helpers.rest_client.auth import OAuth2ClientCredentials
from dlt.sources.rest_api import RESTAPIConfig, rest_api_source

from pipelines.invoicing.settings import ENDPOINTS, LISTS

# The API sends no total and no has-more flag (api-facts.md), so the paginator can only stop on an empty page.
PAGE_SIZE = 100
# The scope the project's pipeline asks for (the ETL never writes), so both contenders read the same.
SCOPE = "read"
# Far enough back to take every record on the first run.
INITIAL_CURSOR = "1970-01-01T00:00:00Z"

# List endpoints read with the offset paginator and the lastUpdate cursor: (resource name, path).
LIST_ENDPOINTS: tuple[tuple[str, str], ...] = tuple(
    (name, endpoint.path.lstrip("/")) for name, endpoint in LISTS.items() if endpoint.scope == SCOPE)
# Not here: /webhooks. The spec gives it no scope of its own, so the default `read write` applies, and the
# ETL asks for `read` only: the API answers 403 (the project's pipeline skips it with a note for that reason).
# Single-object endpoints: one request each, no paging.
SINGLE_ENDPOINTS: tuple[tuple[str, str], ...] = tuple(
    (name, endpoint.path.lstrip("/")) for name, endpoint in ENDPOINTS.items() if endpoint.mode == "single")


@configspec
class OAuth2ClientCredentialsHTTPBasic(OAuth2ClientCredentials):
    """dlt's client-credentials auth, with the client id and secret as HTTP Basic (spec, Authentication 2)."""

    def build_access_token_request(self) -> dict[str, Any]:
        """The token request: Basic credentials in the header, grant type and scope in the form body."""
        basic = b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
        return {
            "headers": {
                "Authorization": f"Basic {basic}",
                "Content-Type": "application/x-www-form-urlencoded",
            },
            "data": {"grant_type": "client_credentials", **self.access_token_request_data},
        }


def generic_config(base_url: str, client_id: str, client_secret: str, scope: str = SCOPE) -> RESTAPIConfig:
    """The `rest_api` configuration of every endpoint the project's pipeline reads."""
    base_url = base_url.rstrip("/") + "/"
    list_resources: list[Any] = [
        {
            "name": name,
            "endpoint": {
                "path": path,
                "params": {
                    "orderBy": "lastUpdate",
                    "order": 1,
                    "updatedSince": "{incremental.start_value}",
                },
                "incremental": {"cursor_path": "lastUpdate", "initial_value": INITIAL_CURSOR},
            },
        }
        for name, path in LIST_ENDPOINTS
    ]
    single_resources: list[Any] = [
        {"name": name, "endpoint": {"path": path, "paginator": "single_page"}}
        for name, path in SINGLE_ENDPOINTS
    ]
    # The status history of each supplier document: a dependent resource, one request per parent record
    # (so on an incremental run, only for the supplier documents that changed).
    events_resource: Any = {
        "name": "supplier_document_events",
        "endpoint": {
            "path": "supplier-documents/{resources.supplier_documents.id}/events",
            "paginator": "single_page",
        },
    }
    return {
        "client": {
            "base_url": base_url,
            "headers": {"User-Agent": "dlt-rest-api-generic-bench/1.0"},
            "auth": OAuth2ClientCredentialsHTTPBasic(
                access_token_url=base_url + "oauth2/token",
                client_id=client_id,
                client_secret=client_secret,
                access_token_request_data={"scope": scope},
            ),
            "paginator": {
                "type": "offset",
                "limit": PAGE_SIZE,
                "offset_param": "skip",
                "limit_param": "limit",
                "total_path": None,
                "stop_after_empty_page": True,
            },
        },
        "resource_defaults": {
            "primary_key": "id",
            "write_disposition": "merge",
            "endpoint": {"data_selector": "data"},
        },
        "resources": [*single_resources, *list_resources, events_resource],
    }


def generic_source(base_url: str, client_id: str, client_secret: str, scope: str = SCOPE) -> Any:
    """The dlt source of the generic way (`rest_api_source` over `generic_config`)."""
    config = generic_config(base_url, client_id, client_secret, scope)
    return rest_api_source(config, name="invoicing_generic")


def make_generic_pipeline(warehouse_path: str | Path, working_dir: str | Path) -> dlt.Pipeline:
    """A dlt pipeline loading into its own DuckDB file; its state lives under `working_dir`."""
    return dlt.pipeline(
        pipeline_name="invoicing_generic",
        destination=dlt.destinations.duckdb(str(warehouse_path)),
        dataset_name="invoicing_raw",
        pipelines_dir=str(working_dir),
    )


def run_generic(pipeline: dlt.Pipeline, base_url: str, client_id: str, client_secret: str,
                scope: str = SCOPE, resources: list[str] | None = None) -> Any:
    """Runs one sync of the generic way (full on a new pipeline, incremental after); returns dlt's load info.

    `resources` selects raw tables by name (default: all of them).
    """
    source = generic_source(base_url, client_id, client_secret, scope)
    if resources:
        source = source.with_resources(*resources)
    return pipeline.run(source)
