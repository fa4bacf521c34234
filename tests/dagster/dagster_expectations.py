"""What the Dagster tests expect, from sources independent of the code under test: the raw tables
named by docs/resources.md and the SQL model files on disk."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# docs/resources.md, "Raw tables": one table per API resource.
SPEC_RAW_TABLES = [
    "user",
    "portal",
    "customers",
    "items",
    "documents",
    "transactions",
    "transaction_usages",
    "suppliers",
    "supplier_documents",
    "supplier_document_events",
    "webhooks",
]


def sql_model_paths() -> list[tuple[str, str]]:
    """(schema, name) of every SQL model file under sql/: its folder and its file name."""
    return sorted((p.parent.name, p.stem) for p in (PROJECT_ROOT / "sql").glob("*/*.sql"))
