"""The settings door (invoicing_warehouse/engine/environment/): every setting typed, defaulted and checked in one place,
read once per process with the environment over `.env`, secrets never shown; and WarehouseFiles, the one owner of
the files beside a warehouse. Expected values are written out by hand from docs/settings.md's defaults."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from invoicing_warehouse.engine.environment.api_settings import (
    MAX_ANSWER_BYTES,
    PARENT_FETCH_MAX,
    WEBHOOK_TOKEN,
)
from invoicing_warehouse.engine.environment.catalogue import EVERY_SETTING, READ_HERE
from invoicing_warehouse.engine.environment.engine_settings import (
    LAKE_LOCK_WAIT_S,
    LAKE_MONTH_ENDS_KEPT,
    MODELS_DIR,
    PUBLISH_TRENDS,
    WAREHOUSE_ENGINE,
)
from invoicing_warehouse.engine.environment.kinds import Setting, SettingError, whole
from invoicing_warehouse.engine.environment.reader import current_environment, environment_from
from invoicing_warehouse.engine.environment.run_settings import (
    COMPANY_SIZE,
    HINTS_LINGER_S,
    SYNC_INTERVAL_MINUTES,
)

PROJECT = Path(__file__).resolve().parents[2]


def test_unset_and_blank_settings_take_the_documented_defaults():
    env = environment_from({"INVOICING_LAKE_LOCK_WAIT_S": "   ", "UNRELATED": "x"})
    # docs/settings.md: 900 s, 12 month-ends, 15 minutes, 500 ids, 64 MiB, 60 s, on, duckdb, PME
    assert env.value(LAKE_LOCK_WAIT_S) == 900.0
    assert env.value(LAKE_MONTH_ENDS_KEPT) == 12
    assert env.value(SYNC_INTERVAL_MINUTES) == 15
    assert env.value(PARENT_FETCH_MAX) == 500
    assert env.value(MAX_ANSWER_BYTES) == 67108864
    assert env.value(HINTS_LINGER_S) == 60.0
    assert env.value(PUBLISH_TRENDS) is True
    assert env.value(WAREHOUSE_ENGINE) == "duckdb"
    assert env.value(COMPANY_SIZE) == "PME"
    assert env.value(MODELS_DIR) is None
    assert "UNRELATED" not in env.values  # only the catalogue's names are kept


def test_values_are_typed():
    env = environment_from({"INVOICING_LAKE_LOCK_WAIT_S": " 12.5 ", "INVOICING_LAKE_MONTH_ENDS_KEPT": "0",
                            "INVOICING_SYNC_INTERVAL_MINUTES": "20", "INVOICING_PUBLISH_TRENDS": "Off",
                            "INVOICING_WAREHOUSE_ENGINE": "DuckLake", "INVOICING_COMPANY_SIZE": "eti",
                            "INVOICING_MODELS_DIR": "~/models"})
    assert env.value(LAKE_LOCK_WAIT_S) == 12.5
    assert env.value(LAKE_MONTH_ENDS_KEPT) == 0
    assert env.value(SYNC_INTERVAL_MINUTES) == 20
    assert env.value(PUBLISH_TRENDS) is False
    assert env.value(WAREHOUSE_ENGINE) == "ducklake"  # case-free, the value as the catalogue writes it
    assert env.value(COMPANY_SIZE) == "ETI"
    assert env.value(MODELS_DIR) == Path.home() / "models"


@pytest.mark.parametrize(("name", "value", "form"), [
    ("INVOICING_SYNC_INTERVAL_MINUTES", "7", "a whole number of minutes that can divide 60"),  # 60 % 7 != 0
    ("INVOICING_SYNC_INTERVAL_MINUTES", "0", "a whole number of minutes that can divide 60"),
    ("INVOICING_LAKE_LOCK_WAIT_S", "inf", "a number of seconds > 0"),
    ("INVOICING_LAKE_LOCK_WAIT_S", "-1", "a number of seconds > 0"),
    ("INVOICING_HINTS_LINGER_S", "nan", "a number of seconds >= 0"),
    ("INVOICING_LAKE_MONTH_ENDS_KEPT", "1201", "a whole number of months >= 0 and <= 1200"),
    ("INVOICING_MAX_ANSWER_BYTES", "1023", "a whole number of bytes >= 1024"),
    ("INVOICING_PARENT_FETCH_MAX", "-5", "a whole number of ids >= 0"),
    ("INVOICING_WAREHOUSE_ENGINE", "sqlite", "one of duckdb, ducklake"),
    ("INVOICING_COMPANY_SIZE", "big", "one of micro, PME, ETI, GE"),
])
def test_a_bad_value_is_an_error_naming_the_setting_and_its_form(name, value, form):
    setting = next(s for s in EVERY_SETTING if s.name == name)
    env = environment_from({name: value})
    with pytest.raises(SettingError) as raised:
        env.value(setting)
    assert str(raised.value).startswith(f"{name} must be {form}")
    assert repr(value) in str(raised.value)
    assert [str(problem) for problem in env.check()] == [str(raised.value)]  # check() finds the same, only it


def test_secrets_never_show_in_repr_nor_in_errors():
    env = environment_from({"INVOICING_WEBHOOK_TOKEN": "tok-3f9a81c2d4e5", "INVOICING_DUCKLAKE_PASSWORD": "pw-77q",
                            "INVOICING_EGRESS_IP": "203.0.113.7"})
    shown = repr(env)
    assert "tok-3f9a81c2d4e5" not in shown and "pw-77q" not in shown
    assert "INVOICING_WEBHOOK_TOKEN='***'" in shown and "INVOICING_EGRESS_IP='203.0.113.7'" in shown
    assert env.text(WEBHOOK_TOKEN) == "tok-3f9a81c2d4e5"  # hidden from print, not from its reader
    secret_number = Setting("INVOICING_SOME_PIN", whole(0, "digits"), None, "none", "nobody", secret=True)
    with pytest.raises(SettingError) as raised:
        secret_number.parse("pin-1234")
    assert "pin-1234" not in str(raised.value) and "INVOICING_SOME_PIN" in str(raised.value)


def test_the_catalogue_marks_every_password_token_and_url_with_credentials_secret():
    secret_words = re.compile(r"PASSWORD|TOKEN|SECRET|client_secret|ALERT_URL|APPRISE|RATE_BUDGET_URL")
    assert sorted(s.name for s in EVERY_SETTING if secret_words.search(s.name) and not s.secret) == []
    assert len({s.name for s in EVERY_SETTING}) == len(EVERY_SETTING)


def test_the_process_reads_once_and_again_only_after_a_change(monkeypatch):
    monkeypatch.setenv("INVOICING_HINTS_LINGER_S", "5")
    first = current_environment()
    assert first.value(HINTS_LINGER_S) == 5.0
    monkeypatch.setenv("SOMETHING_ELSE_ENTIRELY", "1")  # not a setting: the same snapshot
    assert current_environment() is first
    monkeypatch.setenv("INVOICING_HINTS_LINGER_S", "7")  # a setting changed (a test, `.env` loaded): read again
    second = current_environment()
    assert second is not first and second.value(HINTS_LINGER_S) == 7.0
    assert current_environment() is second


def test_the_environment_wins_over_dot_env_and_dot_env_fills_the_rest(tmp_path, monkeypatch):
    from invoicing_warehouse.engine import env_file

    saved = dict(os.environ)
    settings_file = tmp_path / "settings.env"
    settings_file.write_text("INVOICING_HINTS_LINGER_S=11\nINVOICING_HINTS_RUN_MAX_S=120\n")
    settings_file.chmod(0o600)
    monkeypatch.setenv("INVOICING_ENV_FILE", str(settings_file))
    monkeypatch.setenv("INVOICING_HINTS_LINGER_S", "3")
    monkeypatch.delenv("INVOICING_HINTS_RUN_MAX_S", raising=False)
    try:
        assert env_file.load_env_file() == ["INVOICING_HINTS_RUN_MAX_S"]
        env = current_environment()
        assert (env.value(HINTS_LINGER_S), env.value(next(s for s in READ_HERE if s.name ==
                                                          "INVOICING_HINTS_RUN_MAX_S"))) == (3.0, 120.0)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_the_readers_raise_the_door_s_error(monkeypatch):
    from invoicing_warehouse.engine.lake_lock import lock_wait_s
    from invoicing_warehouse.runs.linger import Linger
    from invoicing_warehouse.runs.status import StatusError, stale_after

    monkeypatch.setenv("INVOICING_LAKE_LOCK_WAIT_S", "soon")
    with pytest.raises(ValueError, match="INVOICING_LAKE_LOCK_WAIT_S must be a number of seconds > 0, got 'soon'"):
        lock_wait_s()
    monkeypatch.setenv("INVOICING_HINTS_RUN_MAX_S", "-1")
    with pytest.raises(ValueError, match="INVOICING_HINTS_RUN_MAX_S must be a number of seconds >= 0"):
        Linger.from_environment()
    # a sync interval the schedule refuses is refused by `status` too (it used to fall back to 15 silently)
    monkeypatch.setenv("INVOICING_SYNC_INTERVAL_MINUTES", "7")
    with pytest.raises(StatusError, match="INVOICING_SYNC_INTERVAL_MINUTES must be"):
        stale_after()
    monkeypatch.setenv("INVOICING_SYNC_INTERVAL_MINUTES", "20")
    assert stale_after().total_seconds() == 2 * 20 * 60  # twice the interval
