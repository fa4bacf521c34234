-- ---
-- description: one row per status change of a supplier document (its status history).
-- materialized: view
-- grain: [portal_id, event_id]
-- ---
-- one row per status change of a supplier document (its status history); used to know a document's
-- status on a past date. event_position orders a document's history (1 = the oldest), whatever the ids:
-- the sync numbers the served list (most recent first) and may synthesise ids when none is served.
-- previous_status and status are used when served, else taken from the neighbouring events; status_key
-- and previous_status_key compare letters only, case-free, as stg_invoicing__supplier_documents does.

with source as (
    select * from invoicing_raw.supplier_document_events
),

time_zone as (
    select * from staging.stg_invoicing__portal_time_zone
),

renamed as (
    select
        cast(source.portal_id as varchar) as portal_id,
        cast(source.id as varchar) as event_id,
        cast(source.supplier_document_id as varchar) as supplier_document_id,
        cast(source._position as bigint) as event_position,
        cast(source.date as timestamptz) as occurred_at,
        cast(cast(source.date as timestamptz) at time zone time_zone.time_zone as date) as event_date,
        cast(source.action as varchar) as action,
        coalesce(
            cast(source.previous_status as varchar),
            lag(cast(source.status as varchar)) over history
        ) as previous_status,
        coalesce(
            cast(source.status as varchar),
            lead(cast(source.previous_status as varchar)) over history
        ) as status,
        cast(source.origin as varchar) as origin
    from source
    cross join time_zone
    where source._deleted_at is null
    window history as (
        partition by source.portal_id, source.supplier_document_id
        order by source._position, cast(source.date as timestamptz), source.id
    )
),

keyed as (
    select
        *,
        lower(regexp_replace(previous_status, '[^A-Za-z]', '', 'g')) as previous_status_key,
        lower(regexp_replace(status, '[^A-Za-z]', '', 'g')) as status_key
    from renamed
)

select * from keyed
