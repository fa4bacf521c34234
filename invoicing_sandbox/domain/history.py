"""The generator's stories: the life of each customer document, as timed steps (supplier bills:
supplier_history.py). Invoices are paid as their customer's payer profile says (payment_behaviour.py).

A story plans its steps on the generator run (`run.at(ts, step)`); steps later than the end of the
history are dropped, which leaves recent documents open, unpaid or awaiting approval, as in real life.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from invoicing_sandbox.domain.documents import PAYMENT_TERM_DAYS
from invoicing_sandbox.domain.money import CENT
from invoicing_sandbox.domain.payment_behaviour import holiday_wait_days, lateness_days

DAY = 86400
METHODS = ("TRANSFER",) * 9 + ("CHECK",) * 4 + ("CREDIT_CARD",) * 5 + ("CASH", "OTHER")


def _lines(run) -> list[dict]:
    rng = run.rng
    lines = []
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4, 5))):
        line = {
            "itemId": rng.choice(run.items)["id"],
            "quantity": rng.choice((1, 1, 1, 2, 3, 5, 10, 0.5, 1.5)),
        }
        if rng.random() < 0.15:
            line["discount"] = rng.choice((5, 10, 15))
        lines.append(line)
    return lines


def _body(run, customer: dict, doc_type: str, **extra) -> dict:
    rng = run.rng
    body = {"customerId": customer["id"], "type": doc_type, "lines": _lines(run)}
    if rng.random() < 0.12:
        body["discount"] = {"type": "PERCENT", "amount": rng.choice((5, 10, 15))}
    elif rng.random() < 0.04:
        body["discount"] = {"type": "AMOUNT", "amount": rng.choice((5, 10, 20))}
    if rng.random() < 0.3:
        body["title"] = rng.choice(
            ("Prestation du mois", "Commande", "Projet", "Intervention", "Fournitures")
        )
    if rng.random() < 0.2:
        body["referenceInternal"] = f"BC-{rng.randint(1, 99999):05d}"
    body.update(extra)
    return body


class _Story:
    """One document's life; `doc` holds the current version's id once created."""

    def __init__(self, run, customer: dict) -> None:
        self.run, self.customer, self.portal, self.doc = run, customer, run.portal, None

    def record(self) -> dict:
        return self.portal.record("documents", self.doc)

    def create(self, doc_type: str, validated: bool = False, **extra) -> None:
        body = _body(self.run, self.customer, doc_type, **extra)
        if validated:
            body["status"] = "VALIDATED"
        self.doc = self.portal._create_document(body)["id"]

    def validate(self) -> None:
        self.portal._validate(self.record())

    def pay(self, share: float | None = None) -> None:
        document = self.record()
        if self.portal.remaining(document) <= 0:  # settled meanwhile (a credit note, an overpayment used)
            return
        body: dict = {"method": self.run.rng.choice(METHODS)}
        if share is not None:
            body["amount"] = max(0.01, round(float(self.portal.remaining(document)) * share, 2))
        self.portal._pay(document, body)

    def overpay(self, holder: dict, extra: float) -> None:
        document = self.record()
        body = {"method": "TRANSFER", "amount": round(float(self.portal.remaining(document)) + extra, 2)}
        holder["id"] = self.portal._pay(document, body)["id"]

    def use_overpayment(self, holder: dict) -> None:
        payment = self.portal.stores["transactions"].records.get(holder.get("id") or "")
        if payment is not None and self.portal.unused(payment) > 0 and self.portal.remaining(self.record()) > 0:
            self.portal._pay(self.record(), {"transactionId": holder["id"]})

    def refund_unused(self, holder: dict) -> None:
        """Pays back what is left unused of an overpayment (a refund, api-facts)."""
        payment = self.portal.stores["transactions"].records.get(holder.get("id") or "")
        if payment is not None and self.portal.unused(payment) > 0:
            self.portal._refund(payment, self.portal.unused(payment))

    def refund_credit(self, share: float) -> None:
        """Pays back `share` of what is left of this credit note to the customer."""
        credit_note = self.record()
        left = self.portal.remaining(credit_note)
        if left > 0:
            self.portal._refund(credit_note, max(Decimal("0.01"), (left * Decimal(str(share))).quantize(CENT)))

    def remind(self) -> None:
        if self.customer["email"]:
            self.portal._send_message(self.record(), None)

    def version(self) -> None:
        """A corrected version: one more unit on the first line, the other lines unchanged."""
        document = self.record()
        lines = [
            {
                "itemId": line["itemId"],
                "name": line["name"],
                "price": float(line["price"]),
                "quantity": float(line["quantity"]) + (1 if position == 0 else 0),
                "vat": float(line["vat"]),
                "discount": float(line["discount"]),
            }
            for position, line in enumerate(document["lines"])
        ]
        changes = {"title": "Version corrigée", "lines": lines} if lines else {"title": "Version corrigée"}
        self.doc = self.portal._new_version(document, changes)["id"]

    def credit(self, share: float) -> None:
        invoice = self.record()
        amount = max(1.0, round(float(invoice["amountNet"]) * share, 2))
        self.portal._create_document(
            {
                "customerId": self.customer["id"],
                "type": "INVOICE",
                "subtype": "CREDIT_NOTE",
                "invoiceId": invoice["id"],
                "status": "VALIDATED",
                "lines": [{"name": "Avoir commercial", "price": amount, "quantity": 1, "vat": 20}],
            }
        )


def _settle_moment(run, t_valid: int, due: int, late: int) -> int:
    """When an invoice due at `due` and paid `late` days after it is settled: a working-hours moment, at
    least three days after its validation (a payment in August waits for the holidays' end)."""
    day = due + late * DAY
    day += holiday_wait_days(run.rng, day) * DAY
    return max(run.moment(day, day + DAY // 2), t_valid + 3 * DAY)


def _reminders(run, story: _Story, due: int, settle: int | None) -> None:
    """A friendly reminder before the due date for some, then RELAUNCH1 and RELAUNCH2 while unpaid."""
    rng = run.rng
    if rng.random() < 0.2:
        before = run.later(due, -7, -1)
        if settle is None or before < settle:
            run.at(before, story.remind)
    if rng.random() < 0.15:  # not every late invoice gets a reminder
        return
    first = run.later(due, 2, 10)
    if settle is None or first < settle:
        run.at(first, story.remind)
        second = run.later(first, 12, 25)
        if settle is None or second < settle:
            run.at(second, story.remind)


def _invoice_life(run, story: _Story, t_valid: int, due: int) -> None:
    """A validated invoice (due at `due`) settled as its customer's payer profile says, with corrections,
    credit notes, part payments and overpayments along the way; `None` lateness leaves it unpaid."""
    rng = run.rng
    if rng.random() < 0.3:
        run.at(t_valid, story.remind)  # sent to the customer by e-mail on validation
    late = lateness_days(rng, story.customer["payer"])
    settle = None if late is None else _settle_moment(run, t_valid, due, late)
    _reminders(run, story, due, settle)
    before_settle = (settle if settle is not None else due) - DAY  # corrections come before the payment
    r = rng.random()
    if r < 0.06:
        run.at(run.moment(t_valid + DAY, min(t_valid + 5 * DAY, before_settle)), story.version)
    elif r < 0.12:
        share = rng.choice((0.1, 0.2, 0.3))
        run.at(run.moment(t_valid + DAY, min(t_valid + 20 * DAY, before_settle)), lambda: story.credit(share))
    elif r < 0.17 and settle is not None:
        holder: dict = {}
        run.at(settle, lambda: story.overpay(holder, rng.choice((10, 50, 120, 300))))
        second = _Story(run, story.customer)
        created = run.later(settle, 5, 40)
        second_due = _due(created, story.customer)
        run.at(created, lambda: second.create("INVOICE", validated=True, dueDate=_day(second_due)))
        run.at(run.later(created, 0.5, 3), lambda: second.use_overpayment(holder))
        if run.refunds and run.refund_rng.random() < 0.7:  # the excess is paid back before it can be used
            run.at(settle + run.refund_rng.randint(2, 4) * DAY, lambda: story.refund_unused(holder))
        _invoice_life(run, second, created, second_due)
        return
    elif r < 0.27 and settle is not None:
        first = run.moment(t_valid + DAY, max(t_valid + DAY, settle - 10 * DAY))
        run.at(first, lambda: story.pay(share=rng.choice((0.3, 0.4, 0.5))))
    if settle is not None:
        run.at(settle, story.pay)


def _due(created: int, customer: dict) -> int:
    """The due date of an invoice dated on the day of `created`, at the customer's payment terms."""
    return created - created % DAY + customer["terms"] * DAY


def _quotation_life(run, story: _Story, t_valid: int) -> None:
    rng = run.rng
    r = rng.random()
    if r < 0.2:
        if rng.random() < 0.5:
            run.at(t_valid, story.remind)
    elif r < 0.5:
        accepted = run.later(t_valid, 2, 20)
        run.at(accepted, lambda: story.portal._quotation_answer(story.record(), True))
        invoice = _Story(run, story.customer)
        converted = run.later(accepted, 1, 10)

        def convert() -> None:
            invoice.doc = story.portal._convert(story.record())["id"]

        run.at(converted, convert)
        validated = run.later(converted, 0, 3)
        run.at(validated, invoice.validate)
        _invoice_life(run, invoice, validated, converted - converted % DAY + PAYMENT_TERM_DAYS * DAY)
    elif r < 0.62:
        run.at(run.later(t_valid, 2, 20), lambda: story.portal._quotation_answer(story.record(), True))
    elif r < 0.85:
        run.at(run.later(t_valid, 2, 30), lambda: story.portal._quotation_answer(story.record(), False))
    else:
        changed = run.later(t_valid, 1, 10)
        run.at(changed, story.version)
        if rng.random() < 0.5:
            run.at(run.later(changed, 2, 20), lambda: story.portal._quotation_answer(story.record(), True))


def _month_starts(low: int, high: int) -> list[int]:
    first = datetime.fromtimestamp(low, UTC).replace(day=1, hour=6, minute=0, second=0)
    starts: list[int] = []
    while True:
        first = (first.replace(day=28) + timedelta(days=4)).replace(day=1)
        ts = int(first.timestamp())
        if ts > high:
            return starts
        starts.append(ts)


def plan_documents(run) -> None:
    """About `run.scale` documents: invoices, quotations, proformas, deposits, credit notes, versions."""
    rng = run.rng
    active = [customer for customer in run.customers if not customer["dormant"]] or run.customers
    for _ in range(int(run.scale * 0.8)):
        customer = rng.choice(active)
        story = _Story(run, customer)
        kind = rng.random()
        created = run.seasonal_moment(customer["created"] + 3600, run.end_ts)
        if kind < 0.55:
            months = _month_starts(customer["created"], run.end_ts) if rng.random() < 0.12 else []
            if months:  # recurring invoices: generated and validated at 06:00:00 on the 1st, many per second
                t_valid = rng.choice(months)
                due = _due(t_valid, customer)
                run.at(t_valid, lambda s=story, d=due: s.create("INVOICE", validated=True, dueDate=_day(d)))
                _invoice_life(run, story, t_valid, due)
                continue
            due = _due(created, customer)
            run.at(created, lambda s=story, d=due: s.create("INVOICE", dueDate=_day(d)))
            if rng.random() < 0.04:
                continue  # stays a draft
            t_valid = run.later(created, 0, 2)
            run.at(t_valid, story.validate)
            _invoice_life(run, story, t_valid, due)
        elif kind < 0.85:
            run.at(created, lambda s=story: s.create("QUOTATION"))
            if rng.random() < 0.1:
                continue
            t_valid = run.later(created, 0, 2)
            run.at(t_valid, story.validate)
            _quotation_life(run, story, t_valid)
        else:
            subtype = rng.choice(("PROFORMA", "PROFORMA", "DEPOSIT", "DEPOSIT", "CREDIT_NOTE"))
            run.at(created, lambda s=story, k=subtype: s.create("INVOICE", validated=True, subtype=k))
            if subtype == "CREDIT_NOTE" and run.refunds and run.refund_rng.random() < 0.7:
                share = run.refund_rng.choice((0.5, 1.0, 1.0))
                run.at(created + run.refund_rng.randint(3, 40) * DAY, lambda s=story, f=share: s.refund_credit(f))
            if subtype == "DEPOSIT":  # a deposit is paid before the work starts, a few weeks at most
                run.at(
                    run.later(created, 1, 20) if rng.random() < 0.9 else run.later(created, 20, 45), story.pay
                )
    _in_collection(run, active)
    if run.bulk:
        moment = run.end_ts - 3600
        for _ in range(run.bulk):
            story = _Story(run, rng.choice(active))
            run.at(moment, lambda s=story: s.create("INVOICE"))


def _in_collection(run, active: list[dict]) -> None:
    """One invoice per 1,000 documents (at least one) that a chronic late payer has not paid 2-8 weeks after
    its due date despite two reminders: the collection case in progress every business has, so that even a
    small portal has an overdue customer on any day."""
    rng = run.rng
    chronic = [customer for customer in active if customer["payer"] == "chronic"]
    rng.shuffle(chronic)
    candidates = chronic + [customer for customer in active if customer["payer"] != "chronic"]
    for _ in range(max(1, run.scale // 1000)):
        days_late = rng.randint(14, 56)
        for customer in candidates:  # the first chronic late payer that was a customer back then
            created = run.end_ts - (customer["terms"] + days_late) * DAY + rng.randint(8, 18) * 3600
            if created > customer["created"] + 3600:
                break
        else:
            return
        story = _Story(run, customer)
        due = _due(created, customer)
        run.at(created, lambda s=story, d=due: s.create("INVOICE", validated=True, dueDate=_day(d)))
        first = run.later(due, 2, 6)
        run.at(first, story.remind)
        run.at(run.later(first, 7, 10), story.remind)
        candidates = candidates[1:] + candidates[:1]  # the next case is another customer's


def _day(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT00:00:00Z")
