"""What a started SandboxServer generates: one seed, one portal, all day long."""

from datetime import datetime, timezone

from invoicing_sandbox.clock import Clock
from invoicing_sandbox.config import SandboxConfig
from invoicing_sandbox.server import SandboxServer


def _snapshot_at(moment: datetime, seed: int) -> dict[str, list[dict]]:
    with SandboxServer(SandboxConfig(seed=seed, scale=120, rate_limit_per_s=0), clock=Clock(fixed=moment)) as sb:
        return {name: sb.portal.snapshot(name) for name in ("customers", "documents", "transactions")}


def test_same_seed_gives_the_same_portal_all_day_and_another_seed_does_not():
    morning = _snapshot_at(datetime(2026, 3, 4, 8, 15, 7, tzinfo=timezone.utc), seed=9)
    evening = _snapshot_at(datetime(2026, 3, 4, 19, 42, 51, tzinfo=timezone.utc), seed=9)
    assert morning == evening
    assert len(morning["documents"]) > 50
    # nothing generated is stamped after the start of that day
    assert max(d["lastUpdate"] for d in morning["documents"]) <= "2026-03-04T00:00:00Z"
    assert _snapshot_at(datetime(2026, 3, 4, 8, 15, 7, tzinfo=timezone.utc), seed=10) != morning
