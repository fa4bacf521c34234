"""What the API contract does not promise, checked on the data (docs/contract.md, "Checks").

The product derives what it soundly can (a usage's date from its transaction, a credit note's size whatever
its sign) and shows the rest: each check here fails when a value the marts need is missing or not one the
product understands, and its description names the field and the marts it spoils, so a number is never
silently wrong. The blocking ones (`usages_dated`, `usages_typed`, ...) hold the figures they protect back at
the gate (invoicing_warehouse/runs/gate.py): without them those figures are wrong, so readers keep the last good ones.
Plain checks (invoicing_warehouse/runs/checks.py): the gate runs them, `assets/checks.py` makes them Dagster checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from invoicing_warehouse.runs.checks import (
    ERROR,
    PAYABLES,
    RECEIVABLES,
    SAMPLE_SIZE,
    WARN,
    WarehouseCheck,
    marts_built_on,
)

RECEIVABLES_MARTS = RECEIVABLES
PAYABLES_MARTS = PAYABLES
USAGES = "staging.stg_invoicing__transaction_usages"
LIVE_USAGES = "intermediate.int_usages_on_live_versions"  # usages with the live version of their invoice
DOCUMENTS = "staging.stg_invoicing__documents"
VERSIONS = "staging.stg_invoicing__document_versions"
SUPPLIER_DOCUMENTS = "staging.stg_invoicing__supplier_documents"
SUPPLIER_PAYABLES = "marts.supplier_payables"
RECEIVABLES_MART = "marts.receivables"
CASH_OUTLOOK = "marts.cash_outlook"
TRANSACTIONS = "staging.stg_invoicing__transactions"
SUPPLIER_STATUS_AS_OF = "intermediate.int_supplier_documents__status_as_of"

KNOWN_SUBTYPES = ("INVOICE", "CREDIT_NOTE", "PROFORMA", "DEPOSIT")
# Supplier-document values by letters only, case-free (as stg_invoicing__supplier_documents compares them)
KNOWN_SUPPLIER_TYPES = ("invoice", "creditnote")
KNOWN_SUPPLIER_STATUSES = ("toapprove", "approved", "refused", "disputed", "paid")


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)


def contract_check(
    relation: str,
    name: str,
    field: str,
    marts: Sequence[str],
    query: str,
    description: str,
    severity: str = ERROR,
    blocking: bool = False,
    reads: Sequence[str] = (),
    setup: Sequence[str] = (),
) -> WarehouseCheck:
    """A check on `relation` that fails when `query` returns rows (offending ids or values, first column),
    naming `field` and the `marts` it spoils. `reads`: other relations the query needs; `setup`: statements run
    first on the check's connection (e.g. setting the report date)."""

    def evaluate(connection: duckdb.DuckDBPyConnection) -> tuple[bool, str | None, dict[str, Any]]:
        for statement in setup:
            connection.execute(statement)
        found = [str(row[0]) for row in connection.execute(query).fetchall()]
        summary = (f"{field}: {len(found)} value(s) the product cannot use ({', '.join(found[:SAMPLE_SIZE])}); "
                   f"spoils {', '.join(marts)}") if found else None
        return not found, summary, {"field": field, "marts": list(marts), "count": len(found),
                                    "sample": found[:SAMPLE_SIZE]}

    return WarehouseCheck(name, relation, f"{description} Fails naming {field}; spoils {', '.join(marts)}.",
                          evaluate, blocking=blocking, severity=severity,
                          protects=marts_built_on([mart.split(" ")[0] for mart in marts]), reads=tuple(reads))


usages_dated = contract_check(
    USAGES,
    "usages_dated",
    "transactionUsage.date (nor its transaction's date, nor its credit note's emitDate)",
    RECEIVABLES_MARTS,
    f"select usage_id from {USAGES} where usage_date is null order by 1",
    "Every payment or credit-note usage has a date: served, or derived from promised fields.",
    blocking=True,
)

usages_typed = contract_check(
    USAGES,
    "usages_typed",
    "transactionUsage.type (nor a transaction or credit-note link)",
    RECEIVABLES_MARTS,
    f"select usage_id from {USAGES} where usage_type is null order by 1",
    "Every usage is a payment or a credit note: served, or known from which link is set.",
    blocking=True,
)

document_subtypes_known = contract_check(
    DOCUMENTS,
    "document_subtypes_known",
    "document.subtype",
    ("marts.receivables (is_deposit)", "marts.receivables_by_customer"),
    f"select distinct document_subtype from {DOCUMENTS} "
    f"where document_subtype not in ({_quoted(KNOWN_SUBTYPES)}) order by 1",
    "Invoices of an unknown subtype count as receivables but not as deposits; map the value if it is one.",
    severity=WARN,
)

