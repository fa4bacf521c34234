"""The demo portal's headline figures computed from the sandbox's own records, without the warehouse.

The rules are those of sql/ written out by hand (sql/marts/receivables.sql, overdue_customers.sql,
supplier_payables.sql, sql/intermediate/int_aging_buckets.sql), on the report date `today`:
- a receivable is an invoice (type INVOICE, subtype none or DEPOSIT), VALIDATED or PAID, emitted on or before
  today, whose total incl. tax minus the payments and credit notes dated on or before today is above 0;
- overdue = at least one day past its due date (today - due date >= 1); `90+` = more than 90 days past due;
- an overdue customer is a customer not deleted with at least one overdue receivable;
- a payable is a supplier document still owed, i.e. `approved`, `toApprove` or `disputed` (status of today: the
  generator writes nothing later; a received bill is a liability whatever its approval), issued on or before
  today; past due = due date before today.
It also measures how customers paid (settled invoices' payment delay against their due date), the figures
the generator's calibration is checked with (invoicing_sandbox/README.md, "Demo data calibration").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

RECEIVABLE_SUBTYPES = (None, "DEPOSIT")
OWED_SUPPLIER_STATUSES = ("approved", "toApprove", "disputed")
OVER_90_DAYS = 90


@dataclass(frozen=True)
class DemoFigures:
    """The figures of one portal on one report date (amounts in EUR incl. tax)."""

    customers: int  # not deleted
    customers_with_open: int  # customers owed something (the customers of marts.receivables)
    overdue_customers: int
    open_total: Decimal
    open_over_90_days: Decimal
    payables: int  # every owed bill: approved, awaiting approval, disputed
    payables_past_due: int
    approved_payables: int  # the approved ones: those the business has agreed to pay
    approved_payables_past_due: int
    settled_invoices: int  # invoices fully paid on or before today, the base of the two below
    settled_on_time: int  # last payment on or before the due date
    mean_days_late: float  # mean lateness of the settled invoices paid after their due date
    invoiced_last_year: Decimal  # invoices (incl. tax) emitted in the 365 days up to today

    @property
    def dso_days(self) -> float:
        """Days sales outstanding: open receivables / the last year's invoicing per day."""
        return float(self.open_total / (self.invoiced_last_year / 365)) if self.invoiced_last_year else 0.0

    @property
    def overdue_customer_share(self) -> float:
        """Customers with an overdue invoice / customers with an open invoice (the receivables' customers)."""
        return self.overdue_customers / self.customers_with_open if self.customers_with_open else 0.0

    @property
    def overdue_share_of_file(self) -> float:
        """Customers with an overdue invoice / every customer not deleted (dormant ones included)."""
        return self.overdue_customers / self.customers if self.customers else 0.0

    @property
    def over_90_share(self) -> float:
        """Open receivables more than 90 days past due / all open receivables (by amount)."""
        return float(self.open_over_90_days / self.open_total) if self.open_total else 0.0

    @property
    def payables_past_due_share(self) -> float:
        """Approved supplier payables past their due date / approved supplier payables (by count): how late the
        business pays the bills it agreed to, the figure the generator is calibrated on. Disputed bills are past
        due on purpose and bills awaiting approval are not yet payable, so they stay out of this share."""
        return self.approved_payables_past_due / self.approved_payables if self.approved_payables else 0.0

    def summary(self) -> str:
        """One line for a report or an assertion message."""
        return (
            f"overdue customers {self.overdue_customers}/{self.customers_with_open} owing "
            f"({self.overdue_customer_share:.1%}; {self.overdue_share_of_file:.1%} of {self.customers}), "
            f"open {self.open_total} EUR of which 90+ {self.open_over_90_days} ({self.over_90_share:.1%}), "
            f"payables {self.payables} owed, {self.payables_past_due} past due; approved past due "
            f"{self.approved_payables_past_due}/{self.approved_payables} ({self.payables_past_due_share:.1%}), "
            f"settled on time {self.settled_on_time}/{self.settled_invoices}, "
            f"mean lateness of late payments {self.mean_days_late:.1f} days, DSO {self.dso_days:.0f} days"
        )


def _day(text: str | None) -> date | None:
    return date.fromisoformat(text[:10]) if text else None


def _settlements(usages: list[dict], today: date) -> tuple[dict[str, Decimal], dict[str, date]]:
    """Per invoice: what payments and credit notes settled on or before today, and the last such date."""
    settled: dict[str, Decimal] = defaultdict(Decimal)
    last: dict[str, date] = {}
    for usage in usages:
        when = _day(usage["date"])
        if when is None or when > today or not usage.get("invoiceId"):
            continue
        invoice_id = usage["invoiceId"]
        settled[invoice_id] += abs(Decimal(str(usage["amount"])))
        last[invoice_id] = max(when, last.get(invoice_id, when))
    return settled, last


def demo_figures(portal, today: date) -> DemoFigures:
    """The figures of the sandbox `portal` (a `invoicing_sandbox.domain.Portal`) as of `today`."""
    settled, last_settled = _settlements(portal.snapshot("transaction_usages"), today)
    customers = {c["id"]: c for c in portal.snapshot("customers")}
    open_total = over_90 = Decimal(0)
    overdue_customers: set[str] = set()
    owing: set[str] = set()
    settled_count = on_time = 0
    late_days: list[int] = []
    invoiced = Decimal(0)
    for document in portal.snapshot("documents"):
        emitted, due = _day(document["emitDate"]), _day(document["dueDate"])
        if (
            document["type"] != "INVOICE"
            or document["subtype"] not in RECEIVABLE_SUBTYPES
            or document["status"] not in ("VALIDATED", "PAID")
            or emitted is None
            or emitted > today
        ):
            continue
        open_amount = Decimal(str(document["amountVatNet"])) - settled[document["id"]]
        if (today - emitted).days < 365:
            invoiced += Decimal(str(document["amountVatNet"]))
        days_past_due = (today - due).days if due else 0
        if open_amount > 0:
            open_total += open_amount
            owing.add(document["customerId"])
            if days_past_due > OVER_90_DAYS:
                over_90 += open_amount
            if days_past_due >= 1 and not customers[document["customerId"]]["deleted"]:
                overdue_customers.add(document["customerId"])
        elif due is not None and document["id"] in last_settled and document["amountVatNet"] > 0:
            settled_count += 1
            lateness = (last_settled[document["id"]] - due).days
            if lateness <= 0:
                on_time += 1
            else:
                late_days.append(lateness)
    payables = [
        d
        for d in portal.snapshot("supplier_documents")
        if d["status"] in OWED_SUPPLIER_STATUSES and (_day(d["issueDate"]) or today) <= today
    ]
    past_due = [d for d in payables if d["dueDate"] and _day(d["dueDate"]) < today]  # type: ignore[operator]
    approved = [d for d in payables if d["status"] == "approved"]
    return DemoFigures(
        customers=sum(1 for c in customers.values() if not c["deleted"]),
        customers_with_open=len(owing),
        overdue_customers=len(overdue_customers),
        open_total=open_total,
        open_over_90_days=over_90,
        payables=len(payables),
        payables_past_due=len(past_due),
        approved_payables=len(approved),
        approved_payables_past_due=sum(1 for d in past_due if d["status"] == "approved"),
        settled_invoices=settled_count,
        settled_on_time=on_time,
        mean_days_late=sum(late_days) / len(late_days) if late_days else 0.0,
        invoiced_last_year=invoiced,
    )
