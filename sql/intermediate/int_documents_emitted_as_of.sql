-- ---
-- description: the live documents emitted on or before the report date.
-- materialized: view
-- grain: [portal_id, document_id]
-- ---
-- the live documents emitted on or before the report date; a document without an emit date counts on
-- every report date.

with report_date as (
    select * from intermediate.int_report_date
),

documents as (
    select * from staging.stg_invoicing__documents
),

final as (
    select documents.*
    from documents
    cross join report_date
    where coalesce(documents.emit_date, report_date.as_of_date) <= report_date.as_of_date
)

select * from final
