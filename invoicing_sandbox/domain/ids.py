"""Deterministic MongoDB-style ObjectIds: 8 hex digits of creation time, then 16 seeded hex digits."""

from __future__ import annotations

import random
from datetime import datetime


class IdFactory:
    """Makes 24-hex ids whose first 8 digits are the creation time in epoch seconds (api-facts.md).

    The remaining 16 digits are a seeded "machine" part plus a counter, so the same seed and the same
    sequence of creations give the same ids (the generator's determinism rests on this).
    """

    def __init__(self, seed: int) -> None:
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        """Restarts the sequence for `seed`."""
        rng = random.Random(f"object-ids-{seed}")
        self._machine = f"{rng.getrandbits(40):010x}"
        self._counter = rng.getrandbits(24)

    def new(self, at: datetime) -> str:
        """A new id created at `at`."""
        self._counter = (self._counter + 1) & 0xFFFFFF
        return f"{int(at.timestamp()):08x}{self._machine}{self._counter:06x}"


def looks_like_id(text: str) -> bool:
    """True for 24 lowercase hex digits (anything else is a 404, like an unknown id)."""
    return len(text) == 24 and all(c in "0123456789abcdef" for c in text)
