"""Issue 40, point 9: one rate budget per host whatever the environment of a run.

Real processes (`harness/egress_race.py`), each a product `InvoicingClient` that chooses its budget as a sync does,
GET `/me` from one real `SandboxHost` over HTTP (one limiter of 10/s for the source address 127.0.0.1). The truths
are the server's: its 429 count; and the budget files on disk (where, whose, how many grants they recorded).

- One user, one HOME: a run with `XDG_RUNTIME_DIR` set (a login shell) and one without (cron, a systemd service)
  pace on one budget (before: two, 84 x 429 in 445 requests).
- Two users (two uids, the racers drop root once imported) pace on one budget when the operator sets
  `INVOICING_RATE_BUDGET_SHARED_DIR` to a folder of their group.
- A budget file of the same host found in another place a run may pace is named in a warning.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.egress_race import prepare, private_env, race, start, stop
from invoicing_sandbox.host import SandboxHost
from pipelines.invoicing.http import host_budget
from pipelines.invoicing.http.host_budget import SHARED_DIR_ENV, HostBudget
from pipelines.invoicing.http.private_state import LocalStateError

# alone, after the parallel phase (scripts/test): the pace is measured against the machine's clock
pytestmark = pytest.mark.serial

REQUESTS = 40  # per racer, the token request aside: 80 at once, about 9 s at the budget's pace
USERS = (65534, 65533)  # "nobody" and one more uid without a name: two users of the host
GROUP = 65530  # the group the operator gives the users sharing the budget


def racer_env(folder: Path, home: Path, **extra: str) -> dict[str, str]:
    """A racer's environment with the budget chosen as a sync chooses it: HOME `home`, no budget setting of the
    suite (`INVOICING_RATE_BUDGET_DIR`), no runtime or cache folder unless `extra` gives one; the file budget."""
    env = private_env(folder, "file", **extra)
    for name in ("INVOICING_RATE_BUDGET_DIR", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"):
        if name not in extra:
            env.pop(name, None)
    env["HOME"] = str(home)
    return env


def race_on(host: SandboxHost, envs: list[dict[str, str]], as_users: list[str | None]) -> tuple[int, int, int]:
    """One racer per environment, each on its own portal of `host`, all at once: (429s the server gave, 429s the
    racers saw, requests the server counted)."""
    racers = [start("race", env, *(["--as-user", user] if user else [])) for env, user in zip(envs, as_users,
                                                                                             strict=True)]
    try:
        for racer, portal in zip(racers, host.portals.values(), strict=False):
            prepare(racer, portal.base_url, portal.client_id, portal.client_secret, REQUESTS)
        results = race(racers)
    finally:
        stop(racers)
    return host.rate_limited(), sum(result.throttled for result in results), host.requests()


def recorded_grants(path: Path) -> int:
    """The grants a budget file recorded (its limiter's sequence number)."""
    return int(json.loads(path.read_text())["state"]["seq"])


def test_runs_of_one_user_with_and_without_xdg_runtime_dir_pace_on_one_budget(tmp_path):
    home, runtime = tmp_path / "home", tmp_path / "run"
    for folder in (home, runtime):
        folder.mkdir(mode=0o700)
    login_shell = racer_env(tmp_path / "a", home, XDG_RUNTIME_DIR=str(runtime))
    cron = racer_env(tmp_path / "b", home)
    with SandboxHost(portals=2, scale=20) as host:
        refused, throttled, served = race_on(host, [login_shell, cron], [None, None])
    print(f"\none user, XDG_RUNTIME_DIR set in one run and not in the other: {refused} x 429 in {served} requests")
    assert refused == 0 and throttled == 0
    assert served == 2 * (REQUESTS + 1)
    budgets = sorted((home / ".cache" / "invoicing-warehouse").glob("invoicing-rate-budget-*.json"))
    assert len(budgets) == 1 and recorded_grants(budgets[0]) >= served  # one budget held every grant
    assert not list(runtime.rglob("invoicing-rate-budget-*"))


@pytest.fixture
def shared_folders() -> Iterator[Path]:
    """A folder other users can reach (pytest's own is root's only), removed afterwards: the homes of the two
    users and the folder the operator shares between them (root:GROUP, 2770)."""
    base = Path(tempfile.mkdtemp(prefix="budget-users-"))
    try:
        base.chmod(0o755)
        for uid in USERS:
            home = base / f"home-{uid}"
            home.mkdir(mode=0o700)
            os.chown(home, uid, uid)
        shared = base / "shared"
        shared.mkdir()
        os.chown(shared, 0, GROUP)
        shared.chmod(0o2770)
        yield base
    finally:
        shutil.rmtree(base)


def test_two_users_share_one_budget_when_the_operator_sets_the_shared_folder(shared_folders, tmp_path):
    shared = shared_folders / "shared"
    envs = [racer_env(tmp_path / str(uid), shared_folders / f"home-{uid}", **{SHARED_DIR_ENV: str(shared)})
            for uid in USERS]
    with SandboxHost(portals=2, scale=20) as host:
        refused, throttled, served = race_on(host, envs, [f"{uid}:{uid},{GROUP}" for uid in USERS])
    print(f"\ntwo users, one shared budget folder: {refused} x 429 in {served} requests")
    assert refused == 0 and throttled == 0
    assert served == 2 * (REQUESTS + 1)
    budgets = list(shared.glob("invoicing-rate-budget-*.json"))
    assert len(budgets) == 1 and recorded_grants(budgets[0]) >= served
    status = budgets[0].stat()
    assert status.st_uid in USERS and status.st_gid == GROUP and stat.S_IMODE(status.st_mode) == 0o660
    assert not [path for uid in USERS for path in (shared_folders / f"home-{uid}").rglob("invoicing-rate-budget-*")]


def test_a_shared_folder_others_may_write_is_refused(shared_folders):
    shared = shared_folders / "shared"
    shared.chmod(0o2777)
    with pytest.raises(LocalStateError) as refused:
        HostBudget("http://127.0.0.1:9/api/v2", shared, shared=True)
    assert "may be written by any user" in str(refused.value) and str(shared) in str(refused.value)
    assert not list(shared.iterdir())


def test_a_budget_file_of_the_same_host_in_another_place_is_named_in_a_warning(tmp_path, monkeypatch, caplog):
    url = "http://127.0.0.1:9/api/v2"
    home, runtime = tmp_path / "home", tmp_path / "run"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(SHARED_DIR_ENV, raising=False)
    monkeypatch.setattr(host_budget, "_warned", set())
    # an earlier version's login shell paced in $XDG_RUNTIME_DIR a minute ago
    earlier = HostBudget(url, runtime / "invoicing-warehouse")
    with earlier.hold() as state:
        state["seq"] = 1
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("INVOICING_RATE_BUDGET_DIR")
    with caplog.at_level(logging.WARNING, logger=host_budget.__name__):
        now = HostBudget(url)
    assert now.path == home / ".cache" / "invoicing-warehouse" / earlier.name  # not in the runtime folder
    warnings = [record.getMessage() for record in caplog.records]
    assert len(warnings) == 1 and str(earlier.path) in warnings[0] and str(now.path) in warnings[0]
    # long unused (STALE_S): no run paces on it any more, nothing to say
    caplog.clear()
    monkeypatch.setattr(host_budget, "_warned", set())
    old = time.time() - host_budget.STALE_S - 60
    os.utime(earlier.path, (old, old))
    with caplog.at_level(logging.WARNING, logger=host_budget.__name__):
        HostBudget(url)
    assert not caplog.records
