"""Documents and their actions: validate, accept, refuse, convert, pay, mail, PDF."""

from __future__ import annotations

from fastapi import APIRouter, Request

from invoicing_sandbox.routes import params
from invoicing_sandbox.routes.inputs import (
    OPTIONAL_BODY,
    READ,
    WRITE,
    json_request,
    portal,
)
from invoicing_sandbox.routes.responses import data, declared, no_body
from invoicing_sandbox.routes.serving import many, one

router = APIRouter(tags=["Documents"])
ACTION_ERRORS = (400, 401, 403, 404, 429)


@router.get(
    "/documents",
    dependencies=READ,
    openapi_extra=params.listing(params.DOCUMENTS),
    responses=declared(many="Document"),
)
async def list_documents(request: Request):
    """Quotations and invoices, filtered, sorted and paged."""
    return many(request, "documents")


@router.post(
    "/documents",
    dependencies=WRITE,
    status_code=201,
    openapi_extra=json_request("DocumentInput"),
    responses=declared(201, one="Document"),
)
async def create_document(request: Request, body: dict | None = OPTIONAL_BODY):
    """Creates a DRAFT or VALIDATED document (201)."""
    return one(request, "documents", portal(request).create("documents", body or {}), 201)


@router.get("/documents/{id}", dependencies=READ, responses=declared(one="Document"))
async def get_document(request: Request, id: str):
    """One document."""
    return one(request, "documents", portal(request).get("documents", id))


@router.delete("/documents/{id}", dependencies=WRITE, responses=declared(errors=ACTION_ERRORS))
async def delete_document(request: Request, id: str):
    """Deletes a DRAFT; 200 with no body (spec)."""
    portal(request).delete("documents", id)
    return no_body()


@router.get("/documents/{id}/pdf", dependencies=READ, responses=declared(one="Pdf"))
async def document_pdf(request: Request, id: str):
    """The PDF, base64-encoded under `pdfB64`."""
    return data(portal(request).document_pdf(id))


@router.post(
    "/documents/{id}/messages",
    dependencies=WRITE,
    openapi_extra=json_request("MessageInput"),
    responses=declared(one="Message", errors=ACTION_ERRORS),
)
async def send_message(request: Request, id: str, body: dict | None = OPTIONAL_BODY):
    """Sends the document by e-mail; returns the message record."""
    return data(portal(request).send_message(id, body))


@router.post(
    "/documents/{id}/accept-quotation",
    dependencies=WRITE,
    responses=declared(one="Document", errors=ACTION_ERRORS),
)
async def accept_quotation(request: Request, id: str):
    """VALIDATED quotation -> ACCEPTED."""
    return one(request, "documents", portal(request).accept_quotation(id))


@router.post(
    "/documents/{id}/refuse-quotation",
    dependencies=WRITE,
    responses=declared(one="Document", errors=ACTION_ERRORS),
)
async def refuse_quotation(request: Request, id: str):
    """VALIDATED quotation -> REFUSED."""
    return one(request, "documents", portal(request).refuse_quotation(id))


@router.post(
    "/documents/{id}/validate", dependencies=WRITE, responses=declared(one="Document", errors=ACTION_ERRORS)
)
async def validate_document(request: Request, id: str):
    """DRAFT -> VALIDATED with its final reference."""
    return one(request, "documents", portal(request).validate_document(id))


@router.post(
    "/documents/{id}/convert/invoice",
    dependencies=WRITE,
    responses=declared(one="Document", errors=ACTION_ERRORS),
)
async def convert_to_invoice(request: Request, id: str):
    """ACCEPTED quotation -> a new DRAFT invoice (returned)."""
    return one(request, "documents", portal(request).convert_to_invoice(id))


@router.post(
    "/documents/{id}/payment",
    dependencies=WRITE,
    openapi_extra=json_request("PaymentInput"),
    responses=declared(one="Transaction", errors=ACTION_ERRORS),
)
async def pay_document(request: Request, id: str, body: dict | None = OPTIONAL_BODY):
    """Records a payment on the invoice; returns the transaction."""
    return one(request, "transactions", portal(request).pay_document(id, body))


@router.get(
    "/documents/{id}/transaction-usages",
    dependencies=READ,
    openapi_extra=params.listing(params.DOCUMENT_USAGES),
    responses=declared(many="TransactionUsage"),
)
async def document_usages(request: Request, id: str):
    """The payments and credit notes used on this document."""
    return many(request, "transaction_usages", parent=("documents", id))
