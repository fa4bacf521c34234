"""Every endpoint of the Invoicing API v2, thin: parse the request, check the scope, call the Portal, wrap.

One module per group of the spec: `account` (token, /me, /portal), `crud` (items, customers, suppliers),
`documents`, `payments` (transactions and usages), `supplier_documents`, `subscriptions` (webhooks).

Handlers are `async` and call the Portal on the event loop: the Portal serialises every call on one lock,
so worker threads would add a thread hop and GIL hand-offs per request without adding parallelism (a
list page got about a third faster this way). Injected latency still overlaps (it sleeps before the handler).
"""

from __future__ import annotations

from fastapi import APIRouter

from invoicing_sandbox.routes import account, crud, documents, payments, subscriptions, supplier_documents


def build_router() -> APIRouter:
    """All routes of the API, relative to the base path `/api/v2`."""
    router = APIRouter()
    router.include_router(account.router)
    router.include_router(crud.build_router())
    router.include_router(documents.router)
    router.include_router(payments.router)
    router.include_router(supplier_documents.router)
    router.include_router(subscriptions.router)
    return router
