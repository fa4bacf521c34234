"""Input bodies checked against a small schema: unknown properties and wrong types are 400 (api-facts.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from invoicing_sandbox.clock import parse_iso
from invoicing_sandbox.errors import bad_request

from .money import shared, to_decimal


@dataclass(frozen=True)
class Field:
    """One property: `kind` is str | number | int | bool | datetime | enum | object | list."""

    kind: str
    nullable: bool = True
    values: tuple = ()
    schema: dict | None = None  # object: its properties
    item: Field | None = None  # list: its elements
    max_length: int = 2000


def _fail(path: str, message: str):
    return bad_request(f"invalid body: {path}: {message}", [{"path": path, "message": message}])


def _check_value(value: object, spec: Field, path: str) -> object:
    if value is None:
        if not spec.nullable:
            raise _fail(path, "must not be null")
        return None
    kind = spec.kind
    if kind == "str":
        if not isinstance(value, str):
            raise _fail(path, "must be a string")
        if len(value) > spec.max_length:
            raise _fail(path, f"longer than {spec.max_length} characters")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _fail(path, "must be a number")
        try:
            return shared(to_decimal(value))
        except ValueError as exc:
            raise _fail(path, str(exc)) from exc
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(path, "must be an integer")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise _fail(path, "must be a boolean")
        return value
    if kind == "datetime":
        if not isinstance(value, str):
            raise _fail(path, "must be an ISO 8601 date-time string")
        try:
            return parse_iso(value)
        except ValueError as exc:
            raise _fail(path, "must be an ISO 8601 date-time string") from exc
    if kind == "enum":
        if value not in spec.values:
            raise _fail(path, f"must be one of {', '.join(map(str, spec.values))}")
        return value
    if kind == "object":
        return check_body(value, spec.schema or {}, path)
    if kind == "list":
        if not isinstance(value, list):
            raise _fail(path, "must be an array")
        if spec.item is None:  # a schema error, not a request error: every list Field names its item
            raise AssertionError(f"{path}: list Field without item")
        return [_check_value(element, spec.item, f"{path}[{i}]") for i, element in enumerate(value)]
    raise AssertionError(kind)


def check_body(body: object, schema: dict[str, Field], path: str = "body") -> dict:
    """Validates `body` (None means {}) against `schema`; returns a new dict of converted values.

    Numbers become Decimal and date-times aware datetimes; keys absent from the body stay absent so that
    a PATCH can tell "not sent" from "set to null".
    """
    if body is None:
        return {}
    if not isinstance(body, dict):
        raise _fail(path, "must be a JSON object")
    result: dict = {}
    for key, value in body.items():
        spec = schema.get(key)
        if spec is None:
            raise _fail(f"{path}.{key}", "unknown property")
        result[key] = _check_value(value, spec, f"{path}.{key}")
    return result


def require(body: dict, *names: str) -> None:
    """400 when one of `names` is missing or null."""
    for name in names:
        if body.get(name) in (None, ""):
            raise _fail(f"body.{name}", "is required")


def midnight(moment: datetime) -> datetime:
    """The date part of `moment` at 00:00:00 UTC (dates are stored at midnight UTC)."""
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


ADDRESS = {name: Field("str") for name in ("street", "postalCode", "city", "country")}
ADDRESS_FIELD = Field("object", schema=ADDRESS)
