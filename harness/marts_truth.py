"""Compares the marts with the API's own figures: each customer's `dueAmount` and the customers
`GET /customers?documentStatus=LATE` lists (read from the sandbox portal, the same functions its
routes call, so no injected fault can disturb the reference)."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

import duckdb

from harness.warehouse_truth import Comparison
from invoicing_warehouse.engine.names import DEFAULT_PORTAL

MAX_PAGES = 10_000


def api_late_customer_ids(sb) -> set[str]:
    """Every id of GET /customers?documentStatus=LATE, paged to the end."""
    page_size = int(sb.config.max_page_size)
    ids: set[str] = set()
    for page in range(MAX_PAGES):
        params = {
            "documentStatus": "LATE",
            "orderBy": "name",
            "order": "1",
            "limit": str(page_size),
            "skip": str(page * page_size),
        }
        records = sb.portal.list("customers", params)
        ids.update(record["id"] for record in records)
        if not records:
            return ids
    raise AssertionError("the LATE list did not end within MAX_PAGES pages")


def compare_marts(connection: duckdb.DuckDBPyConnection, sb, portal_id: str = DEFAULT_PORTAL) -> Comparison:
    """`marts.receivables_by_customer.total_open` of the portal `portal_id` against `dueAmount` of every
    customer of the sandbox `sb` (0 when the mart has no row), and `marts.overdue_customers` against the
    API's LATE list."""
    result = Comparison(records_by_table={"marts.receivables_by_customer": 0, "marts.overdue_customers": 0})
    open_totals = dict(
        connection.execute("select customer_id, total_open from marts.receivables_by_customer where portal_id = ?",
                           [portal_id]).fetchall()
    )
    customers = sb.portal.snapshot("customers")
    known = {customer["id"] for customer in customers}
    for customer in customers:
        result.records_compared += 1
        result.fields_compared += 1
        result.records_by_table["marts.receivables_by_customer"] += 1
        expected = Decimal(str(customer["dueAmount"]))
        actual = Decimal(str(open_totals.get(customer["id"], 0)))
        if expected != actual:
            result.mismatches.append(
                f"marts.receivables_by_customer[{customer['id']}].total_open: "
                f"API dueAmount {expected}, mart {actual}"
            )
    for customer_id in set(open_totals) - known:
        result.mismatches.append(
            f"marts.receivables_by_customer[{customer_id}]: row for a customer the API does not know"
        )
    late_api = api_late_customer_ids(sb)
    late_mart = {
        row[0] for row in connection.execute("select customer_id from marts.overdue_customers where portal_id = ?",
                                             [portal_id]).fetchall()
    }
    result.records_compared += len(late_api | late_mart)
    result.fields_compared += len(late_api | late_mart)
    result.records_by_table["marts.overdue_customers"] += len(late_api | late_mart)
    for customer_id in sorted(late_api - late_mart):
        result.mismatches.append(
            f"marts.overdue_customers[{customer_id}]: listed LATE by the API, absent from the mart"
        )
    for customer_id in sorted(late_mart - late_api):
        result.mismatches.append(f"marts.overdue_customers[{customer_id}]: in the mart, not LATE for the API")
    return result


DSO_WINDOW_DAYS = 90
OUTLOOK_WEEKS = 8


def _day(value: str | None) -> date | None:
    # the API's date-only values are midnight UTC: the first ten characters are the calendar date
    return date.fromisoformat(value[:10]) if value else None


def _emitted(record: dict) -> date:
    return date.fromisoformat(record["emitDate"][:10])


def _outlook_period(due: date | None, today: date) -> int:
    """0 past due, 1..8 the calendar week (monday first) counted from today's, 9 later or undated."""
    if due is None:
        return OUTLOOK_WEEKS + 1
    if due < today:
        return 0
    week = (due - (today - timedelta(days=today.weekday()))).days // 7 + 1
    return week if week <= OUTLOOK_WEEKS else OUTLOOK_WEEKS + 1


