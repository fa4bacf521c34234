"""The dashboard's address is a door too: `?lang=` (issue 42 point 7) and `?as_of=` come from whoever sends the link.
A value the product does not know is ignored, the page still shows its figures in a language it speaks, and
nothing of the value reaches the page but a plain-text notice for a date it could not read. The dashboard's own
script run by Streamlit's AppTest on the hand-built portal of tests/sql/model_fixture.py (a portal in euros:
French unless told otherwise)."""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "invoicing_warehouse" / "dashboard" / "app.py"
AS_OF = date(2026, 1, 31)
HOSTILE = ["de", "<script>alert(1)</script>' or '1'='1", "f" * 10_000]


def _landing(warehouse: Path, monkeypatch: pytest.MonkeyPatch, **query: str) -> AppTest:
    monkeypatch.setattr(sys, "argv", ["app.py", "--warehouse", str(warehouse)])
    app = AppTest.from_file(str(APP), default_timeout=120)
    for name, value in query.items():
        app.query_params[name] = value
    app.run()
    assert not app.exception, app.exception
    return app


@pytest.fixture(scope="module")
def warehouse(published_fixture_once) -> Path:
    return published_fixture_once(AS_OF)


@pytest.mark.parametrize("asked", HOSTILE, ids=["another language", "markup and quotes", "10,000 chars"])
def test_a_language_the_product_does_not_speak_is_ignored(warehouse, monkeypatch, asked):
    monkeypatch.delenv("INVOICING_LANGUAGE", raising=False)
    app = _landing(warehouse, monkeypatch, lang=asked)
    assert app.sidebar.radio[0].value == "fr"  # the portal's language: its figures are in euros
    if asked != "de":  # a French page says "de" of its own
        assert all(asked not in element.value for element in [*app.markdown, *app.warning, *app.error])


def test_the_operators_language_stands_against_a_hostile_address(warehouse, monkeypatch):
    monkeypatch.setenv("INVOICING_LANGUAGE", "en")
    assert _landing(warehouse, monkeypatch, lang=HOSTILE[1]).sidebar.radio[0].value == "en"


@pytest.mark.parametrize("language", ["fr", "en", "EN "])
def test_a_language_it_speaks_is_taken_from_the_address(warehouse, monkeypatch, language):
    monkeypatch.setenv("INVOICING_LANGUAGE", "fr" if language.strip().lower() == "en" else "en")
    assert _landing(warehouse, monkeypatch, lang=language).sidebar.radio[0].value == language.strip().lower()


def test_a_report_date_that_is_not_a_date_is_named_and_ignored(warehouse, monkeypatch):
    monkeypatch.setenv("INVOICING_LANGUAGE", "en")
    app = _landing(warehouse, monkeypatch, as_of="../../2026-01-31<b>")
    assert app.sidebar.date_input[0].value == AS_OF  # the published report date, not anything read from the link
    notices = [element.value for element in app.warning if "Ignored as_of=" in element.value]
    assert notices == ["Ignored as_of='../../2026-01-31<b>' in the address: not a date (YYYY-MM-DD)."]
