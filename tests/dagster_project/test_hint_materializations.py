"""The hints op's materializations (assets/hint_ops.py `Unrecorded`): the sets applied since the last record
become one event per asset, a raw table's rows loaded summed over the sets and a model's row count its latest;
due once the oldest set waited RECORD_WITHIN_S. A unit test of that one class (the op's Dagster context stubbed:
it only collects the events); the op itself runs in tests/pipelines/webhooks/test_hint_linger.py and
test_hint_sensor.py."""

from __future__ import annotations

from assets import hint_ops
from assets.hint_ops import Unrecorded
from invoicing_warehouse.runs.hints import HintRun
from pipelines.invoicing.webhooks.hint_apply import HintLoad


class _Collected:
    """What `record` gives Dagster: (asset key, partition, metadata values) per event."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str | None, dict]] = []

    def log_event(self, event) -> None:
        self.events.append((event.asset_key.to_user_string(), event.partition,
                            {name: value.value for name, value in event.metadata.items()}))


def _set(rows: dict[str, int], models: dict[str, int]) -> HintRun:
    return HintRun("acme", hints=1, load=HintLoad([], rows=rows), models=models)


def test_the_sets_since_the_last_record_make_one_event_per_asset():
    unrecorded = Unrecorded("acme")
    # two sets: 3 document rows and 2 of their lines (a child table: its parent's asset, whose rows loaded are the
    # parent's own, as the op always counted them), then 1 document row and 4 customer rows; a model rebuilt by
    # both keeps the second set's row count
    unrecorded.add(_set({"documents": 3, "documents__lines": 2}, {"marts.receivables": 10, "staging.x": 7}))
    unrecorded.add(_set({"documents": 1, "customers": 4}, {"marts.receivables": 11}))
    collected = _Collected()
    unrecorded.record(collected)  # type: ignore[arg-type]  (the stub takes the op context's place)
    assert sorted(collected.events) == sorted([
        ("invoicing_raw/documents", "acme", {"rows_loaded": 3 + 1, "source": "webhook hints"}),
        ("invoicing_raw/customers", "acme", {"rows_loaded": 4, "source": "webhook hints"}),
        ("marts/receivables", None, {"dagster/row_count": 11}),
        ("staging/x", None, {"dagster/row_count": 7}),
    ])
    again = _Collected()
    unrecorded.record(again)  # type: ignore[arg-type]
    assert again.events == [] and not unrecorded.due()  # recorded once: nothing left, nothing due


def test_due_once_the_oldest_set_waited_long_enough(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(hint_ops.time, "monotonic", lambda: clock[0])
    unrecorded = Unrecorded("acme")
    unrecorded.add(_set({}, {}))  # a set that changed nothing: nothing to record, never due
    assert not unrecorded.due()
    unrecorded.add(_set({"customers": 1}, {"marts.receivables": 5}))
    clock[0] += hint_ops.RECORD_WITHIN_S - 0.5
    unrecorded.add(_set({"customers": 1}, {}))  # a later set does not restart the wait
    assert not unrecorded.due()
    clock[0] += 0.5
    assert unrecorded.due()
