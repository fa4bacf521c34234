"""Layout pieces the pages share: a table with its CSV download, and the page's heading."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date

import pandas as pd
import streamlit as st

from dashboard.cache import View
from dashboard.formatting import DEFAULT_CURRENCY, TABLE_CSS, html_table, to_csv
from dashboard.queries import Listing


@dataclass(frozen=True)
class PageContext:
    """What every page needs: the view (copy, date, portal), the report date shown, the amounts' style."""

    view: View
    as_of: date
    style: str


def heading(title: str, context: PageContext) -> None:
    """The page title and the report date and portal it shows."""
    st.title(title)
    source = "published marts" if context.view.as_of is None else "models built for this date, in memory"
    st.caption(f"As of {context.as_of.isoformat()} · portal {context.view.portal} · {source}")
    st.html(TABLE_CSS)


def table(
    frame: pd.DataFrame,
    name: str,
    context: PageContext,
    money: Iterable[str] = (),
    download: pd.DataFrame | Callable[[], pd.DataFrame] | None = None,
    total: int | None = None,
    currency: str = DEFAULT_CURRENCY,
) -> None:
    """`frame` as a table (amounts in `currency`), and a button downloading `download` (default: `frame`) as
    CSV. A callable `download` runs only when the button is clicked (a long list's every row); `total` is its
    row count."""
    st.html(html_table(frame, name, money, context.style, currency=currency))
    data = frame if download is None else download
    rows = total if total is not None else len(frame if callable(data) else data)
    st.download_button(
        f"Download CSV ({rows} rows)",
        (lambda: to_csv(data())) if callable(data) else to_csv(data),
        file_name=f"{name}_{context.view.portal}_{context.as_of.isoformat()}.csv",
        mime="text/csv",
        key=f"download_{name}",
        on_click="ignore",
    )


def shown_of(listing: Listing) -> str:
    """`(first N of M)` when a list is shown cut, else ''."""
    return f" (first {len(listing.rows)} of {listing.total})" if listing.total > len(listing.rows) else ""
