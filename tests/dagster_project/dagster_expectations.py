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


# docs/contract.md, "Checks": (asset, check) of every contract check, as the ledger names them.
CONTRACT_CHECKS = {
    *(
        (f"invoicing_raw/{table}", "fields_served")
        # the gate's flags (invoicing_warehouse/runs/served_fields.py SERVED_CHECKS): the tables with a field whose
        # absence spoils a figure; customers' and the usages' served fields are counted, never judged
        for table in (
            "documents",
            "transactions",
            "supplier_documents",
        )
    ),
    ("staging/stg_invoicing__transaction_usages", "usages_dated"),
    ("staging/stg_invoicing__transaction_usages", "usages_typed"),
    ("staging/stg_invoicing__documents", "document_subtypes_known"),
    ("staging/stg_invoicing__documents", "credit_note_sign_consistent"),
    ("staging/stg_invoicing__supplier_documents", "supplier_credit_note_sign_consistent"),
    ("staging/stg_invoicing__supplier_documents", "supplier_document_values_known"),
    ("marts/supplier_payables", "payables_have_amount"),
    ("marts/supplier_payables", "payables_single_currency"),
    ("marts/receivables", "receivables_single_currency"),
    ("marts/cash_outlook", "cash_outlook_single_currency"),
    ("marts/supplier_payables", "supplier_status_as_of_known"),
    ("staging/stg_invoicing__document_versions", "document_versions_single_live"),
    *(
        (f"staging/{model}", "dates_at_midnight")
        for model in (
            "stg_invoicing__document_versions",
            "stg_invoicing__transactions",
            "stg_invoicing__transaction_usages",
            "stg_invoicing__supplier_documents",
        )
    ),
}