credit_note_sign_consistent = contract_check(
    DOCUMENTS,
    "credit_note_sign_consistent",
    "document.amountVatNet / transactionUsage.amount of credit notes",
    ("marts.receivables", "marts.receivables_by_customer (unapplied_credit_notes)"),
    f"""select 'document.amountVatNet' from {DOCUMENTS}
        where document_subtype = 'CREDIT_NOTE' and not is_draft and amount_vat_net <> 0
        having count(distinct sign(amount_vat_net)) > 1
        union all
        select 'transactionUsage.amount' from {USAGES}
        where usage_type = 'CREDIT_NOTE' and amount <> 0
        having count(distinct sign(amount)) > 1""",
    "Credit notes and their usages keep one sign each, so counting them by size is sound.",
    reads=(USAGES,),
)

supplier_credit_note_sign_consistent = contract_check(
    SUPPLIER_DOCUMENTS,
    "supplier_credit_note_sign_consistent",
    "supplierDocument.amountVat / amount / vat of credit notes",
    (*PAYABLES_MARTS, "marts.cash_outlook"),
    f"""select 'supplierDocument.' || field from (
            select 'amountVat' as field, amount_vat as value from {SUPPLIER_DOCUMENTS} where is_credit_note
            union all
            select 'amount', amount from {SUPPLIER_DOCUMENTS} where is_credit_note
            union all
            select 'vat', vat_amount from {SUPPLIER_DOCUMENTS} where is_credit_note
        )
        where value <> 0
        group by field
        having count(distinct sign(value)) > 1
        order by 1""",
    # counted by size, a credit note is right whichever one sign the server uses; both signs at once mean
    # the sign carries a meaning the product does not know, so it says so (as credit_note_sign_consistent)
    "Supplier credit notes keep one sign each, so counting them by size (negative in payables) is sound.",
)

supplier_document_values_known = contract_check(
    SUPPLIER_DOCUMENTS,
    "supplier_document_values_known",
    "supplierDocument.type / supplierDocument.status",
    PAYABLES_MARTS,
    f"""select distinct 'type ' || coalesce(document_type, 'null') from {SUPPLIER_DOCUMENTS}
        where coalesce(document_type_key not in ({_quoted(KNOWN_SUPPLIER_TYPES)}), true)
        union
        select distinct 'status ' || coalesce(status, 'null') from {SUPPLIER_DOCUMENTS}
        where coalesce(status_key not in ({_quoted(KNOWN_SUPPLIER_STATUSES)}), true)
        order by 1""",
    "Every supplier document's type and status is a known value (any case or separators).",
)

payables_have_amount = contract_check(
    SUPPLIER_PAYABLES,
    "payables_have_amount",
    "supplierDocument.amountVat / supplierDocument.amount",
    PAYABLES_MARTS,
    f"select supplier_document_id from {SUPPLIER_PAYABLES} where amount_incl_tax is null order by 1",
    "Every payable has an amount (it would count 0).",
)

# a currency not served counts as euros (staging): a USD bill among unlabelled documents is a mix
payables_single_currency = contract_check(
    SUPPLIER_PAYABLES,
    "payables_single_currency",
    "supplierDocument.currency",
    PAYABLES_MARTS,
    f"""select portal_id || ': ' || string_agg(distinct currency, ', ' order by currency)
        from {SUPPLIER_PAYABLES} group by portal_id having count(distinct currency) > 1 order by 1""",
    "The payables of a portal are in one currency, so their sums mean something.",
    blocking=True,
)

receivables_single_currency = contract_check(
    RECEIVABLES_MART,
    "receivables_single_currency",
    "document.currency / transaction.currency",
    (*RECEIVABLES_MARTS, "marts.dso"),
    f"""select portal_id || ': ' || string_agg(distinct currency, ', ' order by currency) from (
            select portal_id, currency from {RECEIVABLES_MART}
            union all
            select portal_id, currency from {DOCUMENTS} where document_type = 'INVOICE' and not is_draft
            union all
            select portal_id, currency from {TRANSACTIONS}
        ) group by portal_id having count(distinct currency) > 1 order by 1""",
    "The invoices, credit notes and payments of a portal are in one currency, so receivables, unapplied "
    "money and DSO sum one currency.",
    blocking=True,
    reads=(DOCUMENTS, TRANSACTIONS),
)

cash_outlook_single_currency = contract_check(
    CASH_OUTLOOK,
    "cash_outlook_single_currency",
    "document.currency / supplierDocument.currency",
    (CASH_OUTLOOK,),
    f"""select distinct portal_id || ': ' || currency from {CASH_OUTLOOK} where currency like '%/%' order by 1""",
    "Receivables and payables of a portal are in one currency, so inflows and outflows can be netted.",
    blocking=True,
)

supplier_status_as_of_known = contract_check(
    SUPPLIER_PAYABLES,
    "supplier_status_as_of_known",
    "supplierDocumentEvent.date / supplierDocument.paymentDate",
    PAYABLES_MARTS,
    f"""select status.supplier_document_id from {SUPPLIER_STATUS_AS_OF} as status
        cross join intermediate.int_report_date as report_date
        where status.status_as_of is null
            and coalesce(status.issue_date, report_date.as_of_date) <= report_date.as_of_date
        order by 1""",
    "Every supplier document issued by the report date has a known status on that date.",
    reads=(SUPPLIER_STATUS_AS_OF, "intermediate.int_report_date"),
    # the mart's report date: the intermediate views read it from this session's variable
    setup=(f"set variable as_of_date = (select max(as_of_date) from {SUPPLIER_PAYABLES})",),
)

