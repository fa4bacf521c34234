"""Transactions (payments) and transaction usages (their allocation to documents). Read-only in the API."""

from __future__ import annotations

from fastapi import APIRouter, Request

from sandbox.routes import params
from sandbox.routes.inputs import READ, portal, query
from sandbox.routes.responses import data, declared

router = APIRouter(tags=["Transactions"], dependencies=READ)


@router.get(
    "/transactions", openapi_extra=params.listing(params.TRANSACTIONS), responses=declared(many="Transaction")
)
async def list_transactions(request: Request):
    """Payments, filtered, sorted and paged."""
    return data(portal(request).list("transactions", query(request)))


@router.get("/transactions/{id}", responses=declared(one="Transaction"))
async def get_transaction(request: Request, id: str):
    """One payment."""
    return data(portal(request).get("transactions", id))


@router.get(
    "/customers/{id}/transactions",
    openapi_extra=params.listing(params.CUSTOMER_TRANSACTIONS),
    responses=declared(many="Transaction"),
)
async def customer_transactions(request: Request, id: str):
    """The payments of one customer."""
    return data(portal(request).list("transactions", query(request), parent=("customers", id)))


@router.get(
    "/transaction-usages",
    openapi_extra=params.listing(params.USAGES),
    responses=declared(many="TransactionUsage"),
)
async def list_usages(request: Request):
    """Allocations of payments and credit notes to invoices."""
    return data(portal(request).list("transaction_usages", query(request)))


@router.get("/transaction-usages/{id}", responses=declared(one="TransactionUsage"))
async def get_usage(request: Request, id: str):
    """One allocation."""
    return data(portal(request).get("transaction_usages", id))
