"""How figures look: amounts in the currency the marts carry (euros by default: French `1 234,56 €` or English
`€1,234.56`; `1 234,56 $US` / `$1,234.56` for dollars), tables as plain HTML (readable by people, screen readers
and the browser tests alike), and CSV downloads of the raw values."""

from __future__ import annotations

import html
from collections.abc import Iterable
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pandas as pd

# the CSV writer and its neutralisation live with the other file writers; named here too for the pages' tests
from invoicing_warehouse.engine.column_labels import column_label
from invoicing_warehouse.engine.report_language import ENGLISH as ENGLISH_TEXTS
from invoicing_warehouse.engine.table_files import neutralised, to_csv

__all__ = ["neutralised", "to_csv"]  # besides what is defined here

FRENCH = "fr"
ENGLISH = "en"
STYLES = {FRENCH: "1 234,56 €", ENGLISH: "€1,234.56"}
NO_BREAK_SPACE = "\u00a0"
CENT = Decimal("0.01")
# the marts' currency when none is served (docs/contract.md, `documents.currency`)
DEFAULT_CURRENCY = "EUR"
# currency code -> (English prefix, French suffix); any other code is written out in both styles
SYMBOLS = {"EUR": ("€", "€"), "USD": ("$", "$US"), "GBP": ("£", "£"), "CHF": ("CHF ", "CHF")}


def money(value: Any, style: str = FRENCH, currency: str = DEFAULT_CURRENCY) -> str:
    """`value` (Decimal, int, float or None) in `currency` to the cent; an empty string for None."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    amount = Decimal(str(value)).quantize(CENT, ROUND_HALF_UP)
    sign = "-" if amount < 0 else ""
    english = f"{abs(amount):,.2f}"
    prefix, suffix = SYMBOLS.get(currency, (f"{currency} ", currency))
    if style == ENGLISH:
        return f"{sign}{prefix}{english}"
    french = english.replace(",", NO_BREAK_SPACE).replace(".", ",")
    return f"{sign}{french}{NO_BREAK_SPACE}{suffix}"


def eur(value: Any, style: str = FRENCH) -> str:
    """`value` as euros (money in EUR)."""
    return money(value, style, "EUR")


def currency_label(currency: str | None) -> str:
    """What a chart axis or a caption names: the code read from the marts, euros when none was read."""
    return currency or DEFAULT_CURRENCY


def days(value: Any, style: str = FRENCH) -> str:
    """A day count (DSO) with one decimal in the style's decimal mark; `n/a` when unknown."""
    if value is None:
        return "n/a"
    text = f"{Decimal(str(value)):.1f}"
    return text.replace(".", ",") if style == FRENCH else text


def day(value: date, language: str = ENGLISH_TEXTS) -> str:
    """A date as a page shows it: `28/11/2026` in French, ISO `2026-11-28` in English."""
    return value.strftime("%d/%m/%Y") if language == FRENCH else value.isoformat()


def cell_text(value: Any, is_money: bool, style: str, currency: str = DEFAULT_CURRENCY,
              language: str = ENGLISH_TEXTS) -> str:
    """A cell as the tables show it (and as a search matches it): money in the style, dates per `language`
    (ISO in English, `28/11/2026` in French), yes/no (oui/non)."""
    if is_money:
        return money(value, style, currency)
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, date):
        return day(value, language)
    if isinstance(value, bool):
        return ("oui" if value else "non") if language == FRENCH else ("yes" if value else "no")
    if isinstance(value, Decimal):  # a day count or a share (money is above): the style's decimal mark, as `days`
        text = format(value, "f")
        return text.replace(".", ",") if style == FRENCH else text
    return str(value)


def html_table(
    frame: pd.DataFrame,
    name: str,
    money: Iterable[str] = (),
    style: str = FRENCH,
    labels: dict[str, str] | None = None,
    currency: str = DEFAULT_CURRENCY,
    language: str = ENGLISH_TEXTS,
) -> str:
    """`frame` as an HTML table `data-table=name`, its headers in `language`
    (invoicing_warehouse/engine/column_labels.py; `labels` wins); columns in `money` formatted in `currency` and
    right-aligned. Each cell carries `data-column` so tests and scripts find a figure by its column name."""
    money = set(money)
    labels = labels or {}
    head = "".join(
        f'<th class="{"num" if column in money else ""}">'
        f"{html.escape(labels.get(column) or column_label(column, language))}</th>"
        for column in frame.columns
    )
    body = []
    for row in frame.itertuples(index=False):
        cells = "".join(
            f'<td data-column="{html.escape(column)}" class="{"num" if column in money else ""}">'
            f"{html.escape(cell_text(value, column in money, style, currency, language))}</td>"
            for column, value in zip(frame.columns, row, strict=True)
        )
        body.append(f"<tr>{cells}</tr>")
    nothing = "rien" if language == FRENCH else "nothing"
    empty = "" if body else f'<tr><td colspan="{len(frame.columns)}">{nothing}</td></tr>'
    return (
        f'<table class="iw-table" data-table="{html.escape(name)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}{empty}</tbody></table>"
    )


TABLE_CSS = """<style>
table.iw-table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
table.iw-table th, table.iw-table td { padding: 0.25rem 0.5rem; border-bottom: 1px solid #e6e6e6; text-align: left; }
table.iw-table th { background: #f5f6f8; font-weight: 600; }
table.iw-table .num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
</style>"""
