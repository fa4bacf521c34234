"""What every route reads from a request: the portal, the JSON body, the scope it needs."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Depends, Request

from invoicing_sandbox.auth import require_scope
from invoicing_sandbox.errors import ApiError

READ = [require_scope("read")]
WRITE = [require_scope("write")]
# A JSON body larger than this is refused (the spec shows no limit; the sandbox needs one).
MAX_JSON_BYTES = 1_000_000


def portal(request: Request):
    """The `Portal` this app serves."""
    return request.app.state.portal


def query(request: Request) -> dict[str, str]:
    """The raw query parameters (the last value wins when a name repeats)."""
    return dict(request.query_params)


async def optional_body(request: Request) -> dict | None:
    """The JSON object body, or None when the request has no body; 400 when it is not a JSON object."""
    raw = await request.body()
    if len(raw) > MAX_JSON_BYTES:
        raise ApiError(413, f"request body larger than {MAX_JSON_BYTES} bytes")
    if not raw.strip():
        return None
    try:
        value: Any = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise ApiError(400, "request body is not valid JSON", [str(error)]) from error
    if not isinstance(value, dict):
        raise ApiError(400, "request body must be a JSON object")
    return value


async def required_body(request: Request) -> dict:
    """The JSON object body; 400 when it is missing."""
    value = await optional_body(request)
    if value is None:
        raise ApiError(400, "a JSON request body is required")
    return value


# FastAPI dependencies as module-level defaults (one object each, not a call per signature)
OPTIONAL_BODY = Depends(optional_body)
REQUIRED_BODY = Depends(required_body)


def json_request(schema: str, required: bool = False) -> dict:
    """The `openapi_extra` that declares a JSON request body of component `schema`."""
    return {
        "requestBody": {
            "required": required,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
        }
    }