# supplier-document statuses of a bill still owed (a received bill is a liability until paid or refused),
# with the approval state the marts show for each
OWED_SUPPLIER_STATUSES = {"approved": "approved", "toApprove": "awaiting_approval", "disputed": "disputed"}


def sandbox_payables(sb, today: date) -> dict[str, tuple[str, str, Decimal, date | None]]:
    """From the sandbox's own records on `today`: each supplier document owed (approved, awaiting approval or
    disputed, issued by today) -> (supplier id, approval state, amount due incl. tax, due date); a credit note
    counts negative. The sandbox stores its amounts positive whatever its contract profile serves. A bill (not a
    credit note) without a due date is due 30 days after its issue date (C. com. L441-10 I, the legal default)."""
    owed = {}
    for s in sb.portal.snapshot("supplier_documents"):
        if s["status"] in OWED_SUPPLIER_STATUSES and (_day(s["issueDate"]) or today) <= today:
            credit_note = s["type"] == "creditNote"
            amount = Decimal(str(s["amountVat"])) * (-1 if credit_note else 1)
            due, issued = _day(s["dueDate"]), _day(s["issueDate"])
            if due is None and not credit_note and issued is not None:
                due = issued + timedelta(days=LEGAL_PAYMENT_TERM_DAYS)
            owed[s["id"]] = (s["supplierId"], OWED_SUPPLIER_STATUSES[s["status"]], amount, due)
    return owed


def _unapplied_credit_notes(sb, today: date) -> Decimal:
    """What the live credit notes emitted by today still hold: their total less their usages dated by today."""
    credit_notes = {
        d["id"]: Decimal(str(d["amountVatNet"]))
        for d in sb.portal.snapshot("documents")
        if d["subtype"] == "CREDIT_NOTE" and d["status"] not in ("DRAFT", "CANCELED") and _emitted(d) <= today
    }
    used = sum(
        (Decimal(str(u["amount"])) for u in sb.portal.snapshot("transaction_usages")
         if u["type"] == "CREDIT_NOTE" and u["creditNoteId"] in credit_notes
         and date.fromisoformat(u["date"][:10]) <= today),
        Decimal(0),
    )
    return sum(credit_notes.values(), Decimal(0)) - used


def sandbox_dso_and_outlook(sb, today: date) -> tuple[dict, dict[int, tuple[Decimal, Decimal]]]:
    """From the sandbox's own records on `today` (its clock's date): the DSO figures ({open_receivables,
    unapplied_credit_notes, invoiced_last_90_days, credit_notes_last_90_days, dso_days}, the headline DSO by the
    gross sales method: open receivables / invoices of the 90 days x 90) and, per cash-outlook period (0 past due,
    1-8 weeks, 9 later), (open receivables by due date, expected outflows: the owed supplier bills but the
    disputed ones, which are on hold), independently of the SQL."""
    invoices = [
        d for d in sb.portal.snapshot("documents")
        if d["type"] == "INVOICE" and d["subtype"] in (None, "DEPOSIT") and d["status"] in ("VALIDATED", "PAID")
        and d["emitDate"] and _emitted(d) <= today
    ]
    window_start = today - timedelta(days=DSO_WINDOW_DAYS - 1)
    invoiced = sum(
        (Decimal(str(d["amountVatNet"])) for d in invoices if window_start <= _emitted(d) <= today),
        Decimal(0),
    )
    credited = sum(
        (Decimal(str(d["amountVatNet"])) for d in sb.portal.snapshot("documents")
         if d["subtype"] == "CREDIT_NOTE" and d["status"] not in ("DRAFT", "CANCELED")
         and window_start <= _emitted(d) <= today),
        Decimal(0),
    )
    periods = {index: [Decimal(0), Decimal(0)] for index in range(OUTLOOK_WEEKS + 2)}
    open_total = Decimal(0)
    for d in invoices:
        # PAID closes an invoice: a residual its usages leave (a write-off) is not owed
        remaining = Decimal(str(sb.portal.remaining(sb.portal.record("documents", d["id"]))))
        if remaining > 0 and d["status"] == "VALIDATED":
            open_total += remaining
            periods[_outlook_period(_day(d["dueDate"]), today)][0] += remaining
    for _, state, amount, due in sandbox_payables(sb, today).values():
        if state != "disputed":
            periods[_outlook_period(due, today)][1] += amount
    unapplied = _unapplied_credit_notes(sb, today)
    dso = (
        (open_total / invoiced * DSO_WINDOW_DAYS).quantize(Decimal("0.1"), ROUND_HALF_UP) if invoiced > 0 else None
    )
    figures = {
        "open_receivables": open_total,
        "unapplied_credit_notes": unapplied,
        "invoiced_last_90_days": invoiced,
        "credit_notes_last_90_days": credited,
        "dso_days": dso,
    }
    return figures, {index: (inflow, outflow) for index, (inflow, outflow) in periods.items()}


