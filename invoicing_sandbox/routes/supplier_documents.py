"""Supplier documents: upload a PDF, create from it, read, PDF, status history, status actions."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from invoicing_sandbox.errors import ApiError
from invoicing_sandbox.routes import params
from invoicing_sandbox.routes.inputs import (
    OPTIONAL_BODY,
    READ,
    REQUIRED_BODY,
    WRITE,
    json_request,
    portal,
)
from invoicing_sandbox.routes.responses import data, declared
from invoicing_sandbox.routes.serving import events, many, one

router = APIRouter(tags=["Supplier documents"])
# The spec shows no upload limit; 20 MB is a common ceiling for invoice PDFs.
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
UPLOAD_FORM = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": {"type": "string", "format": "binary", "description": "a PDF"}},
                }
            }
        },
    }
}


@router.get(
    "/supplier-documents",
    dependencies=READ,
    openapi_extra=params.listing(params.SUPPLIER_DOCUMENTS),
    responses=declared(many="SupplierDocument"),
)
async def list_supplier_documents(request: Request):
    """Received supplier invoices and credit notes."""
    return many(request, "supplier_documents")


@router.post(
    "/supplier-documents/upload-asset",
    dependencies=WRITE,
    openapi_extra=UPLOAD_FORM,
    responses=declared(one="Asset", errors=(400, 401, 403, 413, 429)),
)
async def upload_asset(request: Request):
    """Stores a PDF (multipart/form-data, part `file`); returns its temporary `assetKey`."""
    content_type = request.headers.get("content-type", "")
    if not content_type.startswith("multipart/form-data"):
        raise ApiError(400, "upload-asset expects multipart/form-data with a 'file' part")
    try:
        form = await request.form(max_files=1, max_fields=10, max_part_size=MAX_UPLOAD_BYTES)
    except Exception as error:  # the multipart parser raises several types for a malformed body
        raise ApiError(400, "malformed multipart/form-data body", [str(error)]) from error
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise ApiError(400, "the 'file' part is required")
    content = await upload.read(MAX_UPLOAD_BYTES + 1)
    if len(content) > MAX_UPLOAD_BYTES:
        raise ApiError(413, f"file larger than {MAX_UPLOAD_BYTES} bytes")
    asset = await run_in_threadpool(
        portal(request).upload_asset, upload.filename or "", upload.content_type or "", content
    )
    return data(asset)


@router.post(
    "/supplier-documents",
    dependencies=WRITE,
    openapi_extra=json_request("SupplierDocumentInput", True),
    responses=declared(one="SupplierDocument"),
)
async def create_supplier_document(request: Request, body: dict = REQUIRED_BODY):
    """Creates an `approved` supplier document from an uploaded asset."""
    return one(request, "supplier_documents", portal(request).create_supplier_document(body))


@router.get("/supplier-documents/{id}", dependencies=READ, responses=declared(one="SupplierDocument"))
async def get_supplier_document(request: Request, id: str):
    """One supplier document."""
    return one(request, "supplier_documents", portal(request).get("supplier_documents", id))


@router.get("/supplier-documents/{id}/pdf", dependencies=READ, responses=declared(one="Pdf"))
async def supplier_document_pdf(request: Request, id: str):
    """The PDF; 404 while it is not available."""
    return data(portal(request).supplier_document_pdf(id))


@router.get(
    "/supplier-documents/{id}/events", dependencies=READ, responses=declared(many="SupplierDocumentEvent")
)
async def supplier_document_events(request: Request, id: str):
    """Status history, most recent first."""
    return events(request, portal(request).supplier_document_events(id))


@router.patch(
    "/supplier-documents/{id}/status",
    dependencies=WRITE,
    openapi_extra=json_request("SupplierDocumentStatusInput", True),
    responses=declared(one="SupplierDocument"),
)
async def change_status(request: Request, id: str, body: dict | None = OPTIONAL_BODY):
    """approve, refuse, dispute or declarePayment; 400 when the move is not allowed."""
    return one(request, "supplier_documents", portal(request).change_supplier_document_status(id, body or {}))
