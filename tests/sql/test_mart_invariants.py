"""Invariants of every mart, on the hand-built portal at several report dates and on a generated portal.

Keys unique and not null; bucket amounts add up to totals; the per-customer, per-supplier and weekly marts
add up to the row-level marts; on the generated portal, the open totals equal the generator's own
dueAmount and remaining (computed independently of the SQL models, in bench/models_build.py).
"""

import importlib.util
from datetime import date
from pathlib import Path

import duckdb
import pytest
from model_fixture import build_warehouse, fetch

from invoicing_warehouse.engine.sql_runner import build_models

MART_KEYS = {  # every grain is within one portal
    "receivables": "portal_id, invoice_id",
    "receivables_by_customer": "portal_id, customer_id",
    "overdue_customers": "portal_id, customer_id",
    "supplier_payables": "portal_id, supplier_document_id",
    "payables_by_supplier": "portal_id, supplier_id",
    "payables_schedule": "portal_id, week_start",
    # the dashboard's own figures (issue 43 point 5)
    "receivables_summary": "portal_id",
    "receivables_aging": "portal_id, aging_bucket",
    "payables_summary": "portal_id",
    "payables_weeks": "portal_id, week_start",
    "expected_payment_bases": "portal_id, basis",
    "late_payment_claims_summary": "portal_id",
    "late_payment_claims_by_customer": "portal_id, customer_id",
    "late_payment_claim_tallies": "portal_id, tally, label",
}


