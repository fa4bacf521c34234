"""The house move of issue 43 (point 1, and the folders of point 8), replayable.

Run at the root of a checkout of the project (house_move.sh does): `mv` performs every `git mv` of the mapping
below whose source still exists (so it moves code written meanwhile in the old layout too), `rewrite` rewrites
every reference to an old module or path in the tracked text files, by the same mapping. Both steps are
idempotent: running them again on a moved tree changes nothing.

The mapping is data (the tables below); the rules that read it are generic:
- module names: a dotted chain whose longest prefix is an old module is renamed, unless a longer prefix of it is
  already a new module (so `tests.pipelines.webhooks.hint_support` is left alone while `tests.pipelines` is
  no old name to rename and `tests.pipelines.webhooks.hint_support` becomes `tests.pipelines.webhooks.hint_support`). The generic old top-level names (runs, dashboard, demo, sandbox) are renamed
  alone only in `import`/`from` statements and after `-m`; elsewhere only with one of their children after them
  (`invoicing_warehouse.runs.gate`), so the English words are left alone.
- paths: an old path (file or folder) not preceded by a name character or a `/` (a `../` chain is allowed) is
  renamed; test paths relative to tests/ are renamed in tests/ and docs/testing.md.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

# ---------------------------------------------------------------------------------------------------------------
# The mapping (old -> new). Order matters where one old path is inside another: the inner one first.
# ---------------------------------------------------------------------------------------------------------------
# Whole folders (a package with everything in it). The SQL models go back to the top level.
FOLDER_MOVES: list[tuple[str, str]] = [
    ("sql", "sql"),
    ("invoicing_warehouse.engine", "invoicing_warehouse/engine"),
    ("runs", "invoicing_warehouse/runs"),
    ("dashboard", "invoicing_warehouse/dashboard"),
    ("demo", "invoicing_warehouse/demo"),
    ("sandbox", "invoicing_sandbox"),
    # tests follow the product's packages
    ("tests/invoicing_warehouse/dashboard", "tests/invoicing_warehouse/dashboard"),
    ("tests/invoicing_sandbox", "tests/invoicing_sandbox"),
    ("tests/sql", "tests/sql"),
    ("tests/dagster_project", "tests/dagster_project"),
    ("tests/pipelines/webhooks", "tests/pipelines/webhooks"),
]
# The shell: every module of invoicing_warehouse/ but its package files goes to invoicing_warehouse/cli/; cli.py
# itself becomes the package's cli/__init__.py, so `invoicing_warehouse.cli` (the console script's
# `invoicing_warehouse.cli:entry`, `from invoicing_warehouse.cli import main`) keeps its meaning, and a new
# cli/__main__.py keeps `python -m invoicing_warehouse.cli` working.
SHELL_FROM, SHELL_TO = "invoicing_warehouse", "invoicing_warehouse/cli"
SHELL_KEPT = {"__init__.py", "__main__.py"}
SHELL_RENAMED = {"cli.py": "__init__.py"}
# tests/pipelines/ split into the rooms of pipelines/invoicing/ (a file not named here stays where it is).
# Single test files: (old path, new folder).
FILE_MOVES: list[tuple[str, str]] = [
    *[(f"tests/pipelines/test_{name}.py", "tests/pipelines/http") for name in (
        "invoicing_client", "invoicing_ratelimit", "token_cache", "database_budget_settings")],
    *[(f"tests/pipelines/test_{name}.py", "tests/pipelines/read") for name in (
        "invoicing_paging", "invoicing_tie_groups", "page_size_per_list", "paging_not_honoured",
        "same_second_changes", "invoicing_records", "invoicing_windows", "derived_changes")],
    *[(f"tests/pipelines/test_{name}.py", "tests/pipelines/load") for name in (
        "invoicing_sync", "invoicing_resilience", "portals_sync",
        # the extraction into a lake, and hints applied to one (pipelines/invoicing/load/lake.py): they use the
        # extraction's fixtures (tests/pipelines/conftest.py: start_sandbox, warehouse)
        "ducklake_sync", "ducklake_hints",
        # the invoice archive (pipelines/invoicing/load/pdf_archive.py)
        "pdf_archive")],
    *[(f"tests/pipelines/test_{name}.py", "tests/pipelines/doctor") for name in (
        "doctor", "doctor_paging", "doctor_findings_seed_sync", "contract_ledger")],
    *[(f"tests/pipelines/test_ducklake_{name}.py", "tests/invoicing_warehouse/engine") for name in (
        "conflicts", "extensions", "lock", "models", "s3")],
    ("tests/invoicing_warehouse/cli/test_cli.py", "tests/invoicing_warehouse/cli"),
    ("tests/invoicing_warehouse/engine/test_warehouse_target.py", "tests/invoicing_warehouse/engine"),
    ("tests/invoicing_warehouse/engine/test_table_files.py", "tests/invoicing_warehouse/engine"),
]
# A test helper whose module name would shadow the emulator's new package (pytest puts tests/pipelines on sys.path)
FILE_RENAMES: list[tuple[str, str]] = [("tests/pipelines/sandbox_syncs.py", "tests/pipelines/sandbox_syncs.py")]
HELPER_NAMES = {"quiet", "sync"}  # what that helper exports: `from invoicing_sandbox import quiet` means it
# The old top-level names that are also English words: renamed alone only where they can only be a module.
GENERIC = {"runs", "dashboard", "demo", "sandbox"}
# Files never rewritten: the lock is uv's, the rest are not text.
SKIPPED_SUFFIXES = (".lock", ".png", ".jpg", ".csv", ".duckdb", ".parquet", ".xlsx", ".ico", ".gif")
# ---------------------------------------------------------------------------------------------------------------


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def tracked() -> list[str]:
    return [p for p in git("ls-files", "-z").split("\0") if p]


def module_of(path: str) -> str | None:
    """`a/b/c.py` -> `a.b.c`; `a/b/__init__.py` -> `a.b`; None for other files."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not all(re.fullmatch(r"[A-Za-z_]\w*", p) for p in parts):
        return None
    return ".".join(parts)


