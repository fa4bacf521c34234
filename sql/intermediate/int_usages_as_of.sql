-- the allocations of money to invoices (payments and credit notes) dated on or before the report date.
-- usage_date is the payment date or the credit note's emit date, not the day the allocation was made
-- (sql/README.md, "Limits").

-- materialized: view
with report_date as (
    select * from intermediate.int_report_date
),

usages as (
    select * from staging.stg_invoicing__transaction_usages
),

final as (
    select usages.*
    from usages
    cross join report_date
    where usages.usage_date <= report_date.as_of_date
)

select * from final
