"""Layout pieces the pages share: a table with its search, sort and downloads (CSV, French CSV, xlsx), and the
page's heading."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date

import pandas as pd
import streamlit as st

from invoicing_warehouse.dashboard.cache import View
from invoicing_warehouse.dashboard.formatting import DEFAULT_CURRENCY, TABLE_CSS, cell_text, day, html_table
from invoicing_warehouse.dashboard.page_texts import tr
from invoicing_warehouse.dashboard.queries import Listing
from invoicing_warehouse.engine.column_labels import column_label
from invoicing_warehouse.engine.report_language import ENGLISH
from invoicing_warehouse.engine.table_files import CSV, EXTENSIONS, FRENCH_CSV, MIME_TYPES, XLSX, write


@dataclass(frozen=True)
class PageContext:
    """What every page needs: the view (copy, date, portal), the report date shown, the amounts' style, the
    language of the texts (invoicing_warehouse/engine/report_language.py)."""

    view: View
    as_of: date
    style: str
    language: str = ENGLISH

    def tr(self, english: str, **values: object) -> str:
        """`english` (a catalogue id, invoicing_warehouse/dashboard/page_texts.py) in the page's language, `values`
        filled in."""
        return tr(self.language, english, **values)


def heading(title: str, context: PageContext) -> None:
    """The page title and the report date and portal it shows."""
    st.title(title)
    source = context.tr("published marts" if context.view.as_of is None else "models built for this date, in memory")
    st.caption(context.tr("As of {date} · portal {portal} · {source}", date=day(context.as_of, context.language),
                          portal=context.view.portal, source=source))
    st.html(TABLE_CSS)


def table(
    frame: pd.DataFrame,
    name: str,
    context: PageContext,
    money: Iterable[str] = (),
    download: pd.DataFrame | Callable[[], pd.DataFrame] | None = None,
    total: int | None = None,
    currency: str = DEFAULT_CURRENCY,
    searchable: bool = True,
) -> None:
    """`frame` as a table (amounts in `currency`) under a search box and a sort choice, and buttons downloading
    `download` (default: `frame`) as CSV, CSV for French spreadsheets and xlsx. A callable `download` runs only
    when a button is clicked (a long list's every row), or when a search or a sort needs every row of a list
    shown cut; `total` is its row count. `searchable=False`: no search nor sort (a one-row table of totals)."""
    money = list(money)
    data = frame if download is None else download
    rows = total if total is not None else len(frame if callable(data) else data)
    shown = _searched_and_sorted(frame, name, context, money, currency, data, rows) if searchable else frame
    st.html(html_table(shown, name, money, context.style, currency=currency, language=context.language))
    stem = f"{name}_{context.view.portal}_{context.as_of.isoformat()}"
    csv, french, xlsx, _ = st.columns([2, 2, 2, 3])
    for column, file_format, label in ((csv, CSV, context.tr("Download CSV ({rows} rows)", rows=rows)),
                                       (french, FRENCH_CSV, context.tr("CSV for French Excel (;)")),
                                       (xlsx, XLSX, context.tr("Download xlsx"))):
        column.download_button(
            label,
            _writer(data, file_format, name, context.language),
            file_name=f"{stem}{'_fr' if file_format == FRENCH_CSV else ''}.{EXTENSIONS[file_format]}",
            mime=MIME_TYPES[file_format],
            key=f"download_{file_format}_{name}",
            on_click="ignore",
        )


def _writer(data: pd.DataFrame | Callable[[], pd.DataFrame], file_format: str, name: str,
            language: str) -> Callable[[], bytes]:
    # always deferred: a file is written only when its button is clicked, never on every rerun of the page;
    # the files made for people (French CSV, xlsx) carry the headers in the page's language, the CSV the marts' names
    return lambda: write(data() if callable(data) else data, file_format, name, language)


def _searched_and_sorted(frame: pd.DataFrame, name: str, context: PageContext, money: list[str], currency: str,
                         data: pd.DataFrame | Callable[[], pd.DataFrame], rows: int) -> pd.DataFrame:
    """The rows shown: `frame`, or, once a search or a sort is asked, the rows of the whole list (not only the
    head a long list shows) that match, in the order chosen, cut to as many rows as `frame` shows."""
    columns = list(frame.columns)
    search_box, sort_box = st.columns([3, 2])
    text = search_box.text_input(context.tr("Search {table}", table=name.replace('_', ' ')), key=f"search_{name}",
                                 placeholder=context.tr("Search: any part of any cell"),
                                 label_visibility="collapsed")
    orders = [None, *[(column, ascending) for column in columns for ascending in (True, False)]]
    order = sort_box.selectbox(
        context.tr("Sort {table}", table=name.replace('_', ' ')), orders, key=f"sort_{name}",
        label_visibility="collapsed",
        format_func=lambda o: context.tr("Sort: as listed") if o is None else
        context.tr("Sort: {column} ascending" if o[1] else "Sort: {column} descending",
                   column=column_label(o[0], context.language)),
    )
    needle = text.strip().casefold()
    if not needle and order is None:
        return frame
    # a list shown cut: its every row (cached per view), else a search would miss what is not shown
    whole = data()[columns] if callable(data) and rows > len(frame) else frame
    if needle:
        texts = pd.Series("", index=whole.index)
        for column in columns:
            texts = texts + "\x1f" + whole[column].map(
                lambda value, is_money=column in money: cell_text(value, is_money, context.style, currency,
                                                                  context.language))
        whole = whole[texts.str.casefold().str.contains(needle, regex=False)]
    if order is not None:
        whole = whole.sort_values(order[0], ascending=order[1], kind="stable", na_position="last")
    st.caption(context.tr("{matching} of {rows} rows match", matching=len(whole), rows=rows)
               + (context.tr(", the first {shown} shown", shown=len(frame)) if len(whole) > len(frame) else ""))
    return whole.head(len(frame)) if len(frame) else whole


def shown_of(listing: Listing, language: str = ENGLISH) -> str:
    """`(first N of M)` when a list is shown cut, else ''."""
    if listing.total <= len(listing.rows):
        return ""
    return tr(language, " (first {shown} of {total})", shown=len(listing.rows), total=listing.total)
