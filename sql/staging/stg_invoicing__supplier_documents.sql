-- ---
-- description: >
--   one row per supplier document that exists upstream, status and type normalised (status_key,
--   document_type_key).
-- materialized: view
-- grain: [portal_id, supplier_document_id]
-- date_only:
--   - {raw: supplier_documents.issue_date, field: supplierDocument.issueDate}
--   - {raw: supplier_documents.due_date, field: supplierDocument.dueDate}
--   - {raw: supplier_documents.payment_date, field: supplierDocument.paymentDate}
-- ---
-- one row per supplier invoice or credit note that exists upstream.
-- status: toApprove, approved, refused, disputed, paid; a payable is `approved` (no payment declared).
-- the contract names the statuses and the credit-note type but not their spelling: status_key and
-- is_credit_note compare letters only, case-free (`creditNote`, `CREDIT_NOTE`, `credit-note` are one
-- value); the check supplier_document_values_known names any other value.

with source as (
    select * from invoicing_raw.supplier_documents
),

time_zone as (
    select * from staging.stg_invoicing__portal_time_zone
),

renamed as (
    select
        cast(id as varchar) as supplier_document_id,
        cast(portal_id as varchar) as portal_id,
        cast(supplier_id as varchar) as supplier_id,
        cast(file_key as varchar) as file_key,
        cast(status as varchar) as status,
        lower(regexp_replace(cast(status as varchar), '[^A-Za-z]', '', 'g')) as status_key,
        cast(reference as varchar) as reference,
        cast(type as varchar) as document_type,
        lower(regexp_replace(cast(type as varchar), '[^A-Za-z]', '', 'g')) as document_type_key,
        lower(regexp_replace(cast(type as varchar), '[^A-Za-z]', '', 'g')) = 'creditnote' as is_credit_note,
        cast(issue_date as timestamptz) as issued_at,
        cast(cast(issue_date as timestamptz) at time zone time_zone.time_zone as date) as issue_date,
        cast(due_date as timestamptz) as due_at,
        cast(cast(due_date as timestamptz) at time zone time_zone.time_zone as date) as due_date,
        cast(amount as decimal(18, 2)) as amount,
        cast(vat as decimal(18, 2)) as vat_amount,
        cast(amount_vat as decimal(18, 2)) as amount_vat,
        -- spec: euros on creation; not served: euros (docs/contract.md, `supplier_documents.currency`)
        coalesce(cast(currency as varchar), 'EUR') as currency,
        cast(origin as varchar) as origin,
        cast(payment_date as timestamptz) as paid_at,
        cast(cast(payment_date as timestamptz) at time zone time_zone.time_zone as date) as payment_date,
        cast(metadata as varchar) as metadata,
        cast(last_update as timestamptz) as last_updated_at
    from source
    cross join time_zone
    where _deleted_at is null
)

select * from renamed
