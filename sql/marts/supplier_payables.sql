-- one row per supplier document still to pay on the report date: status `approved` (approved, no payment
-- declared) on that date, issued on or before it. the status on a past date comes from the status history
-- (supplier_document_events): the status before the first change after the report date; without any
-- history, a document `paid` with a payment date after the report date counts as approved then.
-- credit notes count negative in amount_due.
with as_of as (
    select coalesce(
        cast(getvariable('as_of_date') as date),
        cast(now() at time zone 'UTC' as date)
    ) as as_of_date
),

supplier_documents as (
    select * from staging.stg_invoicing__supplier_documents
),

suppliers as (
    select * from staging.stg_invoicing__suppliers
),

events as (
    select * from staging.stg_invoicing__supplier_document_events
),

first_change_after as (
    select supplier_document_id, previous_status
    from (
        select
            events.supplier_document_id,
            events.previous_status,
            row_number() over (
                partition by events.supplier_document_id order by events.occurred_at, events.event_id
            ) as change_rank
        from events
        cross join as_of
        where events.event_date > as_of.as_of_date
    )
    where change_rank = 1
),

documents_with_history as (
    select distinct supplier_document_id from events
),

status_on_date as (
    select
        supplier_documents.*,
        case
            when first_change_after.supplier_document_id is not null then first_change_after.previous_status
            when documents_with_history.supplier_document_id is null
                and supplier_documents.status = 'paid'
                and supplier_documents.payment_date > as_of.as_of_date then 'approved'
            else supplier_documents.status
        end as status_as_of
    from supplier_documents
    cross join as_of
    left join first_change_after on first_change_after.supplier_document_id = supplier_documents.supplier_document_id
    left join documents_with_history
        on documents_with_history.supplier_document_id = supplier_documents.supplier_document_id
),

payables as (
    select
        as_of.as_of_date,
        status_on_date.supplier_document_id,
        status_on_date.supplier_id,
        suppliers.supplier_name,
        status_on_date.reference,
        status_on_date.document_type,
        status_on_date.issue_date,
        status_on_date.due_date,
        status_on_date.amount as amount_excl_tax,
        -- amountVat may be missing on a received document: then amount + vat, as the api derives it
        coalesce(status_on_date.amount_vat, status_on_date.amount + coalesce(status_on_date.vat_amount, 0))
            as amount_incl_tax,
        -- a document without any amount still shows, counting 0 in the totals
        coalesce(
            case when status_on_date.is_credit_note then -1 else 1 end
            * coalesce(status_on_date.amount_vat, status_on_date.amount + coalesce(status_on_date.vat_amount, 0)),
            0
        ) as amount_due,
        status_on_date.due_date - as_of.as_of_date as days_until_due,
        as_of.as_of_date - status_on_date.due_date as days_past_due
    from status_on_date
    cross join as_of
    left join suppliers on suppliers.supplier_id = status_on_date.supplier_id
    where status_on_date.status_as_of = 'approved'
        and coalesce(status_on_date.issue_date, as_of.as_of_date) <= as_of.as_of_date
),

final as (
    select
        *,
        case
            when days_past_due is null or days_past_due <= 0 then 'current'
            when days_past_due <= 30 then '1-30'
            when days_past_due <= 60 then '31-60'
            when days_past_due <= 90 then '61-90'
            else '90+'
        end as aging_bucket,
        coalesce(days_past_due > 0, false) as is_overdue
    from payables
)

select * from final
