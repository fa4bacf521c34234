"""Benchmark: generates raw tables for N documents (default 1,000,000) directly in DuckDB, then builds
every SQL model and prints the time of each and the total (target: under 20 s on the 2-core machine).

    .venv/bin/python bench/models_build.py [--documents N] [--warehouse PATH] [--as-of YYYY-MM-DD]

Scale per N documents: N/20 customers, 3 lines per document, ~0.45 N payments (transactions and usages),
~0.05 N extra credit notes applied to invoices, ~0.23 N messages, N/10 supplier documents with events.
The generator is plain SQL over range(); `generate_raw_tables` is also used by tests/sql at small scale.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.model_raw_tables import create_raw_tables  # noqa: E402
from invoicing_warehouse.engine.sql_runner import build_models  # noqa: E402

# kind by a per-document roll 0-99: 0-69 invoice, 70-74 free credit note, 75-77 proforma, 78-79 deposit,
# 80-84 draft, 85-89 superseded (CANCELED) version, 90-99 quotation.
# payments, credits and mails are dated no later than the report date (the generated "today").
# payment by another roll 0-99 (invoices and deposits): 0-49 paid in full, 50-59 paid 30 % and credited
# 20 % by a credit note, 60-69 paid 40 %, 70-99 unpaid; 5 % of payments overpay by 10.00.
_GENERATED_DOCUMENTS = """
create or replace temp table gen_documents as
with rolls as (
    select
        i,
        printf('%08x%016x', 1700000000 + i // 100, i) as id,
        printf('%08x%016x', 1600000000, hash(i, 'customer') % $customers) as customer_id,
        cast(hash(i, 'kind') % 100 as integer) as kind_roll,
        cast(hash(i, 'pay') % 100 as integer) as pay_roll,
        cast($today as date) - cast(hash(i, 'emit') % 730 as integer) as emit_day,
        cast((10 + hash(i, 'amount') % 500000) / 100 as decimal(18, 2)) as amount
    from range($documents) as t(i)
)
select
    *,
    case when kind_roll < 70 or kind_roll between 78 and 89 then 'INVOICE'
         when kind_roll < 78 then 'INVOICE' else 'QUOTATION' end as type,
    case when kind_roll between 70 and 74 then 'CREDIT_NOTE' when kind_roll between 75 and 77 then 'PROFORMA'
         when kind_roll between 78 and 79 then 'DEPOSIT' end as subtype,
    (kind_roll < 70 or kind_roll between 78 and 79) as is_receivable,
    case when (kind_roll < 70 or kind_roll between 78 and 79) and pay_roll < 50 then amount
         when (kind_roll < 70 or kind_roll between 78 and 79) and pay_roll < 60 then round(amount * 0.3, 2)
         when (kind_roll < 70 or kind_roll between 78 and 79) and pay_roll < 70 then round(amount * 0.4, 2)
         else 0 end as paid,
    case when (kind_roll < 70 or kind_roll between 78 and 79) and pay_roll between 50 and 59
         then round(amount * 0.2, 2) else 0 end as credited
from rolls
"""

_DOCUMENTS = """
insert into invoicing_raw.documents by name
select
    id, 'default' as portal_id, customer_id, type, subtype,
    case when kind_roll between 80 and 84 then 'DRAFT' when kind_roll between 85 and 89 then 'CANCELED'
         when is_receivable and paid + credited = amount then 'PAID' else 'VALIDATED' end as status,
    'F-' || i as reference, 'doc ' || i as title,
    cast(emit_day as timestamptz) as emit_date, cast(emit_day + 30 as timestamptz) as due_date,
    'customer ' || customer_id as to__name,
    amount, cast(0 as decimal(18, 2)) as vat, amount as amount_vat, amount as amount_net,
    amount as amount_vat_net, paid + credited as total_payments, amount - paid - credited as remaining,
    '1.0' as version, cast(emit_day as timestamptz) as last_update,
    '1' as _dlt_load_id, 'd' || i as _dlt_id
from gen_documents;
-- the credit notes that settle part of an invoice (pay roll 50-59)
insert into invoicing_raw.documents by name
select
    printf('%08x%016x', 1800000000, i) as id, 'default' as portal_id, customer_id, 'INVOICE' as type,
    'CREDIT_NOTE' as subtype, 'VALIDATED' as status, 'A-' || i as reference,
    cast(least(emit_day + 5, $today) as timestamptz) as emit_date, credited as amount, credited as amount_vat,
    credited as amount_net, credited as amount_vat_net, credited as total_payments,
    cast(0 as decimal(18, 2)) as remaining, id as invoice_id, '1.0' as version,
    cast(least(emit_day + 5, $today) as timestamptz) as last_update, '1' as _dlt_load_id, 'cn' || i as _dlt_id
from gen_documents where credited > 0
"""

_PAYMENTS = """
insert into invoicing_raw.transactions by name
select
    printf('%08x%016x', 1900000000, i) as id, 'default' as portal_id, customer_id, id as document_id,
    paid + case when pay_roll % 20 = 0 then 10 else 0 end as amount, paid as used_amount,
    cast(0 as decimal(18, 2)) as refunded_amount,
    cast(least(emit_day + pay_roll % 40, $today) as timestamptz) as date, 'TRANSFER' as method,
    cast(least(emit_day + pay_roll % 40, $today) as timestamptz) as last_update, '1' as _dlt_load_id,
    't' || i as _dlt_id
from gen_documents where paid > 0;
insert into invoicing_raw.transaction_usages by name
select
    printf('%08x%016x', 1910000000, i) as id, 'default' as portal_id, 'TRANSACTION' as type, customer_id,
    id as invoice_id, printf('%08x%016x', 1900000000, i) as transaction_id, paid as amount,
    cast(least(emit_day + pay_roll % 40, $today) as timestamptz) as date, '1' as _dlt_load_id, 'tu' || i as _dlt_id
from gen_documents where paid > 0;
insert into invoicing_raw.transaction_usages by name
select
    printf('%08x%016x', 1920000000, i) as id, 'default' as portal_id, 'CREDIT_NOTE' as type, customer_id,
    id as invoice_id, printf('%08x%016x', 1800000000, i) as credit_note_id, credited as amount,
    cast(least(emit_day + 5, $today) as timestamptz) as date, '1' as _dlt_load_id, 'cu' || i as _dlt_id
from gen_documents where credited > 0
"""

_CHILDREN = """
insert into invoicing_raw.documents__lines by name
select
    'ITEM' as line_type, printf('%08x%016x', 1500000000, (i + j) % 1000) as item_id, 'line ' || j as name,
    round(amount / 3, 2) as price, 1 as quantity, 0 as vat, 0 as discount,
    'd' || i as _dlt_parent_id, j as _dlt_list_idx, 'd' || i as _dlt_root_id, 'l' || i || '-' || j as _dlt_id
from gen_documents, range(3) as r(j);
insert into invoicing_raw.documents__messages by name
select
    cast(least(emit_day + 35, $today) as timestamptz) as date,
    case when pay_roll % 2 = 0 then 'RELAUNCH1' else 'STANDARD' end as model,
    'me@portal.test' as "from", 'customer@test' as "to", 'Facture F-' || i as subject,
    'd' || i as _dlt_parent_id, 0 as _dlt_list_idx, 'd' || i as _dlt_root_id, 'm' || i as _dlt_id
from gen_documents where is_receivable and i % 3 = 0
"""

_PARTIES = """
insert into invoicing_raw.customers by name
select
    printf('%08x%016x', 1600000000, c) as id, 'default' as portal_id, 'Customer ' || c as name,
    'C-' || c as reference, 'c' || c || '@test' as email,
    case when c % 2 = 0 then '06' || c end as mobile, '01' || c as phone,
    coalesce(due.due_amount, 0) as due_amount, c % 500 = 499 and due.due_amount is null as deleted,
    '1' as _dlt_load_id, 'c' || c as _dlt_id
from range($customers) as t(c)
left join (
    select customer_id, sum(amount - paid - credited) as due_amount
    from gen_documents where is_receivable and kind_roll not between 80 and 89 and amount > paid + credited
    group by customer_id
) as due on due.customer_id = printf('%08x%016x', 1600000000, c);
insert into invoicing_raw.items by name
select printf('%08x%016x', 1500000000, k) as id, 'item ' || k as name, 10 as price, 20 as vat,
    '1' as _dlt_load_id, 'it' || k as _dlt_id
from range(1000) as t(k);
insert into invoicing_raw.suppliers by name
select printf('%08x%016x', 1400000000, s) as id, 'Supplier ' || s as name, 'SIRET' || s as legal_identifier,
    '1' as _dlt_load_id, 's' || s as _dlt_id
from range($suppliers) as t(s);
create or replace temp table gen_supplier_documents as
select
    k, printf('%08x%016x', 1450000000, k) as id, printf('%08x%016x', 1400000000, k % $suppliers) as supplier_id,
    ['approved', 'approved', 'paid', 'paid', 'toApprove', 'refused', 'disputed']
        [1 + cast(hash(k, 'status') % 7 as integer)] as status,
    cast($today as date) - cast(hash(k, 'issue') % 365 as integer) as issue_day,
    cast((100 + hash(k, 'amount') % 1000000) / 100 as decimal(18, 2)) as amount
from range($supplier_documents) as t(k);
insert into invoicing_raw.supplier_documents by name
select id, supplier_id, status, 'SUP-' || k as reference,
    case when k % 10 = 0 then 'creditNote' else 'invoice' end as type,
    cast(issue_day as timestamptz) as issue_date, cast(issue_day + 45 as timestamptz) as due_date,
    amount, amount as amount_vat, 'EUR' as currency, 'email' as origin,
    case when status = 'paid' then cast(least(issue_day + 40, $today) as timestamptz) end as payment_date,
    '1' as _dlt_load_id, 'sd' || k as _dlt_id
from gen_supplier_documents;
insert into invoicing_raw.supplier_document_events by name
select printf('%08x%016x', 1460000000, k) as id, id as supplier_document_id,
    cast(issue_day as timestamptz) as date, 'create' as action, null as previous_status,
    case when status = 'toApprove' then 'toApprove' else 'approved' end as status, 'email' as origin,
    '1' as _dlt_load_id, 'e' || k as _dlt_id
from gen_supplier_documents;
insert into invoicing_raw.supplier_document_events by name
select printf('%08x%016x', 1470000000, k) as id, id as supplier_document_id,
    cast(least(issue_day + 40, $today) as timestamptz) as date, 'change' as action, 'approved' as previous_status,
    status,
    'email' as origin, '1' as _dlt_load_id, 'e2' || k as _dlt_id
from gen_supplier_documents where status in ('paid', 'refused', 'disputed')
"""


def _run(conn: duckdb.DuckDBPyConnection, script: str, values: dict[str, object]) -> None:
    for statement in filter(str.strip, script.split(";\n")):
        for name, value in values.items():
            statement = statement.replace(f"${name}", str(value))
        conn.execute(statement)


def generate_raw_tables(conn: duckdb.DuckDBPyConnection, documents: int, today: date) -> dict[str, int]:
    """Creates and fills every raw table for `documents` documents; returns {raw table: rows}."""
    values = {
        "documents": documents,
        "customers": max(documents // 20, 10),
        "suppliers": max(documents // 500, 5),
        "supplier_documents": max(documents // 10, 20),
        "today": f"date '{today.isoformat()}'",
    }
    # dates become midnight UTC timestamps, as the API stores them
    conn.execute("set TimeZone = 'UTC'")
    create_raw_tables(conn)
    for script in (_GENERATED_DOCUMENTS, _DOCUMENTS, _PAYMENTS, _CHILDREN, _PARTIES):
        _run(conn, script, values)
    tables = [
        r[0]
        for r in conn.execute(
            "select table_name from information_schema.tables where table_schema = 'invoicing_raw' order by 1"
        ).fetchall()
    ]
    return {t: conn.execute(f'select count(*) from invoicing_raw."{t}"').fetchone()[0] for t in tables}


def main(argv: list[str] | None = None) -> int:
    """Generates, builds, prints figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--warehouse", type=Path, default=None, help="DuckDB file (default: a temporary one)")
    parser.add_argument("--as-of", type=date.fromisoformat, default=date(2026, 1, 31))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.warehouse or Path(tmp) / "bench.duckdb"
        conn = duckdb.connect(str(path))
        started = time.perf_counter()
        counts = generate_raw_tables(conn, args.documents, args.as_of)
        print(f"generated raw tables in {time.perf_counter() - started:.1f} s:")
        for table, rows in counts.items():
            print(f"  invoicing_raw.{table:<30} {rows:>12,}")
        conn.execute("checkpoint")
        print(f"building every model as of {args.as_of} (one transaction):")
        started, cpu_started = time.perf_counter(), time.process_time()
        build_models(
            conn,
            as_of=args.as_of,
            on_built=lambda m, rows, s: print(f"  {m.key:<48} {rows:>12,} rows  {s:6.2f} s", flush=True),
        )
        total, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        # CPU time (all threads) tells how much of the wall time was waiting on other processes
        print(f"total build time: {total:.2f} s wall, {cpu:.2f} s CPU, for {args.documents:,} documents")
        conn.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
