"""What ships, and that it runs without the checkout: the wheel built from the project's files, installed into
a fresh virtual environment with the lock's versions and no extra (no Dagster, dashboard, sandbox or dev tools),
run from another directory: `models` builds every model of the checkout on a small warehouse, `sync` and `doctor`
work against a sandbox (served by this test process, from the checkout), `dashboard` and `demo` name the extra
they lack, and with the `dashboard` extra added the dashboard answers its health endpoint. The wheel's top-level
packages are exactly the designed ones and invoicing_warehouse; it holds the SQL (the top-level sql/ as
invoicing_warehouse/sql/) and none of harness/, tests/, bench/ or the emulator, whose own distribution
(invoicing_sandbox/pyproject.toml) holds it alone. Also: uv.lock matches pyproject.toml, one uv version everywhere,
every relative link of the docs resolves.

One wheel and one environment for the module (about 5 s from uv's cache); the commands' first runs compile
their modules' bytecode in the new environment, most of this module's time."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import duckdb
import httpx
import pytest

from harness.regular_build import sync_sandbox

ROOT = Path(__file__).resolve().parents[1]
UV = [sys.executable, "-m", "uv"]
CHECKOUT_MODELS = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "sql").glob("*/*.sql"))
# the wheel's top-level packages: the designed ones and the product's namespace (issue 43); the emulator ships in a
# distribution of its own
DESIGNED_TOP_LEVEL = {"pipelines", "assets", "dagster_project", "invoicing_warehouse"}
HEALTH_TIMEOUT_S = 60.0


def _run(command: list[str], **options) -> subprocess.CompletedProcess:
    options.setdefault("timeout", 180)
    return subprocess.run(command, capture_output=True, text=True, check=False, **options)


def _uv(*args: str) -> subprocess.CompletedProcess:
    done = _run([*UV, *args], cwd=ROOT)
    assert done.returncode == 0, f"uv {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


@dataclass
class Installed:
    """The built wheel and the fresh environment it is installed in."""

    wheel: Path
    venv: Path
    elsewhere: Path  # the working directory of every command: no checkout there, nor above it

    @property
    def command(self) -> str:
        return str(self.venv / "bin" / "invoicing-warehouse")

    def env(self, **extra: str) -> dict[str, str]:
        """This test's environment without what could lead the installed commands back to the checkout or
        to a real account; bytecode is written (the first run of each command compiles its modules once)."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE", "PYTHONHOME")
               and not k.startswith(("SOURCES__", "INVOICING_WAREHOUSE", "DLT_", "UV_"))}
        env.update(DLT_DATA_DIR=str(self.elsewhere / "dlt"), **extra)
        return env

    def run(self, *args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess:
        return _run([self.command, *args], cwd=self.elsewhere, env=self.env(**env), timeout=timeout)


def _project_files(destination: Path) -> Path:
    """A copy of what a clone holds (tracked files, and new ones not ignored), built apart from the checkout:
    setuptools writes its build/ folder beside the sources."""
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT)
    assert listed.returncode == 0, listed.stderr
    for name in filter(None, listed.stdout.split("\0")):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    work = tmp_path_factory.mktemp("packaging")
    sources = _project_files(work / "src")
    _uv("build", "--wheel", "--quiet", "--out-dir", str(work / "dist"), str(sources))
    (wheel,) = (work / "dist").glob("*.whl")
    venv = work / "venv"
    _uv("venv", "--quiet", "--python", sys.executable, str(venv))
    python = str(venv / "bin" / "python")
    # the lock's versions of the product's own dependencies, hashes checked; then the wheel itself
    requirements = work / "requirements.txt"
    _uv("export", "--frozen", "--no-emit-project", "--no-header", "--format", "requirements-txt",
        "--quiet", "-o", str(requirements))
    _uv("pip", "install", "--quiet", "--python", python, "--require-hashes", "-r", str(requirements))
    _uv("pip", "install", "--quiet", "--python", python, "--no-deps", str(wheel))
    _uv("pip", "check", "--quiet", "--python", python)  # the wheel's requirements, met by the lock alone
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()
    return Installed(wheel, venv, elsewhere)


pytestmark = pytest.mark.sandbox(seed=1, scale=100, rate_limit_per_s=0)  # the module's `shared_sandbox`


def _top_level_names(wheel: Path) -> set[str]:
    names = zipfile.ZipFile(wheel).namelist()
    return {name.split("/")[0] for name in names if "/" in name and ".dist-info/" not in name}


def test_the_wheels_top_level_packages_are_the_designed_ones(installed):
    assert _top_level_names(installed.wheel) == DESIGNED_TOP_LEVEL


