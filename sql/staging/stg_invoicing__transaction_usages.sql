-- one row per allocation of money to an invoice: a payment (TRANSACTION) or a credit note (CREDIT_NOTE).
-- usage_date is the payment date or the credit note's emit date (docs/resources.md), not the day the
-- allocation was made.

-- materialized: view
with source as (
    select * from invoicing_raw.transaction_usages
),

renamed as (
    select
        cast(id as varchar) as usage_id,
        cast(portal_id as varchar) as portal_id,
        cast(type as varchar) as usage_type,
        cast(customer_id as varchar) as customer_id,
        cast(invoice_id as varchar) as invoice_id,
        cast(coalesce(transaction_id, transaction__id) as varchar) as transaction_id,
        cast(credit_note_id as varchar) as credit_note_id,
        cast(amount as decimal(18, 2)) as amount,
        cast(date as timestamptz) as used_at,
        cast(cast(date as timestamptz) at time zone 'UTC' as date) as usage_date,
        cast(type as varchar) = 'CREDIT_NOTE' as is_credit_note,
        cast(metadata as varchar) as metadata,
        cast(last_update as timestamptz) as last_updated_at
    from source
    where _deleted_at is null
)

select * from renamed
