"""Issue 30, point 7: the supply-chain finding of the security review (M7), as rows of the attack table.

M7 found ranges without upper bounds, no lock, no hashes, an unpinned `uv`, and the lab (sandbox, harness, faker,
fastapi) shipped in the product. Issue 29 answered it (uv.lock, a pinned uv, extras); these rows keep it answered:
the probe is a package file swapped on the index (a new upload under a pinned version, as the review feared for the
single-maintainer extension wheels), which only an install that checks hashes refuses. The wheel's contents are
checked by tests/test_packaging.py (`test_the_wheel_holds_the_product_and_its_sql_not_the_lab`).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lock() -> list[dict]:
    return tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))["package"]


def test_m7_every_file_the_lock_may_install_carries_its_sha256():
    packages = _lock()
    unhashed = []
    for package in packages:
        source = package.get("source", {})
        if "editable" in source:
            continue
        assert "registry" in source, package["name"]  # no git or path source, whose content no hash pins
        files = [*package.get("wheels", []), *([package["sdist"]] if "sdist" in package else [])]
        assert files, package["name"]
        unhashed += [f"{package['name']}: {file.get('url')}" for file in files
                     if not re.fullmatch(r"sha256:[0-9a-f]{64}", file.get("hash", ""))]
    assert unhashed == []
    # the only files installed without a hash are the checkout's own two projects: the product and its emulator
    # (a uv workspace member since issue 43 moved it into a distribution of its own)
    assert sorted(p["name"] for p in packages if "editable" in p.get("source", {})) == [
        "invoicing-sandbox", "invoicing-warehouse"]


def test_m7_the_install_checks_the_lock_and_the_native_wheels_are_pinned_exactly():
    bootstrap = (ROOT / "scripts" / "bootstrap").read_text(encoding="utf-8")
    # --frozen installs the lock as it is (hashes checked), never a fresh resolution that could pick a new upload
    assert re.search(r"uv sync [^\n]*--frozen", bootstrap)
    assert re.search(r'^UV_VERSION=\d+\.\d+\.\d+$', bootstrap, re.MULTILINE)  # the installer itself is pinned
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    native = [d for d in pyproject["project"]["dependencies"] if d.startswith(("duckdb", "duckdb-extension"))]
    assert native and all(re.fullmatch(r"[a-z0-9-]+==\d+\.\d+\.\d+", d) for d in native), native
    extras = pyproject["project"]["optional-dependencies"]
    lab = {"fastapi", "faker"}
    assert not [d for d in pyproject["project"]["dependencies"] if re.split(r"[<>=!~\[ ]", d)[0] in lab]
    # the lab comes only with the `sandbox` extra, through the emulator's own distribution
    assert "invoicing-sandbox" in {re.split(r"[<>=!~\[ ]", d)[0] for d in extras["sandbox"]}
    emulator = tomllib.loads((ROOT / "invoicing_sandbox" / "pyproject.toml").read_text(encoding="utf-8"))
    assert lab <= {re.split(r"[<>=!~\[ ]", d)[0].lower() for d in emulator["project"]["dependencies"]}