def test_the_wheel_holds_the_product_and_its_sql_not_the_lab(installed):
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert not [name for name in names if name.split("/")[0] in ("harness", "tests", "bench", "invoicing_sandbox")]
    # the top-level sql/ folder, shipped inside the namespace (pyproject.toml's package-dir mapping)
    assert (sorted(name for name in names if name.endswith(".sql"))
            == [f"invoicing_warehouse/{p}" for p in CHECKOUT_MODELS])
    assert len(CHECKOUT_MODELS) > 20
    metadata = zipfile.ZipFile(installed.wheel).read(
        next(name for name in names if name.endswith(".dist-info/METADATA"))).decode()
    # the emulator comes with the extra only, as a distribution of its own; its dependencies are not the product's
    assert re.search(r'^Requires-Dist: invoicing-sandbox\b.*extra == "sandbox"', metadata, re.MULTILINE), metadata
    assert not re.search(r"^Requires-Dist: (fastapi|faker)\b", metadata, re.MULTILINE), metadata
    assert "dagster-dlt" not in metadata


def _package_folders(top: Path) -> set[str]:
    return {p.parent.relative_to(top.parent).as_posix().replace("/", ".") for p in top.rglob("__init__.py")
            if "__pycache__" not in p.parts}


def test_every_package_folder_of_the_product_is_listed_for_the_wheel():
    """pyproject.toml lists the packages (the SQL mapping needs a list, not `find`): a new package folder that is
    not listed would be left out of the wheel, and only an install would show it."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = set().union(*(_package_folders(ROOT / top) for top in DESIGNED_TOP_LEVEL))
    assert folders - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - folders == {"invoicing_warehouse.sql"}


def test_the_emulators_distribution_holds_the_emulator_alone(tmp_path):
    sources = _project_files(tmp_path / "src")
    _uv("build", "--wheel", "--quiet", "--out-dir", str(tmp_path / "dist"), str(sources / "invoicing_sandbox"))
    (wheel,) = (tmp_path / "dist").glob("invoicing_sandbox-*.whl")
    assert _top_level_names(wheel) == {"invoicing_sandbox"}
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {name for name in names if name.startswith("invoicing_sandbox/") and name.endswith(".py")}
    assert shipped == {f"invoicing_sandbox/{p.relative_to(ROOT / 'invoicing_sandbox').as_posix()}"
                       for p in (ROOT / "invoicing_sandbox").rglob("*.py") if "__pycache__" not in p.parts}
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for dependency in ("fastapi", "faker", "orjson"):
        assert re.search(rf"^Requires-Dist: {dependency}\b", metadata, re.MULTILINE), metadata
    # it needs nothing of the product
    assert not re.search(r"^Requires-Dist: invoicing-warehouse\b", metadata, re.MULTILINE), metadata


@pytest.fixture(scope="module")
def modelled(installed, shared_sandbox, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A small warehouse synced here (raw tables only), then `models` run on it by the installed command."""
    warehouse = tmp_path_factory.mktemp("small") / "small.duckdb"
    sync_sandbox(shared_sandbox, warehouse)
    return warehouse, installed.run("models", "--warehouse", str(warehouse))


def test_models_from_another_directory_builds_every_model(installed, modelled):
    warehouse, built = modelled
    # the installed packages are the environment's, not the checkout's, and the lab is not there
    probe = ("import importlib.util as u, invoicing_warehouse.engine.sql_runner as r; "
             "print(r.SQL_DIR); print(u.find_spec('harness'), u.find_spec('fastapi'))")
    where = _run([str(installed.venv / "bin" / "python"), "-c", probe], cwd=installed.elsewhere, env=installed.env())
    assert where.returncode == 0, where.stderr
    assert where.stdout.splitlines() == [str(installed.venv / "lib/python3.11/site-packages/invoicing_warehouse/sql"),
                                         "None None"]
    assert built.returncode == 0, built.stdout + built.stderr
    assert f"built {len(CHECKOUT_MODELS)} models" in built.stdout, built.stdout
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        marts = {name for (name,) in connection.execute(
            "select table_name from information_schema.tables where table_schema = 'marts'").fetchall()}
        assert marts == {Path(p).stem for p in CHECKOUT_MODELS if "/marts/" in p}
        empty = [m for m in sorted(marts) if connection.execute(f"select count(*) from marts.{m}").fetchone()[0] == 0]
    # the sandbox's terms are all within the legal caps: that mart's rows are shown by hand-made invoices
    # (tests/sql/test_late_payment_claims.py)
    assert empty in ([], ["payment_terms_over_cap"]), f"marts without rows: {empty}"
    assert warehouse.with_name("small.read.duckdb").exists()


