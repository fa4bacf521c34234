"""Transactions (payments) and transaction usages (their allocation to documents). Read-only in the API."""

from __future__ import annotations

from fastapi import APIRouter, Request

from invoicing_sandbox.routes import params
from invoicing_sandbox.routes.inputs import READ, portal
from invoicing_sandbox.routes.responses import declared
from invoicing_sandbox.routes.serving import many, one

router = APIRouter(tags=["Transactions"], dependencies=READ)


@router.get(
    "/transactions", openapi_extra=params.listing(params.TRANSACTIONS), responses=declared(many="Transaction")
)
async def list_transactions(request: Request):
    """Payments, filtered, sorted and paged."""
    return many(request, "transactions")


@router.get("/transactions/{id}", responses=declared(one="Transaction"))
async def get_transaction(request: Request, id: str):
    """One payment."""
    return one(request, "transactions", portal(request).get("transactions", id))


@router.get(
    "/customers/{id}/transactions",
    openapi_extra=params.listing(params.CUSTOMER_TRANSACTIONS),
    responses=declared(many="Transaction"),
)
async def customer_transactions(request: Request, id: str):
    """The payments of one customer."""
    return many(request, "transactions", parent=("customers", id))


@router.get(
    "/transaction-usages",
    openapi_extra=params.listing(params.USAGES),
    responses=declared(many="TransactionUsage"),
)
async def list_usages(request: Request):
    """Allocations of payments and credit notes to invoices."""
    return many(request, "transaction_usages")


@router.get("/transaction-usages/{id}", responses=declared(one="TransactionUsage"))
async def get_usage(request: Request, id: str):
    """One allocation."""
    return one(request, "transaction_usages", portal(request).get("transaction_usages", id))
