-- ---
-- description: >
--   What falls due each week (weeks start on Monday), from the week of D onwards. Documents already past due on D,
--   and documents without a due date, are counted in the **week of D** (columns `overdue_amount` and
--   `undated_amount`); the others in the week of their due date.
-- grain: [portal_id, week_start]
-- tests:
--   not_null: [as_of_date]
-- columns:
--   as_of_date: "the week (Monday to Sunday)"
--   week_start: "the week's Monday"
--   week_end: "the week's Sunday"
--   overdue_amount: "past due on D (week of D only)"
--   undated_amount: "no due date (week of D only)"
--   falling_due_amount: "due in that week, on or after D"
--   awaiting_approval_amount: "the part of `total_amount` awaiting approval"
--   disputed_amount: "the part of `total_amount` disputed"
--   total_amount: "the three amounts together"
--   document_count: "number of documents (every owed bill)"
--   cumulative_amount: "running total up to that week"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- what falls due each week (weeks start on monday), from the week of the report date onwards.
-- documents already past due on the report date, and those without a due date, are counted in the week
-- of the report date, in overdue_amount and undated_amount; the rest in the week of their due date.
-- every owed bill counts (marts.supplier_payables: approved, awaiting approval, disputed); the amounts
-- awaiting approval and disputed are also shown apart, inside total_amount. a disputed bill is on hold: it is in
-- disputed_amount only, never in overdue_amount, undated_amount nor falling_due_amount: the four add up to
-- total_amount.
-- one row per (portal_id, week_start); cumulative_amount runs within the portal.
with report_date as (
    select * from intermediate.int_report_date
),

supplier_payables as (
    select * from marts.supplier_payables
),

placed as (
    select
        supplier_payables.*,
        cast(date_trunc(
            'week', greatest(coalesce(supplier_payables.due_date, report_date.as_of_date), report_date.as_of_date)
        ) as date) as week_start
    from supplier_payables
    cross join report_date
),

per_week as (
    select
        portal_id,
        week_start,
        coalesce(sum(amount_due) filter (where is_overdue and not is_disputed), 0) as overdue_amount,
        coalesce(sum(amount_due) filter (where due_date is null and not is_disputed), 0) as undated_amount,
        -- a disputed bill is on hold: in disputed_amount, never falling due nor overdue
        coalesce(sum(amount_due) filter (where not is_overdue and not is_disputed and due_date is not null), 0)
            as falling_due_amount,
        coalesce(sum(amount_due) filter (where approval_state = 'awaiting_approval'), 0) as awaiting_approval_amount,
        coalesce(sum(amount_due) filter (where approval_state = 'disputed'), 0) as disputed_amount,
        sum(amount_due) as total_amount,
        count(*) as document_count
    from placed
    group by portal_id, week_start
),

final as (
    select
        report_date.as_of_date,
        per_week.week_start,
        cast(per_week.week_start + interval 6 day as date) as week_end,
        per_week.overdue_amount,
        per_week.undated_amount,
        per_week.falling_due_amount,
        per_week.awaiting_approval_amount,
        per_week.disputed_amount,
        per_week.total_amount,
        per_week.document_count,
        sum(per_week.total_amount) over (partition by per_week.portal_id order by per_week.week_start)
            as cumulative_amount,
        per_week.portal_id
    from per_week
    cross join report_date
)

select * from final
