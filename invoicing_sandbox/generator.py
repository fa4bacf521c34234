"""Deterministic data generator: about two years of a French small business's invoicing, by seed and scale.

Everything is written through the portal's own write paths (with a simulated clock and no listeners), so
every derived field, reference and lastUpdate follows the same rules as live requests.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime

from faker import Faker

from invoicing_sandbox.domain.french_catalog import customer_body, item_body, supplier_body
from invoicing_sandbox.domain.history import plan_documents
from invoicing_sandbox.domain.orders import DEFAULT_ORDER
from invoicing_sandbox.domain.payment_behaviour import assign_payer_profiles, payment_terms, seasonal_second
from invoicing_sandbox.domain.pdf import make_pdf
from invoicing_sandbox.domain.supplier_history import plan_supplier_documents
from invoicing_sandbox.errors import ApiError

DAY = 86400
HISTORY_DAYS = 730


class SimulatedClock:
    """A clock the generator moves by hand (the portal reads only now() and today())."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        """The simulated instant."""
        return self.at

    def today(self) -> datetime:
        """Midnight of the simulated date."""
        return self.at.replace(hour=0, minute=0, second=0)


def generate(portal, seed: int, scale: int, end: datetime | None = None, bulk_same_second: int = 0) -> dict:
    """Fills an empty `portal` with about `scale` documents and everything around them; returns counts.

    Same seed, scale and end give identical records, ids included. `bulk_same_second=N` adds N draft
    invoices written in one second just before `end` (paging tests over a large group of equal lastUpdate).
    """
    end = (end or portal.clock.now()).astimezone(UTC).replace(microsecond=0)
    with portal.lock:
        if any(store.records for store in portal.stores.values()):
            raise ValueError("generate() fills an empty portal only")
        saved_clock, saved_listeners = portal.clock, portal.listeners
        run = _Run(portal, seed, max(1, scale), end, bulk_same_second)
        portal.clock, portal.listeners = run.clock, []
        try:
            run.execute()
        finally:
            portal.clock, portal.listeners = saved_clock, saved_listeners
        for name, store in portal.stores.items():  # sort orders built before serving, not on a first request
            orders = store.key_functions if name == "documents" else ("lastUpdate", DEFAULT_ORDER[name])
            for order_by in orders:
                store.index(order_by)
        counts = {name: len(store.records) for name, store in portal.stores.items()}
        counts["supplier_document_events"] = sum(map(len, portal.events_by_supplier_document.values()))
        counts["skipped_steps"] = run.skipped
        return counts


class _Run:
    def __init__(self, portal, seed: int, scale: int, end: datetime, bulk_same_second: int) -> None:
        self.portal, self.seed, self.scale, self.bulk = portal, seed, scale, bulk_same_second
        self.rng = random.Random(seed)
        # refunds draw from their own dice, so that a portal without them is the same as it always was
        self.refunds = portal.config.contract.refunds != "none"
        self.refund_rng = random.Random(seed * 7919 + 1)
        self.fake = Faker("fr_FR")
        self.fake.seed_instance(seed)
        self.end_ts = int(end.timestamp())
        self.start_ts = self.end_ts - HISTORY_DAYS * DAY
        self.clock = SimulatedClock(datetime.fromtimestamp(self.start_ts, UTC))
        # steps are called without arguments; `...` because they are lambdas binding loop values as defaults
        self.steps: list[tuple[int, int, Callable[..., object]]] = []
        self.skipped = 0
        self.items: list[dict] = []
        self.customers: list[dict] = []
        self.suppliers: list[dict] = []
        self.pdf = make_pdf(["Facture fournisseur"])

    # scheduling -----------------------------------------------------------------------------------
    def at(self, ts: int, step: Callable[..., object]) -> None:
        """Plans `step` at epoch second `ts` (dropped when after the end of the history)."""
        if ts <= self.end_ts:
            self.steps.append((ts, len(self.steps), step))

    def moment(self, low: int, high: int) -> int:
        """A random working-hours second (Mon-Fri, 8:00-19:00 UTC) near a uniform draw in [low, high]."""
        ts = self.rng.randint(low, max(low, high))
        day = ts - ts % DAY
        weekday = datetime.fromtimestamp(day, UTC).weekday()
        if weekday >= 5:
            day += (7 - weekday) * DAY
        return max(low, day + 8 * 3600 + self.rng.randrange(11 * 3600))

    def seasonal_moment(self, low: int, high: int) -> int:
        """A working-hours second in [low, high], more often in busy months (payment_behaviour.py)."""
        ts = seasonal_second(self.rng, low, high)
        return max(low, self.moment(ts - ts % DAY, ts - ts % DAY))

    def later(self, ts: int, low_days: float, high_days: float) -> int:
        """A working-hours moment between low_days and high_days after ts."""
        return self.moment(ts + int(low_days * DAY), ts + int(high_days * DAY))

    def execute(self) -> None:
        """Plans every story, then plays the steps in time order."""
        portal = self.portal
        portal.ids.reseed(self.seed)
        portal._reset_account(self.clock.at)
        siren = self.fake.siren().replace(" ", "")
        portal._update_portal(
            {
                "referenceAssignmentMethod": self.rng.choice(("CHRONOLOGICAL", "YEARLY")),
                "enterprise": {
                    "name": self.fake.company() + " SAS",
                    "siren": siren,
                    "siret": siren + "00017",
                },
            }
        )
        self.plan_catalog()
        plan_documents(self)
        plan_supplier_documents(self)
        self.steps.sort(key=lambda step: (step[0], step[1]))
        for ts, _, step in self.steps:
            self.clock.at = datetime.fromtimestamp(ts, UTC)
            try:
                step()
            except ApiError:  # a planned move the rules refuse (e.g. a discount above the amount): skip it
                self.skipped += 1
        portal.user["lastConnectionDate"] = portal.now_iso()

    # items, customers, suppliers ------------------------------------------------------------------
    def plan_catalog(self) -> None:
        """Items, customers (some dormant, some of those soft-deleted) and suppliers, with later edits."""
        rng = self.rng
        for number in range(max(20, self.scale // 50)):
            holder: dict = {"id": None}  # its id is known once the step has run
            body = item_body(rng, rng.random() < 0.45, number // 30)
            self.items.append(holder)
            created = self.start_ts + self.rng.randrange(3600)  # the catalogue comes first
            self.at(created, lambda h=holder, b=body: h.update(id=self.portal._create_item(b)["id"]))
            if rng.random() < 0.2:
                change = {"price": round(body["price"] * rng.uniform(1.02, 1.1), 2)}
                self.at(
                    self.moment(created + DAY, self.end_ts),
                    lambda h=holder, c=change: self._edit("items", h, c),
                )
        import_second = self.start_ts + 9 * 3600  # day one: the customer file is imported in one second
        for _ in range(max(5, self.scale // 8)):
            business = rng.random() < 0.7
            body = customer_body(self.fake, rng, business)
            created = (
                import_second if rng.random() < 0.3 else self.moment(self.start_ts, self.end_ts - 30 * DAY)
            )
            holder = {
                "id": None,
                "created": created,
                "email": bool(body.get("email")),
                "dormant": rng.random() < 0.1,
                "business": business,
                "terms": payment_terms(rng, business),
            }
            self.customers.append(holder)
            self.at(created, lambda h=holder, b=body: h.update(id=self.portal._create_customer(b)["id"]))
            if rng.random() < 0.15:
                change = (
                    {"phone": self.fake.phone_number()} if business else {"mobile": self.fake.phone_number()}
                )
                self.at(self.later(created, 1, 400), lambda h=holder, c=change: self._edit("customers", h, c))
            if holder["dormant"] and rng.random() < 0.4:
                self._plan_deletion(holder)
        if not any(customer.get("deleted") for customer in self.customers):  # a small portal too has one
            # the newest customer (created at least 30 days before the end), never the oldest that callers
            # pick as "the first customer" (the lowest id)
            newest = max(self.customers, key=lambda customer: customer["created"])
            newest["dormant"] = True  # no document: it may be deleted
            self._plan_deletion(newest, within_days=20)
        assign_payer_profiles(rng, self.customers)
        for _ in range(max(5, self.scale // 100)):
            body = supplier_body(self.fake, rng)
            created = self.moment(self.start_ts, self.start_ts + (60 if rng.random() < 0.9 else 600) * DAY)
            holder = {"id": None, "created": created, "terms": rng.choice((30, 30, 45, 60))}
            self.suppliers.append(holder)
            self.at(created, lambda h=holder, b=body: h.update(id=self.portal._create_supplier(b)["id"]))
            if rng.random() < 0.2:
                change = {"tags": sorted(set(body["tags"]) | {"récurrent"})}
                self.at(self.later(created, 5, 500), lambda h=holder, c=change: self._edit("suppliers", h, c))

    def _plan_deletion(self, holder: dict, within_days: int = 300) -> None:
        """A dormant customer soft-deleted 2 to `within_days` days after its creation."""
        holder["deleted"] = True
        self.at(
            self.later(holder["created"], 2, within_days),
            lambda h=holder: self.portal._delete_customer(self.portal.record("customers", h["id"])),
        )

    def _edit(self, resource: str, holder: dict, change: dict) -> None:
        updaters = {
            "items": self.portal._update_item,
            "customers": self.portal._update_customer,
            "suppliers": self.portal._update_supplier,
        }
        updaters[resource](self.portal.record(resource, holder["id"]), change)
