-- one row per status change of a supplier document (its status history); used to know a document's
-- status on a past date.

-- materialized: view
with source as (
    select * from invoicing_raw.supplier_document_events
),

renamed as (
    select
        cast(id as varchar) as event_id,
        cast(supplier_document_id as varchar) as supplier_document_id,
        cast(date as timestamptz) as occurred_at,
        cast(cast(date as timestamptz) at time zone 'UTC' as date) as event_date,
        cast(action as varchar) as action,
        cast(previous_status as varchar) as previous_status,
        cast(status as varchar) as status,
        cast(origin as varchar) as origin
    from source
    where _deleted_at is null
)

select * from renamed
