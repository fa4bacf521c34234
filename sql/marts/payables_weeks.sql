-- ---
-- description: >
--   The Payables page's week-by-week table: the eight weeks from the week of D (Monday to Sunday), one row a week
--   and portal with supplier documents, empty weeks included (amounts 0). The amounts are those of
--   `marts.payables_schedule` for that week: the first week also holds what is past due and what has no due date.
-- grain: [portal_id, week_start]
-- tests:
--   not_null: [as_of_date, week_number, week_end, total_amount, document_count]
--   accepted_range: {week_number: {min: 1, max: 8}}
-- columns:
--   as_of_date: "the report date D"
--   week_number: "1 for the week of D, up to 8"
--   week_start: "the week's Monday"
--   week_end: "the week's Sunday"
--   falling_due_amount: "`payables_schedule.falling_due_amount` of the week, 0 when it has none"
--   overdue_amount: "`payables_schedule.overdue_amount` (week 1 only)"
--   undated_amount: "`payables_schedule.undated_amount` (week 1 only)"
--   total_amount: "`payables_schedule.total_amount`"
--   awaiting_approval_amount: "`payables_schedule.awaiting_approval_amount`"
--   disputed_amount: "`payables_schedule.disputed_amount`"
--   document_count: "`payables_schedule.document_count`"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- eight weeks from the monday of the report date's week, for every portal that has supplier documents (as
-- marts.payables_summary counts them), left joined to the schedule so a week with nothing due shows zeros.
with report_date as (
    select * from intermediate.int_report_date
),

supplier_documents as (
    select * from staging.stg_invoicing__supplier_documents
),

payables_schedule as (
    select * from marts.payables_schedule
),

portals as (
    select distinct portal_id from supplier_documents
),

weeks as (
    select
        report_date.as_of_date,
        cast(week_offsets.week_index + 1 as integer) as week_number,
        cast(date_trunc('week', report_date.as_of_date) + to_days(cast(7 * week_offsets.week_index as integer))
            as date) as week_start
    from report_date
    cross join (select unnest(range(8)) as week_index) as week_offsets
),

final as (
    select
        weeks.as_of_date,
        weeks.week_number,
        weeks.week_start,
        cast(weeks.week_start + interval 6 day as date) as week_end,
        coalesce(payables_schedule.falling_due_amount, 0) as falling_due_amount,
        coalesce(payables_schedule.overdue_amount, 0) as overdue_amount,
        coalesce(payables_schedule.undated_amount, 0) as undated_amount,
        coalesce(payables_schedule.total_amount, 0) as total_amount,
        coalesce(payables_schedule.awaiting_approval_amount, 0) as awaiting_approval_amount,
        coalesce(payables_schedule.disputed_amount, 0) as disputed_amount,
        coalesce(payables_schedule.document_count, 0) as document_count,
        portals.portal_id
    from portals
    cross join weeks
    left join payables_schedule
        on payables_schedule.portal_id = portals.portal_id and payables_schedule.week_start = weeks.week_start
)

select * from final