def _load_bench_generator():
    path = Path(__file__).resolve().parents[2] / "bench" / "models_build.py"
    spec = importlib.util.spec_from_file_location("models_build_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_raw_tables


def assert_invariants(conn: duckdb.DuckDBPyConnection) -> None:
    for mart, key in MART_KEYS.items():
        total, distinct, nulls = conn.execute(
            f"select count(*), count(distinct ({key})), "
            f"count(*) filter (where {' or '.join(f'{c} is null' for c in key.split(', '))}) from marts.{mart}"
        ).fetchone()
        assert total == distinct and nulls == 0, f"marts.{mart}: key {key} not unique or null"

    assert (
        fetch(
            conn,
            """select invoice_id from marts.receivables
        where open_amount <= 0 or open_amount <> total_incl_tax - paid_by_payments - settled_by_credit_notes
           or is_overdue <> (coalesce(days_past_due, 0) > 0)
           or aging_bucket <> case when coalesce(days_past_due, 0) <= 0 then 'current'
                when days_past_due <= 30 then '1-30' when days_past_due <= 60 then '31-60'
                when days_past_due <= 90 then '61-90' else '90+' end""",
        )
        == []
    )
    assert (
        fetch(
            conn,
            """select customer_id from marts.receivables_by_customer
        where open_current + open_1_30 + open_31_60 + open_61_90 + open_90_plus <> total_open
           or open_1_30 + open_31_60 + open_61_90 + open_90_plus <> overdue_amount""",
        )
        == []
    )
    sums = conn.execute("""select
        (select coalesce(sum(open_amount), 0) from marts.receivables),
        (select coalesce(sum(total_open), 0) from marts.receivables_by_customer),
        (select count(*) filter (where is_overdue) from marts.receivables),
        (select coalesce(sum(overdue_invoice_count), 0) from marts.receivables_by_customer)""").fetchone()
    assert sums[0] == sums[1] and sums[2] == sums[3]
    # overdue customers: exactly the non-deleted customers with something late, same overdue figures
    assert (
        fetch(
            conn,
            """
        select customer_id, overdue_amount, overdue_invoice_count from marts.receivables_by_customer b
        join staging.stg_invoicing__customers c using (customer_id)
        where b.overdue_invoice_count > 0 and not c.is_deleted
        except
        select customer_id, overdue_amount, overdue_invoice_count from marts.overdue_customers""",
        )
        == []
    )
    assert (
        conn.execute("select count(*) from marts.overdue_customers").fetchone()[0]
        == conn.execute("""
        select count(*) from marts.receivables_by_customer b join staging.stg_invoicing__customers c using (customer_id)
        where b.overdue_invoice_count > 0 and not c.is_deleted""").fetchone()[0]
    )

    assert (
        fetch(
            conn,
            """select supplier_id from marts.payables_by_supplier
        where due_current + due_1_30 + due_31_60 + due_61_90 + due_90_plus <> total_due
           or due_1_30 + due_31_60 + due_61_90 + due_90_plus <> overdue_amount""",
        )
        == []
    )
    assert (
        fetch(
            conn,
            """select week_start from marts.payables_schedule
        where overdue_amount + undated_amount + falling_due_amount + disputed_amount <> total_amount
           or isodow(week_start) <> 1""",
        )
        == []
    )
    payable_sums = conn.execute("""select
        (select coalesce(sum(amount_due), 0) from marts.supplier_payables),
        (select coalesce(sum(total_due), 0) from marts.payables_by_supplier),
        (select coalesce(sum(total_amount), 0) from marts.payables_schedule),
        (select coalesce(max(cumulative_amount) filter (where week_start = (select max(week_start)
            from marts.payables_schedule)), 0) from marts.payables_schedule)""").fetchone()
    assert len(set(payable_sums)) == 1, payable_sums
    assert_page_marts_agree(conn)


def assert_page_marts_agree(conn: duckdb.DuckDBPyConnection) -> None:
    """The marts the pages read their figures from (receivables_summary, receivables_aging, payables_summary,
    payables_weeks, expected_payment_bases) against the row-level marts they sum, portal by portal."""
    # per portal: open total of the invoices, of the aging, of the aged balance, and the dso's figure
    assert fetch(conn, """
        select portal_id, sum(open_amount), count(*) from marts.receivables group by all
        except
        select portal_id, sum(open_amount), sum(invoice_count) from marts.receivables_aging
        where invoice_count > 0 group by all""") == []
    assert fetch(conn, """
        select portal_id from marts.receivables_summary s left join marts.dso d using (portal_id)
        where s.aged_total_open <> coalesce(d.open_receivables, 0)
           or s.aged_total_open <> s.aged_open_current + s.aged_open_1_30 + s.aged_open_31_60 + s.aged_open_61_90
                                   + s.aged_open_90_plus
           or s.overdue_customer_count <> (select count(*) from marts.overdue_customers o
                                           where o.portal_id = s.portal_id)""") == []
    assert fetch(conn, "select portal_id from marts.receivables_aging group by all having count(*) <> 5") == []
    # payables: the summary's total is the documents', the suppliers' and the schedule's; the eight weeks are the
    # schedule's first eight, Monday to Sunday, consecutive
    assert fetch(conn, """
        select portal_id from marts.payables_summary s
        where s.total_due <> s.aged_total_due or s.total_due <> s.approved + s.awaiting_approval + s.disputed
           or s.total_due <> (select coalesce(sum(amount_due), 0) from marts.supplier_payables p
                              where p.portal_id = s.portal_id)
           or s.due_this_week <> (select coalesce(sum(amount_due), 0) from marts.supplier_payables p
                                  where p.portal_id = s.portal_id and p.due_date >= p.as_of_date
                                    and p.due_date <= s.week_end)
           or isodow(s.week_start) <> 1 or s.week_end <> s.week_start + 6
           or s.horizon_end <> s.week_start + 55""") == []
    assert fetch(conn, """
        select w.portal_id, w.week_start from marts.payables_weeks w
        left join marts.payables_schedule s using (portal_id, week_start)
        where w.total_amount <> coalesce(s.total_amount, 0) or isodow(w.week_start) <> 1
           or w.week_start <> (select week_start from marts.payables_summary m where m.portal_id = w.portal_id)
                              + 7 * (w.week_number - 1)""") == []
    assert fetch(conn, """
        select portal_id, basis, count(*) from marts.expected_payments group by all
        except select portal_id, basis, invoice_count from marts.expected_payment_bases""") == []
    # the claims page: the summary, the list by customer and the tallies add up to the claims' rows
    assert fetch(conn, """
        select portal_id, sum(flat_indemnity_eur), coalesce(sum(interest_eur), 0) from marts.late_payment_claims
        group by all
        except select portal_id, flat_indemnities_eur, interest_eur from marts.late_payment_claims_summary""") == []
    assert fetch(conn, """
        select portal_id, sum(flat_indemnity_eur), sum(late_invoice_count) from marts.late_payment_claims_by_customer
        group by all
        except select portal_id, sum(flat_indemnity_eur), count(*) from marts.late_payment_claims
        where customer_type = 'business' group by all""") == []


@pytest.mark.parametrize(
    "as_of", [date(2025, 11, 15), date(2025, 12, 31), date(2026, 1, 10), date(2026, 1, 31), date(2026, 6, 30)]
)
def test_invariants_on_the_hand_built_portal(as_of):
    conn = build_warehouse(as_of)
    try:
        assert_invariants(conn)
    finally:
        conn.close()


def test_invariants_and_api_figures_on_a_generated_portal():
    today = date(2026, 1, 31)
    conn = duckdb.connect()
    try:
        _load_bench_generator()(conn, 5000, today)
        conn.execute("set TimeZone = 'Asia/Tokyo'")
        build_models(conn, as_of=today)
        assert conn.execute("select count(*) from marts.receivables").fetchone()[0] > 1000
        assert conn.execute("select count(*) from marts.overdue_customers").fetchone()[0] > 100
        assert conn.execute("select count(*) from marts.supplier_payables").fetchone()[0] > 50
        assert_invariants(conn)
        assert (
            fetch(
                conn,
                """
            select c.customer_id from staging.stg_invoicing__customers c
            left join marts.receivables_by_customer r using (customer_id)
            where c.api_due_amount <> coalesce(r.total_open, 0)""",
            )
            == []
        )
        assert (
            fetch(
                conn,
                """
            select d.document_id from staging.stg_invoicing__documents d
            left join marts.receivables r on r.invoice_id = d.document_id
            where d.document_type = 'INVOICE' and coalesce(d.document_subtype, '') <> 'CREDIT_NOTE'
              and d.document_subtype is distinct from 'PROFORMA' and d.status = 'VALIDATED'
              and d.api_remaining <> coalesce(r.open_amount, 0)""",
            )
            == []
        )
        # a year earlier, the same invariants hold
        build_models(conn, as_of=date(2025, 1, 31))
        assert_invariants(conn)
    finally:
        conn.close()
