"""The language readers see the figures in: the dashboard's texts, the exports' headers (CSV for French
spreadsheets, xlsx) and the reminder letter. One setting, INVOICING_LANGUAGE (`fr` or `en`); unset, the portal
decides: French for a French portal, English otherwise.

What the API tells about a portal's country: documents carry a `currency`, euros on creation (spec, supplier
documents; docs/contract.md, `documents.currency`), and the marts carry it (`marts.cash_outlook.currency`, euros
when the API serves none). The service is a French invoicing portal whose legal outputs (D441-6, L441-10) are
French law, so a portal whose figures are all in euros is read as French; any other currency, or a mix, as a
portal abroad, in English. The customers' address country would tell more, but no mart carries it and the
dashboard reads only marts (issue 43): the currency is what every reader of the marts already has.
"""

from __future__ import annotations

from collections.abc import Iterable

from invoicing_warehouse.engine.environment.engine_settings import LANGUAGE
from invoicing_warehouse.engine.environment.reader import current_environment

FRENCH = "fr"
ENGLISH = "en"
LANGUAGES = (FRENCH, ENGLISH)
LANGUAGE_NAMES = {FRENCH: "Français", ENGLISH: "English"}
LANGUAGE_SETTING = LANGUAGE.name
# the currency of a French portal's figures (documents are created in euros)
FRENCH_PORTAL_CURRENCY = "EUR"


class LanguageSettingError(ValueError):
    """INVOICING_LANGUAGE holds something else than `fr` or `en`."""


def chosen_language() -> str | None:
    """INVOICING_LANGUAGE as `fr` or `en` (case-free), or None when unset. Raises LanguageSettingError, naming the
    setting and the accepted values, for anything else."""
    chosen = (current_environment().text(LANGUAGE) or "").strip().lower()
    if not chosen:
        return None
    if chosen not in LANGUAGES:
        raise LanguageSettingError(f"{LANGUAGE_SETTING}={chosen}: not a language the product speaks (fr or en)")
    return chosen


def portal_language(currencies: Iterable[str | None]) -> str:
    """The language of a portal whose figures are in `currencies` (as the marts carry them; None: none served,
    euros by rule): French when every one is the euro, English otherwise (another currency, or a mix)."""
    seen = {currency or FRENCH_PORTAL_CURRENCY for currency in currencies}
    # an empty portal (no figure yet) is still a portal of a French service: French
    return FRENCH if seen <= {FRENCH_PORTAL_CURRENCY} else ENGLISH


def report_language(currencies: Iterable[str | None]) -> str:
    """The language to write in: INVOICING_LANGUAGE when set, else the portal's (`portal_language`)."""
    return chosen_language() or portal_language(currencies)
