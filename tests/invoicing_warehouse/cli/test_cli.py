"""The console script's dispatcher."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from invoicing_warehouse.cli import SUBCOMMANDS


def test_help_lists_every_subcommand():
    result = subprocess.run(
        [sys.executable, "-m", "invoicing_warehouse.cli", "--help"], capture_output=True, text=True, check=True
    )
    for name in ("sandbox", "sync", "models", "demo", "doctor", "webhooks", "dashboard", "export", "lake", "status"):
        assert name in result.stdout
    assert set(SUBCOMMANDS) == {"sandbox", "sync", "models", "demo", "doctor", "webhooks", "dashboard", "export",
                                "lake", "status"}


def test_unknown_subcommand_is_a_usage_error():
    result = subprocess.run(
        [sys.executable, "-m", "invoicing_warehouse.cli", "frobnicate"], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


CONSOLE_SCRIPT = str(Path(sys.executable).with_name("invoicing-warehouse"))


def test_the_console_script_keeps_the_exit_code_and_flushes_the_output(tmp_path):
    """The console script ends without the interpreter's teardown (cli.entry): what the command printed to a
    pipe (block-buffered) must still arrive, and its exit code must be the process's."""
    # a pipe is block-buffered unless PYTHONUNBUFFERED is set (as in some sessions): the test unsets it
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCES__INVOICING__")
           and k != "PYTHONUNBUFFERED"}
    shown = subprocess.run([CONSOLE_SCRIPT, "sync", "--help"], capture_output=True, text=True, cwd=tmp_path,
                           env=env)
    assert shown.returncode == 0
    assert "--follow" in shown.stdout and "--all" in shown.stdout
    warehouse = tmp_path / "warehouse.duckdb"
    failed = subprocess.run([CONSOLE_SCRIPT, "sync", "--warehouse", str(warehouse)], capture_output=True,
                            text=True, cwd=tmp_path, env=env)
    assert failed.returncode == 1, failed.stderr
    assert "sync failed" in failed.stderr and "BASE_URL" in failed.stderr
    assert not warehouse.exists()


def test_resolving_the_settings_does_not_import_streamlit(tmp_path):
    """dlt probes Streamlit's secrets when no secrets.toml exists (importing Streamlit, 0.2 s of a small sync);
    credentials.build_config_providers refuses that import, and the settings still resolve from the
    environment."""
    probe = ("import sys; from pipelines.invoicing.credentials import resolve_settings; "
             "s = resolve_settings(); print(s.base_url, s.client_id, 'streamlit' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCES__INVOICING__")}
    env.update(SOURCES__INVOICING__BASE_URL="http://127.0.0.1:9/api/v2", SOURCES__INVOICING__CLIENT_ID="probe-id",
               SOURCES__INVOICING__CLIENT_SECRET="probe-secret")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["http://127.0.0.1:9/api/v2", "probe-id", "False"]


def test_the_emulator_commands_name_the_missing_extra_instead_of_a_traceback(monkeypatch):
    """An install without the `sandbox` extra (tests/test_packaging.py runs one for real): one line naming the
    install command, exit 1; the product's commands do not care."""
    from importlib import metadata

    from invoicing_warehouse import cli

    installed = metadata.distribution

    def without_the_emulator(name: str):
        if name.lower() == "invoicing-sandbox":  # the emulator's own distribution (invoicing_sandbox/pyproject.toml)
            raise metadata.PackageNotFoundError(name)
        return installed(name)

    monkeypatch.setattr(metadata, "distribution", without_the_emulator)
    assert cli.missing_extra_requirements() == ["invoicing-sandbox"]
    for command in ("demo", "sandbox"):
        with pytest.raises(SystemExit) as stop:
            cli.main([command])
        assert stop.value.code == (f"invoicing-warehouse {command}: needs the emulator's dependencies, not installed "
                                   "here (invoicing-sandbox): pip install 'invoicing-warehouse[sandbox]' (in a "
                                   "checkout: scripts/bootstrap)")
    _parser, module = cli.build_parser(["models", "--help"])
    assert module is not None and module.__name__ == "invoicing_warehouse.cli.models_command"


