-- ---
-- description: >
--   The Receivables page's figures beside `marts.dso`, one row per portal with documents: the aged balance's totals
--   over every customer (`marts.receivables_by_customer`), the overdue customers' count, and the open invoices whose
--   due date the API did not serve (the legal default, emit date + 30 days, stands in).
-- grain: [portal_id]
-- tests:
--   not_null: [as_of_date, aged_total_open, overdue_customer_count, assumed_due_invoice_count]
-- columns:
--   as_of_date: "the report date D"
--   aged_customer_count: "customers with an open invoice (the aged balance's rows)"
--   aged_open_current: "sum of `receivables_by_customer.open_current` over those customers"
--   aged_open_1_30: "sum of `receivables_by_customer.open_1_30`"
--   aged_open_31_60: "sum of `receivables_by_customer.open_31_60`"
--   aged_open_61_90: "sum of `receivables_by_customer.open_61_90`"
--   aged_open_90_plus: "sum of `receivables_by_customer.open_90_plus`"
--   aged_total_open: "sum of `receivables_by_customer.total_open` (equals `dso.open_receivables`)"
--   overdue_customer_count: "rows of `marts.overdue_customers`"
--   assumed_due_invoice_count: "open invoices whose due date is the legal default (`is_due_date_assumed`)"
--   assumed_due_amount: "their open amount"
--   assumed_overdue_amount: "the part of it overdue on D"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- a portal owing nothing still has its row of zeros: the portals come from the documents.
with report_date as (
    select * from intermediate.int_report_date
),

documents as (
    select * from staging.stg_invoicing__documents
),

receivables as (
    select * from marts.receivables
),

receivables_by_customer as (
    select * from marts.receivables_by_customer
),

overdue_customers as (
    select * from marts.overdue_customers
),

portals as (
    select distinct portal_id from documents
),

aged as (
    -- the aged balance lists the customers with an open invoice, not those holding only unapplied money
    select
        portal_id,
        count(*) as aged_customer_count,
        coalesce(sum(open_current), 0) as aged_open_current,
        coalesce(sum(open_1_30), 0) as aged_open_1_30,
        coalesce(sum(open_31_60), 0) as aged_open_31_60,
        coalesce(sum(open_61_90), 0) as aged_open_61_90,
        coalesce(sum(open_90_plus), 0) as aged_open_90_plus,
        coalesce(sum(total_open), 0) as aged_total_open
    from receivables_by_customer
    where open_invoice_count > 0
    group by portal_id
),

overdue as (
    select portal_id, count(*) as overdue_customer_count
    from overdue_customers
    group by portal_id
),

assumed as (
    select
        portal_id,
        count(*) as assumed_due_invoice_count,
        sum(open_amount) as assumed_due_amount,
        coalesce(sum(open_amount) filter (where is_overdue), 0) as assumed_overdue_amount
    from receivables
    where is_due_date_assumed
    group by portal_id
),

final as (
    select
        report_date.as_of_date,
        coalesce(aged.aged_customer_count, 0) as aged_customer_count,
        coalesce(aged.aged_open_current, 0) as aged_open_current,
        coalesce(aged.aged_open_1_30, 0) as aged_open_1_30,
        coalesce(aged.aged_open_31_60, 0) as aged_open_31_60,
        coalesce(aged.aged_open_61_90, 0) as aged_open_61_90,
        coalesce(aged.aged_open_90_plus, 0) as aged_open_90_plus,
        coalesce(aged.aged_total_open, 0) as aged_total_open,
        coalesce(overdue.overdue_customer_count, 0) as overdue_customer_count,
        coalesce(assumed.assumed_due_invoice_count, 0) as assumed_due_invoice_count,
        coalesce(assumed.assumed_due_amount, 0) as assumed_due_amount,
        coalesce(assumed.assumed_overdue_amount, 0) as assumed_overdue_amount,
        portals.portal_id
    from portals
    cross join report_date
    left join aged on aged.portal_id = portals.portal_id
    left join overdue on overdue.portal_id = portals.portal_id
    left join assumed on assumed.portal_id = portals.portal_id
)

select * from final
