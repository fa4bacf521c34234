"""The aged balances, the tables' search, the xlsx and French CSV downloads and the Trends page, in Chromium
against the session's dashboard. The truth is read here with DuckDB: the marts of the readers' copy, and for the
Trends page the models built as of the last month-end by the engine's runner on a copy of that file (what
`invoicing-warehouse models --as-of` builds), not the dashboard's own queries."""

from __future__ import annotations

import csv
import io
import shutil
from datetime import timedelta
from decimal import Decimal

import duckdb
from dashboard_browser import (
    WAIT_S,
    download,
    eventually,
    metric,
    open_page,
    parse_eur,
    screenshot,
    settled,
    table_rows,
)
from openpyxl import load_workbook

from invoicing_warehouse.engine.sql_runner import build_models
from invoicing_warehouse.runs.month_end_trends import month_ends

BUCKETS = ("current", "1-30", "31-60", "61-90", "90+")
CUSTOMER_AMOUNTS = ["open_current", "open_1_30", "open_31_60", "open_61_90", "open_90_plus", "total_open"]
SUPPLIER_AMOUNTS = ["due_current", "due_1_30", "due_31_60", "due_61_90", "due_90_plus", "total_due"]
# the headers of the files made for people (xlsx, French CSV) on the dashboard the harness starts in English
# (invoicing_warehouse/engine/column_labels.py); the plain CSV keeps the marts' names
CUSTOMER_HEADERS = ["Current", "1-30", "31-60", "61-90", "90+", "Total open"]
CENT = Decimal("0.01")


def _rows(dashboard, sql: str, parameters=None) -> list[tuple]:
    with duckdb.connect(str(dashboard.snapshot), read_only=True) as connection:
        return connection.execute(sql, parameters or []).fetchall()


def _download(page, key: str, suffix: str) -> bytes:
    """Clicks the download button of Streamlit key `key`; the downloaded file's bytes (its name ends in `suffix`)."""
    downloaded = download(page, lambda: page.locator(f".st-key-{key} button"))
    assert downloaded.suggested_filename.endswith(suffix)
    return downloaded.path().read_bytes()


def _by_bucket(dashboard, mart: str, amount: str) -> list[Decimal]:
    sums = dict(_rows(dashboard, f"select aging_bucket, sum({amount}) from marts.{mart} group by 1"))
    return [sums.get(bucket, Decimal(0)) for bucket in BUCKETS]


def _section_shot(page, heading: str, path) -> None:
    """A screenshot of the window scrolled to the section `heading` (the page's own shot is cut at 2,000 pixels,
    above the aged balances)."""
    page.get_by_role("heading", name=heading).first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(200)
    page.screenshot(path=str(path))


def test_aged_balance_by_customer_equals_the_marts_and_the_tiles_and_its_downloads(dashboard, page, screenshots):
    open_page(page, dashboard.url, "", "aged_receivables")
    # the truth: every customer with an open invoice, and the invoices' buckets summed from marts.receivables
    customers = _rows(
        dashboard,
        f"select customer_id, coalesce(customer_name, customer_id), customer_reference, {', '.join(CUSTOMER_AMOUNTS)} "
        "from marts.receivables_by_customer where open_invoice_count > 0 "
        "order by total_open desc, 2, customer_id",
    )
    assert len(customers) > 20, "too few customers owing money: the table would prove little"
    shown = table_rows(page, "aged_receivables", ["customer_name", *CUSTOMER_AMOUNTS])
    assert [(name, *map(parse_eur, amounts)) for name, *amounts in shown] == [
        (name, *amounts) for _, name, _, *amounts in customers[:100]]
    buckets = _by_bucket(dashboard, "receivables", "open_amount")
    [totals] = table_rows(page, "aged_receivables_totals", ["row_count", *CUSTOMER_AMOUNTS])
    assert int(totals[0]) == len(customers)
    assert [parse_eur(amount) for amount in totals[1:]] == [*buckets, sum(buckets)]
    # the page's tiles: Total open is every bucket, Overdue every bucket but current
    assert parse_eur(metric(page, "Total open")) == sum(buckets)
    assert parse_eur(metric(page, "Overdue")) == sum(buckets[1:])
    _section_shot(page, "Aged balance by customer", screenshots / "aged_receivables.png")

    # xlsx: every customer (not only the 100 shown), amounts as numbers
    sheet = load_workbook(io.BytesIO(_download(page, "download_xlsx_aged_receivables", ".xlsx"))).worksheets[0]
    header, *rows = list(sheet.iter_rows(values_only=True))
    assert header == ("Customer", "Ref.", *CUSTOMER_HEADERS, "customer_id")
    assert all(sheet.cell(row=2, column=3 + n).data_type == "n" for n in range(6))
    assert [(row[-1], row[0], row[1], *(Decimal(str(v)).quantize(CENT) for v in row[2:8])) for row in rows] == [
        (cid, name, ref, *amounts) for cid, name, ref, *amounts in customers]

    # French CSV: `;`, decimal comma, a BOM
    data = _download(page, "download_csv-fr_aged_receivables", "_fr.csv")
    assert data.startswith(b"\xef\xbb\xbf")
    french = list(csv.DictReader(io.StringIO(data.decode("utf-8-sig")), delimiter=";"))
    assert [(row["customer_id"], *(Decimal(row[c].replace(",", ".")) for c in CUSTOMER_HEADERS)) for row in french] == [
        (cid, *amounts) for cid, _, _, *amounts in customers]
    assert any("," in row["Total open"] for row in french)