def file_moves(files: list[str]) -> list[tuple[str, str]]:
    """Every (old file, new file) of the mapping among `files` (the tracked files now)."""
    moves: list[tuple[str, str]] = []
    for path in files:
        new = new_path(path)
        if new != path:
            moves.append((path, new))
    return moves


def new_path(path: str) -> str:
    """Where `path` goes under the mapping (itself when it does not move)."""
    for old, new in FILE_RENAMES:
        if path == old:
            return new
    for old, folder in FILE_MOVES:
        if path == old:
            return f"{folder}/{old.rsplit('/', 1)[1]}"
    for old, new in FOLDER_MOVES:
        if path.startswith(old + "/"):
            return new + path[len(old):]
    head, _, name = path.rpartition("/")
    if head == SHELL_FROM and name.endswith(".py") and name not in SHELL_KEPT:
        return f"{SHELL_TO}/{SHELL_RENAMED.get(name, name)}"
    return path


# ---------------------------------------------------------------------------------------------------------------
# Step 1: git mv
# ---------------------------------------------------------------------------------------------------------------
PARENTS = re.compile(r"(Path\(__file__\)(?:\.resolve\(\))?\.parents\[)(\d+)(\])")


def depth(path: str) -> int:
    return path.count("/")


def move() -> int:
    moves = file_moves(tracked())
    for old, new in moves:
        Path(new).parent.mkdir(parents=True, exist_ok=True)
        git("mv", old, new)
        shift = depth(new) - depth(old)
        if shift and new.endswith(".py"):
            # `Path(__file__).parents[N]` that reached the root (or above the file's folder) still does
            text = Path(new).read_text(encoding="utf-8")
            fixed = PARENTS.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + shift}{m.group(3)}"
                                if int(m.group(2)) >= 1 else m.group(0), text)
            if fixed != text:
                Path(new).write_text(fixed, encoding="utf-8")
    shell_main = Path(SHELL_TO) / "__main__.py"
    if Path(SHELL_TO).is_dir() and not shell_main.exists():
        shell_main.write_text('"""`python -m invoicing_warehouse.cli`: the same command as the `invoicing-warehouse` console '
                              'script."""\n\nfrom invoicing_warehouse.cli import entry\n\nentry()\n', encoding="utf-8")
        git("add", str(shell_main))
    # folders left empty by the moves (git does not track folders)
    for old, _ in FOLDER_MOVES:
        folder = Path(old)
        if folder.is_dir():
            for leftover in sorted(folder.rglob("__pycache__"), reverse=True):
                subprocess.run(["rm", "-rf", str(leftover)], check=True)
            for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
                if not any(sub.iterdir()):
                    sub.rmdir()
            if not any(folder.iterdir()):
                folder.rmdir()
    print(f"house_move: {len(moves)} files moved")
    return len(moves)


