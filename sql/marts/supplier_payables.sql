-- one row per supplier document still to pay on the report date: status `approved` (approved, no payment
-- declared) on that date, issued on or before it. the status on a past date comes from the status history
-- (supplier_document_events): the status before the first change after the report date; without any
-- history, a document `paid` with a payment date after the report date counts as approved then.
-- credit notes count negative in amount_due.
with report_date as (
    select * from intermediate.int_report_date
),

aging_buckets as (
    select * from intermediate.int_aging_buckets
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
        cross join report_date
        where events.event_date > report_date.as_of_date
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
                and supplier_documents.payment_date > report_date.as_of_date then 'approved'
            else supplier_documents.status
        end as status_as_of
    from supplier_documents
    cross join report_date
    left join first_change_after on first_change_after.supplier_document_id = supplier_documents.supplier_document_id
    left join documents_with_history
        on documents_with_history.supplier_document_id = supplier_documents.supplier_document_id
),

payables as (
    select
        report_date.as_of_date,
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
        status_on_date.due_date - report_date.as_of_date as days_until_due,
        report_date.as_of_date - status_on_date.due_date as days_past_due
    from status_on_date
    cross join report_date
    left join suppliers on suppliers.supplier_id = status_on_date.supplier_id
    where status_on_date.status_as_of = 'approved'
        and coalesce(status_on_date.issue_date, report_date.as_of_date) <= report_date.as_of_date
),

final as (
    select
        payables.*,
        aging_buckets.aging_bucket,
        aging_buckets.is_overdue
    from payables
    asof inner join aging_buckets on coalesce(payables.days_past_due, 0) >= aging_buckets.min_days_past_due
)

select * from final
