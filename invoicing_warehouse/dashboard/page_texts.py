"""The dashboard's texts in each language it speaks: every page title, tile, caption, button and message is
written in English in the code, as the catalogue's id (gettext's way: the code stays readable), and looked up
here for French (invoicing_warehouse/dashboard/french_operations.py, invoicing_warehouse/dashboard/french_law.py).
Placeholders `{name}` are filled in after the lookup, so a French sentence may order them its own way.

Column headers are not here: invoicing_warehouse/engine/column_labels.py holds them, as the exports share them.
tests/invoicing_warehouse/dashboard/test_page_texts.py checks that every id the code uses has its French text and that
both texts name the same placeholders.
"""

from __future__ import annotations

from invoicing_warehouse.dashboard.french_law import FRENCH_LAW
from invoicing_warehouse.dashboard.french_operations import FRENCH_OPERATIONS
from invoicing_warehouse.engine.report_language import FRENCH

# English id -> French text
FRENCH_TEXTS: dict[str, str] = {**FRENCH_OPERATIONS, **FRENCH_LAW}


def tr(language: str, english: str, **values: object) -> str:
    """`english` in `language` (`fr` or `en`), with `values` filled into its `{placeholders}`. An id missing from
    the French catalogue shows in English rather than failing the page (the catalogue's test fails instead)."""
    text = FRENCH_TEXTS.get(english, english) if language == FRENCH else english
    return text.format(**values) if values else text
