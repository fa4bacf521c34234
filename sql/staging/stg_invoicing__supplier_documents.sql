-- one row per supplier invoice or credit note that exists upstream.
-- status: toApprove, approved, refused, disputed, paid; a payable is `approved` (no payment declared).

-- materialized: view
with source as (
    select * from invoicing_raw.supplier_documents
),

renamed as (
    select
        cast(id as varchar) as supplier_document_id,
        cast(portal_id as varchar) as portal_id,
        cast(supplier_id as varchar) as supplier_id,
        cast(file_key as varchar) as file_key,
        cast(status as varchar) as status,
        cast(reference as varchar) as reference,
        cast(type as varchar) as document_type,
        cast(type as varchar) = 'creditNote' as is_credit_note,
        cast(issue_date as timestamptz) as issued_at,
        cast(cast(issue_date as timestamptz) at time zone 'UTC' as date) as issue_date,
        cast(due_date as timestamptz) as due_at,
        cast(cast(due_date as timestamptz) at time zone 'UTC' as date) as due_date,
        cast(amount as decimal(18, 2)) as amount,
        cast(vat as decimal(18, 2)) as vat_amount,
        cast(amount_vat as decimal(18, 2)) as amount_vat,
        cast(currency as varchar) as currency,
        cast(origin as varchar) as origin,
        cast(payment_date as timestamptz) as paid_at,
        cast(cast(payment_date as timestamptz) at time zone 'UTC' as date) as payment_date,
        cast(metadata as varchar) as metadata,
        cast(last_update as timestamptz) as last_updated_at
    from source
    where _deleted_at is null
)

select * from renamed
