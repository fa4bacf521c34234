"""What the API contract does not promise, checked on the data (docs/contract.md, "Checks").

The product derives what it soundly can (a usage's date from its transaction, a credit note's size whatever
its sign) and shows the rest: each check here fails when a value the marts need is missing or not one the
product understands, and its description names the field and the marts it spoils, so a number is never
silently wrong. `usages_dated` and `usages_typed` block: without them every receivable is wrong, so the
marts keep their last good state.
"""

from collections.abc import Sequence

from dagster import (
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetKey,
    MetadataValue,
    asset_check,
)

from assets.checks import SAMPLE_SIZE, relation_exists
from assets.resources import WarehouseResource
from assets.served_fields import PAYABLES as PAYABLES_MARTS
from assets.served_fields import RECEIVABLES as RECEIVABLES_MARTS
from assets.served_fields import build_dates_at_midnight_check, build_fields_served_check

USAGES = "staging.stg_invoicing__transaction_usages"
DOCUMENTS = "staging.stg_invoicing__documents"
DOCUMENT_VERSIONS = "staging.stg_invoicing__document_versions"
SUPPLIER_DOCUMENTS = "staging.stg_invoicing__supplier_documents"
SUPPLIER_PAYABLES = "marts.supplier_payables"
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
    severity: AssetCheckSeverity = AssetCheckSeverity.ERROR,
    blocking: bool = False,
    reads: Sequence[str] = (),
    setup: Sequence[str] = (),
) -> AssetChecksDefinition:
    """A check on `relation`'s asset that fails when `query` returns rows (offending ids or values, first
    column), naming `field` and the `marts` it spoils. `reads`: other relations the query needs; `setup`:
    statements run first on the check's own connection (e.g. setting the report date)."""

    @asset_check(
        asset=AssetKey(relation.split(".")),
        name=name,
        blocking=blocking,
        description=f"{description} Fails naming {field}; spoils {', '.join(marts)}.",
    )
    def _check(warehouse: WarehouseResource) -> AssetCheckResult:
        with warehouse.connect(read_only=True) as connection:
            missing = [r for r in (relation, *reads) if not relation_exists(connection, r)]
            if missing:
                return AssetCheckResult(passed=True, metadata={"note": f"{', '.join(missing)} not built yet"})
            for statement in setup:
                connection.execute(statement)
            found = [str(row[0]) for row in connection.execute(query).fetchall()]
        return AssetCheckResult(
            passed=not found,
            severity=severity,
            description=(
                f"{field}: {len(found)} value(s) the product cannot use ({', '.join(found[:SAMPLE_SIZE])}); "
                f"spoils {', '.join(marts)}"
                if found
                else None
            ),
            metadata={
                "field": MetadataValue.text(field),
                "marts": MetadataValue.json(list(marts)),
                "count": MetadataValue.int(len(found)),
                "sample": MetadataValue.json(found[:SAMPLE_SIZE]),
            },
        )

    return _check


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
    severity=AssetCheckSeverity.WARN,
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

payables_single_currency = contract_check(
    SUPPLIER_PAYABLES,
    "payables_single_currency",
    "supplierDocument.currency",
    PAYABLES_MARTS,
    f"""select currency from (select distinct currency from {SUPPLIER_PAYABLES} where currency is not null)
        qualify count(*) over () > 1 order by 1""",
    "The payables are in one currency, so their sums mean something.",
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

# Every version reachable from a chain's first one through `prevDoc`/`nextDoc` (either link suffices: a
# server may fill only one); a chain with two versions not CANCELED counts one invoice twice.
_LIVE_VERSIONS_PER_CHAIN = f"""
    with recursive versions as (
        select portal_id, document_id, previous_version_id, next_version_id, is_superseded from {DOCUMENT_VERSIONS}
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
    DOCUMENT_VERSIONS,
    "document_versions_single_live",
    "document.status of a replaced version (CANCELED) / document.lastUpdate",
    (*RECEIVABLES_MARTS, "marts.dso", "marts.cash_outlook"),
    _LIVE_VERSIONS_PER_CHAIN,
    "One version per prevDoc/nextDoc chain is live: a replaced version still VALIDATED in the warehouse (its "
    "change to CANCELED did not move lastUpdate, so no window saw it) counts the invoice twice; a reconcile "
    "compares content and repairs it.",
    blocking=True,
)

CONTRACT_VALUE_CHECKS: list[AssetChecksDefinition] = [
    usages_dated,
    usages_typed,
    document_subtypes_known,
    credit_note_sign_consistent,
    supplier_document_values_known,
    payables_have_amount,
    payables_single_currency,
    supplier_status_as_of_known,
    document_versions_single_live,
]


def build_contract_checks() -> list[AssetChecksDefinition]:
    """Every contract check: the value checks above, `fields_served` per raw table and `dates_at_midnight`
    per staging model with date-only values."""
    return [*CONTRACT_VALUE_CHECKS, build_fields_served_check(), build_dates_at_midnight_check()]
