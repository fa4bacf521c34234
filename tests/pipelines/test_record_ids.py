"""Record ids (pipelines/invoicing/record_ids.py): which ids a delivery may name, and that any id, whatever the
spool or the warehouse holds, goes into a request as exactly one path segment under its collection (httpx with
a base URL, as InvoicingClient sends it). The expected raw paths are RFC 3986 percent-encoding, written by hand."""

from __future__ import annotations

import httpx
import pytest

from pipelines.invoicing.record_ids import child_path, record_id_problem, record_path


@pytest.mark.parametrize("record_id", ["0123456789abcdef01234567", "42", "C-1_a", "a" * 64])
def test_ids_of_the_service_and_its_neighbours_are_ids(record_id):
    assert record_id_problem(record_id) is None


@pytest.mark.parametrize("record_id", ["", "a" * 65, "../../me", "?limit=1", "a/b", "x y", "%2F", "é", "a.b", "#"])
def test_anything_else_is_refused_with_a_short_reason(record_id):
    problem = record_id_problem(record_id)
    assert problem is not None and len(problem) < 80


@pytest.mark.parametrize(("record_id", "sent"), [
    ("../../me", "/api/v2/customers/..%2F..%2Fme"),
    ("..", "/api/v2/customers/%2E%2E"),
    ("?limit=1", "/api/v2/customers/%3Flimit%3D1"),
    ("a/b#c", "/api/v2/customers/a%2Fb%23c"),
    ("%2F", "/api/v2/customers/%252F"),
    ("0123456789abcdef01234567", "/api/v2/customers/0123456789abcdef01234567"),
])
def test_any_id_is_one_path_segment_of_the_request_sent(record_id, sent):
    seen: list[tuple[bytes, bytes]] = []
    transport = httpx.MockTransport(lambda request: (seen.append((request.url.raw_path, request.url.query)),
                                                     httpx.Response(200))[1])
    with httpx.Client(base_url="http://127.0.0.1:9/api/v2", transport=transport) as client:
        client.get(record_path("/customers", record_id))
        client.get(child_path("/supplier-documents/{id}/events", record_id))
    assert seen[0] == (sent.encode(), b"")
    assert seen[1][0] == sent.replace("/customers/", "/supplier-documents/").encode() + b"/events"
