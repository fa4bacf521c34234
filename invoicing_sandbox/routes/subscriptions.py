"""Webhook subscriptions (/webhooks)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from invoicing_sandbox.routes import params
from invoicing_sandbox.routes.inputs import (
    READ,
    REQUIRED_BODY,
    WRITE,
    json_request,
    portal,
)
from invoicing_sandbox.routes.responses import declared, empty_object
from invoicing_sandbox.routes.serving import contract, many, one
from invoicing_sandbox.webhooks import check_local_url

router = APIRouter(tags=["Webhooks"])


# The spec gives GET /webhooks no scope of its own: "the global default (read and write) applies", so the
# token needs `write` (which includes read); GET /webhooks/{id} says `read` (README).
@router.get(
    "/webhooks",
    dependencies=WRITE,
    openapi_extra=params.listing(params.WEBHOOKS),
    responses=declared(many="Webhook"),
)
async def list_webhooks(request: Request):
    """The portal's webhook subscriptions (changed after the answer under `subscriptions_churn_every`)."""
    answer = many(request, "webhooks")
    every = contract(request).subscriptions_churn_every
    if every:
        portal(request).churn_subscriptions(every)
    return answer


@router.post(
    "/webhooks",
    dependencies=WRITE,
    openapi_extra=json_request("WebhookInput", True),
    responses=declared(one="Webhook"),
)
async def create_webhook(request: Request, body: dict = REQUIRED_BODY):
    """Subscribes a URL on 127.0.0.1 / localhost to events (200, not 201: spec)."""
    if isinstance(body.get("url"), str):
        check_local_url(body["url"])
    return one(request, "webhooks", portal(request).create("webhooks", body))


@router.get("/webhooks/{id}", dependencies=READ, responses=declared(one="Webhook"))
async def get_webhook(request: Request, id: str):
    """One subscription."""
    return one(request, "webhooks", portal(request).get("webhooks", id))


@router.delete("/webhooks/{id}", dependencies=WRITE, responses=declared(body="EmptyObject"))
async def delete_webhook(request: Request, id: str):
    """Unsubscribes; 200 `{}`."""
    portal(request).delete("webhooks", id)
    return empty_object()
