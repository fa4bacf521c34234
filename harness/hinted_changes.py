"""Changes an application user makes that the service announces by webhook: the sandbox's mutator without
the kinds that have no event (deleting an item: no `product.deleted` in the contract's list, so only the
daily reconcile sees it). Tests and benchmarks of the applying run make their changes through it."""

from __future__ import annotations

from invoicing_sandbox.errors import ApiError
from invoicing_sandbox.mutator import WEIGHTS, Mutator

# every kind of change of the mutator but those no event announces
EVENTED = {kind: weight for kind, weight in WEIGHTS.items() if kind != "delete_item"}
# deletions of documents and suppliers: no list shows them again, so a lost hint waits for the reconcile
DELETIONS = frozenset({"delete_draft", "delete_supplier", "delete_customer"})


class HintedMutator(Mutator):
    """`step()` makes one random change among EVENTED (seeded) less the kinds in `without`; `steps(n)` makes n."""

    def __init__(self, portal, rate_per_s: float, seed: int, without: frozenset[str] = frozenset()) -> None:
        super().__init__(portal, rate_per_s, seed)
        self.kinds = {kind: weight for kind, weight in EVENTED.items() if kind not in without}

    def step(self) -> str:
        """One change (its kind; "none" when none applied after 10 draws)."""
        kinds, weights = list(self.kinds), list(self.kinds.values())
        with self.portal.lock:
            for _ in range(10):
                kind = self.rng.choices(kinds, weights)[0]
                try:
                    done = getattr(self, "_" + kind)()
                except ApiError:  # e.g. a transition the record's state refuses: draw again
                    done = False
                if done:
                    self.counts[kind] += 1
                    return kind
        return "none"

    def steps(self, count: int) -> list[str]:
        """`count` changes, one after another; their kinds."""
        return [self.step() for _ in range(count)]
