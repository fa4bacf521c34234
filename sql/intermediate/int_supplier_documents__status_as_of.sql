-- ---
-- description: each live supplier document with its status on the report date (null when it cannot be known).
-- materialized: view
-- grain: [portal_id, supplier_document_id]
-- ---
-- each live supplier document with its status on the report date (status_as_of, normalised like
-- status_key: toapprove, approved, refused, disputed, paid), or null when that status cannot be known.
-- in order:
--   1. nothing changed after the report date (its lastUpdate's date is on or before it): today's status;
--   2. a dated status change after the report date: the status before the first such change;
--   3. a dated history with no change after the report date: today's status;
--   4. paid without any dated history: approved until its payment date, paid from it on;
--   5. otherwise unknown (null): the check supplier_status_as_of_known counts these documents.
-- due_date: the served dueDate, or, for a bill (not a credit note) without one, the legal default of c. com.
-- L441-10 I, 30 days after the issue date (standing for receipt of the goods or the service), as the customer
-- side does (intermediate.int_invoices_as_of); is_due_date_assumed flags it, so every figure resting on it says so.
-- rule 1 holds because a status change moves lastUpdate (the spec's "last update time").

with report_date as (
    select * from intermediate.int_report_date
),

time_zone as (
    select * from staging.stg_invoicing__portal_time_zone
),

supplier_documents as (
    select * from staging.stg_invoicing__supplier_documents
),

dated_events as (
    select * from staging.stg_invoicing__supplier_document_events where event_date is not null
),

first_change_after as (
    select portal_id, supplier_document_id, previous_status_key
    from (
        select
            dated_events.portal_id,
            dated_events.supplier_document_id,
            dated_events.previous_status_key,
            row_number() over (
                partition by dated_events.portal_id, dated_events.supplier_document_id
                order by dated_events.occurred_at, dated_events.event_position, dated_events.event_id
            ) as change_rank
        from dated_events
        cross join report_date
        where dated_events.event_date > report_date.as_of_date
    )
    where change_rank = 1
),

documents_with_dated_history as (
    select distinct portal_id, supplier_document_id from dated_events
),

final as (
    select
        supplier_documents.* replace (
            case when supplier_documents.is_credit_note then supplier_documents.due_date
                else coalesce(supplier_documents.due_date, supplier_documents.issue_date + 30)
            end as due_date
        ),
        supplier_documents.due_date is null and not supplier_documents.is_credit_note
            and supplier_documents.issue_date is not null as is_due_date_assumed,
        case
            when cast(supplier_documents.last_updated_at at time zone time_zone.time_zone as date)
                <= report_date.as_of_date then supplier_documents.status_key
            when first_change_after.supplier_document_id is not null then first_change_after.previous_status_key
            when documents_with_dated_history.supplier_document_id is not null then supplier_documents.status_key
            when supplier_documents.status_key = 'paid' and supplier_documents.payment_date > report_date.as_of_date
                then 'approved'
            when supplier_documents.status_key = 'paid' and supplier_documents.payment_date <= report_date.as_of_date
                then 'paid'
        end as status_as_of
    from supplier_documents
    cross join report_date
    cross join time_zone
    left join first_change_after
        on first_change_after.portal_id = supplier_documents.portal_id
        and first_change_after.supplier_document_id = supplier_documents.supplier_document_id
    left join documents_with_dated_history
        on documents_with_dated_history.portal_id = supplier_documents.portal_id
        and documents_with_dated_history.supplier_document_id = supplier_documents.supplier_document_id
)

select * from final
