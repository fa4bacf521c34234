-- ---
-- description: every customer ever loaded, deleted ones kept and flagged is_deleted.
-- materialized: view
-- grain: [portal_id, customer_id]
-- ---
-- one row per customer ever loaded; deleted customers stay, flagged is_deleted: soft-deleted upstream
-- (api `deleted`) or gone (`_deleted_at`, set by the sync). their invoices are still money owed, and
-- overdue_customers leaves them out as GET /customers?documentStatus=LATE does.

with source as (
    select * from invoicing_raw.customers
),

renamed as (
    select
        cast(id as varchar) as customer_id,
        cast(portal_id as varchar) as portal_id,
        cast(name as varchar) as customer_name,
        cast(reference as varchar) as customer_reference,
        cast(type as varchar) as customer_type,
        cast(email as varchar) as email,
        cast(phone as varchar) as phone,
        cast(mobile as varchar) as mobile,
        cast(fax as varchar) as fax,
        cast(siret as varchar) as siret,
        cast(vat as varchar) as vat_number,
        cast(address__street as varchar) as address_street,
        cast(address__postal_code as varchar) as address_postal_code,
        cast(address__city as varchar) as address_city,
        cast(address__country as varchar) as address_country,
        cast(delivery__street as varchar) as delivery_street,
        cast(delivery__postal_code as varchar) as delivery_postal_code,
        cast(delivery__city as varchar) as delivery_city,
        cast(delivery__country as varchar) as delivery_country,
        cast(contacts as varchar) as contacts_json,
        -- the api's own figures at sync time, kept for reconciliation; the marts recompute them by date
        cast(due_amount as decimal(18, 2)) as api_due_amount,
        cast(documents_count as bigint) as api_documents_count,
        coalesce(cast(deleted as boolean), false) or _deleted_at is not null as is_deleted,
        coalesce(cast(deleted_at as timestamptz), _deleted_at) as deleted_at,
        cast(metadata as varchar) as metadata,
        cast(last_update as timestamptz) as last_updated_at
    from source
)

select * from renamed
