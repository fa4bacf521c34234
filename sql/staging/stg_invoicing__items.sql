-- ---
-- description: one row per catalogue item that exists upstream.
-- materialized: view
-- grain: [portal_id, item_id]
-- ---
-- one row per catalogue item that exists upstream (items are hard-deleted: _deleted_at rows dropped)

with source as (
    select * from invoicing_raw.items
),

renamed as (
    select
        cast(id as varchar) as item_id,
        cast(portal_id as varchar) as portal_id,
        cast(name as varchar) as item_name,
        cast(description as varchar) as description,
        cast(reference as varchar) as item_reference,
        cast(type as varchar) as item_type,
        cast(unit as varchar) as unit,
        cast(price as decimal(18, 2)) as unit_price,
        cast(vat as decimal(9, 4)) as vat_rate,
        cast(buying_price as decimal(18, 2)) as buying_price,
        cast(metadata as varchar) as metadata,
        cast(last_update as timestamptz) as last_updated_at
    from source
    where _deleted_at is null
)

select * from renamed
