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
PRODUCT = ["invoicing_warehouse", "dashboard", "runs", "warehouse_engine", "pipelines", "assets", "dagster_project",
           "harness", "sandbox", "demo"]


def _run(tool: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(tool, cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)


def test_ruff_is_clean_over_the_product():
    result = _run([str(BIN / "ruff"), "check", *PRODUCT])
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
