"""The generator's supplier bills: received, approved (a few disputed or refused), paid around their due date.

A story plans its steps on the generator run (`run.at(ts, step)`); steps later than the end of the history
are dropped, which leaves the recent bills to approve or to pay, as in real life. Timing and shares:
invoicing_sandbox/domain/payment_behaviour.py (calibration) and invoicing_sandbox/README.md ("Demo data calibration").
"""

from __future__ import annotations

from datetime import UTC, datetime

from invoicing_sandbox.domain.payment_behaviour import supplier_payment_offset

DAY = 86400
# the fate of a bill, in exact shares of all bills (a shuffled deck: every fate shows at small scales too):
# uploaded by the business (approved at once), received and approved, a few disputed (still open, settled
# and approved, or refused) and a few refused (one of them approved after all, once corrected); the
# `recent` ones, uploaded in the last two weeks, are still to pay at the end, and the `held` ones, due in the
# last weeks, are paid a month late (the business too pays late sometimes): a small portal has payables,
# some of them past due, too
FATES = (
    ("uploaded", 0.30),
    ("recent", 0.01),
    ("held", 0.006),
    ("disputed", 0.022),
    ("disputed-approved", 0.02),
    ("disputed-refused", 0.014),
    ("refused", 0.022),
    ("refused-approved", 0.006),
)


def plan_supplier_documents(run) -> None:
    """About scale/4 supplier documents in every status, with their event history."""
    rng = run.rng
    portal = run.portal
    count = run.scale // 4
    deck = [fate for fate, share in FATES for _ in range(max(1, round(share * count)))]
    deck = deck[:count] + ["approved"] * (count - len(deck))
    rng.shuffle(deck)
    for fate in deck:
        supplier = rng.choice(run.suppliers)
        if fate == "recent":
            # at most 3 days before the end: a weekend moves it to the Monday, still inside the history
            received = run.moment(
                max(supplier["created"] + 3600, run.end_ts - 14 * DAY), run.end_ts - 3 * DAY
            )
        elif fate == "held":  # due 3-25 days before the end (terms after its issue, 0-5 days before this)
            terms = supplier["terms"] * DAY
            received = run.moment(run.end_ts - terms - 20 * DAY, run.end_ts - terms - 3 * DAY)
            received = max(received, supplier["created"] + 3600)
        else:
            received = run.seasonal_moment(supplier["created"] + 3600, run.end_ts)
        amount = round(rng.uniform(40, 6000), 2)
        issue_day = received - received % DAY - rng.randint(0, 5) * DAY
        due = issue_day + supplier["terms"] * DAY
        body = {
            "reference": f"FA-{rng.randint(1, 999999):06d}",
            "type": "creditNote" if rng.random() < 0.08 else "invoice",
            "issueDate": _day(issue_day),
            "dueDate": _day(due),
            "amount": amount,
            "vat": round(amount * 0.2, 2),
            "tags": rng.sample(("à vérifier", "urgent", "récurrent"), rng.randint(0, 2)),
        }
        holder: dict = {}
        if fate in ("uploaded", "recent"):  # uploaded by the business: approved at once

            def upload_and_create(h=holder, s=supplier, b=body) -> None:
                key = portal._upload_asset("facture.pdf", "application/pdf", run.pdf)["assetKey"]
                h["id"] = portal._create_supplier_document(dict(b, supplierId=s["id"], fileKey=key))["id"]

            run.at(received, upload_and_create)
        else:
            source = "email" if rng.random() < 0.8 else "eInvoicing"

            def receive(h=holder, s=supplier, b=body, o=source) -> None:
                h["id"] = portal._create_supplier_document(dict(b, supplierId=s["id"]), o, "toApprove", o)[
                    "id"
                ]

            run.at(received, receive)
        for moment, action in _moves(run, received, due, fate):
            run.at(
                moment,
                lambda h=holder, a=action: portal._change_status(
                    portal.record("supplier_documents", h["id"]), {"action": a}, "application"
                ),
            )


def _moves(run, received: int, due: int, fate: str) -> list[tuple[int, str]]:
    """The timed status changes of one bill: approval (or a dispute, a refusal), then the payment."""
    rng = run.rng
    moves: list[tuple[int, str]] = []
    moment = received
    if fate in ("approved", "held"):
        moment = run.later(received, 1, 10)
        moves.append((moment, "approve"))
    elif fate.startswith("disputed"):
        moment = run.later(received, 2, 12)
        moves.append((moment, "dispute"))
        if fate == "disputed":
            return moves
        moment = run.later(moment, 7, 45)
        moves.append((moment, "approve" if fate == "disputed-approved" else "refuse"))
    elif fate.startswith("refused"):
        moment = run.later(received, 1, 15)
        moves.append((moment, "refuse"))
        if fate == "refused-approved":
            moment = run.later(moment, 3, 20)
            moves.append((moment, "approve"))
    if (moves and moves[-1][1] != "approve") or fate == "recent":  # a recent bill's payment is to come
        return moves
    offset = rng.randint(30, 45) if fate == "held" else supplier_payment_offset(rng)
    paid = max(due + offset * DAY, moment + DAY)  # never before its approval
    moves.append((run.moment(paid, paid + DAY // 2), "declarePayment"))
    return moves


def _day(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT00:00:00Z")