def test_the_dashboard_names_its_extra_and_the_demo_the_dagster_one_through_the_sandbox(monkeypatch):
    """A product-only install (no extra) runs every product command but `dashboard`, which names its extra; the
    sandbox extra brings Dagster (the demo runs the Dagster job), so a missing Dagster is named for the demo."""
    from importlib import metadata

    from invoicing_warehouse import cli

    installed = metadata.distribution

    def product_only(name: str):
        if name.lower() in ("streamlit", "altair", "dagster"):
            raise metadata.PackageNotFoundError(name)
        return installed(name)

    # an editable install made before the extras were split has no `dashboard` extra in its metadata: the command
    # would then start the dashboard and never return
    assert any('extra == "dashboard"' in r for r in metadata.requires("invoicing-warehouse") or []), \
        "the installed metadata predates the dashboard extra: run scripts/bootstrap"
    monkeypatch.setattr(metadata, "distribution", product_only)
    with pytest.raises(SystemExit) as stop:
        cli.main(["dashboard"])
    assert stop.value.code == ("invoicing-warehouse dashboard: needs the dashboard's dependencies, not installed "
                               "here (streamlit, altair): pip install 'invoicing-warehouse[dashboard]' (in a "
                               "checkout: scripts/bootstrap)")
    assert cli.missing_extra_requirements("sandbox") == ["dagster"]


def test_lake_maintain_refuses_a_duckdb_file_and_a_horizon_that_is_not_days(monkeypatch, tmp_path, capsys):
    from invoicing_warehouse.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INVOICING_WAREHOUSE_ENGINE", raising=False)
    assert main(["lake", "maintain"]) == 2
    assert "DuckLake engine" in capsys.readouterr().err
    monkeypatch.setenv("INVOICING_WAREHOUSE_ENGINE", "ducklake")
    for horizon in ("0", "-3", "soon", "nan"):
        assert main(["lake", "maintain", "--older-than-days", horizon]) == 2
        assert "--older-than-days must be a number of days > 0" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing made, nothing opened


def test_version_comes_from_the_installed_metadata_and_is_the_user_agent():
    """`--version` and the client's User-Agent say the version written once, in pyproject.toml (issue 44)."""
    import tomllib
    from importlib import metadata

    from pipelines.invoicing.http.client import USER_AGENT

    declared = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())["project"]["version"]
    assert metadata.version("invoicing-warehouse") == declared
    for command in ([CONSOLE_SCRIPT], [sys.executable, "-m", "invoicing_warehouse"]):
        shown = subprocess.run([*command, "--version"], capture_output=True, text=True)
        assert shown.returncode == 0, shown.stderr
        assert shown.stdout.strip() == f"invoicing-warehouse {declared}"
    assert USER_AGENT == f"invoicing-warehouse/{declared}"


def test_help_describes_the_product_and_its_exit_codes():
    shown = subprocess.run([CONSOLE_SCRIPT, "--help"], capture_output=True, text=True)
    assert "Entry point" not in shown.stdout
    assert "Invoicing API v2" in shown.stdout
    for code in ("0 ", "1 ", "2 ", "3 ", "130"):
        assert f"\n  {code}" in shown.stdout, shown.stdout
    sub = subprocess.run([CONSOLE_SCRIPT, "status", "--help"], capture_output=True, text=True)
    assert "exit codes" in sub.stdout


def test_quiet_drops_the_command_lines_but_not_errors_nor_json(tmp_path):
    """`-q`: a command's own lines go, its errors stay; with `--json` the document stays (a monitoring script
    asked for it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__INVOICING__", "INVOICING_"))}
    warehouse = str(tmp_path / "w.duckdb")
    loud = subprocess.run([CONSOLE_SCRIPT, "status", "--warehouse", warehouse], capture_output=True, text=True,
                          cwd=tmp_path, env=env)
    quiet = subprocess.run([CONSOLE_SCRIPT, "-q", "status", "--warehouse", warehouse], capture_output=True,
                           text=True, cwd=tmp_path, env=env)
    as_json = subprocess.run([CONSOLE_SCRIPT, "-q", "status", "--warehouse", warehouse, "--json"],
                             capture_output=True, text=True, cwd=tmp_path, env=env)
    assert loud.stdout.strip(), loud.stderr
    assert quiet.returncode == loud.returncode and quiet.stdout == ""
    assert as_json.stdout.lstrip().startswith("{")
    failed = subprocess.run([CONSOLE_SCRIPT, "-q", "sync", "--warehouse", warehouse], capture_output=True,
                            text=True, cwd=tmp_path, env=env)
    assert failed.returncode == 1 and "BASE_URL" in failed.stderr
