"""The marts own every figure a page shows (issue 43 point 5): the dashboard's modules select, filter and sort the
marts' rows and compute no figure of their own, in SQL or in Python.

Read from the source with Python's `ast`, never by running it: every string of invoicing_warehouse/dashboard/**
that is SQL (or a fragment of it) is searched for aggregates, windows, joins, date arithmetic and arithmetic; every
Python expression for sums, pandas aggregations, date arithmetic and arithmetic on a figure. A hit outside ALLOWED
fails naming file, line and what was found: move the figure into a mart column (docs/add-a-model.md) and read it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

DASHBOARD = Path(__file__).resolve().parents[3] / "invoicing_warehouse" / "dashboard"

# a string is SQL when it reads a relation, or is a fragment with an SQL keyword clause
_SQL = re.compile(r"\bselect\b[\s\S]*\bfrom\b|\bfrom\s+(marts|reference|invoicing_raw|information_schema)\b"
                  r"|\bwhere\s+\w+\s*(=|<>|is\b|in\b)|\bfilter\s*\(\s*where\b|\bgroup\s+by\b|\border\s+by\b"
                  r"|\bcoalesce\s*\(|\)\s+as\s+[\w{]")
_SQL_COMPUTES = {
    "an aggregate": re.compile(r"\b(sum|avg|mean|count|min|max|median|mode|quantile\w*|string_agg|array_agg|list|"
                               r"bool_or|bool_and|any_value|arg_max|arg_min|first|last|stddev\w*|var\w*|product|"
                               r"histogram|approx_\w+)\s*\(", re.IGNORECASE),
    "a grouping": re.compile(r"\bgroup\s+by\b|\bhaving\b|\bdistinct\s+on\b", re.IGNORECASE),
    "a window": re.compile(r"\bover\s*\(|\bwindow\s+\w+\s+as\b|\bqualify\b", re.IGNORECASE),
    "a join of relations": re.compile(r"\bjoin\b|\bfrom\s+[\w.]+\s*(as\s+\w+\s*)?,\s*[\w.]+", re.IGNORECASE),
    "date arithmetic": re.compile(r"\binterval\b|\bdate_(trunc|diff|add|sub|part)\b|\bdatediff\b|\bgenerate_series\b|"
                                  r"\brange\s*\(|\bunnest\s*\(|\bcurrent_date\b|\bnow\s*\(|\btoday\s*\(",
                                  re.IGNORECASE),
    "arithmetic": re.compile(r"[\w)]\s*[-+/%]\s*[\w(]|\w\s+\*\s+\w"),
}
# a Vega-Lite shorthand that aggregates in the browser: "sum(open_amount):Q"
_VEGA_AGGREGATE = re.compile(r"^\s*(sum|mean|average|count|min|max|median|distinct|valid)\(\w*\)\s*:\s*[QONT]\b")

# Python: what computes a figure
_PY_AGGREGATES = {"sum", "mean", "median", "cumsum", "cumprod", "agg", "aggregate", "groupby", "pivot_table",
                  "resample", "rolling", "expanding", "diff", "pct_change", "value_counts", "nunique_sum"}
_PY_DATES = {"timedelta", "relativedelta", "weekday", "isoweekday", "toordinal", "fromordinal", "isocalendar"}
# a name that holds a figure (an amount, a count of documents, a number of days) on either side of + - * /
_FIGURE_NAME = re.compile(r"amount|total|_eur$|^eur|due|open|overdue|claim|interest|indemnit|paid|disputed|approved|"
                          r"inflow|outflow|balance|dso|days|count|receivable|payable", re.IGNORECASE)


@dataclass(frozen=True)
class Allowed:
    """A computation the dashboard may keep: where (file, and a text the finding's snippet holds) and why."""

    path: str
    holds: str
    why: str


ALLOWED = (
    Allowed("queries.py", "select count(*) from ({select})",
            "a list's own length, for 'the first 100 of 345' (the CSV holds the 345 rows): not a figure of the list"),
    Allowed("payment_law_queries.py", "select count(*) from ({_BY_CUSTOMER})", "the same, for the claims' list"),
    Allowed("payment_law_queries.py", "select count(*) from ({_OVER_CAP})", "the same, for the terms over the cap"),
    # the Freshness page reports on the loads (rows per raw table, the last load: dlt's own metadata), not on a
    # figure of the marts; no model is built from the load ids
    Allowed("freshness.py", "max(_dlt_load_id)", "rows and last load id per raw table"),
    Allowed("freshness.py", "as loads on false", "a raw table without loads yet: no load time"),
    Allowed("freshness.py", "table_name = '_dlt_loads'", "whether dlt's load table exists"),
    Allowed("freshness.py", "._dlt_loads where status = 0", "the last successful load"),
    Allowed("portal_scope.py", "duckdb_databases()", "the catalog, not a figure: whether the scope is attached"),
)


@dataclass(frozen=True)
class Finding:
    """A computation found in a dashboard module."""

    path: str
    line: int
    what: str
    snippet: str

    def __str__(self) -> str:
        return f"invoicing_warehouse/dashboard/{self.path}:{self.line}: {self.what}: {self.snippet[:160]!r}"


def _string_of(node: ast.AST) -> str | None:
    """The text of a string literal; an f-string's with `{name}` for each placeholder."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            else:  # a placeholder: its expression's source, in braces
                parts.append("{" + ast.unparse(value.value) + "}")  # type: ignore[attr-defined]
        return "".join(parts)
    return None


def _sql_code(text: str) -> str:
    """SQL without its comments, quoted literals and placeholders ('1-30' is a label, `--` a comment, not
    arithmetic)."""
    text = re.sub(r"--[^\n]*", " ", text)
    text = re.sub(r"'[^']*'", "''", text)
    text = re.sub(r'"[^"]*"', '""', text)
    text = re.sub(r"\{[^{}]*\}", "x", text)  # an f-string's placeholder: a name or a piece of SQL, scanned apart
    # `select *` and `count(*)` are no multiplication
    return re.sub(r"\(\s*\*\s*\)", "(x)", re.sub(r"\bselect\s+\*", "select x", text, flags=re.IGNORECASE))


def _sql_findings(path: str, tree: ast.AST) -> list[Finding]:
    found = []
    inner = {id(value) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for value in node.values}
    inner |= {id(node.body[0].value) for node in ast.walk(tree)  # docstrings are prose
              if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
              and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        text = None if id(node) in inner else _string_of(node)
        if text is None:
            continue
        if _VEGA_AGGREGATE.search(text):
            found.append(Finding(path, node.lineno, "an aggregate in the browser (Vega-Lite)", text))
            continue
        if not _SQL.search(text):
            continue
        code = _sql_code(text)
        for what, pattern in _SQL_COMPUTES.items():
            if pattern.search(code):
                found.append(Finding(path, node.lineno, f"SQL computing a figure ({what})", " ".join(text.split())))
    return found


def _name_of(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return _name_of(node.slice) if isinstance(node.slice, ast.Constant) else _name_of(node.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""


def _python_findings(path: str, tree: ast.AST) -> list[Finding]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _name_of(node.func)
            if isinstance(node.func, ast.Name) and name == "sum":
                found.append(Finding(path, node.lineno, "a sum in Python", ast.unparse(node)))
            elif isinstance(node.func, ast.Attribute) and name in _PY_AGGREGATES:
                found.append(Finding(path, node.lineno, "a pandas aggregation", ast.unparse(node)))
            elif name in _PY_DATES:
                found.append(Finding(path, node.lineno, "date arithmetic in Python", ast.unparse(node)))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            sides = (node.left, node.right)
            if any(isinstance(side, (ast.List, ast.ListComp, ast.Tuple)) for side in sides):
                continue  # a list repeated or joined (a chart's labels), no figure
            names = [_name_of(side) for side in sides]
            figure = any(_FIGURE_NAME.search(name) for name in names if name and not name.startswith(("tr", "help")))
            text = any(isinstance(side, ast.Constant) and isinstance(side.value, str) for side in sides)
            if figure and not text:
                found.append(Finding(path, node.lineno, "arithmetic on a figure in Python", ast.unparse(node)))
    return found


def findings(root: Path = DASHBOARD) -> list[Finding]:
    """Every computation of a figure in the dashboard's modules under `root`, ALLOWED ones left out."""
    found = []
    for file in sorted(root.rglob("*.py")):
        path = file.relative_to(root).as_posix()
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        for finding in _sql_findings(path, tree) + _python_findings(path, tree):
            if not any(allowed.path == path and allowed.holds in finding.snippet for allowed in ALLOWED):
                found.append(finding)
    return found


def test_no_dashboard_module_computes_a_figure():
    found = findings()
    assert found == [], "the dashboard computes figures the marts should own (issue 43 point 5):\n" + "\n".join(
        map(str, found))


@pytest.mark.parametrize(("source", "what"), [
    # the payables' "due this week" as it was computed before the move (house-review-2.md, section 4, item 6)
    (('connection.execute("""select coalesce(sum(amount_due) filter (where due_date between ? and ?), 0)\n'
      '                       from marts.supplier_payables where portal_id = ?""", [as_of, sunday, portal])'),
     "SQL computing a figure (an aggregate)"),
    (('rows = frame(connection, "select aging_bucket, open_amount from marts.receivables_aging r '
      'join marts.dso d using (portal_id)")'), "SQL computing a figure (a join of relations)"),
    ('sums = ", ".join(f"coalesce(sum({column}), 0) as {column}" for column in columns)',
     "SQL computing a figure (an aggregate)"),
    ('q = "select cast(week_start + interval 6 day as date) as week_end from marts.payables_weeks"',
     "SQL computing a figure (date arithmetic)"),
    ('q = "select open_amount - credit_deducted as net from marts.cash_outlook where portal_id = ?"',
     "SQL computing a figure (arithmetic)"),
    ("monday = as_of.toordinal() - as_of.weekday()", "date arithmetic in Python"),
    ("total_claim = figures.flat_indemnities_eur + figures.interest_eur", "arithmetic on a figure in Python"),
    ("open_amount = sum(rows['open_amount'])", "a sum in Python"),
    ("total = rows['open_amount'].sum()", "a pandas aggregation"),
    ('x = alt.X("sum(open_amount):Q")', "an aggregate in the browser (Vega-Lite)"),
])
def test_the_scan_names_each_kind_of_computation_with_its_file_and_line(tmp_path, source, what):
    (tmp_path / "screens").mkdir()
    (tmp_path / "screens" / "page.py").write_text("import duckdb\n\n" + source + "\n", encoding="utf-8")
    found = findings(tmp_path)
    assert what in {finding.what for finding in found}, found
    assert all(str(finding).startswith("invoicing_warehouse/dashboard/screens/page.py:3: ") for finding in found)


@pytest.mark.parametrize("source", [
    # a page selects, filters and sorts: none of these is a computation
    ('q = """select reference, due_date, amount_due from marts.supplier_payables\n'
     '       where portal_id = ? and is_due_this_week order by due_date, reference"""'),
    'q = "select aging_bucket, open_amount from marts.receivables_aging where portal_id = ? order by bucket_order"',
    "q = \"select * from marts.payables_by_supplier where portal_id = ? and approval_state <> 'disputed'\"",
    "q = \"select aging_bucket from marts.receivables where aging_bucket = '1-30'\"  # a label, not arithmetic",
    'label = tr("Due in the next {weeks} weeks", weeks=8) + shown_of(listing, language)',
])
def test_selecting_filtering_and_sorting_is_no_computation(tmp_path, source):
    (tmp_path / "page.py").write_text(source + "\n", encoding="utf-8")
    assert findings(tmp_path) == []
