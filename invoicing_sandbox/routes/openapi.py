"""The sandbox's OpenAPI document: FastAPI's (which documents the `oauth2` scheme and each operation's scope
from `invoicing_sandbox.auth.BEARER`), completed with the component schemas and HTTP Basic for the token request, and
cleaned of FastAPI's 422 (the sandbox answers 400)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from invoicing_sandbox.routes.schemas import COMPONENTS


def build_openapi(app: FastAPI, base_path: str) -> dict:
    """The document served at `{base_path}/openapi.json` (built once)."""
    if app.openapi_schema:
        return app.openapi_schema
    document = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schemas.update(COMPONENTS)
    components.setdefault("securitySchemes", {})["basicAuth"] = {"type": "http", "scheme": "basic"}
    document["servers"] = [{"url": "/"}]
    for path_item in document.get("paths", {}).values():
        for operation in path_item.values():
            operation.get("responses", {}).pop("422", None)
    app.openapi_schema = document
    return document
