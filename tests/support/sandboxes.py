"""The one way the suite starts its seeded sandboxes (test-review-2 F22), and the date they live on.

`INVOICING_TEST_TODAY=YYYY-MM-DD` moves the date of every sandbox started here to that day: its clock keeps
running at the real time of day, whole days later or earlier, so its seeded history (generated relative to the
sandbox's date) and everything it stamps are those of that day. Unset, the sandboxes live on the real date. The
default run can so be repeated as of a month later, a year later, a 29 February or a 31 December
(docs/testing.md); a test that needs one instant pins its own clock (`clock=Clock(fixed=...)`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Self

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.server import ConfiguredClock, SandboxServer

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




class SandboxFactory:
    """Starts seeded sandboxes on 127.0.0.1 on the run's date and stops every one of them in `stop_all`."""

    def __init__(self) -> None:
        self.started: list[SandboxServer] = []

    def __call__(self, *, config: SandboxConfig | None = None, clock: Clock | None = None, generate: bool = True,
                 real_date: bool = False, **settings) -> SandboxServer:
        """A started sandbox of `config`, else of `SandboxConfig(**settings)` (`contract` may be a profile's
        name). Without `clock`,
        it runs on the run's date (INVOICING_TEST_TODAY) and follows its `clock_offset_s` setting; with
        `real_date`, on the machine's date: for a test whose data does not depend on the date and that needs the
        product's clock and the server's to agree (a moved date is a server days ahead or behind)."""
        if config is None:
            if isinstance(settings.get("contract"), str):
                settings["contract"] = ContractProfile.named(settings["contract"])
            config = SandboxConfig(**settings)
        elif settings:
            raise TypeError(f"a config, or its settings, not both: {sorted(settings)}")
        shift = timedelta(0) if real_date else sandbox_date_shift()
        server = SandboxServer(config, generate=generate,
                               clock=clock if clock is not None else ConfiguredClock(config, shift))
        self.started.append(server)
        return server.start()

    def stop_all(self) -> None:
        """Stops every sandbox started here (also after a failed start of a later one)."""
        while self.started:
            self.started.pop().stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop_all()


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
