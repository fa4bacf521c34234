"""The answers of the resource routes as the config's contract profile serves them (`invoicing_sandbox/served.py`)."""

from __future__ import annotations

from fastapi import Request

from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.routes.inputs import portal, query
from invoicing_sandbox.routes.responses import ApiJSONResponse, data
from invoicing_sandbox.served import served_event_item, served_record, served_records


def contract(request: Request) -> ContractProfile:
    """The profile in force (read on every request: the config can change while the sandbox runs)."""
    return request.app.state.config.contract


def one(request: Request, resource: str, record: dict, status: int = 200) -> ApiJSONResponse:
    """`{"data": record}` as the profile serves a record of `resource`."""
    return data(served_record(resource, record, contract(request)), status=status)


def many(request: Request, resource: str, parent: tuple[str, str] | None = None) -> ApiJSONResponse:
    """One page of the list of `resource` (its query string applied) as the profile lists and serves it."""
    profile = contract(request)
    records = portal(request).list(resource, query(request), parent, profile)
    return data(served_records(resource, records, profile))


def events(request: Request, items: list[dict]) -> ApiJSONResponse:
    """A supplier document's status history as the profile serves it."""
    profile = contract(request)
    return data([served_event_item(item, profile) for item in items])
