"""Schema-driven fuzzing of the sandbox against its own OpenAPI document (hypothesis, bounded).

For each list, create and update operation, hypothesis draws query parameters (valid values from the declared
enums and types, or junk) and JSON bodies (the declared field names with plausible or random values, or
random JSON), sends them over HTTP, and checks that no answer is a 5xx and that every answer is declared
for its operation and matches the declared schema (`data` wrapper or error body). Faults are off.
"""

from __future__ import annotations

import string
from datetime import datetime, timezone

import httpx
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.invoicing_sandbox.conftest import client_for, small_config

EXAMPLES_PER_OPERATION = 5  # 28 operations: 140 requests in all
OPERATIONS = [
    ("get", "/items"),
    ("get", "/customers"),
    ("get", "/documents"),
    ("get", "/transactions"),
    ("get", "/transaction-usages"),
    ("get", "/suppliers"),
    ("get", "/supplier-documents"),
    ("get", "/webhooks"),
    ("get", "/customers/{id}/transactions"),
    ("get", "/documents/{id}/transaction-usages"),
    ("post", "/items"),
    ("post", "/customers"),
    ("post", "/documents"),
    ("post", "/suppliers"),
    ("post", "/webhooks"),
    ("post", "/supplier-documents"),
    ("post", "/documents/{id}/payment"),
    ("post", "/documents/{id}/messages"),
    ("patch", "/items/{id}"),
    ("patch", "/customers/{id}"),
    ("patch", "/portal"),
    ("patch", "/suppliers/{id}"),
    ("patch", "/supplier-documents/{id}/status"),
    ("get", "/documents/{id}"),
    ("get", "/supplier-documents/{id}/pdf"),
    ("post", "/documents/{id}/validate"),
    ("post", "/documents/{id}/convert/invoice"),
    ("delete", "/items/{id}"),
]
# the collection whose ids fill `{id}` in each path
ID_SOURCE = {
    "/customers": "customers",
    "/documents": "documents",
    "/items": "items",
    "/suppliers": "suppliers",
    "/supplier-documents": "supplier_documents",
}

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
ISO_TIMES = st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1)).map(
    lambda moment: moment.replace(tzinfo=timezone.utc, microsecond=0).isoformat().replace("+00:00", "Z")
)
JUNK = st.text(alphabet=string.printable, max_size=15)


@pytest.fixture(scope="module")
def fuzzed(module_sandbox_factory):
    server = module_sandbox_factory(config=small_config(seed=11), real_date=True)
    with client_for(server) as client:
        document = client.get("/openapi.json").json()
        yield server, client, document


# which collection's ids fill an id-valued body field
ID_FIELDS = {
    "customerId": "customers", "itemId": "items", "supplierId": "suppliers", "invoiceId": "documents",
    "documentId": "documents", "transactionId": "transactions",
}  # fmt: skip


def value_strategy(schema: dict, ids_for, name: str = "", junk: bool = True):
    """Values for one declared property: plausible ones (from its enum, format, type, nested properties),
    mixed with random JSON when `junk`."""
    plausible = _plausible(schema, ids_for, name, junk)
    return plausible | JSON_VALUES if junk else plausible


def _plausible(schema: dict, ids_for, name: str, junk: bool):
    if "anyOf" in schema:  # nullable(x): x or null
        return st.one_of([_plausible(branch, ids_for, name, junk) for branch in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema.get("format") == "date-time":
        return ISO_TIMES
    if "pattern" in schema:
        ids = ids_for(name)
        hex_ids = st.text(alphabet="0123456789abcdef", min_size=24, max_size=24)
        return st.sampled_from(ids) | hex_ids if ids else hex_ids
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "object" in kinds and "properties" in schema:
        return object_strategy(schema, ids_for, junk)
    if "number" in kinds or "integer" in kinds:
        return st.integers(0, 5000) | st.floats(-1e6, 1e6, allow_nan=False)
    if "array" in kinds:
        return st.lists(value_strategy(schema.get("items", {}), ids_for, name, junk), max_size=3)
    if "null" in kinds:
        return st.none() | st.text(max_size=20)
    return st.text(max_size=20)


def object_strategy(schema: dict, ids_for, junk: bool):
    """An object of the schema's properties: the required ones always, the others sometimes."""
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))

    def field(key: str):
        return value_strategy(properties[key], ids_for, key, junk)

    return st.fixed_dictionaries(
        {k: field(k) for k in properties if k in required},
        optional={k: field(k) for k in properties if k not in required},
    )


