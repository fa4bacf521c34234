"""Fixtures of the sandbox's HTTP tests: running sandboxes on 127.0.0.1 and httpx clients bound to them.

`sandbox_server` is one session-wide sandbox (60 documents, rate limit and faults off) that tests may
write to but never reconfigure; a test that changes settings, the clock or the portal's configuration
starts its own with `make_sandbox(...)` (stopped at teardown).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone

import httpx
import pytest

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import SandboxServer
from tests.support.fixture_factory import SandboxFactory

SMALL_SCALE = 60
# the small sandbox's settings, also for a `pytest.mark.sandbox(**SMALL_SETTINGS, ...)` elsewhere
SMALL_SETTINGS = {"seed": 7, "scale": SMALL_SCALE, "rate_limit_per_s": 0}
FROZEN_AT = datetime(2026, 3, 16, 9, 30, 0, tzinfo=timezone.utc)


def small_config(**settings) -> SandboxConfig:
    """A 60-document sandbox with the rate limit off (tests that want it turn it on); `contract` may be a
    `ContractProfile` or a preset's name ("default", "strict")."""
    values = dict(SMALL_SETTINGS)
    values.update(settings)
    if "contract" in values:
        values["contract"] = ContractProfile.named(values["contract"])
    return SandboxConfig(**values)


def client_for(server: SandboxServer, scope: str | None = "read write") -> httpx.Client:
    """An httpx client on the sandbox's base URL, with a bearer token for `scope` (None: no token)."""
    headers = {"User-Agent": "invoicing-warehouse-tests/0.1"}
    if scope is not None:
        headers["Authorization"] = f"Bearer {server.token(scope)}"
    return httpx.Client(base_url=server.base_url, headers=headers, timeout=10.0, trust_env=False)


@pytest.fixture(scope="session")
def sandbox_server() -> Iterator[SandboxServer]:
    """A session-wide sandbox: seed 7, 60 documents, real-time clock, rate limit and faults off."""
    with SandboxFactory() as factory:
        yield factory(config=small_config(), real_date=True)


@pytest.fixture
def make_sandbox(sandbox_factory) -> Callable[..., SandboxServer]:
    """A factory of extra sandboxes: `make_sandbox(config=None, clock=None, generate=True)` (None: the small
    config), on the machine's date as the emulator's own tests want it; stopped after."""

    def make(config: SandboxConfig | None = None, **kwargs) -> SandboxServer:
        return sandbox_factory(config=config if config is not None else small_config(), real_date=True, **kwargs)

    return make


@pytest.fixture
def frozen_clock() -> Clock:
    """A clock stopped at FROZEN_AT (advance it to expire tokens)."""
    return Clock(fixed=FROZEN_AT)


@pytest.fixture(scope="session")
def api(sandbox_server) -> Iterator[httpx.Client]:
    """A client of the session sandbox with a `read write` token."""
    with client_for(sandbox_server) as client:
        yield client


@pytest.fixture(scope="session")
def read_api(sandbox_server) -> Iterator[httpx.Client]:
    """A client of the session sandbox with a `read` token."""
    with client_for(sandbox_server, "read") as client:
        yield client


# ---- records created over HTTP, for tests that need fresh ones --------------------------------------
PDF_BYTES = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def created(response: httpx.Response, status: int) -> dict:
    """The `data` of a successful answer; fails with the API's message otherwise."""
    assert response.status_code == status, (
        f"{response.request.method} {response.request.url}: {response.text}"
    )
    return response.json()["data"]


def new_customer(client: httpx.Client, **fields) -> dict:
    """POST /customers (201)."""
    body = {"name": "Boulangerie Test", "email": "compta@boulangerie-test.fr", **fields}
    return created(client.post("/customers", json=body), 201)


def new_item(client: httpx.Client, **fields) -> dict:
    """POST /items (201): a 100 EUR service at 20 % VAT by default."""
    body = {"name": "Conseil (jour)", "type": "service", "price": 100, "vat": 20, **fields}
    return created(client.post("/items", json=body), 201)


def new_document(
    client: httpx.Client,
    customer: dict,
    item: dict,
    *,
    type: str = "INVOICE",
    status: str = "DRAFT",
    quantity: float = 1,
    **fields,
) -> dict:
    """POST /documents (201) with one line of `item`."""
    body = {
        "customerId": customer["id"],
        "type": type,
        "status": status,
        "lines": [{"itemId": item["id"], "quantity": quantity}],
        **fields,
    }
    return created(client.post("/documents", json=body), 201)


def new_supplier(client: httpx.Client, legal_identifier: str, **fields) -> dict:
    """POST /suppliers (200)."""
    body = {"name": f"Fournisseur {legal_identifier}", "legalIdentifier": legal_identifier, **fields}
    return created(client.post("/suppliers", json=body), 200)


def upload_pdf(
    client: httpx.Client,
    content: bytes = PDF_BYTES,
    filename: str = "facture.pdf",
    content_type: str = "application/pdf",
) -> httpx.Response:
    """POST /supplier-documents/upload-asset as multipart/form-data with a `file` part."""
    return client.post("/supplier-documents/upload-asset", files={"file": (filename, content, content_type)})


def new_supplier_document(client: httpx.Client, supplier: dict) -> dict:
    """Upload a PDF, then POST /supplier-documents (200)."""
    asset = created(upload_pdf(client), 200)
    return created(
        client.post("/supplier-documents", json={"fileKey": asset["assetKey"], "supplierId": supplier["id"]}),
        200,
    )
