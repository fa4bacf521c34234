"""The two pages of French payment law on the demo portal (the session's seeded warehouse, seed 1): the
Late-payment claims page and the Payment terms (D441-6) page show the marts of the readers' copy (read here with
DuckDB, to the cent); and the D441-6 table itself equals a recomputation in Python from the raw rows the sync
loaded, by the rules of sql/README.md written out by hand (no SQL model involved)."""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
from dashboard_browser import eventually, metric, open_page, parse_eur, screenshot, table_rows

# the model's columns (arrêté of 20 March 2017): "0 jour (indicatif)" (unpaid, not yet due), then the days late
BUCKETS = (("0", None, 0), ("1-30", 1, 30), ("31-60", 31, 60), ("61-90", 61, 90), ("91+", 91, None))


def _rows(path, sql: str, parameters=None) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return connection.execute(sql, parameters or []).fetchall()


def _raw(path, sql: str) -> list[dict]:
    with duckdb.connect(str(path), read_only=True) as connection:
        connection.execute("set TimeZone = 'Europe/Paris'")  # date-only values are Paris calendar dates
        cursor = connection.execute(sql)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _day(value) -> date | None:
    return value.date() if value is not None else None


def _letters(text: str | None) -> str:
    return "".join(ch for ch in (text or "") if ch.isalpha()).lower()


def _expected_table(warehouse, closing: date) -> dict[tuple[str, str], tuple[int, Decimal, Decimal | None]]:
    """(side, column) -> (count, unpaid amount, share of the year %) from invoicing_raw.* only."""
    year_start = date(closing.year - 1, closing.month, closing.day) + timedelta(days=1)
    documents = _raw(warehouse, "select * from invoicing_raw.documents where _deleted_at is null")
    by_id = {d["id"]: d for d in documents}

    def live(doc_id: str) -> str:
        seen = 0
        while by_id.get(doc_id, {}).get("status") == "CANCELED" and by_id[doc_id].get("next_doc") and seen < 50:
            doc_id, seen = by_id[doc_id]["next_doc"], seen + 1
        return doc_id

    settled: dict[str, Decimal] = defaultdict(Decimal)
    for usage in _raw(warehouse, "select * from invoicing_raw.transaction_usages where _deleted_at is null"):
        when = _day(usage["date"] or usage["transaction__date"])
        assert when is not None, usage
        if when <= closing:
            settled[live(usage["invoice_id"])] += abs(usage["amount"])
    late: dict[str, list[tuple[int, Decimal, bool]]] = {"issued": [], "received": []}
    year_total = {"issued": Decimal(0), "received": Decimal(0)}
    for doc in documents:
        emitted = _day(doc["emit_date"])
        if doc["status"] == "CANCELED" or doc["type"] != "INVOICE" or emitted is None or emitted > closing:
            continue
        in_year = year_start <= emitted <= closing
        if doc["subtype"] == "CREDIT_NOTE":
            year_total["issued"] -= abs(doc["amount_vat_net"]) if in_year and doc["status"] != "DRAFT" else 0
            continue
        if doc["subtype"] == "PROFORMA" or doc["status"] not in ("VALIDATED", "PAID"):
            continue
        year_total["issued"] += doc["amount_vat_net"] if in_year else 0
        due = _day(doc["due_date"]) or emitted + timedelta(days=30)
        paid_by_now = doc["status"] == "PAID" and _day(doc["last_update"]) <= closing
        unpaid = Decimal(0) if paid_by_now else doc["amount_vat_net"] - settled[doc["id"]]
        if unpaid > 0:  # not yet due counts too: the 0-day column
            late["issued"].append((max((closing - due).days, 0), unpaid, False))
    for bill in _raw(warehouse, "select * from invoicing_raw.supplier_documents where _deleted_at is null"):
        # the demo writes nothing after its today: every bill's status on the closing date is its current one
        assert _day(bill["last_update"]) <= closing
        issued, due, status = _day(bill["issue_date"]), _day(bill["due_date"]), _letters(bill["status"])
        amount = bill["amount_vat"] if bill["amount_vat"] is not None else bill["amount"] + (bill["vat"] or 0)
        credit_note = _letters(bill["type"]) == "creditnote"
        if status != "refused" and issued is not None and year_start <= issued <= closing:
            year_total["received"] += -abs(amount) if credit_note else abs(amount)
        owed = status in ("approved", "toapprove", "disputed") and (issued or closing) <= closing
        if owed and not credit_note and due is not None and amount > 0:
            late["received"].append((max((closing - due).days, 0), amount, status == "disputed"))

    def share(amount: Decimal, side: str) -> Decimal | None:
        total = year_total[side]
        return (amount * 100 / total).quantize(Decimal("0.01"), ROUND_HALF_UP) if total > 0 else None

    expected = {}
    for side, documents_late in late.items():
        columns = [*BUCKETS, ("total", 1, None)]
        for name, low, high in columns:
            chosen = [a for days, a, disputed in documents_late
                      if not disputed and days >= (low or 0) and (high is None or days <= high)]
            expected[(side, name)] = (len(chosen), sum(chosen, Decimal(0)), share(sum(chosen, Decimal(0)), side))
        # row (B) of the model: every disputed bill, due or not, by number and amount only (no share)
        disputed = [a for _, a, is_disputed in documents_late if is_disputed]
        expected[(side, "disputed (excluded)")] = (len(disputed), sum(disputed, Decimal(0)), None)
    return expected


