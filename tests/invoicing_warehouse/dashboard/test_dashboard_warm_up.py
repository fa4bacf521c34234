"""The warm-up fills the very cache entries the landing page reads, so a first visitor runs no query; it
never raises, whatever the copy's state. In-process, without a server: the caches are global to a process."""

from __future__ import annotations

import logging
import shutil

import duckdb
import pytest
import streamlit as st

from invoicing_warehouse.dashboard import cache, freshness, queries
from invoicing_warehouse.dashboard.source import Source, Unavailable
from invoicing_warehouse.dashboard.warm_up import warm_up


def _refuse(*_args, **_kwargs):
    raise AssertionError("a query ran: the warm-up did not fill this cache entry")


def test_after_the_warm_up_the_landing_pages_figures_come_from_the_cache(dashboard, monkeypatch):
    st.cache_data.clear()
    warm_up(dashboard.warehouse)
    view, as_of, portals = cache.landing_view(Source(dashboard.warehouse))
    for module, name in [(queries, "receivables"), (queries, "customer_invoices"), (queries, "payables"),
                         (queries, "cash_outlook"), (freshness, "raw_tables")]:
        monkeypatch.setattr(module, name, _refuse)
    figures = cache.receivables(view)
    first_customer = figures.customers.rows["customer_id"].iloc[0]
    invoices = cache.customer_invoices(view, first_customer)
    payables = cache.payables(view, as_of)
    outlook = cache.cash_outlook(view)
    tables, _ = cache.freshness_tables(view.warehouse, view.key)
    # and they are the published marts' own figures
    with duckdb.connect(str(dashboard.snapshot), read_only=True) as marts:
        [(open_total,)] = marts.execute("select open_receivables from marts.dso").fetchall()
        [(supplier_total,
          )] = marts.execute("select coalesce(sum(amount_due), 0) from marts.supplier_payables").fetchall()
        [(periods,)] = marts.execute("select count(*) from marts.cash_outlook").fetchall()
        customer_open = marts.execute("select sum(open_amount) from marts.receivables where customer_id = ?",
                                      [first_customer]).fetchone()[0]
    assert (view.as_of, view.portal, portals[0], as_of) == (None, "default", "default", dashboard.as_of)
    assert figures.total_open == open_total
    assert sum(invoices["open_amount"]) == customer_open
    assert payables.total == supplier_total
    assert len(outlook) == periods
    assert "documents" in set(tables["raw_table"])


def test_a_missing_copy_is_logged_not_raised(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="invoicing_warehouse.dashboard.warm_up"):
        warm_up(tmp_path / "absent.duckdb")
    assert any("not readable yet" in record.getMessage() for record in caplog.records), caplog.text


def test_an_unexpected_failure_is_logged_not_raised(dashboard, monkeypatch, caplog):
    st.cache_data.clear()
    monkeypatch.setattr(queries, "receivables", _refuse)
    with caplog.at_level(logging.INFO, logger="invoicing_warehouse.dashboard.warm_up"):
        warm_up(dashboard.warehouse)
    assert any("warm-up failed" in record.getMessage() for record in caplog.records), caplog.text
    st.cache_data.clear()


@pytest.fixture(autouse=True)
def _fresh_caches():
    yield
    st.cache_data.clear()  # nothing cached here outlives the test (other tests compute their own)


def test_a_copy_without_a_mart_a_section_reads_says_so_in_its_place(dashboard, tmp_path):
    # a copy published before marts.expected_payments existed: the Cash outlook section says what is missing. The
    # loader of that section bears the mart's name, which DuckDB's Python replacement scans would otherwise take
    # for the table and fail on with another error, shown as a traceback
    warehouse = tmp_path / "warehouse.duckdb"
    shutil.copyfile(dashboard.warehouse, warehouse)
    shutil.copyfile(dashboard.snapshot, Source(warehouse).snapshot_path)
    with duckdb.connect(str(Source(warehouse).snapshot_path)) as copy:
        copy.execute("drop table marts.expected_payments")
    view, _, _ = cache.landing_view(Source(warehouse))
    with pytest.raises(Unavailable, match=r"never published: .*expected_payments does not exist"):
        cache.expected_payments(view)
