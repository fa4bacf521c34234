"""Date-times as the service writes them: ISO 8601 UTC, second precision, `Z`."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_timestamp(text: str) -> datetime:
    """Parses an ISO 8601 date-time (`Z` or offset; none means UTC) into an aware UTC datetime."""
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_timestamp(moment: datetime) -> str:
    """`2025-03-04T10:20:30Z`: the format the service reads and writes."""
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
