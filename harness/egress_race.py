"""Processes that share no files and one rate budget in PostgreSQL (the tests of `database_budget.py`).

Each racer is a separate Python process (`python -m harness.egress_race race ...`), optionally inside a network
namespace (`ip netns exec NS`), with its own HOME, XDG_RUNTIME_DIR and INVOICING_RATE_BUDGET_DIR: nothing on disk
in common with the others, only `INVOICING_RATE_BUDGET_URL`. It builds the product's `InvoicingClient` (so the
budget is chosen the way a sync chooses it) when told `prepare URL ID SECRET N`, says `ready`, waits for `go` on
its standard input (every racer starts at once, whatever their imports cost), GETs `/me` N times and prints one
JSON line: its requests, its 429s. It then waits for the next `prepare`: one process serves a module's races.

`race --as-user UID:GID[,GID...]` (started as root) becomes that user, with those groups, once its imports are done:
the interpreter's own files may be readable by root only (a pyenv under /root), the project's are by everyone.

`hold` is a process that takes the budget's row lock (inside `DatabaseBudget.hold`) after one reservation, says
`held` and sleeps: the test kills it (SIGKILL) there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class RacerResult:
    """What one racer reported: its requests made (429s included), its 429s, its wall time from `go`."""

    requests: int
    throttled: int
    seconds: float
    egress: str


def private_env(folder: Path, budget_url: str, **extra: str) -> dict[str, str]:
    """The environment of one racer: its own HOME, runtime and budget folders under `folder`, the budget's URL."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("INVOICING_") and key != "PYTHONDONTWRITEBYTECODE"}
    env.update(own_folders(folder), INVOICING_RATE_BUDGET_URL=budget_url, PYTHONPATH=str(ROOT), **extra)
    return env


def own_folders(folder: Path) -> dict[str, str]:
    """HOME, XDG_RUNTIME_DIR, XDG_CACHE_HOME and INVOICING_RATE_BUDGET_DIR of one process, all under `folder`
    (created 0700): a process with these shares no local state file with another."""
    for name in ("home", "run", "budget", "cache"):
        (folder / name).mkdir(parents=True, exist_ok=True, mode=0o700)
    return {"HOME": str(folder / "home"), "XDG_RUNTIME_DIR": str(folder / "run"),
            "XDG_CACHE_HOME": str(folder / "cache"), "INVOICING_RATE_BUDGET_DIR": str(folder / "budget")}


def start(mode: str, env: dict[str, str], *args: str, netns: str | None = None) -> subprocess.Popen:
    """One racer (`race`: then `prepare` it and `race` the prepared) or holder (`hold`) process; in the network
    namespace `netns` when given. A racer serves one race after another until its standard input closes."""
    command = [sys.executable, "-m", "harness.egress_race", mode, *args]
    if netns is not None:
        command = ["ip", "netns", "exec", netns, *command]
    return subprocess.Popen(command, env=env, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def await_line(process: subprocess.Popen, expected: str, timeout_s: float = 60.0) -> str:
    """Reads the process's output until a line starting with `expected` (bounded by `timeout_s`), returned;
    AssertionError (with the process's errors) when it ends first. The process is killed on a failure."""
    deadline = time.monotonic() + timeout_s
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith(expected):
            return line.strip()
        if not line and process.poll() is not None:
            break
    process.kill()
    _, errors = process.communicate(timeout=10)
    raise AssertionError(f"no {expected!r} from the process: {errors[-3000:]}")


def prepare(racer: subprocess.Popen, base_url: str, client_id: str, client_secret: str, requests: int) -> None:
    """Tells a racer its next race: it builds its client, then waits for `race`'s go."""
    _say(racer, f"prepare {base_url} {client_id} {client_secret} {requests}")


def race(racers: list[subprocess.Popen], timeout_s: float = 120.0) -> list[RacerResult]:
    """Waits until every prepared racer is ready, says `go` to all at once, and collects their reports."""
    for racer in racers:
        await_line(racer, "ready")
    for racer in racers:
        _say(racer, "go")
    return [RacerResult(**json.loads(await_line(racer, "{", timeout_s))) for racer in racers]


def stop(processes: list[subprocess.Popen]) -> None:
    """Closes the racers' input (they exit) and waits for them; kills one still there after 10 s."""
    for process in processes:
        if process.stdin is not None and not process.stdin.closed:
            process.stdin.close()
    for process in processes:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _say(process: subprocess.Popen, line: str) -> None:
    assert process.stdin is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()


def _serve_races(as_user: str | None = None) -> None:
    from pipelines.invoicing.http.client import InvoicingClient
    from pipelines.invoicing.http.client_settings import ClientSettings
    from pipelines.invoicing.http.egress import egress_for

    if as_user:
        _become(as_user)

    for command in sys.stdin:
        words = command.split()
        if not words or words[0] != "prepare":
            continue
        base_url, client_id, client_secret, requests = words[1], words[2], words[3], int(words[4])
        with InvoicingClient(ClientSettings(base_url, client_id, client_secret)) as client:
            print("ready", flush=True)
            sys.stdin.readline()  # go
            began = time.monotonic()
            for _ in range(requests):
                client.get("/me")
            stats = client.stats.snapshot()
        print(json.dumps({"requests": sum(stats["requests"].values()),
                          "throttled": sum(stats["throttled"].values()),
                          "seconds": time.monotonic() - began, "egress": egress_for(base_url)}), flush=True)


def _become(as_user: str) -> None:
    """Drops root for `UID:GID[,GID...]` (the first group the primary one, all of them the process's groups), after
    importing what a race needs later (the interpreter's library may not be readable by that user)."""
    import encodings.idna  # noqa: F401  (httpx's first request to a host name)
    import ssl  # noqa: F401

    import httpx  # noqa: F401

    uid, groups = as_user.split(":")
    gids = [int(gid) for gid in groups.split(",")]
    os.setgroups(gids)
    os.setgid(gids[0])
    os.setuid(int(uid))


def _hold(base_url: str) -> None:
    from pipelines.invoicing.http.client import shared_budget_of
    from pipelines.invoicing.http.database_budget import DatabaseBudget
    from pipelines.invoicing.http.ratelimit import RateLimiter

    budget = shared_budget_of(base_url)
    assert isinstance(budget, DatabaseBudget), "no budget database configured"
    RateLimiter(10, clock=budget.clock, shared=budget).acquire()  # a reservation it will never use
    with budget.hold():
        print("held", flush=True)
        time.sleep(120)  # bounded: the test kills it long before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="mode", required=True)
    racer = commands.add_parser("race")
    racer.add_argument("--as-user", help="UID:GID[,GID...] to become once imported (started as root)")
    holder = commands.add_parser("hold")
    holder.add_argument("base_url")
    args = parser.parse_args()
    if args.mode == "race":
        _serve_races(args.as_user)
    else:
        _hold(args.base_url)


if __name__ == "__main__":
    main()
