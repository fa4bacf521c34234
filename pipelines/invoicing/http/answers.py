"""Reading one answer of the API within bounds: its bytes capped while they stream in, its JSON refused when it
holds what no record of the service can (security review 2, L3).

A buggy or hostile server could send a page of 400,000 records (4.4 GB of memory was seen), nesting 100,000 deep
(a `RecursionError`), `1e308` (past every decimal column: pyarrow's `ArrowInvalid` at the load) or `NaN` (a NULL
where an amount was). Each is now one error of kind `malformed` naming the endpoint, before anything is loaded:

- The body is read as it streams, and given up past `INVOICING_MAX_ANSWER_BYTES` (default 64 MiB: a page of 100
  documents with their lines is a few hundred kilobytes) or when its `Content-Length` says it would be.
- Numbers are exact decimals (never floats), and refused when not finite (`NaN`, `Infinity`) or at least
  `MAX_MAGNITUDE` in size: the quantities' `decimal(18,4)` hold less than 1e14 (amounts, `decimal(18,2)`, less
  than 1e16), and no count of an invoicing account comes near it.
- Nesting deeper than the parser's recursion allows is refused; shallower nesting is bounded by the byte cap and
  by the loader's `max_table_nesting`.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any

import httpx

from invoicing_warehouse.engine.environment.api_settings import MAX_ANSWER_BYTES
from invoicing_warehouse.engine.environment.kinds import SettingError
from invoicing_warehouse.engine.environment.reader import environment
from pipelines.invoicing.errors import InvoicingApiError

MAX_BYTES_ENV = MAX_ANSWER_BYTES.name
DEFAULT_MAX_BYTES = MAX_ANSWER_BYTES.default
MAX_MAGNITUDE = Decimal("1e14")
MAX_DIGITS = 15  # of a whole number below MAX_MAGNITUDE
# headers that described the body as it came over the wire, not as it is kept (decoded, whole)
WIRE_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}


class _Refused(ValueError):
    """A value no record of the service holds; its message says which."""


def max_answer_bytes(environ: dict[str, str] | None = None) -> int:
    """The cap on one answer's bytes: `INVOICING_MAX_ANSWER_BYTES` (a whole number >= 1024), else 64 MiB. Raises
    InvoicingApiError (configuration) naming the setting for anything else."""
    try:
        return environment(environ).value(MAX_ANSWER_BYTES)
    except SettingError as error:
        raise InvoicingApiError("configuration", MAX_BYTES_ENV,
                                detail=f"{error} (default {DEFAULT_MAX_BYTES})") from None


def read_capped(response: httpx.Response, endpoint: str, cap: int) -> httpx.Response:
    """The streamed `response` read whole (decoded) as a new, closed response, if it holds at most `cap` bytes;
    else InvoicingApiError (malformed) naming `endpoint` and the setting, after reading no more than that."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _too_large(endpoint, response.status_code, cap)
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > cap:
            raise _too_large(endpoint, response.status_code, cap)
    headers = [(name, value) for name, value in response.headers.multi_items() if name.lower() not in WIRE_HEADERS]
    return httpx.Response(response.status_code, headers=headers, content=bytes(body), request=response.request)


def parse_json(content: bytes, endpoint: str, status: int) -> Any:
    """The answer's JSON with exact decimals; InvoicingApiError (malformed) naming `endpoint` when it is not JSON,
    nests too deep, or holds a number no record holds (see the module's doc)."""
    try:
        return json.loads(content, parse_float=_decimal, parse_int=_whole, parse_constant=_constant)
    except RecursionError:
        raise InvoicingApiError("malformed", endpoint, status, detail="the answer nests deeper than any record "
                                "(refused)") from None
    except _Refused as refused:
        raise InvoicingApiError("malformed", endpoint, status, detail=f"{refused} (refused)") from None
    except ValueError:
        excerpt = content[:80].decode("utf-8", "replace").replace("\n", " ")
        raise InvoicingApiError("malformed", endpoint, status, detail=f"the answer is not JSON: {excerpt!r}") from None


def _too_large(endpoint: str, status: int, cap: int) -> InvoicingApiError:
    return InvoicingApiError("malformed", endpoint, status, detail=f"the answer is larger than {cap:,} bytes "
                             f"(refused; {MAX_BYTES_ENV} sets the cap)")


def _decimal(text: str) -> Decimal:
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise _Refused(f"the number {text[:40]} is not a decimal") from None
    return _bounded(number, text)


def _whole(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:  # checked before converting: a number of 4,300 digits costs time
        raise _Refused(f"the number {text[:40]}... is larger than any figure a record holds")
    return int(_bounded(Decimal(text), text))


def _bounded(number: Decimal, text: str) -> Decimal:
    if not number.is_finite() or abs(number) >= MAX_MAGNITUDE:
        raise _Refused(f"the number {text[:40]} is larger than any figure a record holds (at most {MAX_MAGNITUDE:E})")
    return number


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number a record holds")
