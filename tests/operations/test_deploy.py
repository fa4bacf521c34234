"""docs/deploy.md and the files under docs/deploy/ it shows (issue 33, point 6): what the page shows is the files, the
systemd units are valid units, and every command line of the page and of the units names a command and options
that exist.

Truths: the files themselves (each ```block under an `<!-- include: path -->` marker equals its file, and every
file of docs/deploy/ is shown); systemd's own parser (`systemd-analyze verify` on each unit, its program paths pointed
at this checkout); each command's own `--help` (run in this process: argparse's and click's help texts), which
must list every option the line uses; docs/settings.md for every INVOICING_* variable the environment file sets.
System commands (useradd, git, install, systemctl...) are named in an allowed list, not run.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "deploy.md"
DEPLOY = ROOT / "docs" / "deploy"
INSTALLED_AT = "/opt/invoicing-warehouse"  # where the page and the units install the checkout
INCLUDE = re.compile(r"<!-- include: (\S+) -->\n```[a-z]*\n(.*?)```", re.DOTALL)
SHELL_BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)
# the product's commands, checked against their --help; the system's, only named
PRODUCT_COMMANDS = {"invoicing-warehouse", "dagster", "dagster-daemon", "dagster-webserver"}
SYSTEM_COMMANDS = {"useradd", "git", "install", "systemctl", "systemd-analyze", "psql"}
# each unit's environment files (docs/deploy/env/<name>.example): only what the service needs (review 2, M2)
UNIT_ENVIRONMENT = {
    "invoicing-dagster-code.service": ["dagster.env", "writer.env"],
    "invoicing-dagster-daemon.service": ["dagster.env"],
    "invoicing-dagster-webserver.service": ["dagster.env"],
    "invoicing-webhooks.service": ["receiver.env"],
    "invoicing-dashboard.service": ["dashboard.env"],
}
CONFIG_DIR = "/etc/invoicing-warehouse/"
PROJECT_SCRIPTS = {"scripts/bootstrap"}  # run by .ci/run on every CI run
WRAPPERS = {"sudo", "env", "sh", "set", "cd", "."}


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _units() -> list[Path]:
    return sorted((DEPLOY / "systemd").glob("*.service"))


def test_the_page_shows_every_deploy_file_as_it_is():
    shown = {path: body for path, body in INCLUDE.findall(_doc())}
    on_disk = {str(path.relative_to(ROOT)) for path in DEPLOY.rglob("*") if path.is_file()}
    assert set(shown) == on_disk  # nothing shown that is not a file, no file left unshown
    for path, body in shown.items():
        assert body == (ROOT / path).read_text(encoding="utf-8"), f"docs/deploy.md shows an old {path}"


def test_every_unit_is_a_valid_systemd_unit(tmp_path):
    assert len(_units()) == 5
    for unit in _units():
        # the programs must exist for systemd: point the install folder at this checkout
        (tmp_path / unit.name).write_text(unit.read_text(encoding="utf-8").replace(INSTALLED_AT, str(ROOT)))
    analyze = shutil.which("systemd-analyze")
    if analyze is not None:
        done = subprocess.run([analyze, "verify", *sorted(str(p) for p in tmp_path.iterdir())],
                              capture_output=True, text=True, timeout=60, check=False)
        assert (done.returncode, done.stderr.strip()) == (0, ""), done.stderr
    for unit in tmp_path.iterdir():  # and what systemd does not check: each unit's shape, the env it expands
        sections = _sections(unit.read_text(encoding="utf-8"))
        assert set(sections) == {"Unit", "Service", "Install"}, unit.name
        service = sections["Service"]
        files = _environment_files(unit.read_text(encoding="utf-8"))
        assert files == [CONFIG_DIR + name for name in UNIT_ENVIRONMENT[unit.name]], unit.name
        assert service["User"] == "invoicing" and service["NoNewPrivileges"] == "yes"
        assert Path(service["ExecStart"].split()[0]).is_file(), unit.name
        environment = _env_example(*UNIT_ENVIRONMENT[unit.name])
        for name in re.findall(r"\$\{(\w+)\}", service["ExecStart"]):
            assert name in environment, f"{unit.name} expands ${{{name}}}, which its environment files lack"


def _environment_files(unit_text: str) -> list[str]:
    """Every `EnvironmentFile=` of a unit, in order (systemd reads each; `_sections` keeps one value a key)."""
    return re.findall(r"^EnvironmentFile=(\S+)$", unit_text, re.MULTILINE)


def test_each_unit_gets_only_the_secrets_and_the_role_it_needs():
    """Review 2, M2: five units loaded one file holding every secret. Now the internet-facing receiver holds its
    token and the spool role's password only; the API's client secrets, the AWS keys and the catalog's owner are
    the writer's alone; the dashboard reads as the readers' role; every role named is one roles.sql creates."""
    receiver, dashboard, writer, dagster = (_env_example(name) for name in
                                            ("receiver.env", "dashboard.env", "writer.env", "dagster.env"))
    assert set(receiver) == {"INVOICING_WEBHOOK_TOKEN", "INVOICING_HINT_SPOOL", "INVOICING_HINT_SPOOL_PASSWORD"}
    assert receiver["INVOICING_HINT_SPOOL"].startswith("postgresql://invoicing_receiver@")
    assert set(dagster) == {"DAGSTER_PG_HOST", "DAGSTER_PG_PORT", "DAGSTER_PG_USER", "DAGSTER_PG_PASSWORD",
                            "DAGSTER_PG_DB"}
    assert dashboard["INVOICING_DUCKLAKE_CATALOG"].startswith("postgresql://invoicing_reader@")
    assert writer["INVOICING_DUCKLAKE_CATALOG"].startswith("postgresql://invoicing@")
    assert writer["INVOICING_RATE_BUDGET_URL"].startswith("postgresql://invoicing_budget@")
    for name, environment in (("receiver.env", receiver), ("dashboard.env", dashboard), ("dagster.env", dagster)):
        held = [key for key in environment if key.startswith("SOURCES__") or key == "INVOICING_RATE_BUDGET_PASSWORD"
                or (key == "INVOICING_DUCKLAKE_CATALOG" and "//invoicing@" in environment[key])]
        assert held == [], f"{name} holds the writer's {held}"
    roles_sql = (DEPLOY / "postgres" / "roles.sql").read_text(encoding="utf-8")
    for role in ("invoicing_receiver", "invoicing_budget", "invoicing_reader"):
        assert f"create role {role} login;" in roles_sql


def _sections(text: str) -> dict[str, dict[str, str]]:
    """A unit file's sections and keys (comments and blank lines skipped; a repeated key keeps the last value)."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        header = re.fullmatch(r"\[(\w+)\]", line.strip())
        if header:
            current = sections.setdefault(header.group(1), {})
            continue
        assert current is not None and "=" in line, f"not a unit line: {line!r}"
        key, value = line.split("=", 1)
        current[key.strip()] = value.strip()
    return sections


