"""How the sandbox answers: the `{"data": ...}` wrapper, compact JSON, and OpenAPI declarations.

The real service is a JavaScript service: a whole amount is serialised without a decimal point (`1676`),
others with one (`1676.5`). The domain renders numbers that way already (`invoicing_sandbox.domain.money.number_out`),
so the answers are dumped as they are (a second pass over every value cost a fifth of a list page's time).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Response
from starlette.responses import JSONResponse

try:  # orjson comes with dlt (a dependency of the project): 15x faster on a 100-document page
    import orjson
except ImportError:  # pragma: no cover - the standard library gives the same bytes, slower
    orjson = None  # type: ignore[assignment]  # the optional-module idiom: None is tested before each use


def dump_json(content: Any) -> bytes:
    """Compact UTF-8 JSON."""
    if orjson is not None:
        return orjson.dumps(content)
    return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


class ApiJSONResponse(JSONResponse):
    """A compact UTF-8 JSON answer (numbers as the domain rendered them: JavaScript style)."""

    def render(self, content: Any) -> bytes:
        return dump_json(content)


def data(value: Any, status: int = 200) -> ApiJSONResponse:
    """The service's success body: `{"data": value}` (an object, or an array for lists, nothing else)."""
    return ApiJSONResponse({"data": value}, status_code=status)


def empty_object() -> ApiJSONResponse:
    """`200 {}`: the answer of DELETE on items, customers, webhooks and suppliers (spec: "empty object")."""
    return ApiJSONResponse({}, status_code=200)


def no_body() -> Response:
    """`200` with an empty body: the answer of DELETE /documents/{id} (spec: "200 with no body")."""
    return Response(status_code=200)


def schema_ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def json_content(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


ERROR = json_content(schema_ref("Error"), "error body of the service")


def declared(
    success: int = 200,
    *,
    one: str | None = None,
    many: str | None = None,
    body: str | None = None,
    errors: tuple[int, ...] = (400, 401, 403, 404, 429),
) -> dict:
    """The `responses` mapping of a route for the OpenAPI document.

    `one` names the schema of a single wrapped resource, `many` of a wrapped list; `body` is an unwrapped
    schema (`EmptyObject`); none of them means an answer without a body.
    """
    if one:
        content = json_content(
            {
                "type": "object",
                "required": ["data"],
                "additionalProperties": False,
                "properties": {"data": schema_ref(one)},
            },
            f"{one} wrapped in data",
        )
    elif many:
        content = json_content(
            {
                "type": "object",
                "required": ["data"],
                "additionalProperties": False,
                "properties": {"data": {"type": "array", "items": schema_ref(many)}},
            },
            f"list of {many} wrapped in data",
        )
    elif body:
        content = json_content(schema_ref(body), body)
    else:
        content = {"description": "success, no body"}
    responses: dict = {success: content}
    for status in errors:
        responses[status] = ERROR
    responses[500] = ERROR
    return responses