LEGAL_PAYMENT_TERM_DAYS = 30  # C. com. L441-10: payment falls due 30 days after delivery when none is agreed
AGING_STARTS = (("90+", 91), ("61-90", 61), ("31-60", 31), ("1-30", 1))


def aging_bucket(days_past_due: int | None) -> str:
    """The aging bucket of an amount `days_past_due` days past due (None: no due date, not yet due)."""
    for bucket, start in AGING_STARTS:
        if days_past_due is not None and days_past_due >= start:
            return bucket
    return "current"


def sandbox_open_invoices(sb, today: date, due_dates_served: bool = True) -> dict[str, dict]:
    """From the sandbox's own records on `today`: every invoice still owed (VALIDATED, emitted by today,
    `remaining` > 0), by id: customer_id, open_amount, due_date, is_due_date_assumed, aging_bucket,
    is_overdue and the cash-outlook period. `due_dates_served` False: the server sent no `dueDate`, so the due
    date is the legal default, emitDate + 30 days, whatever the sandbox holds."""
    invoices: dict[str, dict] = {}
    for d in sb.portal.snapshot("documents"):
        if not (d["type"] == "INVOICE" and d["subtype"] in (None, "DEPOSIT") and d["status"] == "VALIDATED"):
            continue
        if not d["emitDate"] or _emitted(d) > today:
            continue
        remaining = Decimal(str(sb.portal.remaining(sb.portal.record("documents", d["id"]))))
        if remaining <= 0:
            continue
        due = _day(d["dueDate"]) if due_dates_served else _emitted(d) + timedelta(days=LEGAL_PAYMENT_TERM_DAYS)
        days_past_due = (today - due).days if due else None
        invoices[d["id"]] = {
            "customer_id": d["customerId"],
            "open_amount": remaining,
            "due_date": due,
            "is_due_date_assumed": not due_dates_served,
            "aging_bucket": aging_bucket(days_past_due),
            "is_overdue": days_past_due is not None and days_past_due > 0,
            "outlook_period": _outlook_period(due, today),
        }
    return invoices
def sandbox_unapplied(sb) -> dict[str, tuple[Decimal, Decimal]]:
    """From the sandbox's own records, today: customer id -> (unapplied payments, unapplied credit notes),
    for every customer where either is not zero. A payment's unapplied part is its `amount - usedAmount -
    refundedAmount` (refunds paid back out of it included); a credit note's is its `remaining` (applied to
    invoices or paid back). Independent of the SQL and of what the profile serves."""
    figures: dict[str, list[Decimal]] = {}
    for t in sb.portal.snapshot("transactions"):
        amount = Decimal(str(t["amount"]))
        if amount > 0:
            left = amount - Decimal(str(t["usedAmount"])) - Decimal(str(t["refundedAmount"]))
            figures.setdefault(t["customerId"], [Decimal(0), Decimal(0)])[0] += left
    for d in sb.portal.snapshot("documents"):
        if d["subtype"] == "CREDIT_NOTE" and d["status"] not in ("DRAFT", "CANCELED"):
            figures.setdefault(d["customerId"], [Decimal(0), Decimal(0)])[1] += Decimal(str(d["remaining"]))
    return {cid: (pay, credit) for cid, (pay, credit) in figures.items() if pay or credit}
