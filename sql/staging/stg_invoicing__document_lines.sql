-- ---
-- description: one row per line of every document version that exists upstream.
-- materialized: view
-- grain: [portal_id, document_id, line_index]
-- ---
-- one row per line of a document that exists upstream (all versions; join to stg_invoicing__documents for
-- live ones). lines are a dlt child table: parent's _dlt_id = line's _dlt_parent_id; portal_id is the parent's.

with lines as (
    select * from invoicing_raw.documents__lines
),

documents as (
    select portal_id, id, _dlt_id from invoicing_raw.documents where _deleted_at is null
),

renamed as (
    select
        cast(documents.portal_id as varchar) as portal_id,
        cast(documents.id as varchar) as document_id,
        cast(lines._dlt_list_idx as integer) as line_index,
        cast(lines.line_type as varchar) as line_type,
        cast(lines.item_id as varchar) as item_id,
        cast(lines.name as varchar) as line_name,
        cast(lines.description as varchar) as description,
        cast(lines.reference as varchar) as item_reference,
        cast(lines.price as decimal(18, 2)) as unit_price,
        cast(lines.quantity as decimal(18, 4)) as quantity,
        cast(lines.unit as varchar) as unit,
        cast(lines.vat as decimal(9, 4)) as vat_rate,
        cast(lines.discount as decimal(9, 4)) as discount_rate,
        cast(lines.buying_price as decimal(18, 2)) as buying_price
    from lines
    inner join documents on lines._dlt_parent_id = documents._dlt_id
)

select * from renamed
