-- ---
-- description: >
--   The Receivables page's aging: the five aging buckets of `marts.receivables` for every portal with documents,
--   in order, empty buckets included (amount 0, no invoice).
-- grain: [portal_id, aging_bucket]
-- tests:
--   not_null: [as_of_date, bucket_order, open_amount, invoice_count]
--   accepted_range: {bucket_order: {min: 1, max: 5}}
-- columns:
--   as_of_date: "the report date D"
--   bucket_order: "1 for `current` up to 5 for `90+`"
--   aging_bucket: "`current`, `1-30`, `31-60`, `61-90`, `90+` (days past due on D)"
--   is_overdue: "the bucket is past due (every bucket but `current`)"
--   open_amount: "sum of `receivables.open_amount` in the bucket, 0 when empty"
--   invoice_count: "open invoices in the bucket"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- every bucket of every portal that has documents, so the page's five bars always show (a bucket nobody owes in
-- holds 0). the buckets and their order are intermediate.int_aging_buckets', which marts.receivables assigns.
with report_date as (
    select * from intermediate.int_report_date
),

aging_buckets as (
    select * from intermediate.int_aging_buckets
),

documents as (
    select * from staging.stg_invoicing__documents
),

receivables as (
    select * from marts.receivables
),

portals as (
    select distinct portal_id from documents
),

per_bucket as (
    select
        portal_id,
        aging_bucket,
        sum(open_amount) as open_amount,
        count(*) as invoice_count
    from receivables
    group by portal_id, aging_bucket
),

final as (
    select
        report_date.as_of_date,
        cast(row_number() over (partition by portals.portal_id order by aging_buckets.min_days_past_due) as integer)
            as bucket_order,
        aging_buckets.aging_bucket,
        aging_buckets.is_overdue,
        coalesce(per_bucket.open_amount, 0) as open_amount,
        coalesce(per_bucket.invoice_count, 0) as invoice_count,
        portals.portal_id
    from portals
    cross join aging_buckets
    cross join report_date
    left join per_bucket
        on per_bucket.portal_id = portals.portal_id and per_bucket.aging_bucket = aging_buckets.aging_bucket
)

select * from final
