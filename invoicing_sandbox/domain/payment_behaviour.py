"""How the generated business's customers pay it and how it pays its suppliers: the demo's calibration.

Calibrated on published figures for French small businesses (sources and resulting figures:
invoicing_sandbox/README.md, "Demo data calibration"):
- Code de commerce art. L441-10 (loi LME, 2008): a payment term is at most 60 days after the invoice date
  (or 45 days end of month); 30 days when the parties agreed none. Hence terms of 30, 45 or 60 days.
- Banque de France, Observatoire des délais de paiement (annual reports 2022-2023): about one company in three
  is paid late; customer terms average about 44 days of sales (DSO), supplier terms about 50 days of purchases.
  Hence about a third of invoices settled after their due date, most of the rest a few days before it.
- Average lateness of late payments about 11-13 days (payment-behaviour studies the Observatoire quotes).
  Hence "usual" late payments of 1-25 days, and a few chronic late payers who pay weeks late.
Activity follows the French calendar: August and the Christmas weeks are slow, and a payment that falls in
August waits for the accountant's return. Every draw comes from the generator's seeded random source.
"""

from __future__ import annotations

from datetime import UTC, datetime

DAY = 86400

# share of business customers per payer profile (one draw per customer, kept for all its invoices);
# consumers have their own profile: they pay by card or transfer within the 15 days they are given
PAYER_PROFILES = (("prompt", 0.47), ("usual", 0.38), ("chronic", 0.15))
# payment terms in days after the invoice date: a business customer's are agreed once, at most 60 days
BUSINESS_TERMS = (30, 30, 30, 30, 45, 45, 60)
CONSUMER_TERMS = (15,)
# relative invoicing activity per month (1 = January): a slow August and December, busy spring and autumn
MONTH_WEIGHTS = (0.95, 1.0, 1.1, 1.05, 0.95, 1.1, 0.9, 0.55, 1.1, 1.15, 1.05, 0.85)
SEASONAL_TRIES = 30  # rejection sampling is bounded; the last draw stands


def assign_payer_profiles(rng, customers: list[dict]) -> None:
    """Sets each customer holder's `payer`: `consumer` for a consumer; for the active businesses, `prompt`,
    `usual` or `chronic` (late by weeks) in the exact shares of PAYER_PROFILES, shuffled, so that every seed
    has as many chronic late payers (a random draw per customer swung the demo's overdue share by seed)."""
    businesses = [c for c in customers if c["business"] and not c["dormant"]]
    deck = [name for name, share in PAYER_PROFILES for _ in range(round(share * len(businesses)))]
    deck += [PAYER_PROFILES[0][0]] * (len(businesses) - len(deck))
    rng.shuffle(deck)
    for customer, profile in zip(businesses, deck, strict=False):
        customer["payer"] = profile
    for customer in customers:
        customer.setdefault("payer", "prompt" if customer["business"] else "consumer")


def payment_terms(rng, business: bool) -> int:
    """Days between an invoice's date and its due date for a new customer."""
    return rng.choice(BUSINESS_TERMS if business else CONSUMER_TERMS)


def lateness_days(rng, profile: str) -> int | None:
    """Days after its due date an invoice is settled (0 or less: on time); None: never paid, a bad debt.

    consumer: 85 % within their 15 days, else 1-15 days late. prompt: 85 % on time (up to 12 days early),
    else 1-8 days late. usual: 45 % on time, else 1-20 days late. chronic: 15 % on time, 75 % 8-40 days
    late, 9 % after a recovery procedure (45-110 days), 1 % never. About a third of invoices end late, at
    12-15 days on average (README "Demo data calibration").
    """
    draw = rng.random()
    if profile == "consumer":
        if draw < 0.6:  # by card or transfer on receipt of the invoice
            return -rng.randint(12, 15)
        return -rng.randint(0, 11) if draw < 0.9 else rng.randint(1, 15)
    if profile == "prompt":
        return -rng.randint(3, 15) if draw < 0.75 else rng.randint(1, 8)
    if profile == "usual":
        return -rng.randint(0, 8) if draw < 0.35 else rng.randint(1, 24)
    if draw < 0.15:
        return -rng.randint(0, 5)
    if draw < 0.90:
        return rng.randint(8, 40)
    if draw < 0.99:
        return rng.randint(45, 110)
    return None


def supplier_payment_offset(rng) -> int:
    """Days after its due date the business pays a supplier bill: mostly in the last days before it."""
    draw = rng.random()
    if draw < 0.8:
        return -rng.randint(0, 10)
    if draw < 0.92:
        return -rng.randint(11, 25)  # paid early, e.g. for a discount
    return rng.randint(1, 12)


def month_weight(ts: int) -> float:
    """The activity weight of the month of epoch second `ts`."""
    return MONTH_WEIGHTS[datetime.fromtimestamp(ts, UTC).month - 1]


def seasonal_second(rng, low: int, high: int) -> int:
    """An epoch second in [low, high], drawn more often in busy months (bounded rejection sampling)."""
    top = max(MONTH_WEIGHTS)
    ts = low
    for _ in range(SEASONAL_TRIES):
        ts = rng.randint(low, max(low, high))
        if rng.random() * top < month_weight(ts):
            return ts
    return ts


def holiday_wait_days(rng, ts: int) -> int:
    """Extra days a customer's payment due at `ts` waits: in August, half wait for the accountant's return."""
    month = datetime.fromtimestamp(ts, UTC).month
    return rng.randint(0, 6) if month == 8 and rng.random() < 0.5 else 0
