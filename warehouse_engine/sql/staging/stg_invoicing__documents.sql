-- live documents only: one row per document, superseded (CANCELED) versions left in
-- staging.stg_invoicing__document_versions.

-- materialized: view
with document_versions as (
    select * from staging.stg_invoicing__document_versions
),

live as (
    select * exclude (is_superseded)
    from document_versions
    where not is_superseded
)

select * from live