def test_payment_terms_table_equals_a_recomputation_from_the_raw_rows(dashboard):
    expected = _expected_table(dashboard.warehouse, dashboard.as_of)
    found = {(side, bucket): (count, amount, share) for side, bucket, count, amount, share in _rows(
        dashboard.snapshot,
        "select side, delay_bucket, invoice_count, amount_incl_tax, share_of_year_percent "
        "from marts.payment_terms_report where portal_id = 'default'")}
    assert found == expected
    assert expected[("issued", "total")][0] > 0 and expected[("received",
                                                              "total")][0] > 0, "nothing late: proves little"


def test_payment_terms_page_equals_the_marts(dashboard, page, screenshots):
    open_page(page, dashboard.url, "payment_terms", "payment_terms_received")
    for side in ("issued", "received"):
        truth = [(bucket, str(count), amount) for bucket, count, amount in _rows(
            dashboard.snapshot, "select delay_bucket, invoice_count, amount_incl_tax from marts.payment_terms_report "
            "where side = ? order by bucket_order", [side])]
        shown = table_rows(page, f"payment_terms_{side}", ["delay_bucket", "invoice_count", "amount_incl_tax"])
        assert [(bucket, count, parse_eur(amount)) for bucket, count, amount in shown] == truth
    over_cap = _rows(dashboard.snapshot, "select count(*) from marts.payment_terms_over_cap")[0][0]
    assert len(table_rows(page, "payment_terms_over_cap", ["reference"])) == min(over_cap, 100)
    screenshot(page, screenshots / "payment_terms.png")


