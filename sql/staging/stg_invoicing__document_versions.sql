-- ---
-- description: >
--   every version of every document that exists upstream, superseded (CANCELED) ones flagged
--   is_superseded; date-only fields as calendar dates in the portal's time zone.
-- materialized: view
-- grain: [portal_id, document_id]
-- date_only:
--   - {raw: documents.emit_date, field: document.emitDate}
--   - {raw: documents.due_date, field: document.dueDate}
-- ---
-- every version of every document that exists upstream, superseded ones included (is_superseded).
-- editing a validated document creates a new version and turns the old one CANCELED (docs/resources.md);
-- finance models read staging.stg_invoicing__documents, which keeps the live versions only.
-- date-only fields: *_date columns take the calendar date in the portal's time zone
-- (stg_invoicing__portal_time_zone), whatever the session time zone.
-- messages_served: whether the record carried its `messages` history (an assumption of the contract);
-- false means the reminders sent are unknown, not that there were none.

with source as (
    select * from invoicing_raw.documents
),

time_zone as (
    select * from staging.stg_invoicing__portal_time_zone
),

renamed as (
    select
        cast(id as varchar) as document_id,
        cast(portal_id as varchar) as portal_id,
        cast(customer_id as varchar) as customer_id,
        cast(type as varchar) as document_type,
        cast(subtype as varchar) as document_subtype,
        cast(status as varchar) as status,
        cast(reference as varchar) as reference,
        cast(reference_internal as varchar) as reference_internal,
        cast(title as varchar) as title,
        cast(message_top as varchar) as message_top,
        cast(message_bottom as varchar) as message_bottom,
        cast(emit_date as timestamptz) as emitted_at,
        cast(cast(emit_date as timestamptz) at time zone time_zone.time_zone as date) as emit_date,
        cast(due_date as timestamptz) as due_at,
        cast(cast(due_date as timestamptz) at time zone time_zone.time_zone as date) as due_date,
        cast(to__name as varchar) as to_name,
        cast(to__email as varchar) as to_email,
        cast(to__address__street as varchar) as to_address_street,
        cast(to__address__postal_code as varchar) as to_address_postal_code,
        cast(to__address__city as varchar) as to_address_city,
        cast(to__address__country as varchar) as to_address_country,
        cast(from__name as varchar) as from_name,
        cast(from__trade_name as varchar) as from_trade_name,
        cast(from__email as varchar) as from_email,
        cast(discount__type as varchar) as discount_type,
        -- a percentage (PERCENT) or an amount excl. tax (AMOUNT)
        cast(discount__amount as decimal(18, 4)) as discount_value,
        cast(amount as decimal(18, 2)) as amount,
        cast(vat as decimal(18, 2)) as vat_amount,
        cast(amount_vat as decimal(18, 2)) as amount_vat,
        cast(amount_net as decimal(18, 2)) as amount_net,
        cast(amount_vat_net as decimal(18, 2)) as amount_vat_net,
        cast(amount_notice as varchar) as amount_notice,
        cast(vat_exemption_type as varchar) as vat_exemption_type,
        cast(payment_method as varchar) as payment_method,
        -- not served (the contract names no document currency): euros, the currency of a French portal
        -- (docs/contract.md, `documents.currency`); the check receivables_single_currency stops a mix
        coalesce(cast(currency as varchar), 'EUR') as currency,
        -- the api's figures at sync time; marts recompute them from usages as of a date
        cast(total_payments as decimal(18, 2)) as api_total_payments,
        cast(remaining as decimal(18, 2)) as api_remaining,
        -- on a credit note: the credited invoice (null for a free credit)
        cast(invoice_id as varchar) as credited_invoice_id,
        cast(version as varchar) as version,
        cast(prev_doc as varchar) as previous_version_id,
        cast(next_doc as varchar) as next_version_id,
        cast(status as varchar) = 'CANCELED' as is_superseded,
        cast(status as varchar) = 'DRAFT' as is_draft,
        not coalesce(list_contains(string_split(_absent_fields, ','), 'messages'), false) as messages_served,
        cast(metadata as varchar) as metadata,
        cast(last_update as timestamptz) as last_updated_at,
        -- the day of the last change: a PAID invoice was PAID by then (marts.receivables, status as of D)
        cast(cast(last_update as timestamptz) at time zone time_zone.time_zone as date) as last_updated_date
    from source
    cross join time_zone
    where _deleted_at is null
)

select * from renamed
