-- ---
-- description: one row per supplier that exists upstream.
-- materialized: view
-- grain: [portal_id, supplier_id]
-- ---
-- one row per supplier that exists upstream (suppliers are hard-deleted: _deleted_at rows dropped)

with source as (
    select * from invoicing_raw.suppliers
),

renamed as (
    select
        cast(id as varchar) as supplier_id,
        cast(portal_id as varchar) as portal_id,
        cast(name as varchar) as supplier_name,
        cast(legal_identifier as varchar) as legal_identifier,
        cast(email as varchar) as email,
        cast(phone as varchar) as phone,
        cast(address__street as varchar) as address_street,
        cast(address__postal_code as varchar) as address_postal_code,
        cast(address__city as varchar) as address_city,
        cast(address__country as varchar) as address_country,
        cast(metadata as varchar) as metadata,
        cast(last_update as timestamptz) as last_updated_at
    from source
    where _deleted_at is null
)

select * from renamed