def test_a_search_narrows_a_table_to_the_matching_rows_of_the_whole_list(dashboard, page):
    open_page(page, dashboard.url, "", "aged_receivables")
    customers = _rows(
        dashboard,
        "select coalesce(customer_name, customer_id), coalesce(customer_reference, '') from "
        "marts.receivables_by_customer where open_invoice_count > 0 order by total_open desc, 1, customer_id",
    )
    # the last customer of the list (beyond the 100 shown when the list is long), found by a part of its reference
    name, reference = customers[-1]
    needle = reference[-4:].lower()
    expected = sorted(n for n, r in customers if needle in n.lower() or needle in r.lower())
    assert 0 < len(expected) < len(customers)
    page.get_by_label("Search aged receivables", exact=True).fill(needle)
    page.keyboard.press("Enter")
    shown = eventually(lambda: sorted(r[0] for r in table_rows(page, "aged_receivables", ["customer_name"])), expected)
    assert shown == expected and name in shown
    page.get_by_text(f"{len(expected)} of {len(customers)} rows match").wait_for(timeout=WAIT_S * 1000)


def test_aged_balance_by_supplier_equals_the_marts_and_the_tiles(dashboard, page, screenshots):
    open_page(page, dashboard.url, "payables", "aged_payables")
    suppliers = _rows(
        dashboard,
        f"select supplier_id, coalesce(supplier_name, supplier_id), {', '.join(SUPPLIER_AMOUNTS)} "
        "from marts.payables_by_supplier order by total_due desc, 2, supplier_id",
    )
    shown = table_rows(page, "aged_payables", ["supplier_name", *SUPPLIER_AMOUNTS])
    assert [(name, *map(parse_eur, amounts)) for name, *amounts in shown] == [
        (name, *amounts) for _, name, *amounts in suppliers[:100]]
    buckets = _by_bucket(dashboard, "supplier_payables", "amount_due")
    assert any(buckets[1:]), "nothing past due: the buckets would prove little"
    [totals] = table_rows(page, "aged_payables_totals", ["row_count", *SUPPLIER_AMOUNTS])
    assert int(totals[0]) == len(suppliers)
    assert [parse_eur(amount) for amount in totals[1:]] == [*buckets, sum(buckets)]
    assert parse_eur(metric(page, "Total to pay")) == sum(buckets)
    # the aged buckets hold the disputed bills by age; Past due leaves them out (on hold, in Disputed)
    [(disputed_past_due,)] = _rows(dashboard, "select coalesce(sum(amount_due), 0) from marts.supplier_payables "
                                              "where is_overdue and approval_state = 'disputed'")
    assert parse_eur(metric(page, "Past due")) == sum(buckets[1:]) - disputed_past_due
    _section_shot(page, "Aged balance by supplier", screenshots / "aged_payables.png")

    # sorted by supplier name, descending: the whole list's order, its first rows shown
    page.locator(".st-key-sort_aged_payables").click()
    page.keyboard.type("Supplier descending")  # the list opens on typing, filtered
    page.get_by_role("option", name="Sort: Supplier descending").click()
    settled(page)
    by_name = sorted((name for _, name, *_ in suppliers), reverse=True)[:100]
    assert eventually(lambda: [r[0] for r in table_rows(page, "aged_payables", ["supplier_name"])], by_name) == by_name
    sheet = load_workbook(io.BytesIO(_download(page, "download_xlsx_aged_payables", ".xlsx"))).worksheets[0]
    rows = list(sheet.iter_rows(min_row=2, values_only=True))
    assert [(row[-1], *(Decimal(str(v)).quantize(CENT) for v in row[2:8])) for row in rows] == [
        (sid, *amounts) for sid, _, *amounts in suppliers]


def test_trends_last_month_end_equals_the_models_built_as_of_it(dashboard, page, screenshots, tmp_path):
    ends = month_ends(dashboard.as_of)
    # the demo's report date is mid-month: the last point is the end of the month before
    assert dashboard.as_of.day not in (1, 28, 29, 30, 31)
    assert ends[-1] == dashboard.as_of.replace(day=1) - timedelta(days=1)
    assert len(ends) == 12 and all((end + timedelta(days=1)).day == 1 for end in ends)
    assert len({(end.year, end.month) for end in ends}) == 12 and (ends[-1] - ends[0]).days in range(330, 336)
    # the truth: the engine's runner builds every model as of the last month-end on a copy of the readers' file
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(dashboard.snapshot, copy)
    with duckdb.connect(str(copy)) as connection:
        build_models(connection, as_of=ends[-1])
        [(open_total, overdue, dso)] = connection.execute(
            "select open_receivables, overdue_receivables, dso_days from marts.dso").fetchall()
    open_page(page, dashboard.url, "trends", "trends")
    shown = table_rows(page, "trends", ["month_end", "open_receivables", "overdue_receivables", "overdue_share",
                                        "dso_days"])
    assert [row[0] for row in shown] == [end.isoformat() for end in ends]
    _, receivables, overdue_shown, share, dso_shown = shown[-1]
    # French style (the default): a decimal comma in the day count and the share too
    assert "," in dso_shown and "," in share
    assert (parse_eur(receivables), parse_eur(overdue_shown), Decimal(dso_shown.replace(",", "."))) == (
        open_total, overdue, dso)
    assert Decimal(share.replace(",", ".")) == (overdue / open_total * 100).quantize(Decimal("0.1"))
    screenshot(page, screenshots / "trends.png")
