"""The portals file: parsing, refusals with a message a person can act on, and the choice of portals."""

from __future__ import annotations

import pytest

from pipelines.invoicing.credentials import resolve_settings
from pipelines.invoicing.errors import InvoicingApiError
from pipelines.invoicing.portals import Portal, configured_portals, load_portals, select_portals

GOOD = """
[portals.acme]
base_url = "https://api.infast.fr/api/v2/"
rate_limit = 4

[portals.beta_2]
base_url = "http://127.0.0.1:8080/api/v2"
"""


def write(tmp_path, text: str):
    path = tmp_path / "portals.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_gives_every_portal_in_order(tmp_path):
    portals = load_portals(write(tmp_path, GOOD))
    assert list(portals) == ["acme", "beta_2"]
    assert portals["acme"] == Portal("acme", "https://api.infast.fr/api/v2", 4.0)
    assert portals["beta_2"].rate_limit_per_s is None and portals["beta_2"].from_file


@pytest.mark.parametrize(("text", "says"), [
    ("[portals.acme\nbase_url = 1", "not valid TOML"),
    ("", "declares no portal"),
    ("[portals.Acme]\nbase_url = \"https://x\"", "lowercase letters, digits and _"),
    ("[portals.a-b]\nbase_url = \"https://x\"", "lowercase letters, digits and _"),
    ("[portals.acme]\nrate_limit = 3", "needs base_url"),
    ("[portals.acme]\nbase_url = \"ftp://x\"", "needs base_url"),
    ("[portals.acme]\nbase_url = \"https://x\"\nrate_limit = \"fast\"", "rate_limit must be a number"),
    ("[portals.acme]\nbase_url = \"https://x\"\nbase = 1", "unknown key(s) ['base']"),
    ("[portal.acme]\nbase_url = \"https://x\"", "unknown top-level key(s) ['portal']"),
])
def test_a_bad_file_is_refused_naming_the_file_and_the_fault(tmp_path, text, says):
    path = write(tmp_path, text)
    with pytest.raises(InvoicingApiError) as raised:
        load_portals(path)
    message = str(raised.value)
    assert says in message and str(path) in message
    assert "portals.example.toml" in message  # where the format is shown


@pytest.mark.parametrize("key", ["client_secret", "client_id"])
def test_credentials_in_the_file_are_refused_saying_where_they_belong(tmp_path, key):
    path = write(tmp_path, f'[portals.acme]\nbase_url = "https://x"\n{key} = "s3cr3t-value"\n')
    with pytest.raises(InvoicingApiError) as raised:
        load_portals(path)
    message = str(raised.value)
    assert f"SOURCES__INVOICING__PORTALS__ACME__{key.upper()}" in message
    assert "[sources.invoicing.portals.acme]" in message
    assert "s3cr3t-value" not in message


def test_without_a_file_the_one_portal_is_default_and_an_explicit_missing_file_is_an_error(tmp_path):
    assert configured_portals(tmp_path / "portals.toml") == {"default": Portal("default")}
    with pytest.raises(InvoicingApiError, match="cannot read it"):
        configured_portals(tmp_path / "portals.toml", required=True)


def test_choosing_portals(tmp_path):
    portals = load_portals(write(tmp_path, GOOD))
    assert [p.name for p in select_portals(portals, None, every=True)] == ["acme", "beta_2"]
    assert select_portals(portals, "beta_2", every=False) == [portals["beta_2"]]
    with pytest.raises(InvoicingApiError, match="unknown portal; configured: acme, beta_2"):
        select_portals(portals, "nope", every=False)
    with pytest.raises(InvoicingApiError, match="choose one with --portal NAME"):
        select_portals(portals, None, every=False)
    default = configured_portals(None)
    assert select_portals(default, None, every=False) == [Portal("default")]


def test_a_portal_s_credentials_come_from_its_own_dlt_section(monkeypatch):
    monkeypatch.setenv("SOURCES__INVOICING__PORTALS__ACME__CLIENT_ID", "acme-id")
    monkeypatch.setenv("SOURCES__INVOICING__PORTALS__ACME__CLIENT_SECRET", "acme-secret")
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_ID", "default-id")
    settings = resolve_settings(portal=Portal("acme", "https://acme.example/api/v2"))
    assert (settings.base_url, settings.client_id, settings.client_secret) == (
        "https://acme.example/api/v2", "acme-id", "acme-secret")
    assert "acme-secret" not in repr(settings)
    with pytest.raises(InvoicingApiError, match="SOURCES__INVOICING__PORTALS__BETA__CLIENT_ID"):
        resolve_settings(portal=Portal("beta", "https://beta.example/api/v2"))
