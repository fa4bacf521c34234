"""The date the suite's sandboxes live on (test-review-2 F22), and picking a record from their seeded data.

`INVOICING_TEST_TODAY=YYYY-MM-DD` moves the date of every sandbox the factory starts
(tests/support/fixture_factory.py) to that day: its clock keeps running at the real time of day, whole days
later or earlier, so its seeded history (generated relative to the sandbox's date) and everything it stamps are
those of that day. Unset, the sandboxes live on the real date. The default run can so be repeated as of a month
later, a year later, a 29 February or a 31 December (docs/testing.md); a test that needs one instant pins its
own clock (`clock=Clock(fixed=...)`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

TEST_TODAY_VARIABLE = "INVOICING_TEST_TODAY"


class BadTestToday(ValueError):
    """INVOICING_TEST_TODAY is set to something that is not a date."""


def sandbox_date_shift(environ: dict[str, str] | os._Environ = os.environ) -> timedelta:
    """How far the sandboxes' date lies from the real one: whole days to INVOICING_TEST_TODAY, 0 when unset."""
    text = environ.get(TEST_TODAY_VARIABLE, "").strip()
    if not text:
        return timedelta(0)
    try:
        target = date.fromisoformat(text)
    except ValueError:
        raise BadTestToday(f"{TEST_TODAY_VARIABLE}={text!r} is not a date: write it YYYY-MM-DD, e.g. 2028-02-29, "
                           "or unset it to run on the real date") from None
    return timedelta(days=(target - datetime.now(UTC).date()).days)


def pick(portal, resource: str, wanted: Callable[[dict], bool], why: str) -> dict:
    """The first record of `resource` in the sandbox `portal` for which `wanted(record)` holds; fails the test
    saying what was looked for and on which date when the seeded data has none (it is generated relative to the
    sandbox's date, so a pick may find nothing on some dates: create the record in the test instead)."""
    for record in portal.snapshot(resource):
        if wanted(record):
            return record
    raise AssertionError(f"the seeded sandbox has no {why} in {resource} on {portal.clock.today().date()} "
                         f"({TEST_TODAY_VARIABLE}={os.environ.get(TEST_TODAY_VARIABLE, '') or 'unset'}): "
                         "create one in the test")
