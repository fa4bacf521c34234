"""Token, user and portal endpoints."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse

from invoicing_sandbox.auth import OAuthError
from invoicing_sandbox.routes.inputs import (
    OPTIONAL_BODY,
    READ,
    WRITE,
    json_request,
    portal,
)
from invoicing_sandbox.routes.responses import data, declared, json_content

router = APIRouter()

TOKEN_FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {
                    "type": "object",
                    "required": ["grant_type", "scope"],
                    "properties": {
                        "grant_type": {"type": "string", "enum": ["client_credentials"]},
                        "scope": {"type": "string", "enum": ["read", "write", "read write"]},
                    },
                }
            }
        },
    },
    "security": [{"basicAuth": []}],
}
TOKEN_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: json_content({"$ref": "#/components/schemas/Token"}, "access token"),
    400: json_content({"$ref": "#/components/schemas/OAuthError"}, "bad grant_type or scope"),
    401: json_content({"$ref": "#/components/schemas/OAuthError"}, "bad client credentials"),
    429: json_content({"$ref": "#/components/schemas/Error"}, "rate limited"),
}


@router.post("/oauth2/token", tags=["Authentication"], responses=TOKEN_RESPONSES, openapi_extra=TOKEN_FORM)
async def token(request: Request) -> JSONResponse:
    """Client credentials grant: HTTP Basic client id and secret, form grant_type and scope."""
    raw = (await request.body()).decode("utf-8", "replace")
    form = dict(parse_qsl(raw, keep_blank_values=True))
    try:
        issued = request.app.state.tokens.grant(request.headers.get("authorization"), form)
    except OAuthError as error:
        headers = {"www-authenticate": 'Basic realm="oauth2"'} if error.status == 401 else None
        return JSONResponse(error.body(), status_code=error.status, headers=headers)
    request.state.token_expire_at = issued.expires_at
    return JSONResponse(
        {
            "access_token": issued.value,
            "token_type": "Bearer",
            "expires_in": request.app.state.config.served_token_lifetime_s(),
            "scope": issued.scope_text,
        },
        headers={"cache-control": "no-store"},
    )


@router.get("/me", tags=["User"], dependencies=READ, responses=declared(one="User", errors=(401, 403, 429)))
async def me(request: Request):
    """The user tied to the token."""
    return data(portal(request).me())


@router.get("/portal", tags=["Portal"], dependencies=READ, responses=declared(one="Portal"))
async def get_portal(request: Request):
    """The current account."""
    return data(portal(request).get_portal())


@router.patch(
    "/portal",
    tags=["Portal"],
    dependencies=WRITE,
    responses=declared(one="Portal"),
    openapi_extra=json_request("PortalInput"),
)
async def update_portal(request: Request, body: dict | None = OPTIONAL_BODY):
    """Changes only the fields sent."""
    return data(portal(request).update_portal(body or {}))
