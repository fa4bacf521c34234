-- ---
-- description: the live version of every document (superseded versions left out).
-- materialized: view
-- grain: [portal_id, document_id]
-- ---
-- live documents only: one row per document, superseded (CANCELED) versions left in
-- staging.stg_invoicing__document_versions.

with document_versions as (
    select * from staging.stg_invoicing__document_versions
),

live as (
    select * exclude (is_superseded)
    from document_versions
    where not is_superseded
)

select * from live