def test_sync_and_doctor_from_another_directory(installed, shared_sandbox, tmp_path):
    credentials = {"SOURCES__INVOICING__BASE_URL": shared_sandbox.base_url,
                   "SOURCES__INVOICING__CLIENT_ID": shared_sandbox.client_id,
                   "SOURCES__INVOICING__CLIENT_SECRET": shared_sandbox.client_secret}
    warehouse = tmp_path / "synced.duckdb"
    synced = installed.run("sync", "--warehouse", str(warehouse), "--rate-limit", "0", **credentials)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        documents = connection.execute("select count(*) from invoicing_raw.documents").fetchone()[0]
    assert documents == len(shared_sandbox.portal.snapshot("documents")) > 0
    findings = tmp_path / "doctor.json"
    probed = installed.run("doctor", "--warehouse", str(warehouse), "--out", str(findings), "--rate-limit", "100",
                           **credentials)
    assert probed.returncode == 0, probed.stdout + probed.stderr
    assert "items probed" in probed.stdout and findings.exists()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_product_only_install_has_no_dagster_nor_dashboard_and_says_which_extra(installed):
    """The product's commands run without the extras (the tests above); `dashboard` names its extra; neither
    Dagster nor Streamlit is installed (issue 44: the product-only install went from 724 to about 500 MB)."""
    probe = "import importlib.util as u; print(u.find_spec('dagster'), u.find_spec('streamlit'))"
    found = _run([str(installed.venv / "bin" / "python"), "-c", probe], cwd=installed.elsewhere, env=installed.env())
    assert found.stdout.split() == ["None", "None"], found.stdout + found.stderr
    refused = installed.run("dashboard")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "pip install 'invoicing-warehouse[dashboard]'" in refused.stderr


@pytest.fixture(scope="module")
def with_dashboard(installed, tmp_path_factory) -> Installed:
    """The same environment with the `dashboard` extra added, at the lock's versions (hashes checked)."""
    requirements = tmp_path_factory.mktemp("dashboard-extra") / "requirements.txt"
    _uv("export", "--frozen", "--no-emit-project", "--no-header", "--format", "requirements-txt", "--extra",
        "dashboard", "--quiet", "-o", str(requirements))
    python = str(installed.venv / "bin" / "python")
    _uv("pip", "install", "--quiet", "--python", python, "--require-hashes", "-r", str(requirements))
    return installed


def test_dashboard_answers_its_health_endpoint(with_dashboard, modelled, tmp_path):
    installed = with_dashboard
    warehouse, built = modelled
    assert built.returncode == 0, built.stdout + built.stderr
    port = _free_port()
    log = tmp_path / "dashboard.log"
    with open(log, "w") as output:
        process = subprocess.Popen([installed.command, "dashboard", "--warehouse", str(warehouse), "--port", str(port)],
                                   cwd=installed.elsewhere, env=installed.env(), stdout=output,
                                   stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        healthy = False
        while not healthy and process.poll() is None and time.monotonic() < deadline:
            try:
                healthy = httpx.get(f"http://127.0.0.1:{port}/_stcore/health", timeout=2.0,
                                    trust_env=False).text == "ok"
            except httpx.HTTPError:
                time.sleep(0.25)
        assert healthy, log.read_text()
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def test_the_emulator_commands_name_the_extra_they_lack(installed):
    for command in ("demo", "sandbox"):
        refused = installed.run(command)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in refused.stderr, refused.stderr
        assert "pip install 'invoicing-warehouse[sandbox]'" in lines[0] and "invoicing-sandbox" in lines[0], lines


def test_the_lock_matches_pyproject_and_pins_one_uv():
    # `uv lock` after changing pyproject's dependencies; offline: the check reads the lock and the cache only
    checked = _run([*UV, "lock", "--check", "--offline", "--quiet"], cwd=ROOT)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    locked = {p["name"]: p["version"] for p in tomllib.loads((ROOT / "uv.lock").read_text())["package"]}
    bootstrap = re.search(r"^UV_VERSION=(\S+)$", (ROOT / "scripts/bootstrap").read_text(), re.MULTILINE)
    assert bootstrap is not None
    assert locked["uv"] == bootstrap.group(1)
    assert f'"uv=={locked["uv"]}"' in (ROOT / "pyproject.toml").read_text()


MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_every_relative_link_of_the_docs_resolves_in_the_checkout():
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
                 *sorted(p for p in ROOT.glob("*/**/README.md") if ".venv" not in p.parts)]
    broken = []
    for document in documents:
        text = document.read_text(encoding="utf-8")
        for target in MARKDOWN_LINK.findall(text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a web address, a mail address, an anchor of the same page
            path = (document.parent / target.split("#")[0]).resolve()
            if not path.exists() or not path.is_relative_to(ROOT):
                broken.append(f"{document.relative_to(ROOT)}: {target}")
        # paths written as code that leave the repository (the spec used to live beside it)
        broken += [f"{document.relative_to(ROOT)}: {hit}" for hit in re.findall(r"`(\.\./[^`]*)`", text)
                   if not (document.parent / hit).resolve().is_relative_to(ROOT)]
    assert broken == []


def test_the_readme_is_short_and_every_docs_page_is_linked_from_it():
    # issue 43, point 7: what it is, the two commands, connecting an account, where to go next; the rest in docs/
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    linked = {(ROOT / target.split("#")[0]).resolve() for target in MARKDOWN_LINK.findall(readme)
              if not re.match(r"[a-z]+:", target) and not target.startswith("#")}
    pages = {page.resolve() for page in (ROOT / "docs").glob("*.md")}
    assert sorted(p.name for p in pages - linked) == []