def _env_example(*names: str) -> dict[str, str]:
    """The settings of the environment files `names` (every one of docs/deploy/env/ when none is named)."""
    paths = [DEPLOY / "env" / f"{name}.example" for name in names] or sorted((DEPLOY / "env").glob("*.env.example"))
    lines = [line for path in paths for line in path.read_text(encoding="utf-8").splitlines()]
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


def test_every_invoicing_setting_of_the_environment_file_is_documented():
    documented = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    settings = [name for name in _env_example() if name.startswith("INVOICING_")]
    assert len(settings) >= 7
    assert [name for name in settings if f"`{name}`" not in documented] == []


def _command_lines() -> list[str]:
    """Every command line of the page's ```sh blocks and of the units' ExecStart."""
    lines = [line.strip() for block in SHELL_BLOCK.findall(_doc()) for line in block.splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    lines += [_sections(unit.read_text(encoding="utf-8"))["Service"]["ExecStart"] for unit in _units()]
    return lines


def _invocations(line: str) -> list[list[str]]:
    """The commands a line runs (`sh -c '...; ...'` opened, `sudo -u USER env K=V` skipped), as argument lists."""
    found: list[list[str]] = []
    words = shlex.split(line.replace("${", "").replace("}", ""))
    while words and (words[0] in WRAPPERS or re.fullmatch(r"\w+=\S*", words[0])):
        word = words.pop(0)
        if word == "sudo" and words[:1] == ["-u"]:
            words = words[2:]
        elif word == "sh" and words[:1] == ["-c"]:
            for part in words[1].split(";"):
                found += _invocations(part)
            return found
        elif word in ("set", "cd", "."):
            return found
    if words:
        found.append(words)
    return found


def _help(program: str, arguments: list[str]) -> str:
    """`program arguments --help`, run in this process: the console script's own parser prints it."""
    output = io.StringIO()
    argv = [program, *arguments, "--help"]
    with contextlib.redirect_stdout(output), pytest.raises(SystemExit) as ended:
        if program == "invoicing-warehouse":
            from invoicing_warehouse.cli import main

            main(argv[1:])
        else:
            entry = {"dagster": "dagster._cli", "dagster-daemon": "dagster._daemon.cli",
                     "dagster-webserver": "dagster_webserver.cli"}[program]
            saved, sys.argv = sys.argv, argv
            try:
                importlib.import_module(entry).main()
            finally:
                sys.argv = saved
    assert ended.value.code in (0, None), f"{' '.join(argv)}: exit {ended.value.code}\n{output.getvalue()}"
    return output.getvalue()


def test_every_command_line_names_existing_commands_and_options():
    checked = 0
    for line in _command_lines():
        for words in _invocations(line):
            program = Path(words[0]).name
            for word in words:  # a file of the checkout named by its installed path must exist here
                if word.startswith(INSTALLED_AT + "/"):
                    assert (ROOT / word.removeprefix(INSTALLED_AT + "/")).exists(), f"{line}: no {word}"
            if program in SYSTEM_COMMANDS or words[0].removeprefix(INSTALLED_AT + "/") in PROJECT_SCRIPTS:
                continue
            assert program in PRODUCT_COMMANDS, f"{line}: {program} is neither the product's nor a known system command"
            subcommands = []
            for word in words[1:]:
                if word.startswith("-"):
                    break
                subcommands.append(word)
            text = _help(program, subcommands)
            options = [word.split("=", 1)[0] for word in words[1:] if word.startswith("-")]
            missing = [option for option in options if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text)]
            assert missing == [], f"{line}: {program} {' '.join(subcommands)} has no {missing}"
            checked += 1
    assert checked >= 9  # 5 units, register, status, sensor stop, instance migrate
    # what the lines name beyond options: the module Dagster serves, the sensor the page stops
    assert importlib.util.find_spec("dagster_project.definitions") is not None
    assert 'name="build_models_after_portal_runs"' in (ROOT / "dagster_project" / "model_sensor.py").read_text()