def test_late_payment_claims_page_equals_the_marts(dashboard, page, screenshots):
    open_page(page, dashboard.url, "late_payment_claims", "claims_by_customer")
    [(count, indemnities, interest)] = _rows(
        dashboard.snapshot, "select count(*) filter (where flat_indemnity_eur > 0), sum(flat_indemnity_eur), "
        "sum(interest_eur) from marts.late_payment_claims where customer_type = 'business'")
    assert count > 0, "no late invoice of a business customer: the page would prove little"
    assert metric(page, "Late invoices claimed") == str(count)
    assert parse_eur(metric(page, "Recovery indemnities")) == indemnities == 40 * count
    # the newest change of the shipped rate table and the day it was checked (read from the CSV itself) are named
    seeds = Path(__file__).resolve().parents[3] / "invoicing_warehouse/engine/seeds"
    with open(seeds / "ecb_main_refinancing_rates.csv") as rates:
        table = list(csv.DictReader(rates))
    newest = max(table, key=lambda row: row["effective_date"])
    checked = max(row["checked_on"] for row in table if row["checked_on"])
    assert page.get_by_text(f"checked against the ECB's decisions up to {checked}; newest change "
                            f"{newest['effective_date']} ({newest['rate_percent']} %)").is_visible()
    # the claims with a half-year after the check date are counted as "rate table behind", and only then (the
    # demo's report date, 2026-03-16, is in the half-year the shipped table vouches for: none)
    [(behind,)] = _rows(dashboard.snapshot,
                        "select count(*) from marts.late_payment_claims where is_rate_table_behind")
    assert page.get_by_text("Rate table behind:").count() == (1 if behind else 0)
    if behind:
        assert page.get_by_text(f"Rate table behind: {behind} claim(s)").is_visible()
    assert parse_eur(metric(page, "Late-payment interest")) == interest
    assert parse_eur(metric(page, "Total claim")) == indemnities + interest
    # the claims of paid invoices apart from the open ones (issue 42): the split read here from the mart
    [(paid_claim,)] = _rows(dashboard.snapshot,
                            "select sum(flat_indemnity_eur + coalesce(interest_eur, 0)) from marts.late_payment_claims "
                            "where customer_type = 'business' and is_invoice_paid")
    assert paid_claim > 0, "no paid invoice's claim: the split proves little"
    caption = page.get_by_text("invoices already paid").inner_text()
    shown_paid = re.search(r"invoices already paid ([^()]+?) \(", caption)
    assert shown_paid is not None and parse_eur(shown_paid.group(1)) == paid_claim

    # per customer: summed here from the invoice rows, largest claim first
    by_customer = _rows(
        dashboard.snapshot,
        "select customer_id, count(*), sum(flat_indemnity_eur) + coalesce(sum(interest_eur), 0) as claim "
        "from marts.late_payment_claims where customer_type = 'business' "
        "group by customer_id, customer_name order by claim desc, customer_name, customer_id limit 100")
    shown = table_rows(page, "claims_by_customer", ["late_invoice_count", "claim_eur"])
    assert [(int(n), parse_eur(claim)) for n, claim in shown] == [(n, claim) for _, n, claim in by_customer]

    # the reminder letter of the customer chosen by default (the largest claim): its invoices and interest lines
    customer_id = by_customer[0][0]
    invoices = _rows(dashboard.snapshot,
                     "select reference, days_late, interest_amount, coalesce(interest_flag, '') "
                     "from marts.late_payment_claims "
                     "where customer_id = ? order by due_date, reference, invoice_id", [customer_id])
    shown = eventually(lambda: [(r, int(d), parse_eur(i) if i else None, flag) for r, d, i, flag in table_rows(
        page, "claim_invoices", ["reference", "days_late", "interest_amount", "interest_flag"])], invoices)
    assert shown == invoices
    # the lines of the invoices whose interest is known add up to it; a line past the check date has none
    known = {reference for reference, _, interest, _ in invoices if interest is not None}
    lines = table_rows(page, "claim_interest_lines", ["reference", "interest_rate_percent", "interest_amount"])
    assert sum((parse_eur(amount) for reference, _, amount in lines if reference in known), Decimal(0)) == sum(
        i for _, _, i, _ in invoices if i is not None)
    assert {rate.replace(",", ".") for _, rate, _ in lines if rate} <= {f"{r:.2f}" for (r,) in _rows(
        dashboard.snapshot, "select distinct interest_rate_percent from marts.late_payment_interest_periods "
        "where interest_rate_percent is not null")}
    screenshot(page, screenshots / "late_payment_claims.png")
