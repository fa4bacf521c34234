"""docs/models.md, generated from each model's front matter (invoicing_warehouse/engine/model_manifest.py): what it
holds, its grain, how it is stored, what it reads, its date-only fields, the checks it declares and what each column
holds. A test compares the
file with this rendering, so the page cannot fall behind the models.

Regenerate with `python -m invoicing_warehouse.engine.model_docs > docs/models.md`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from invoicing_warehouse.engine.sql_runner import SqlModel, discover_models

LAYERS = ("staging", "intermediate", "marts")
HEADER = """# Models

Generated from each model's front matter by `python -m invoicing_warehouse.engine.model_docs > docs/models.md`: edit the
`-- ---` block at the top of the SQL file, not this page (DuckDB keeps the same texts: `select column_name, comment
from duckdb_columns() where table_name = 'receivables'`). The gate checks each table model's grain
(`keys_unique`, blocking) and the tests it declares; `dates_at_midnight` flags the date-only values it lists.
How to add a model of your own: docs/add-a-model.md.

Every mart carries `portal_id` (its last column) and its key includes it: one warehouse may hold many
portals, whose ids may collide, and every join of the models stays within one portal. Read one portal with
`where portal_id = 'acme'` (`default` without a portals file), or all of them together; cumulative figures
(`payables_schedule.cumulative_amount`) run per portal.

Every mart is computed as of a date D (default today in Paris, the portal's time zone) and carries it in
`as_of_date`. Date-only fields are calendar dates in Paris, whether a server stores them at midnight UTC or
at midnight Paris (the check `dates_at_midnight` warns about any other time of day). To reproduce
last month's report: `.venv/bin/invoicing-warehouse models --as-of 2026-10-31` (what "as of" can and cannot
reconstruct: `sql/README.md`). Aging buckets: `current` (not yet past due), `1-30`, `31-60`, `61-90`,
`90+` days past due; overdue = at least one day past due, so an invoice due on D is not overdue.
"""


def _checks(model: SqlModel) -> str:
    manifest = model.manifest
    checks = []
    if model.materialized == "table":  # invoicing_warehouse/runs/model_checks.py: the product's views are not checked
        checks.append("keys_unique")
    checks += [f"not_null({c})" for c in manifest.not_null]
    checks += [f"accepted_range({c}: {lo}..{hi})" for c, (lo, hi) in manifest.accepted_range.items()]
    if manifest.date_only:
        checks.append("dates_at_midnight")
    return ", ".join(checks) or "none"


def _cell(text: str) -> str:
    # a table cell: a `|` of the text would open a new cell
    return text.replace("|", "\\|")


def render_models_doc(models: Sequence[SqlModel]) -> str:
    """The Markdown page of `models`: by layer (staging, intermediate, marts, then any other schema), by name."""
    parts = [HEADER]
    schemas = sorted({m.schema for m in models}, key=lambda s: (LAYERS.index(s) if s in LAYERS else len(LAYERS), s))
    for schema in schemas:
        parts.append(f"\n## {schema}\n")
        for model in sorted((m for m in models if m.schema == schema), key=lambda m: m.key):
            manifest = model.manifest
            grain = ", ".join(f"`{c}`" for c in manifest.grain) or "at most one row"
            reads = ", ".join(f"`{d}`" for d in sorted(model.depends_on)) or "nothing"
            lines = [f"\n### `{model.key}`\n", f"{manifest.description}\n",
                     f"- grain: {grain}", f"- stored as: {model.materialized}", f"- reads: {reads}",
                     f"- checks: {_checks(model)}"]
            if manifest.date_only:
                lines.append("- date-only: " + ", ".join(f"`{d.raw}` ({d.field})" for d in manifest.date_only))
            if manifest.columns:
                lines += ["", "| column | holds |", "|---|---|"]
                lines += [f"| `{column}` | {_cell(text)} |" for column, text in manifest.columns]
            parts.append("\n".join(lines) + "\n")
    return "".join(parts)


def main() -> int:
    """Prints the page of the product's models."""
    sys.stdout.write(render_models_doc(discover_models()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
