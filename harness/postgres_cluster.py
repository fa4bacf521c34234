"""A throwaway PostgreSQL cluster for tests and benchmarks: the DuckLake catalog of `invoicing_warehouse.engine`.

`PostgresCluster` runs Debian's `postgresql` binaries (initdb, pg_ctl, psql) in a temporary folder, on
127.0.0.1 and a free port, as the `postgres` user when the process is root (PostgreSQL refuses to run as
root). It creates one database owned by a user with a random password, and `stop()` shuts the server
down and removes the folder. No PostgreSQL installed is an error that says how to install it.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from harness.common import free_port

DEBIAN_BINARIES = "/usr/lib/postgresql/*/bin"
START_TIMEOUT_S = 60


class PostgresMissing(RuntimeError):
    """PostgreSQL's server binaries are not on this machine."""


def postgres_bin_dir() -> Path:
    """The newest `/usr/lib/postgresql/<version>/bin` holding initdb and pg_ctl, else `PATH`'s."""
    candidates = sorted(glob.glob(DEBIAN_BINARIES), key=lambda p: int(Path(p).parent.name)
                        if Path(p).parent.name.isdigit() else 0, reverse=True)
    for folder in candidates:
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    raise PostgresMissing(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's package "
        "(`apt-get install -y postgresql`; .ci/run does it on a clean machine)"
    )



@dataclass
class PostgresCluster:
    """One PostgreSQL server on 127.0.0.1: `dsn` (no password) and `password` of its database's owner."""

    database: str = "lake"
    user: str = "lake"
    password: str = field(default_factory=lambda: secrets.token_urlsafe(18), repr=False)
    port: int = 0
    root: Path | None = None

    @property
    def dsn(self) -> str:
        """`postgresql://user@127.0.0.1:port/database`, without the password (safe to print)."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.database}"

    def start(self) -> Self:
        """initdb, start (waits until it accepts connections), create the user and the database."""
        binaries = postgres_bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="invoicing-pg-"))
        self.port = self.port or free_port()
        if os.geteuid() == 0:
            shutil.chown(self.root, user="postgres")
        data = self.root / "data"
        try:
            self._run([str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth-local=trust",
                       "--auth-host=scram-sha-256", "--no-sync"])
            options = (f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.root} "
                       "-c fsync=off -c max_connections=200")
            self._run([str(binaries / "pg_ctl"), "-D", str(data), "-l", str(self.root / "server.log"),
                       "-w", "-t", str(START_TIMEOUT_S), "-o", options, "start"])
            self._psql(f"create role {self.user} login password '{self.password}';\n"
                       f"create database {self.database} owner {self.user};\n")
        except BaseException:
            self.stop()
            raise
        return self

    def create_database(self, name: str, owner: str | None = None) -> str:
        """A new database `name` owned by `owner` (default the cluster's user); returns its DSN (without the
        password)."""
        owner = owner or self.user
        if not name.replace("_", "").isalnum() or not owner.replace("_", "").isalnum():
            raise ValueError(f"database {name!r} / owner {owner!r}: letters, digits and _ only")
        self._psql(f"create database {name} owner {owner};\n")
        return f"postgresql://{owner}@127.0.0.1:{self.port}/{name}"

    def create_role(self, name: str, password: str) -> None:
        """A login role `name` with `password`, which may hold any character (a SQL literal, quotes doubled)."""
        if not name.replace("_", "").isalnum():
            raise ValueError(f"role name {name!r}: letters, digits and _ only")
        literal = password.replace("'", "''")
        # psql reads the script: a backslash would start a meta-command even inside the literal, so none here
        if "\\" in password or "\n" in password:
            raise ValueError("a role's password here holds no backslash nor newline")
        self._psql(f"create role {name} login password '{literal}';\n")

    def run_script(self, script: str, database: str) -> None:
        """Runs a SQL script as the superuser `postgres`, connected to `database` (psql, stopping at the first
        error): what an administrator runs by hand, e.g. the roles of docs/deploy/postgres/roles.sql."""
        self._psql(script, database)

    def _psql(self, script: str, database: str | None = None) -> None:
        # over the Unix socket, where `postgres` is trusted; the script (a password too) goes on stdin
        self._run([str(postgres_bin_dir() / "psql"), "-h", str(self.root), "-p", str(self.port), "-U", "postgres",
                   "-v", "ON_ERROR_STOP=1", "-q", *(["-d", database] if database else [])], stdin=script)

    def stop(self) -> None:
        """Stops the server (fast shutdown) and removes its folder; safe to call twice."""
        if self.root is None:
            return
        data = self.root / "data"
        try:
            if (data / "postmaster.pid").exists():
                self._run([str(postgres_bin_dir() / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"])
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def log(self) -> str:
        """The server's log so far (for a failing test's message)."""
        if self.root is None or not (self.root / "server.log").exists():
            return ""
        return (self.root / "server.log").read_text(encoding="utf-8", errors="replace")

    def _run(self, command: list[str], stdin: str | None = None) -> None:
        if os.geteuid() == 0:  # PostgreSQL refuses root: run as its own user
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120,
                              cwd=self.root, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(command[command.index('--') + 1] if '--' in command else command[0]).name} "
                               f"failed ({done.returncode}): {done.stderr.strip()[-2000:]}\n{self.log()[-2000:]}")

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
