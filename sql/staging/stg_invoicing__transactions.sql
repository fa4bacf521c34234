-- ---
-- description: one row per payment or refund that exists upstream.
-- materialized: view
-- grain: [portal_id, transaction_id]
-- date_only:
--   - {raw: transactions.date, field: transaction.date}
-- ---
-- one row per payment received (a transaction is final upstream; used_amount moves as it is used)

with source as (
    select * from invoicing_raw.transactions
),

time_zone as (
    select * from staging.stg_invoicing__portal_time_zone
),

renamed as (
    select
        cast(id as varchar) as transaction_id,
        cast(portal_id as varchar) as portal_id,
        cast(customer_id as varchar) as customer_id,
        cast(customer_name as varchar) as customer_name,
        -- the invoice the payment was first recorded on
        cast(document_id as varchar) as first_invoice_id,
        cast(amount as decimal(18, 2)) as amount,
        cast(used_amount as decimal(18, 2)) as api_used_amount,
        coalesce(cast(refunded_amount as decimal(18, 2)), 0) as refunded_amount,
        cast(date as timestamptz) as paid_at,
        cast(cast(date as timestamptz) at time zone time_zone.time_zone as date) as payment_date,
        cast(method as varchar) as payment_method,
        -- not served: euros, as documents (docs/contract.md, `transactions.currency`)
        coalesce(cast(currency as varchar), 'EUR') as currency,
        cast(metadata as varchar) as metadata,
        cast(last_update as timestamptz) as last_updated_at
    from source
    cross join time_zone
    where _deleted_at is null
)

select * from renamed
