"""The catalogues of texts: every id the dashboard's code passes to `tr` has its French text, naming the same
placeholders; no French text is left without a use; every column label has both languages; the language setting
and the default it falls back to (French for a portal in euros)."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pandas as pd
import pytest

from invoicing_warehouse.dashboard.page_texts import FRENCH_TEXTS, tr
from invoicing_warehouse.dashboard.reminder_letter import ASSUMPTIONS
from invoicing_warehouse.dashboard.screens.benchmarks import ROWS
from invoicing_warehouse.dashboard.screens.cash_outlook import FLOWS
from invoicing_warehouse.dashboard.screens.payment_terms import SIDES
from invoicing_warehouse.engine.column_labels import COLUMN_LABELS, labelled
from invoicing_warehouse.engine.report_language import LanguageSettingError, chosen_language, report_language

DASHBOARD = Path(__file__).resolve().parents[3] / "invoicing_warehouse" / "dashboard"
# ids held in constants and passed to `tr` through a variable
HELD_IN_CONSTANTS = [*SIDES.values(), *(label for label, _ in ROWS.values()), *FLOWS, *ASSUMPTIONS.values()]


def _literals(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _literals(node.body) + _literals(node.orelse)
    return []


def _ids_in_code() -> dict[str, str]:
    """Every literal id passed to a function or method named `tr` in invoicing_warehouse/dashboard/ -> the file
    using it."""
    found: dict[str, str] = {}
    for path in sorted(DASHBOARD.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "tr":
                # tr(language, id) or context.tr(id): the id is among the first two arguments
                for argument in node.args[:2]:
                    for text in _literals(argument):
                        found.setdefault(text, path.name)
    for text in HELD_IN_CONSTANTS:
        found.setdefault(text, "constant")
    return found


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_text_the_dashboard_uses_has_its_french_text():
    used = _ids_in_code()
    assert len(used) > 140  # the scan found the pages' texts (page titles, tiles, captions, buttons, the letter)
    assert {"Receivables", "Download xlsx", "Reminder letter", "Dear Sir or Madam,"} <= set(used)
    missing = {text: where for text, where in used.items() if text not in FRENCH_TEXTS}
    assert missing == {}


def test_the_french_catalogue_holds_no_unused_text_and_names_the_same_placeholders():
    used = _ids_in_code()
    assert [text for text in FRENCH_TEXTS if text not in used] == []
    assert {text: french for text, french in FRENCH_TEXTS.items()
            if not french.strip() or _placeholders(text) != _placeholders(french)} == {}


def test_every_column_label_has_both_languages():
    assert {column: labels for column, labels in COLUMN_LABELS.items()
            if len(labels) != 2 or not all(label.strip() for label in labels)} == {}


def test_tr_fills_the_placeholders_in_the_languages_order():
    assert tr("fr", "As of {date} · portal {portal} · {source}", date="28/11/2026", portal="acme",
              source="tables publiées") == "Au 28/11/2026 · portail acme · tables publiées"
    assert tr("en", "{matching} of {rows} rows match", matching=3, rows=40) == "3 of 40 rows match"
    assert tr("fr", "{matching} of {rows} rows match", matching=3, rows=40) == "3 lignes sur 40 correspondent"


def test_labelled_headers_are_in_the_language_and_never_ambiguous():
    frame = pd.DataFrame(columns=["reference", "due_date", "oldest_due_date", "open_amount", "no_label_here"])
    assert list(labelled(frame, "fr").columns) == [
        "Référence", "Échéance (due_date)", "Échéance (oldest_due_date)", "Restant dû", "no_label_here"]
    assert list(labelled(frame, "en").columns) == [
        "Reference", "Due (due_date)", "Due (oldest_due_date)", "Open", "no_label_here"]


@pytest.mark.parametrize(("setting", "currencies", "expected"), [
    (None, ["EUR", "EUR"], "fr"),  # a portal in euros: a French portal of a French service
    (None, [None], "fr"),  # no currency served: euros by the contract's rule (docs/contract.md)
    (None, [], "fr"),  # no figure yet
    (None, ["EUR", "USD"], "en"),  # a mix: a portal abroad
    (None, ["GBP"], "en"),
    ("en", ["EUR"], "en"),  # the setting wins
    (" FR ", ["USD"], "fr"),
])
def test_the_language_is_the_setting_else_the_portals(monkeypatch, setting, currencies, expected):
    if setting is None:
        monkeypatch.delenv("INVOICING_LANGUAGE", raising=False)
    else:
        monkeypatch.setenv("INVOICING_LANGUAGE", setting)
    assert report_language(currencies) == expected


def test_a_language_the_product_does_not_speak_is_refused_naming_the_setting(monkeypatch):
    monkeypatch.setenv("INVOICING_LANGUAGE", "de")
    with pytest.raises(LanguageSettingError, match=r"INVOICING_LANGUAGE=de: not a language .* \(fr or en\)"):
        chosen_language()