# ---------------------------------------------------------------------------------------------------------------
# Step 2: rewrite references
# ---------------------------------------------------------------------------------------------------------------
class Mapping:
    """The old -> new module names and paths, derived from the tables and the tree (moved or not)."""

    def __init__(self, files: list[str]) -> None:
        # every file and folder the tables can name, old or new: the tree now, mapped back where already moved
        self.modules: dict[str, str] = {}
        self.new_modules: set[str] = set()
        self.paths: list[tuple[str, str]] = []
        olds = set(files) | {self.old_path(f) for f in files}
        for old in sorted(olds):
            new = new_path(old)
            if new == old:
                continue
            old_module, new_module = module_of(old), module_of(new)
            if old_module and new_module and old_module != new_module:
                self.modules[old_module] = new_module
        for old, new in FOLDER_MOVES:
            self.modules[old.replace("/", ".")] = new.replace("/", ".")
            self.paths.append((old + "/", new + "/"))
            if old not in GENERIC:
                self.paths.append((old, new))
        for old, folder in FILE_MOVES:
            self.paths.append((old, f"{folder}/{old.rsplit('/', 1)[1]}"))
        self.paths += FILE_RENAMES
        for old in sorted(olds):
            head, _, name = old.rpartition("/")
            if head == SHELL_FROM and name.endswith(".py") and name not in SHELL_KEPT:
                self.paths.append((old, new_path(old)))
        for new in self.modules.values():
            parts = new.split(".")
            self.new_modules.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        self.new_leaves = set(self.modules.values())
        # children of the generic packages (`invoicing_warehouse.runs.gate`), to tell a module from an English word
        self.children: dict[str, set[str]] = {g: set() for g in GENERIC}
        for old_module in self.modules:
            top, _, rest = old_module.partition(".")
            if top in GENERIC and rest:
                self.children[top].add(rest.split(".")[0])
        self.paths.sort(key=lambda pair: -len(pair[0]))
        self.path_pattern = re.compile(r"(?<![\w.\-/])((?:\.\./)*)(" + "|".join(
            re.escape(old) if old.endswith("/") else re.escape(old) + r"(?=/|$|[^\w\-.]|\.(?!\w))"
            for old, _ in self.paths) + ")")
        self.path_table = dict(self.paths)
        # test paths written relative to tests/ (tests/README.md, docs/testing.md, work_order.py)
        # (only paths with a folder: a bare file name of tests/'s own top is too common a word to rename)
        relative = [(old[len("tests/"):], new[len("tests/"):]) for old, new in self.paths
                    if old.startswith("tests/") and old.endswith(".py") and old.count("/") >= 2]
        relative.sort(key=lambda pair: -len(pair[0]))
        self.relative_table = dict(relative)
        # test helpers imported by their bare name (pytest puts a test's folder on sys.path): from another folder
        # they are imported by their full name, which does not depend on which conftest.py was loaded first
        self.helpers = {Path(f).stem: Path(f).parent.as_posix() for f in (new_path(o) for o in olds)
                        if f.startswith("tests/") and f.endswith(".py") and not f.startswith("tests/support/")
                        and not Path(f).name.startswith(("test_", "conftest")) and f.count("/") >= 2}
        self.relative_pattern = re.compile(
            r"(?<![\w.\-/])(" + "|".join(re.escape(old) for old, _ in relative) + r")(?![\w\-/])")

    @staticmethod
    def old_path(path: str) -> str:
        """Where a file of the moved tree came from (itself when it is in no new place of the tables)."""
        for old, new in FILE_RENAMES:
            if path == new:
                return old
        for old, folder in FILE_MOVES:
            if path == f"{folder}/{old.rsplit('/', 1)[1]}":
                return old
        for old, new in reversed(FOLDER_MOVES):
            if path.startswith(new + "/"):
                candidate = old + path[len(new):]
                if new_path(candidate) == path:
                    return candidate
        head, _, name = path.rpartition("/")
        if head == SHELL_TO and name != "__main__.py":
            back = {v: k for k, v in SHELL_RENAMED.items()}
            return f"{SHELL_FROM}/{back.get(name, name)}"
        return path

    def rename_chain(self, chain: str, as_import: bool, quoted: bool = True) -> str:
        parts = chain.split(".")
        old_len = next((i for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in self.modules), 0)
        if not old_len:
            return chain
        new_len = next((i for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in self.new_modules), 0)
        if new_len > old_len:
            return chain  # already a new name (tests.pipelines.webhooks.hint_support)
        head, top = ".".join(parts[:old_len]), parts[0]
        if top in GENERIC:
            child = len(parts) > 1 and parts[1] in self.children[top]
            # `invoicing_sandbox.config` in code is a fixture's attribute; `"invoicing_sandbox.config"`, `invoicing_sandbox.config` in backticks
            # or in an import is the module; `runs` alone is a word except in an import
            if not as_import and (not child or not quoted):
                return chain
            if as_import and len(parts) > 1 and not child:
                return chain
        return ".".join([self.modules[head], *parts[old_len:]])


