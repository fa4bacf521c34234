-- ---
-- description: >
--   the usages (payments and credit notes) dated on or before the report date, on the live version of
--   their invoice.
-- materialized: view
-- grain: [portal_id, usage_id]
-- ---
-- the allocations of money to invoices (payments and credit notes) dated on or before the report date.
-- usage_date is the payment date or the credit note's emit date, not the day the allocation was made
-- (sql/README.md, "Limits"). invoice_id is the live version of the invoice (int_usages_on_live_versions).

with report_date as (
    select * from intermediate.int_report_date
),

usages as (
    select * from intermediate.int_usages_on_live_versions
),

final as (
    select usages.*
    from usages
    cross join report_date
    where usages.usage_date <= report_date.as_of_date
)

select * from final
