"""The lake's upkeep keeps month-end snapshots beyond the horizon (invoicing_warehouse/engine/lake_maintenance.py): the
last published snapshot of each of the last N months before the current one, in UTC, so a month-end report reads its
month back; hand-made snapshot lists with the expected ids worked out by hand below."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from invoicing_warehouse.engine.lake_maintenance import (
    MONTH_ENDS_ENV,
    expirable,
    month_end_snapshots,
    month_ends_from_env,
)
from invoicing_warehouse.engine.readers import PUBLISHED

PARIS_WINTER = timezone(timedelta(hours=1))
NOW = datetime(2026, 4, 10, 12, 0, tzinfo=UTC)
HORIZON = timedelta(days=7)  # cutoff 2026-04-03 12:00 UTC
SNAPSHOTS = [
    (1, datetime(2026, 1, 10, 9, 0, tzinfo=UTC), PUBLISHED),
    # 00:30 in Paris on 1 February is 23:30 UTC on 31 January: January's last publication
    (2, datetime(2026, 2, 1, 0, 30, tzinfo=PARIS_WINTER), PUBLISHED),
    (3, datetime(2026, 1, 31, 23, 45, tzinfo=UTC), None),  # a load half way at the month's end: never a report's
    (4, datetime(2026, 2, 15, 9, 0, tzinfo=UTC), PUBLISHED),
    (5, datetime(2026, 2, 27, 18, 0, tzinfo=UTC), PUBLISHED),  # February's last publication
    (6, datetime(2026, 3, 5, 9, 0, tzinfo=UTC), None),
    (7, datetime(2026, 3, 20, 9, 0, tzinfo=UTC), PUBLISHED),  # March's; also the one a reader may be on
    (8, datetime(2026, 4, 1, 9, 0, tzinfo=UTC), None),
    (9, datetime(2026, 4, 8, 9, 0, tzinfo=UTC), PUBLISHED),  # the last published (within the horizon)
    (10, datetime(2026, 4, 9, 9, 0, tzinfo=UTC), None),
]


@pytest.mark.parametrize(("months", "month_ends", "expired"), [
    (12, [2, 5, 7], [1, 3, 4, 6]),  # January's, February's and March's stay past the horizon
    (2, [5, 7], [1, 2, 3, 4, 6]),  # February and March only
    (1, [7], [1, 2, 3, 4, 5, 6]),
    (0, [], [1, 2, 3, 4, 5, 6]),  # none: the horizon and the readers' rule alone (7 on: a reader may be on 7)
])
def test_the_last_publication_of_each_recent_month_outlives_the_horizon(months, month_ends, expired):
    assert month_end_snapshots(SNAPSHOTS, months, NOW) == month_ends
    assert expirable(SNAPSHOTS, HORIZON, NOW, months) == (expired, 7)


def test_the_current_month_is_not_a_month_end_yet_and_a_month_without_publication_keeps_nothing():
    quiet_february = [s for s in SNAPSHOTS if s[0] not in (4, 5)]
    assert month_end_snapshots(quiet_february, 12, NOW) == [2, 7]  # April (9) is not over
    assert month_end_snapshots(SNAPSHOTS, 12, datetime(2026, 3, 1, tzinfo=UTC)) == [2, 5]


def test_the_setting_is_a_whole_number_of_months(monkeypatch):
    monkeypatch.delenv(MONTH_ENDS_ENV, raising=False)
    assert month_ends_from_env() == 12
    monkeypatch.setenv(MONTH_ENDS_ENV, "36")
    assert month_ends_from_env() == 36
    for wrong in ("-1", "1.5", "a year"):
        monkeypatch.setenv(MONTH_ENDS_ENV, wrong)
        with pytest.raises(ValueError, match=MONTH_ENDS_ENV):
            month_ends_from_env()
