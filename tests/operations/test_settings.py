"""docs/settings.md lists every setting the code reads (parsed from the code, so a new variable without a row
fails), and the command line and Dagster resolve the same values from `.env` and from `.dlt/secrets.toml`, the
environment winning over `.env`."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
PRODUCT = ("invoicing_warehouse", "assets", "dagster_project", "pipelines")
VARIABLE = re.compile(r"INVOICING_[A-Z0-9_]+")
DLT_KEY = re.compile(r"(sources|runtime|normalize|warehouse|destination)\.[a-z_]+(\.[a-z_]+)*")
DLT_ENV = re.compile(r"(SOURCES|RUNTIME|NORMALIZE|DESTINATION)__[A-Z_]+")


def _read_settings() -> set[str]:
    """Every whole string constant of the product's code that names a setting: `INVOICING_*` variables, dlt
    keys (`runtime.dlthub_telemetry`) and dlt keys in their environment form (`RUNTIME__INTERCEPT_SIGNALS`);
    and the keys `resolve_settings` builds per section (credentials.py's loop over names)."""
    found: set[str] = set()
    for package in PRODUCT:
        for path in (PROJECT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value
                    if VARIABLE.fullmatch(text) or DLT_KEY.fullmatch(text) or DLT_ENV.fullmatch(text):
                        found.add(text)
    credentials = ast.parse((PROJECT / "pipelines/invoicing/credentials.py").read_text(encoding="utf-8"))
    for loop in (n for n in ast.walk(credentials) if isinstance(n, ast.For) and isinstance(n.iter, ast.Tuple)):
        for item in loop.iter.elts:
            name = item.elts[0]  # type: ignore[attr-defined]
            if isinstance(name, ast.Constant):
                found.add(f"sources.invoicing.{name.value}")
            else:  # f"{prefix}client_id": the sync's client and the webhooks' (prefix "webhook_")
                tail = "".join(part.value for part in name.values if isinstance(part, ast.Constant))
                found |= {f"sources.invoicing.{tail}", f"sources.invoicing.webhook_{tail}"}
    return found


def test_the_settings_table_lists_every_setting_the_code_reads():
    read = _read_settings()
    assert {"INVOICING_WAREHOUSE_ENGINE", "sources.invoicing.client_secret", "runtime.dlthub_telemetry",
            "sources.invoicing.webhook_client_id", "INVOICING_STALE_AFTER_MINUTES"} <= read  # the parser works
    table = (PROJECT / "docs/settings.md").read_text(encoding="utf-8")
    rows = {cell for line in table.splitlines() if line.startswith("| `")
            for cell in re.findall(r"`([^`]+)`", line.split("|")[1])}
    listed = rows | {re.sub(r"\.", "__", r).upper() for r in rows}  # a dlt key's row covers its env form
    # a section the code builds keys under (`sources.invoicing`, `SOURCES__INVOICING__PORTALS__`) is covered by
    # the rows of its keys
    assert sorted(name for name in read if not any(row.startswith(name) for row in listed)) == []
    assert "INVOICING_NOT_A_SETTING" not in listed  # the table is not read as "anything goes"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project folder as the working directory, the environment restored after (`.env` writes into it), and
    dlt's configuration re-read from this folder's `.dlt/` (dlt keeps its providers per process)."""
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    saved = dict(os.environ)
    for name in [n for n in os.environ if n.startswith(("SOURCES__", "INVOICING_WAREHOUSE", "DLT_PROJECT_DIR"))]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    context = Container()[PluggableRunContext]
    context.reload(str(tmp_path))
    yield tmp_path
    os.environ.clear()
    os.environ.update(saved)
    monkeypatch.chdir(PROJECT)
    context.reload(str(PROJECT))


def _cli_and_dagster(project: Path):
    """(the CLI's settings of the portal `default`, Dagster's, Dagster's warehouse path), each resolved the way
    its entry point does: `invoicing-warehouse` (cli.main) and the deployment's definitions."""
    from dagster_project.definitions import project_definitions
    from invoicing_warehouse.cli import main
    from pipelines.invoicing.load.portal_sync import portal_settings
    from pipelines.invoicing.portals import Portal

    assert main(["status", "--warehouse", str(project / "w.duckdb"), "--json"]) == 1  # never synced; reads .env
    cli = portal_settings(Portal("default"))  # what `sync` resolves
    defs = project_definitions()
    api = defs.resources["invoicing_api"].resource_fn(None)
    return cli, api.settings(), defs.resources["warehouse"].path


def test_cli_and_dagster_resolve_the_same_values_from_secrets_toml(project, capsys):
    (project / ".dlt").mkdir()
    (project / ".dlt/secrets.toml").write_text(
        '[sources.invoicing]\nbase_url = "https://toml.example/api/v2"\nclient_id = "toml-id"\n'
        'client_secret = "toml-secret"\n')
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    Container()[PluggableRunContext].reload(str(project))
    cli, dagster, _ = _cli_and_dagster(project)
    assert (cli.base_url, cli.client_id, cli.client_secret) == ("https://toml.example/api/v2", "toml-id", "toml-secret")
    assert dagster == cli
    assert "toml-secret" not in capsys.readouterr().out


def test_cli_and_dagster_read_dot_env_and_the_environment_wins(project, monkeypatch):
    (project / ".env").write_text(
        "SOURCES__INVOICING__BASE_URL=https://dotenv.example/api/v2\nSOURCES__INVOICING__CLIENT_ID=dotenv-id\n"
        "SOURCES__INVOICING__CLIENT_SECRET=dotenv-secret\nINVOICING_WAREHOUSE_PATH=from-dotenv.duckdb\n")
    # a folder other than the checkout: its `.env` is read only when named (invoicing_warehouse/engine/env_file.py)
    monkeypatch.setenv("INVOICING_ENV_FILE", str(project / ".env"))
    monkeypatch.setenv("SOURCES__INVOICING__CLIENT_ID", "environment-id")
    cli, dagster, warehouse = _cli_and_dagster(project)
    assert (cli.base_url, cli.client_id, cli.client_secret) == ("https://dotenv.example/api/v2", "environment-id",
                                                                "dotenv-secret")
    assert dagster == cli
    assert warehouse == "from-dotenv.duckdb"


def test_the_settings_page_is_the_one_the_catalogue_generates():
    from invoicing_warehouse.engine.environment.docs import render_settings_doc

    committed = (PROJECT / "docs/settings.md").read_text(encoding="utf-8")
    assert committed == render_settings_doc(), (
        "docs/settings.md differs from the catalogue: python -m invoicing_warehouse.engine.environment.docs > "
        "docs/settings.md")
