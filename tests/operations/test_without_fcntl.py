"""Issue 44, point 3: the product imports and runs where `fcntl` does not exist (Windows).

A subprocess installs an import hook that makes `import fcntl` raise ImportError before anything else is
imported (as on Windows, where the module does not exist), then imports every module of the product, syncs a small
warehouse from the sandbox and publishes it (harness/demo_warehouse.py), and runs `models` and `export` on it: a
machine without `fcntl` from its first run (filelock then takes its soft locks, which a lock file left by the
native lock of another machine's run would not be). The truths: the hook was asked for `fcntl`
and refused it (so the run did go without it), every import and both commands succeeded, and the exported
receivables equal the readers' copy read with DuckDB.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ["invoicing_warehouse", "pipelines", "assets", "dagster_project"]

WITHOUT_FCNTL = r"""
import importlib, importlib.abc, json, pkgutil, sys

refused = []

class NoFcntl(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "fcntl":
            refused.append(name)
            raise ImportError("No module named 'fcntl' (made unavailable by the test)")
        return None

sys.modules.pop("fcntl", None)
sys.meta_path.insert(0, NoFcntl())
try:
    import fcntl  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("the hook did not refuse fcntl")

warehouse, out, packages = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
imported = []
for package in packages:
    module = importlib.import_module(package)
    imported.append(package)
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        if info.name == "invoicing_warehouse.dashboard.app" or info.name.endswith(".__main__"):
            continue  # scripts run when imported (Streamlit's page, `python -m`): their imports are below
        importlib.import_module(info.name)
        imported.append(info.name)
# what invoicing_warehouse/dashboard/app.py imports
import invoicing_warehouse.dashboard.screens, invoicing_warehouse.dashboard.source
import invoicing_warehouse.cli  # what invoicing_warehouse/__main__.py imports

from pathlib import Path
from harness.demo_warehouse import build_demo_warehouse
as_of = build_demo_warehouse(Path(warehouse), seed=3, scale=40).isoformat()

from invoicing_warehouse.cli import main
models = main(["models", "--warehouse", warehouse, "--as-of", as_of])
export = main(["export", "--warehouse", warehouse, "--as-of", as_of, "--format", "csv", "--out", out])
print(json.dumps({"as_of": as_of, "refused": len(refused), "fcntl_loaded": "fcntl" in sys.modules, "imported": imported,
                  "models": models, "export": export}))
"""


def test_every_module_imports_and_models_and_export_run_without_fcntl(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    out = tmp_path / "out"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)
    run = subprocess.run([sys.executable, "-c", WITHOUT_FCNTL, str(warehouse), str(out), ",".join(PRODUCT)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["refused"] >= 1 and report["fcntl_loaded"] is False  # the run truly went without fcntl
    assert report["models"] == 0 and report["export"] == 0, run.stderr[-4000:]
    # every module of the product: one per .py file under the product's packages (the page script aside)
    files = {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
             for package in PRODUCT for path in (ROOT / package).rglob("*.py")}
    expected = {name for name in files
                if name != "invoicing_warehouse.dashboard.app" and not name.endswith(".__main__")}
    assert expected <= set(report["imported"])
    with duckdb.connect(str(warehouse.with_name("warehouse.read.duckdb")), read_only=True) as copy:
        count, total = copy.execute("select count(*), coalesce(sum(open_amount), 0) from marts.receivables").fetchone()
    with (out / "receivables.csv").open(encoding="utf-8") as exported:
        rows = list(csv.DictReader(exported))
    assert count > 0 and len(rows) == count
    assert sum((Decimal(row["open_amount"] or 0) for row in rows), Decimal(0)) == total
