-- ---
-- description: one row per e-mail sent about a document (its messages history).
-- materialized: view
-- grain: [portal_id, document_id, message_index]
-- ---
-- one row per e-mail sent about a document (the document's `messages` history, a dlt child table).
-- `model` is the template used (STANDARD, PRELAUNCH, RELAUNCH1, RELAUNCH2 or a custom one).

with messages as (
    select * from invoicing_raw.documents__messages
),

time_zone as (
    select * from staging.stg_invoicing__portal_time_zone
),

documents as (
    select portal_id, id, _dlt_id from invoicing_raw.documents where _deleted_at is null
),

renamed as (
    select
        cast(documents.portal_id as varchar) as portal_id,
        cast(documents.id as varchar) as document_id,
        cast(messages._dlt_list_idx as integer) as message_index,
        cast(messages.date as timestamptz) as sent_at,
        cast(cast(messages.date as timestamptz) at time zone time_zone.time_zone as date) as sent_date,
        cast(messages.model as varchar) as template,
        cast(messages."from" as varchar) as from_address,
        cast(messages."to" as varchar) as to_address,
        cast(messages.subject as varchar) as subject
    from messages
    inner join documents on messages._dlt_parent_id = documents._dlt_id
    cross join time_zone
)

select * from renamed
