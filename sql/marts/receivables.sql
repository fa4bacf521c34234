-- one row per invoice with money still owed on the report date (as_of_date, default today utc).
-- an invoice: type INVOICE, subtype null or DEPOSIT (proformas and credit notes are never receivables),
-- live version (not CANCELED), not a draft, emitted on or before the report date.
-- open amount = total incl. tax after global discount - payments and credit notes dated on or before the
-- report date. as of today this is the api's `remaining`.
with as_of as (
    select coalesce(
        cast(getvariable('as_of_date') as date),
        cast(now() at time zone 'UTC' as date)
    ) as as_of_date
),

documents as (
    select * from staging.stg_invoicing__documents
),

usages as (
    select * from staging.stg_invoicing__transaction_usages
),

customers as (
    select * from staging.stg_invoicing__customers
),

messages as (
    select * from staging.stg_invoicing__document_messages
),

invoices as (
    select documents.*
    from documents
    cross join as_of
    where documents.document_type = 'INVOICE'
        and coalesce(documents.document_subtype, 'INVOICE') in ('INVOICE', 'DEPOSIT')
        and documents.status in ('VALIDATED', 'PAID')
        and coalesce(documents.emit_date, as_of.as_of_date) <= as_of.as_of_date
),

settled_per_invoice as (
    select
        usages.invoice_id,
        coalesce(sum(usages.amount) filter (where usages.usage_type = 'TRANSACTION'), 0) as paid_by_payments,
        coalesce(sum(usages.amount) filter (where usages.usage_type = 'CREDIT_NOTE'), 0) as settled_by_credit_notes
    from usages
    cross join as_of
    where usages.usage_date <= as_of.as_of_date
    group by usages.invoice_id
),

-- reminder rule 4: RELAUNCH2 once a RELAUNCH1 or RELAUNCH2 reminder went out on or before the report date
reminded_invoices as (
    select distinct messages.document_id
    from messages
    cross join as_of
    where messages.template in ('RELAUNCH1', 'RELAUNCH2')
        and messages.sent_date <= as_of.as_of_date
),

open_invoices as (
    select
        as_of.as_of_date,
        invoices.document_id as invoice_id,
        invoices.reference,
        coalesce(invoices.document_subtype = 'DEPOSIT', false) as is_deposit,
        invoices.customer_id,
        coalesce(customers.customer_name, invoices.to_name) as customer_name,
        invoices.emit_date,
        invoices.due_date,
        invoices.amount_vat_net as total_incl_tax,
        coalesce(settled.paid_by_payments, 0) as paid_by_payments,
        coalesce(settled.settled_by_credit_notes, 0) as settled_by_credit_notes,
        invoices.amount_vat_net
            - coalesce(settled.paid_by_payments, 0)
            - coalesce(settled.settled_by_credit_notes, 0) as open_amount,
        as_of.as_of_date - invoices.due_date as days_past_due,
        reminded_invoices.document_id is not null as has_reminder
    from invoices
    cross join as_of
    left join settled_per_invoice as settled on settled.invoice_id = invoices.document_id
    left join customers on customers.customer_id = invoices.customer_id
    left join reminded_invoices on reminded_invoices.document_id = invoices.document_id
),

final as (
    select
        as_of_date,
        invoice_id,
        reference,
        is_deposit,
        customer_id,
        customer_name,
        emit_date,
        due_date,
        total_incl_tax,
        paid_by_payments,
        settled_by_credit_notes,
        open_amount,
        days_past_due,
        case
            when days_past_due is null or days_past_due <= 0 then 'current'
            when days_past_due <= 30 then '1-30'
            when days_past_due <= 60 then '31-60'
            when days_past_due <= 90 then '61-90'
            else '90+'
        end as aging_bucket,
        coalesce(days_past_due > 0, false) as is_late,
        -- the template POST /documents/{id}/messages would pick by default on the report date
        case
            when days_past_due > 0 and has_reminder then 'RELAUNCH2'
            when days_past_due > 0 then 'RELAUNCH1'
            when days_past_due >= -7 then 'PRELAUNCH'
            else 'STANDARD'
        end as next_reminder_template
    from open_invoices
    where open_amount > 0
)

select * from final