CHAIN = re.compile(r"(?<![\w.\-/])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
FROM_IMPORT = re.compile(r"(?m)^(\s*(?:>>>\s*)?from\s+)([A-Za-z_][\w.]*)(\s+import\s+)(\([^)]*\)|[^\n]*)")
PLAIN_IMPORT = re.compile(r"(?m)^(\s*import\s+)([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)")
# `import runs.sync` binds `runs`: that file's code names the module as `invoicing_warehouse.runs.sync.x`
GENERIC_IMPORT = re.compile(r"(?m)^\s*import\s+(?:[\w.]+\s*,\s*)*(" + "|".join(sorted(GENERIC)) + r")\.\w")
DASH_M = re.compile(r"""(-m["']?,?\s*["']?)([A-Za-z_][\w.]*)""")
# a logger named after a package catches its modules' records: `getLogger("invoicing_warehouse.dashboard")` is the package
LOGGER = re.compile(r"""(getLogger\(\s*["'])([A-Za-z_][\w.]*)(?=["'])""")


def rewrite_text(text: str, mapping: Mapping, path: str) -> str:
    def from_import(m: re.Match) -> str:
        package, names = m.group(2), m.group(4)
        listed = [n.strip().split(" as ")[0].strip() for n in names.strip("()").split(",")]
        listed = [n for n in listed if re.fullmatch(r"\w+", n)]
        if path.startswith("tests/") and package == "invoicing_sandbox" and listed and set(listed) <= HELPER_NAMES:
            package = "sandbox_syncs"
        folder = mapping.helpers.get(package)
        # (bench/ puts the helper's folder on sys.path itself: the layers forbid bench to import tests)
        if folder and path.startswith("tests/") and Path(path).parent.as_posix() != folder:
            return f"{m.group(1)}{folder.replace('/', '.')}.{package}{m.group(3)}{names}"
        if package == "sandbox_syncs":
            return f"{m.group(1)}{package}{m.group(3)}{names}"
        if listed and f"{package}.{listed[0]}" in mapping.new_leaves and f"{package}.{listed[0]}" not in mapping.modules:
            return m.group(0)  # already `from invoicing_warehouse.cli import exit_codes`
        # `from invoicing_warehouse import exit_codes, cli`: the names are old modules that moved
        moved = [mapping.modules.get(f"{package}.{n}") for n in listed]
        if listed and all(moved) and package not in mapping.modules:
            parents = {new.rpartition(".")[0] for new in moved if new}
            if len(parents) == 1:
                new_package = parents.pop()
                renamed = names
                for name, new in zip(listed, moved):
                    leaf = new.rpartition(".")[2] if new else name
                    if leaf != name:
                        renamed = re.sub(rf"\b{name}\b(?!\s+as\b)", f"{leaf} as {name}", renamed, count=1)
                return f"{m.group(1)}{new_package}{m.group(3)}{renamed}"
        return f"{m.group(1)}{mapping.rename_chain(package, as_import=True)}{m.group(3)}{names}"

    text = FROM_IMPORT.sub(from_import, text)
    bound = set(GENERIC_IMPORT.findall(text)) if path.endswith(".py") else set()
    text = PLAIN_IMPORT.sub(lambda m: m.group(1) + re.sub(
        r"[A-Za-z_][\w.]*", lambda c: mapping.rename_chain(c.group(0), as_import=True), m.group(2)), text)
    text = DASH_M.sub(lambda m: m.group(1) + mapping.rename_chain(m.group(2), as_import=True), text)
    text = LOGGER.sub(lambda m: m.group(1) + mapping.rename_chain(m.group(2), as_import=True), text)
    text = CHAIN.sub(lambda m: mapping.rename_chain(
        m.group(0), as_import=False,
        quoted=(m.start() > 0 and text[m.start() - 1] in "\"'`") or m.group(0).split(".")[0] in bound), text)
    # the one bare old name that is no English word
    text = re.sub(r"(?<![\w.\-/])invoicing_warehouse.engine(?![\w/])", "invoicing_warehouse.engine", text)
    text = mapping.path_pattern.sub(lambda m: m.group(1) + mapping.path_table[m.group(2)], text)
    if path.startswith("tests/") or path == "docs/testing.md":
        text = mapping.relative_pattern.sub(lambda m: mapping.relative_table[m.group(1)], text)
    return text


def rewrite() -> int:
    files = tracked()
    mapping = Mapping(files)
    changed: list[str] = []
    for path in files:
        if path.endswith(SKIPPED_SUFFIXES) or not Path(path).is_file() or Path(path).is_symlink():
            continue
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite_text(text, mapping, path)
        if new != text:
            Path(path).write_text(new, encoding="utf-8")
            changed.append(path)
    print(f"house_move: {len(changed)} files rewritten")
    # renamed imports sort elsewhere (ruff's isort rule, on in the house rules): sorted again where changed
    ruff = next((r for r in (Path(".venv/bin/ruff"), Path(__file__).resolve().parent / ".venv/bin/ruff") if r.exists()),
                Path(".venv/bin/ruff"))
    python_files = [p for p in changed if p.endswith(".py")]
    if python_files and ruff.exists():
        subprocess.run([str(ruff), "check", "--select", "I001", "--fix", "--quiet", "--no-cache", *python_files],
                       check=False)
    return len(changed)


def adopt(base: str, other: str) -> int:
    """After `git merge other`: the files `other` added or changed since `base` in the old layout that git placed
    at their new paths itself (directory renames) or that were resolved with `other`'s side: their
    `Path(__file__).parents[N]` still counts the old depth. Shifted where it still equals `other`'s value (so a
    second run, or a file whose line kept this branch's value, is left alone)."""
    listed = git("diff", "--name-only", "--diff-filter=AMR", "--no-renames", base, other).split("\n")
    added = set(filter(None, git("diff", "--name-only", "--diff-filter=A", "--no-renames", base, other).split("\n")))
    before = set(filter(None, git("ls-tree", "-r", "--name-only", "HEAD^1").split("\n")))
    now = set(tracked())
    fixed = 0
    for old in sorted(added):
        # git's directory-rename guess for a folder split in two (invoicing_warehouse/engine/ went to sql/ and to
        # invoicing_warehouse/engine/) can put a new file at the wrong place (the top level): moved where the
        # mapping says
        new = new_path(old)
        if new in now or not new_path(old) != old:
            continue
        parts = old.split("/")
        placed = next((p for p in (("/".join(parts[i:])) for i in range(1, len(parts)))
                       if p in now and p not in before), None)
        placed = placed or next((p for p in sorted(now - before) if p.endswith("/" + parts[-1])
                                 and p.split("/")[-2:] == parts[-2:] and p != new), None)
        if placed:
            Path(new).parent.mkdir(parents=True, exist_ok=True)
            git("mv", placed, new)
            now = (now - {placed}) | {new}
            print(f"house_move: moved {placed} (git's placement of {other}'s {old}) to {new}")
    for old in filter(None, listed):
        new = new_path(old)
        shift = depth(new) - depth(old)
        if not shift or not new.endswith(".py") or not Path(new).is_file():
            continue
        theirs = PARENTS.findall(subprocess.run(["git", "show", f"{other}:{old}"], capture_output=True,
                                                text=True).stdout)
        text = Path(new).read_text(encoding="utf-8")
        if not theirs or PARENTS.findall(text) != theirs:
            continue
        Path(new).write_text(PARENTS.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + shift}{m.group(3)}"
                                         if int(m.group(2)) >= 1 else m.group(0), text), encoding="utf-8")
        fixed += 1
        print(f"house_move: adopted {new} (parents shifted by {shift})")
    print(f"house_move: {fixed} files adopted")
    return fixed


