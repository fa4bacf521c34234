"""The sandbox's controllable clock: real time, real time plus an offset, or a fixed instant."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import overload


class Clock:
    """Source of "now" for everything the sandbox stamps (lastUpdate, dates, token expiry, Date header).

    Times are timezone-aware UTC truncated to the second, because the service stores second precision.
    """

    def __init__(self, fixed: datetime | None = None, offset: timedelta = timedelta(0)) -> None:
        self._lock = threading.Lock()
        self._fixed = fixed
        self._offset = offset

    def now(self) -> datetime:
        """The sandbox's current time (UTC, whole seconds)."""
        with self._lock:
            current = self._fixed if self._fixed is not None else datetime.now(UTC) + self._offset
        return current.astimezone(UTC).replace(microsecond=0)

    def today(self) -> datetime:
        """Midnight UTC of the current sandbox date."""
        return self.now().replace(hour=0, minute=0, second=0)

    def freeze(self, at: datetime) -> None:
        """Stops the clock at `at` (aware datetime)."""
        with self._lock:
            self._fixed = at

    def unfreeze(self) -> None:
        """Lets the clock run again (keeping the offset)."""
        with self._lock:
            self._fixed = None

    def advance(self, delta: timedelta) -> None:
        """Moves the clock by `delta`, frozen or not."""
        with self._lock:
            if self._fixed is not None:
                self._fixed += delta
            else:
                self._offset += delta

    def set_offset(self, offset: timedelta) -> None:
        """Runs the clock at real time plus `offset` (clock skew between sandbox and client)."""
        with self._lock:
            self._fixed = None
            self._offset = offset


@overload
def iso(moment: datetime) -> str: ...
@overload
def iso(moment: None) -> None: ...
@overload
def iso(moment: datetime | None) -> str | None: ...


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 UTC with second precision and `Z`, as the service writes date-times."""
    if moment is None:
        return None
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    """Parses an ISO 8601 date or date-time (a missing zone means UTC); raises ValueError."""
    value = datetime.fromisoformat(text)  # Python 3.11 reads a trailing Z
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)
