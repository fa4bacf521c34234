"""The five plain operations shared by items, customers and suppliers (list, create, get, patch, delete)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from fastapi import APIRouter, Request

from invoicing_sandbox.errors import not_found
from invoicing_sandbox.routes import params
from invoicing_sandbox.routes.inputs import (
    OPTIONAL_BODY,
    READ,
    WRITE,
    json_request,
    portal,
)
from invoicing_sandbox.routes.responses import declared, empty_object
from invoicing_sandbox.routes.serving import contract, many, one


@dataclass(frozen=True)
class Collection:
    """One resource collection: its path, the Portal's name for it, its schemas and its success statuses."""

    path: str
    resource: str
    schema: str
    tag: str
    list_params: list[dict]
    create_status: int  # spec: 201 for items and customers, 200 for suppliers


COLLECTIONS = (
    Collection("/items", "items", "Item", "Items", params.ITEMS, 201),
    Collection("/customers", "customers", "Customer", "Customers", params.CUSTOMERS, 201),
    Collection("/suppliers", "suppliers", "Supplier", "Suppliers", params.SUPPLIERS, 200),
)


def add_collection(router: APIRouter, c: Collection) -> None:
    """Registers GET/POST on the collection and GET/PATCH/DELETE on its members."""
    name = c.resource

    async def list_records(request: Request):
        return many(request, c.resource)

    async def create_record(request: Request, body: dict | None = OPTIONAL_BODY):
        return one(request, c.resource, portal(request).create(c.resource, body or {}), c.create_status)

    async def get_record(request: Request, id: str):
        record = portal(request).get(c.resource, id)
        profile = contract(request)
        if (c.resource == "customers" and record.get("deleted") and profile.deleted_customers == "hidden"
                and profile.hidden_customer_by_id == "gone"):
            raise not_found("")  # hidden from lists and gone by id too: only its documents still name it
        return one(request, c.resource, record)

    async def update_record(request: Request, id: str, body: dict | None = OPTIONAL_BODY):
        return one(request, c.resource, portal(request).update(c.resource, id, body or {}))

    async def delete_record(request: Request, id: str):
        portal(request).delete(c.resource, id)
        return empty_object()

    member = c.path + "/{id}"
    tags: list[str | Enum] = [c.tag]  # FastAPI's parameter type; a list is invariant
    router.add_api_route(
        c.path,
        list_records,
        methods=["GET"],
        tags=tags,
        dependencies=READ,
        name=f"list_{name}",
        summary=f"List {name}",
        openapi_extra=params.listing(c.list_params),
        responses=declared(many=c.schema),
    )
    router.add_api_route(
        c.path,
        create_record,
        methods=["POST"],
        tags=tags,
        dependencies=WRITE,
        name=f"create_{name}",
        summary=f"Create a record of {name}",
        status_code=c.create_status,
        openapi_extra=json_request(c.schema + "Input"),
        responses=declared(c.create_status, one=c.schema, errors=(400, 401, 403, 409, 429)),
    )
    router.add_api_route(
        member,
        get_record,
        methods=["GET"],
        tags=tags,
        dependencies=READ,
        name=f"get_{name}",
        summary=f"Get one record of {name}",
        responses=declared(one=c.schema),
    )
    router.add_api_route(
        member,
        update_record,
        methods=["PATCH"],
        tags=tags,
        dependencies=WRITE,
        name=f"update_{name}",
        summary=f"Change fields of a record of {name}",
        openapi_extra=json_request(c.schema + "Patch"),
        responses=declared(one=c.schema, errors=(400, 401, 403, 404, 409, 429)),
    )
    router.add_api_route(
        member,
        delete_record,
        methods=["DELETE"],
        tags=tags,
        dependencies=WRITE,
        name=f"delete_{name}",
        summary=f"Delete a record of {name}",
        responses=declared(body="EmptyObject", errors=(401, 403, 404, 409, 429)),
    )


def build_router() -> APIRouter:
    """The router of items, customers and suppliers."""
    router = APIRouter()
    for collection in COLLECTIONS:
        add_collection(router, collection)
    return router
