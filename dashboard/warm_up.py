"""The warm-up of a dashboard server before it listens, so its first visitor does not pay for it.

A Streamlit server imports a page's modules on the first session's first run, and every figure is cached
per readers' copy only once a page asked for it: at 1,000,000 documents the first page after a start took
3.0 s (about 1.5 s of it importing pandas and Altair, 0.3 s the Receivables queries) where every later page
took under 2 s. `dashboard.serve` runs this in the server's process before Streamlit starts: it imports the
pages and fills the same `st.cache_data` caches the pages read (they are global to the process; Streamlit
keeps a cache made before its runtime), for the view a visitor lands on (the published marts, the first
portal): Receivables with its first drill-down customer, Payables, Cash outlook and the Freshness tables
(not the checks, which run only when their page asks).

It never raises: a missing or locked copy is the page's to explain when someone opens it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

log = logging.getLogger(__name__)


def warm_up(warehouse: Path) -> None:
    """Imports the pages and loads the landing view's figures of `warehouse`'s readers' copy into the
    dashboard's caches; logs what it did and how long it took."""
    started = time.perf_counter()
    from streamlit.runtime.caching import cache_data_api  # its logger gets its level when first imported

    # it says "No runtime found, using MemoryCacheStorageManager" for each cache made before the server
    quiet = logging.getLogger(cache_data_api.__name__)
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        from dashboard import cache
        from dashboard.screens import cash_outlook, freshness, payables, receivables, trends  # noqa: F401  (pandas, Altair)
        from dashboard.source import Source, Unavailable

        try:
            view, as_of, _ = cache.landing_view(Source(warehouse))
            figures = cache.receivables(view)
            if not figures.customers.rows.empty:
                cache.customer_invoices(view, figures.customers.rows["customer_id"].iloc[0])
            cache.payables(view, as_of)
            cache.cash_outlook(view)
            cache.freshness_tables(view.warehouse, view.key)
        except Unavailable as problem:
            log.info("the readers' copy is not readable yet (%s)", str(problem).splitlines()[0])
            return
    except Exception:  # a warm-up must never keep the server from starting; the page shows the error itself
        log.exception("dashboard warm-up failed; the first visit will compute its figures")
        return
    finally:
        quiet.setLevel(level)
    log.info("pages imported and figures cached in %.2f s", time.perf_counter() - started)