# a residual above a cent: the usages' amounts are rounded to the cent, their sum may differ by rounding only
paid_invoices_settled = contract_check(
    DOCUMENTS,
    "paid_invoices_settled",
    "document.status PAID / transactionUsage.amount",
    (*RECEIVABLES_MARTS, "marts.dso", "marts.cash_outlook"),
    f"""select documents.document_id
        from {DOCUMENTS} as documents
        left join (
            select portal_id, invoice_id, sum(abs(amount)) as settled
            from {LIVE_USAGES}
            group by portal_id, invoice_id
        ) as usages on usages.portal_id = documents.portal_id and usages.invoice_id = documents.document_id
        where documents.document_type = 'INVOICE' and documents.status = 'PAID'
            and documents.amount_vat_net - coalesce(usages.settled, 0) >= 0.01
        order by 1""",
    "A PAID invoice counts nothing open whatever its usages say; a PAID invoice whose payments and credit "
    "notes fall short of its total left a residual the application settled otherwise (a write-off, bank fees, "
    "rounding): book it as a loss or fees, or find the missing payment. WARN: the open figures follow the "
    "status and are right; the residual is named so that it is not lost.",
    severity=WARN,
    reads=(LIVE_USAGES,),
)

usages_reach_live_invoices = contract_check(
    LIVE_USAGES,
    "usages_reach_live_invoices",
    "document.prevDoc / document.nextDoc (the version chain of an invoice holding usages)",
    (*RECEIVABLES_MARTS, "marts.dso", "marts.cash_outlook"),
    f"""select usages.usage_id
        from {LIVE_USAGES} as usages
        inner join {VERSIONS} as versions
            on versions.portal_id = usages.portal_id and versions.document_id = usages.invoice_id
        where versions.is_superseded
        order by 1""",
    "Every usage counts for a live invoice: one left on a replaced (CANCELED) version reaches the live version "
    "through prevDoc/nextDoc. When no link leads there, the live version shows the paid amount as still owed.",
    blocking=True,
    reads=(VERSIONS,),
)

# Every version reachable from a chain's first one through `prevDoc`/`nextDoc` (either link suffices: a
# server may fill only one); a chain with two versions not CANCELED counts one invoice twice.
_LIVE_VERSIONS_PER_CHAIN = f"""
    with recursive versions as (
        select portal_id, document_id, previous_version_id, next_version_id, is_superseded from {VERSIONS}
    ),
    links as (
        select portal_id, previous_version_id as parent_id, document_id as child_id from versions
        where previous_version_id is not null
        union
        select portal_id, document_id, next_version_id from versions where next_version_id is not null
    ),
    loaded_links as (
        select links.* from links
        join versions as parent on parent.portal_id = links.portal_id and parent.document_id = links.parent_id
        join versions as child on child.portal_id = links.portal_id and child.document_id = links.child_id
    ),
    chains(portal_id, first_id, document_id) as (
        select portal_id, document_id, document_id from versions
        where (portal_id, document_id) not in (select portal_id, child_id from loaded_links)
        union
        select chains.portal_id, chains.first_id, loaded_links.child_id from chains
        join loaded_links on loaded_links.portal_id = chains.portal_id and loaded_links.parent_id = chains.document_id
    )
    select chains.first_id || ': ' || string_agg(chains.document_id, ', ' order by chains.document_id)
    from chains
    join versions on versions.portal_id = chains.portal_id and versions.document_id = chains.document_id
    where not versions.is_superseded
    group by chains.portal_id, chains.first_id
    having count(*) > 1
    order by 1
"""

document_versions_single_live = contract_check(
    VERSIONS,
    "document_versions_single_live",
    "document.status of a replaced version (CANCELED) / document.lastUpdate",
    (*RECEIVABLES_MARTS, "marts.dso", "marts.cash_outlook"),
    _LIVE_VERSIONS_PER_CHAIN,
    "One version per prevDoc/nextDoc chain is live: a replaced version still VALIDATED in the warehouse (its "
    "change to CANCELED did not move lastUpdate, so no window saw it) counts the invoice twice; a reconcile "
    "compares content and repairs it.",
    blocking=True,
)

CONTRACT_VALUE_CHECKS: list[WarehouseCheck] = [
    usages_dated,
    usages_typed,
    document_subtypes_known,
    credit_note_sign_consistent,
    supplier_credit_note_sign_consistent,
    supplier_document_values_known,
    payables_have_amount,
    payables_single_currency,
    receivables_single_currency,
    cash_outlook_single_currency,
    supplier_status_as_of_known,
    paid_invoices_settled,
    usages_reach_live_invoices,
    document_versions_single_live,
]