def query_strategy(parameters: list[dict], ids_for):
    """A dict of query parameters: each declared one absent, valid-looking or junk."""
    optional = {}
    for parameter in parameters:
        schema = parameter.get("schema", {})
        if "enum" in schema:
            valid = st.sampled_from([str(v) for v in schema["enum"]])
        elif schema.get("format") == "date-time":
            valid = ISO_TIMES
        elif schema.get("type") == "integer":
            valid = st.integers(-5, 250).map(str)
        elif schema.get("type") == "number":
            valid = st.integers(-100, 5000).map(str)
        elif "pattern" in schema and ids_for(parameter["name"]):
            valid = st.sampled_from(ids_for(parameter["name"]))
        else:
            valid = st.text(alphabet=string.ascii_letters + " ", max_size=10)
        optional[parameter["name"]] = valid | JUNK
    return st.fixed_dictionaries({}, optional=optional)


def input_schema(document: dict, operation: dict) -> dict:
    """The declared JSON request body schema of an operation ({} when it takes none)."""
    content = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    name = content.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
    return document["components"]["schemas"].get(name, {})


def body_strategy(schema: dict, ids_for):
    """A JSON body: valid-looking per the schema (twice as likely), per the schema with junk values,
    a random object, or random JSON."""
    plausible = object_strategy(schema, ids_for, junk=False)
    mixed = object_strategy(schema, ids_for, junk=True)
    return (
        plausible
        | plausible
        | mixed
        | st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4)
        | JSON_VALUES
    )


def check_against_schema(document: dict, operation: dict, method: str, path: str, response: httpx.Response):
    assert response.status_code < 500, f"{method.upper()} {path} -> {response.status_code}: {response.text}"
    declared = operation["responses"].get(str(response.status_code))
    assert declared is not None, f"{method.upper()} {path}: undeclared status {response.status_code}"
    schema = declared.get("content", {}).get("application/json", {}).get("schema")
    if schema is None:
        assert response.content == b""
        return
    jsonschema.Draft202012Validator({**schema, "components": document["components"]}).validate(
        response.json()
    )


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_operation_never_fails_and_matches_its_schema(fuzzed, method, path):
    server, client, document = fuzzed
    operation = document["paths"]["/api/v2" + path][method]
    collection = ID_SOURCE.get("/" + path.split("/")[1], "items")
    known = {name: [r["id"] for r in server.portal.snapshot(name)][:50] for name in set(ID_FIELDS.values())}
    ids = [record["id"] for record in server.portal.snapshot(collection)][:50]

    def ids_for(field: str) -> list[str]:
        return known.get(ID_FIELDS.get(field, ""), ids)

    parameters = [p for p in operation.get("parameters", []) if p.get("in") == "query"]
    id_strategy = st.sampled_from(ids) | st.text(alphabet="0123456789abcdef", min_size=1, max_size=24)
    body = body_strategy(input_schema(document, operation), ids_for) if method != "get" else st.none()

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(query=query_strategy(parameters, ids_for), record_id=id_strategy, payload=body)
    def exercise(query, record_id, payload):
        url = path.replace("{id}", record_id)
        kwargs = {"params": query}
        if method != "get":
            kwargs["json"] = payload
        response = client.request(method.upper(), url, **kwargs)
        check_against_schema(document, operation, method, url, response)

    exercise()
