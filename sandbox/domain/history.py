"""The generator's stories: the life of each document and supplier document, as timed steps.

A story plans its steps on the generator run (`run.at(ts, step)`); steps later than the end of the
history are dropped, which leaves recent documents open, unpaid or awaiting approval, as in real life.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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
        body: dict = {"method": self.run.rng.choice(METHODS)}
        if share is not None:
            body["amount"] = max(0.01, round(float(self.portal.remaining(document)) * share, 2))
        self.portal._pay(document, body)

    def overpay(self, holder: dict, extra: float) -> None:
        document = self.record()
        body = {"method": "TRANSFER", "amount": round(float(self.portal.remaining(document)) + extra, 2)}
        holder["id"] = self.portal._pay(document, body)["id"]

    def use_overpayment(self, holder: dict) -> None:
        if holder.get("id"):
            self.portal._pay(self.record(), {"transactionId": holder["id"]})

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


def _invoice_life(run, story: _Story, t_valid: int) -> None:
    rng = run.rng
    due = t_valid - t_valid % DAY + 30 * DAY
    if rng.random() < 0.3:
        run.at(t_valid, story.remind)
    r = rng.random()
    if r < 0.45:
        run.at(run.later(t_valid, 3, 45), story.pay)
    elif r < 0.55:
        first = run.later(t_valid, 5, 25)
        run.at(first, lambda: story.pay(share=rng.choice((0.3, 0.4, 0.5))))
        run.at(run.later(first, 10, 40), story.pay)
    elif r < 0.63:
        run.at(run.later(t_valid, 5, 40), lambda: story.pay(share=rng.choice((0.2, 0.5, 0.6))))
    elif r < 0.78:
        run.at(run.later(due, 1, 10), story.remind)
        if rng.random() < 0.5:
            run.at(run.later(due, 15, 30), story.remind)
    elif r < 0.83:
        holder: dict = {}
        paid = run.later(t_valid, 5, 30)
        run.at(paid, lambda: story.overpay(holder, rng.choice((10, 50, 120, 300))))
        second = _Story(run, story.customer)
        created = run.later(paid, 5, 40)
        run.at(created, lambda: second.create("INVOICE", validated=True))
        run.at(run.later(created, 1, 10), lambda: second.use_overpayment(holder))
    elif r < 0.89:
        changed = run.later(t_valid, 1, 5)
        run.at(changed, story.version)
        run.at(run.later(changed, 5, 40), story.pay)
    elif r < 0.95:
        credited = run.later(t_valid, 3, 20)
        run.at(credited, lambda: story.credit(rng.choice((0.1, 0.2, 0.3))))
        if rng.random() < 0.6:
            run.at(run.later(credited, 5, 30), story.pay)


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
        _invoice_life(run, invoice, validated)
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
        if kind < 0.55:
            months = _month_starts(customer["created"], run.end_ts) if rng.random() < 0.12 else []
            if months:  # recurring invoices: generated and validated at 06:00:00 on the 1st, many per second
                t_valid = rng.choice(months)
                run.at(t_valid, lambda s=story: s.create("INVOICE", validated=True))
                _invoice_life(run, story, t_valid)
                continue
            created = run.moment(customer["created"] + 3600, run.end_ts)
            run.at(created, lambda s=story: s.create("INVOICE"))
            if rng.random() < 0.04:
                continue  # stays a draft
            t_valid = run.later(created, 0, 2)
            run.at(t_valid, story.validate)
            _invoice_life(run, story, t_valid)
        elif kind < 0.85:
            created = run.moment(customer["created"] + 3600, run.end_ts)
            run.at(created, lambda s=story: s.create("QUOTATION"))
            if rng.random() < 0.1:
                continue
            t_valid = run.later(created, 0, 2)
            run.at(t_valid, story.validate)
            _quotation_life(run, story, t_valid)
        else:
            created = run.moment(customer["created"] + 3600, run.end_ts)
            subtype = rng.choice(("PROFORMA", "PROFORMA", "DEPOSIT", "DEPOSIT", "CREDIT_NOTE"))
            run.at(created, lambda s=story, k=subtype: s.create("INVOICE", validated=True, subtype=k))
            if subtype == "DEPOSIT" and rng.random() < 0.7:
                run.at(run.later(created, 2, 30), story.pay)
    if run.bulk:
        moment = run.end_ts - 3600
        for _ in range(run.bulk):
            story = _Story(run, rng.choice(active))
            run.at(moment, lambda s=story: s.create("INVOICE"))


def plan_supplier_documents(run) -> None:
    """About scale/4 supplier documents in every status, with their event history."""
    rng = run.rng
    portal = run.portal
    for _ in range(run.scale // 4):
        supplier = rng.choice(run.suppliers)
        received = run.moment(supplier["created"] + 3600, run.end_ts)
        amount = round(rng.uniform(40, 6000), 2)
        issue_day = received - received % DAY - rng.randint(0, 5) * DAY
        body = {
            "reference": f"FA-{rng.randint(1, 999999):06d}",
            "type": "creditNote" if rng.random() < 0.08 else "invoice",
            "issueDate": _day(issue_day),
            "dueDate": _day(issue_day + rng.choice((30, 45, 60)) * DAY),
            "amount": amount,
            "vat": round(amount * 0.2, 2),
            "tags": rng.sample(("à vérifier", "urgent", "récurrent"), rng.randint(0, 2)),
        }
        holder: dict = {}
        origin = rng.random()
        if origin < 0.3:

            def upload_and_create(h=holder, s=supplier, b=body) -> None:
                key = portal._upload_asset("facture.pdf", "application/pdf", run.pdf)["assetKey"]
                h["id"] = portal._create_supplier_document(dict(b, supplierId=s["id"], fileKey=key))["id"]

            run.at(received, upload_and_create)
        else:
            source = "email" if origin < 0.85 else "eInvoicing"

            def receive(h=holder, s=supplier, b=body, o=source) -> None:
                h["id"] = portal._create_supplier_document(dict(b, supplierId=s["id"]), o, "toApprove", o)[
                    "id"
                ]

            run.at(received, receive)

        moves = _supplier_moves(rng, origin < 0.3)
        moment = received
        for action in moves:
            moment = run.later(moment, 1, 25)
            run.at(
                moment,
                lambda h=holder, a=action: portal._change_status(
                    portal.record("supplier_documents", h["id"]), {"action": a}, "application"
                ),
            )


def _supplier_moves(rng, approved: bool) -> list[str]:
    r = rng.random()
    moves = [] if approved else (["approve"] if r < 0.7 else ["dispute"] if r < 0.85 else ["refuse"])
    if moves == ["dispute"] and rng.random() < 0.6:
        moves.append("approve")
    if moves == ["refuse"] and rng.random() < 0.2:
        moves.append("approve")
    if (approved or moves[-1] == "approve") and rng.random() < 0.75:
        moves.append("declarePayment")
    return moves


def _day(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT00:00:00Z")
