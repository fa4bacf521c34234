"""The habits that keep the house tidy, run with the test suite: ruff and mypy are clean, every import
points down the layers of docs/architecture.md (import-linter, contracts in pyproject.toml), and no two
modules of the project import each other, directly or through others (grimp's import graph)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PRODUCT = ["invoicing_warehouse", "pipelines", "assets", "dagster_project", "harness", "invoicing_sandbox"]


def _run(tool: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(tool, cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)


def test_ruff_is_clean_over_the_product():
    result = _run([str(BIN / "ruff"), "check", *PRODUCT])
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_lines_imports_and_bugbear_are_clean_over_the_lab():
    # tests/ and bench/ are held to pycodestyle (line length included), sorted imports, bugbear and pyflakes;
    # ruff's other default rules (pyupgrade, pylint's...) do not hold there yet
    result = _run([str(BIN / "ruff"), "check", "--select", "E,I,B,F", "tests", "bench"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean_over_the_product():
    # settings in pyproject.toml ([tool.mypy]); the sandbox is typed like the rest, no override
    result = _run([str(BIN / "mypy"), *PRODUCT])
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_import_points_down_the_layers():
    result = _run([str(BIN / "lint-imports"), "--no-cache"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


def test_no_import_cycle_between_modules():
    graph = grimp.build_graph(*PRODUCT, "bench")
    cycles = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            # a package importing its own submodule (`__init__` re-exports) is not a cycle of roles
            if imported.startswith(importer + ".") or importer.startswith(imported + "."):
                continue
            if graph.chain_exists(importer=imported, imported=importer):
                cycles.append(f"{importer} -> {imported} -> ... -> {importer}")
    assert cycles == [], "\n".join(cycles)


# --- One door for settings (issue 43, point 3): invoicing_warehouse/engine/environment/reader.py reads the environment
# ---
SETTINGS_DOOR = "invoicing_warehouse/engine/environment/"
# writes into the environment, not reads of a setting: `.env` loaded under it at start (its names are the file's),
# and `sync --follow` setting one of dlt's keys for dlt
ENVIRONMENT_WRITERS = {"invoicing_warehouse/engine/env_file.py": "load_env_file",
                       "invoicing_warehouse/cli/follow.py": "_stop_on_ctrl_c"}
SETTINGS_PACKAGES = ["invoicing_warehouse", "pipelines", "assets", "dagster_project"]


def settings_read_outside_the_door(source: str, module: str) -> list[str]:
    """Every place of `source` (the file `module`, relative to the root) that reads a setting other than through
    the door: a use of `os.environ`, `os.getenv` or Dagster's `EnvVar`; a whole string naming an `INVOICING_*`
    variable (names come from the catalogue only); a mapping read by a catalogued setting's `.name`."""
    import ast
    import re

    if module.startswith(SETTINGS_DOOR):
        return []
    tree = ast.parse(source)
    writer = ENVIRONMENT_WRITERS.get(module)
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if writer and isinstance(node, ast.FunctionDef) and node.name == writer:
            allowed |= {id(inner) for inner in ast.walk(node)}
    from_door = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 and (node.module or "").startswith("invoicing_warehouse.engine.environment") for alias in node.names}
    aliases = {target.id for node in tree.body if isinstance(node, ast.Assign)
               and isinstance(node.value, ast.Attribute) and node.value.attr == "name"
               and isinstance(node.value.value, ast.Name) and node.value.value.id in from_door
               for target in node.targets if isinstance(target, ast.Name)}

    def names_a_setting(key: ast.AST) -> bool:
        return ((isinstance(key, ast.Attribute) and key.attr == "name" and isinstance(key.value, ast.Name)
                 and key.value.id in from_door) or (isinstance(key, ast.Name) and key.id in aliases))

    found = []
    for node in ast.walk(tree):
        line = f"{module}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in ("environ", "environb", "getenv", "getenvb") and id(node) not in allowed:
            found.append(f"{line} os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(
                alias.name in ("environ", "getenv") for alias in node.names):
            found.append(f"{line} from os import environ/getenv")
        elif isinstance(node, ast.Name) and node.id == "EnvVar":
            found.append(f"{line} EnvVar")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and re.fullmatch(r"INVOICING_[A-Z0-9_]+", node.value):
            found.append(f"{line} {node.value!r} named outside the catalogue")
        elif isinstance(node, ast.Subscript) and names_a_setting(node.slice):
            found.append(f"{line} a mapping read by a setting's name")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and names_a_setting(node.args[0]):
            found.append(f"{line} a mapping read by a setting's name")
    return found


def test_the_checker_finds_every_way_round_the_door():
    planted = """
import os
from os import environ
from dagster import EnvVar
from invoicing_warehouse.engine.environment.run_settings import ALERT_URL
ALERT_ENV = ALERT_URL.name
a = os.environ.get("INVOICING_ALERT_URL")
b = os.getenv("X")
c = EnvVar("Y").get_value()
def f(env):
    return env[ALERT_URL.name], env.get(ALERT_ENV)
"""
    found = settings_read_outside_the_door(planted, "invoicing_warehouse/runs/planted.py")
    # line 3 (from os import environ), 4 (EnvVar imported is an ImportFrom, not a Name: not counted), 7 (os.environ
    # and its string), 8 (os.getenv), 9 (EnvVar), 11 (two mapping reads)
    assert sorted(entry.split(" ", 1)[0] for entry in found) == [
        "invoicing_warehouse/runs/planted.py:11", "invoicing_warehouse/runs/planted.py:11",
        "invoicing_warehouse/runs/planted.py:3", "invoicing_warehouse/runs/planted.py:7",
        "invoicing_warehouse/runs/planted.py:7",
        "invoicing_warehouse/runs/planted.py:8", "invoicing_warehouse/runs/planted.py:9"]
    assert settings_read_outside_the_door(planted, "invoicing_warehouse/engine/environment/reader.py") == []


def test_settings_are_read_only_through_the_door():
    found = []
    for package in SETTINGS_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = path.relative_to(ROOT).as_posix()
            found += settings_read_outside_the_door(path.read_text(encoding="utf-8"), module)
    assert found == [], ("settings read outside invoicing_warehouse/engine/environment/ (docs/settings.md):\n"
                         + "\n".join(found))


def test_the_files_beside_a_warehouse_are_named_only_by_warehouse_files():
    import ast
    import re

    # a whole string ending like one of WarehouseFiles' names (`".gate.json"`, f"{stem}.runs.json" parts too)
    sidecar = re.compile(r".*\.(read\.duckdb|gate\.json|runs\.json|hints\.sqlite|unpublished|demo)")
    found = []
    for package in SETTINGS_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "warehouse_files.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value \
                        and len(node.value) < 40 and sidecar.fullmatch(node.value):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert found == [], "ask invoicing_warehouse/engine/warehouse_files.py for these files:\n" + "\n".join(found)
