"""The warm-up of a dashboard server before it listens, so its first visitor does not pay for it.

A Streamlit server imports a page's modules on the first session's first run, and every figure is cached
per readers' copy only once a page asked for it: at 1,000,000 documents the first page after a start took
3.0 s (about 1.5 s of it importing pandas and Altair, 0.3 s the Receivables queries) where every later page
took under 2 s. `invoicing_warehouse.dashboard.serve` runs this in the server's process before Streamlit starts: it
imports the pages and fills the same `st.cache_data` caches the pages read (they are global to the process; Streamlit
keeps a cache made before its runtime), for the view a visitor lands on (the published marts, the first
portal): Receivables with its first drill-down customer, Payables, Cash outlook and the Freshness tables
(not the checks, which run only when their page asks). The Trends page's month-end builds, far longer, are
warmed up in a thread once the server listens (`warm_up_trends`).

It never raises: a missing or locked copy is the page's to explain when someone opens it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)
TRENDS_NICENESS = 10


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
        from invoicing_warehouse.dashboard import cache
        from invoicing_warehouse.dashboard.screens import (  # noqa: F401  (pandas, Altair)
            benchmarks,
            cash_outlook,
            freshness,
            late_payment_claims,
            payables,
            payment_terms,
            payment_terms_paid_late,
            receivables,
            trends,
        )
        from invoicing_warehouse.dashboard.source import Source, Unavailable

        try:
            view, as_of, _ = cache.landing_view(Source(warehouse))
            figures = cache.receivables(view)
            if not figures.customers.rows.empty:
                cache.customer_invoices(view, figures.customers.rows["customer_id"].iloc[0])
            cache.payables(view, as_of)
            cache.cash_outlook(view)
            claims = cache.claims(view)
            if not claims.by_customer.rows.empty:
                cache.customer_claims(view, claims.by_customer.rows["customer_id"].iloc[0])
            cache.payment_terms(view)
            cache.paid_late_table(view)
            cache.expected_payments(view)
            cache.payment_behaviour(view)
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


def warm_up_trends(warehouse: Path) -> None:
    """Puts the Trends page's month-end figures for the landing view into the dashboard's cache, in a thread
    beside the server at a low priority. The run publishes them with the copy (one table read); a copy published
    without them (INVOICING_PUBLISH_TRENDS=0) needs twelve builds of the models, seconds on the demo and 40 s at
    1,000,000 documents, too long to keep the server from listening, and a visitor who opens Trends meanwhile
    waits for this same computation (Streamlit computes a cached value once). Never raises."""
    started = time.perf_counter()
    try:
        # Linux gives each thread its own nice value, and DuckDB's worker threads, started from this thread,
        # inherit it: the pages' own queries keep the cores first
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), TRENDS_NICENESS)
    except (AttributeError, OSError):  # not Linux, or not allowed: the same work at the normal priority
        pass
    try:
        from invoicing_warehouse.dashboard import cache
        from invoicing_warehouse.dashboard.source import Source, Unavailable

        try:
            view, as_of, _ = cache.landing_view(Source(warehouse))
            cache.trends(view.warehouse, view.key, as_of)
        except Unavailable as problem:
            log.info("no trends warmed up (%s)", str(problem).splitlines()[0])
            return
    except Exception:  # the page computes them itself, and shows the error if there is one
        log.exception("trends warm-up failed; the Trends page will compute its figures")
        return
    log.info("trends (12 month-ends) cached in %.2f s", time.perf_counter() - started)