# Files with hand edits after the scripted move (commits on w/move): a merge conflict in one of them is resolved by
# hand; any other conflicted file takes the other side's content (old layout) and is rewritten again.
HAND_EDITED = {
    "pyproject.toml", "uv.lock", "README.md", "docs/architecture.md", "docs/testing.md", "tests/README.md",
    "invoicing_sandbox/README.md", "invoicing_sandbox/pyproject.toml", "invoicing_warehouse/__init__.py",
    "invoicing_warehouse/cli/__init__.py", "invoicing_warehouse/demo/__init__.py",
    "invoicing_warehouse/engine/sql_runner.py", "tests/test_packaging.py", "tests/test_house_rules.py",
    "tests/sql/test_sql_runner.py", "tests/operations/test_settings.py", "tests/operations/test_without_fcntl.py",
    "tests/invoicing_warehouse/cli/test_cli.py", "tests/security/conftest.py",
    "tests/invoicing_warehouse/dashboard/test_dashboard_assumed_due_dates.py", "bench/dashboard_render.py",
}


def theirs(other: str) -> int:
    """During `git merge other`: each conflicted file that has no hand edit takes `other`'s content of its old
    path (the rewrite step then renames again what it names); the others are listed for a person."""
    taken = 0
    for path in filter(None, git("diff", "--name-only", "--diff-filter=U").split("\n")):
        if path in HAND_EDITED:
            print(f"house_move: resolve by hand: {path}")
            continue
        old = Mapping.old_path(path)
        shown = subprocess.run(["git", "show", f"{other}:{old}"], capture_output=True, text=True)
        if shown.returncode != 0:
            print(f"house_move: resolve by hand ({other} has no {old}): {path}")
            continue
        Path(path).write_text(shown.stdout, encoding="utf-8")
        git("add", path)
        taken += 1
        print(f"house_move: took {other}'s {old} for {path}")
    print(f"house_move: {taken} conflicted files taken from {other}")
    return taken


def main(argv: list[str]) -> int:
    if argv[1:2] == ["theirs"]:
        if len(argv) != 3:
            print("house_move: theirs OTHER (during `git merge OTHER`)", file=sys.stderr)
            return 2
        theirs(argv[2])
        return 0
    if argv[1:2] == ["adopt"]:
        if len(argv) != 4:
            print("house_move: adopt BASE OTHER (the merge base before `git merge OTHER`, and OTHER)", file=sys.stderr)
            return 2
        adopt(argv[2], argv[3])
        return 0
    steps = argv[1:] or ["mv", "rewrite"]
    for step in steps:
        if step == "mv":
            move()
        elif step == "rewrite":
            rewrite()
        elif step == "table":
            mapping = Mapping(tracked())
            for old, new in sorted(mapping.modules.items()):
                print(f"module {old} -> {new}")
            for old, new in mapping.paths:
                print(f"path   {old} -> {new}")
        else:
            print(f"house_move: unknown step {step!r} (mv, rewrite, table; adopt BASE OTHER)", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
