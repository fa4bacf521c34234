"""ClientSettings: the client's one settings object, built from the resolved credentials."""

from __future__ import annotations

import dataclasses

import pytest

from pipelines.invoicing.credentials import ApiSettings
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.http.client import InvoicingClient
from pipelines.invoicing.http.client_settings import ClientSettings

SECRET = "a-secret-never-printed-0123456789"


def test_built_from_the_resolved_credentials_with_the_callers_choices():
    api = ApiSettings("http://127.0.0.1:9/api/v2/", "client-a", SECRET)
    settings = ClientSettings.of(api, scope="read write", rate_limit_per_s=3.5, keep_token=True)
    # the trailing slash is dropped: one spelling of the address for the budget's and the token cache's keys
    assert (settings.base_url, settings.client_id, settings.client_secret) == (
        "http://127.0.0.1:9/api/v2", "client-a", SECRET)
    assert (settings.scope, settings.rate_limit_per_s, settings.keep_token) == ("read write", 3.5, True)
    # the rest at the documented defaults (api-facts: 10 requests/s; 5 retries, backoff 0.5 s to 8 s)
    assert (settings.max_retries, settings.backoff_base_s, settings.backoff_cap_s, settings.timeout_s) == (
        5, 0.5, 8.0, 60.0)


def test_frozen_and_the_secret_out_of_its_repr():
    settings = ClientSettings("http://127.0.0.1:9/api/v2", "client-a", SECRET)
    assert SECRET not in repr(settings)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.rate_limit_per_s = 100  # type: ignore[misc]


def test_the_answer_cap_is_the_setting_unless_given(monkeypatch):
    monkeypatch.setenv("INVOICING_MAX_ANSWER_BYTES", "123456")
    assert ClientSettings("http://127.0.0.1:9", "c", SECRET).answer_cap_bytes == 123456
    assert ClientSettings("http://127.0.0.1:9", "c", SECRET, answer_cap_bytes=99).answer_cap_bytes == 99


def test_no_base_url_is_a_configuration_error_naming_it():
    with pytest.raises(InvoicingApiError, match="base_url"):
        ClientSettings("", "client-a", SECRET)


def test_the_client_works_from_its_settings():
    settings = ClientSettings("http://127.0.0.1:9/api/v2", "client-a", SECRET, rate_limit_per_s=0, max_retries=1)
    with InvoicingClient(settings) as client:
        assert client.settings is settings
        assert client.base_url == "http://127.0.0.1:9/api/v2"
        assert client.limiter.shared is None  # no rate: no shared budget opened
