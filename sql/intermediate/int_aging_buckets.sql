-- ---
-- description: >
--   the five aging buckets (current, 1-30, 31-60, 61-90, 90+), each with the days past due it starts at.
-- materialized: view
-- grain: [aging_bucket]
-- ---
-- the aging buckets of an amount due on the report date, by days past due (report date - due date):
-- `current` (not yet past due: due on the report date or later, or no due date), `1-30`, `31-60`,
-- `61-90`, `90+`. a bucket runs from its min_days_past_due to the next bucket's; overdue = at least one
-- day past due. a mart finds the bucket with an asof join:
--   asof inner join aging_buckets on coalesce(days_past_due, 0) >= aging_buckets.min_days_past_due
-- (an asof join sorts once instead of testing every bucket per row as a range join would).

with buckets as (
    select * from (
        values
            ('current', -2147483648),
            ('1-30', 1),
            ('31-60', 31),
            ('61-90', 61),
            ('90+', 91)
    ) as bucket_starts (aging_bucket, min_days_past_due)
),

final as (
    select
        aging_bucket,
        cast(min_days_past_due as bigint) as min_days_past_due,
        min_days_past_due > 0 as is_overdue
    from buckets
)

select * from final
