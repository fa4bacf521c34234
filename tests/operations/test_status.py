"""`invoicing-warehouse status` (invoicing_warehouse/runs/status.py) on a real warehouse synced from the sandbox by the
CLI: the all-fresh case exits 0; a portal made stale by its recorded sync time, a blocking check failing (a raw row
duplicated, as a broken merge would leave it) and a webhook hint kept dead each exit 1 and say which; bad
usage exits 2. The truths are independent of the status: the raw tables' own row counts, the gate's verdict
printed by `models`, the spool's dead letter written through the spool's own API."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from invoicing_warehouse.cli import main
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.run_log import log_path
from pipelines.invoicing.webhooks.hint_spool import Hint, HintSpool
from tests.support.fixture_factory import copied_warehouse, synced_warehouse

pytestmark = pytest.mark.sandbox(seed=31, scale=30, rate_limit_per_s=0, latency_ms=0)  # the module's one


@pytest.fixture(scope="module")
def base(shared_sandbox, tmp_path_factory) -> Path:
    """A warehouse synced once by `invoicing-warehouse sync` (which records the run), models built."""
    return synced_warehouse(tmp_path_factory.mktemp("status-base"), shared_sandbox, through_cli=True)


@pytest.fixture
def warehouse(base, tmp_path, monkeypatch) -> Path:
    """A copy of the base for one test, in the working directory, with the staleness settings unset."""
    copy = copied_warehouse(base, tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INVOICING_STALE_AFTER_MINUTES", raising=False)
    monkeypatch.delenv("INVOICING_SYNC_INTERVAL_MINUTES", raising=False)
    return copy


def _status(warehouse: Path, capsys, *extra: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["status", "--warehouse", str(warehouse), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def _raw_rows(warehouse: Path) -> int:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        tables = [row[0] for row in connection.execute(
            "select table_name from information_schema.tables where table_schema = 'invoicing_raw' "
            "and not starts_with(table_name, '_dlt')").fetchall()]
        return sum(connection.execute(f'select count(*) from invoicing_raw."{t}"').fetchone()[0] for t in tables)


def test_a_fresh_passing_warehouse_exits_0_with_its_last_sync(warehouse, capsys):
    code, status = _status(warehouse, capsys)
    assert code == 0, status
    assert status["ok"] is True and status["stale_after_s"] == 30 * 60  # twice the 15-minute schedule
    [portal] = status["portals"]
    assert portal["portal"] == "default" and portal["fresh"] and portal["failing_checks"] == []
    assert portal["last_sync_records"] == _raw_rows(warehouse)  # the first sync loaded every raw row
    assert portal["pending_hints"] == 0 and portal["dead_hints"] == 0
    assert status["readers_copy_age_s"] is not None and status["readers_copy_age_s"] < 600
    capsys.readouterr()
    assert main(["status", "--warehouse", str(warehouse)]) == 0
    assert "status: ok" in capsys.readouterr().out


def test_a_portal_whose_last_sync_is_old_is_stale_and_exits_1(warehouse, capsys):
    log = json.loads(log_path(WarehouseTarget.duckdb_file(warehouse)).read_text())
    two_hours_ago = datetime.now(UTC) - timedelta(hours=2)
    log["last_syncs"]["default"]["at"] = two_hours_ago.replace(microsecond=0).isoformat()
    log_path(WarehouseTarget.duckdb_file(warehouse)).write_text(json.dumps(log))
    code, status = _status(warehouse, capsys)
    assert code == 1 and status["ok"] is False
    [portal] = status["portals"]
    assert portal["fresh"] is False and 7100 < portal["age_s"] < 7300
    capsys.readouterr()
    assert main(["status", "--warehouse", str(warehouse)]) == 1
    assert "STALE" in capsys.readouterr().out
    # the threshold is configurable: three hours makes the same sync fresh again
    assert _status(warehouse, capsys, "--stale-after", "180")[0] == 0


def test_a_failing_blocking_check_exits_1_and_is_named(warehouse, capsys):
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute("insert into invoicing_raw.documents select * from invoicing_raw.documents "
                           "order by id limit 1")
    assert main(["models", "--warehouse", str(warehouse)]) == 1  # the gate's own verdict
    code, status = _status(warehouse, capsys)
    assert code == 1
    assert "ids_unique on invoicing_raw.documents" in status["portals"][0]["failing_checks"]


def test_a_dead_webhook_hint_is_counted_and_exits_1(warehouse, capsys):
    hint = Hint("default", "documents", "0123456789abcdef01234567", "document.updated")
    with HintSpool.for_warehouse(warehouse) as spool:
        spool.append("delivery-1", hint)
        [waiting] = spool.pending("default")
        assert spool.set_aside([(waiting, "422 from the API", True)]) == 1
    code, status = _status(warehouse, capsys)
    assert code == 1
    assert status["portals"][0]["dead_hints"] == 1 and status["portals"][0]["pending_hints"] == 0


def test_bad_usage_exits_2(warehouse, capsys):
    assert main(["status", "--warehouse", str(warehouse), "--stale-after", "soon"]) == 2
    assert "--stale-after must be a number" in capsys.readouterr().err
