-- ---
-- description: >
--   The Payables page's tiles, one row per portal with supplier documents: what is past due, due this week and in
--   the next eight weeks (weeks run Monday to Sunday, week 1 being the week of D), without a due date, the total
--   owed split by approval state, and the aged balance's totals over every supplier. Every amount is a sum of
--   `marts.supplier_payables.amount_due` (credit notes negative) or of `marts.payables_by_supplier`; the week
--   bounds come from D, never from a clock.
-- grain: [portal_id]
-- tests:
--   not_null: [as_of_date, week_start, week_end, horizon_end, total_due, aged_total_due]
-- columns:
--   as_of_date: "the report date D"
--   week_start: "Monday of the week of D"
--   week_end: "Sunday of the week of D: `due_this_week` runs from D to this day"
--   horizon_end: "Sunday of the eighth week (week 1 being the week of D): `due_next_weeks` runs from D to this day"
--   past_due: "due before D, approved or awaiting approval (a disputed bill is on hold: in `disputed` only)"
--   due_this_week: "due from D to `week_end`, every owed bill (disputed ones included): the rows `is_due_this_week`"
--   due_next_weeks: "due from D to `horizon_end`, every owed bill (disputed ones included)"
--   undated: "owed bills with no due date at all (served nor assumed)"
--   total_due: "every owed bill: approved, awaiting approval and disputed (the three add up to it)"
--   approved: "the part of `total_due` approved"
--   awaiting_approval: "the part of `total_due` awaiting approval"
--   disputed: "the part of `total_due` disputed"
--   document_count: "owed documents"
--   aged_supplier_count: "rows of `marts.payables_by_supplier` (suppliers owed money)"
--   aged_due_current: "sum of `payables_by_supplier.due_current` over every supplier"
--   aged_due_1_30: "sum of `payables_by_supplier.due_1_30`"
--   aged_due_31_60: "sum of `payables_by_supplier.due_31_60`"
--   aged_due_61_90: "sum of `payables_by_supplier.due_61_90`"
--   aged_due_90_plus: "sum of `payables_by_supplier.due_90_plus`"
--   aged_total_due: "sum of `payables_by_supplier.total_due` (equals `total_due`)"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- the payables page's figures, one row per portal that has supplier documents (a portal owing nothing shows
-- zeros, not an absent row). the portals come from the supplier documents, not from the receivables' marts: a
-- failed read of the customers' side must not hold the payables back (the gate holds the marts built on a read).
-- week bounds: date_trunc('week') is the monday (iso weeks), as the payables schedule counts them.
with report_date as (
    select * from intermediate.int_report_date
),

supplier_documents as (
    select * from staging.stg_invoicing__supplier_documents
),

supplier_payables as (
    select * from marts.supplier_payables
),

payables_by_supplier as (
    select * from marts.payables_by_supplier
),

portals as (
    select distinct portal_id from supplier_documents
),

weeks as (
    select
        as_of_date,
        cast(date_trunc('week', as_of_date) as date) as week_start,
        cast(date_trunc('week', as_of_date) + interval 6 day as date) as week_end,
        -- 8 weeks of 7 days from the monday, the last day included: monday + 55
        cast(date_trunc('week', as_of_date) + interval 55 day as date) as horizon_end
    from report_date
),

totals as (
    select
        supplier_payables.portal_id,
        -- a disputed bill is on hold: counted apart (disputed), never past due
        coalesce(sum(amount_due) filter (where is_overdue and not is_disputed), 0) as past_due,
        coalesce(sum(amount_due) filter (where is_due_this_week), 0) as due_this_week,
        coalesce(sum(amount_due) filter (where due_date between weeks.as_of_date and weeks.horizon_end), 0)
            as due_next_weeks,
        coalesce(sum(amount_due) filter (where due_date is null), 0) as undated,
        coalesce(sum(amount_due), 0) as total_due,
        coalesce(sum(amount_due) filter (where approval_state = 'approved'), 0) as approved,
        coalesce(sum(amount_due) filter (where approval_state = 'awaiting_approval'), 0) as awaiting_approval,
        coalesce(sum(amount_due) filter (where approval_state = 'disputed'), 0) as disputed,
        count(*) as document_count
    from supplier_payables
    cross join weeks
    group by supplier_payables.portal_id
),

aged as (
    select
        portal_id,
        count(*) as aged_supplier_count,
        coalesce(sum(due_current), 0) as aged_due_current,
        coalesce(sum(due_1_30), 0) as aged_due_1_30,
        coalesce(sum(due_31_60), 0) as aged_due_31_60,
        coalesce(sum(due_61_90), 0) as aged_due_61_90,
        coalesce(sum(due_90_plus), 0) as aged_due_90_plus,
        coalesce(sum(total_due), 0) as aged_total_due
    from payables_by_supplier
    group by portal_id
),

final as (
    select
        weeks.as_of_date,
        weeks.week_start,
        weeks.week_end,
        weeks.horizon_end,
        coalesce(totals.past_due, 0) as past_due,
        coalesce(totals.due_this_week, 0) as due_this_week,
        coalesce(totals.due_next_weeks, 0) as due_next_weeks,
        coalesce(totals.undated, 0) as undated,
        coalesce(totals.total_due, 0) as total_due,
        coalesce(totals.approved, 0) as approved,
        coalesce(totals.awaiting_approval, 0) as awaiting_approval,
        coalesce(totals.disputed, 0) as disputed,
        coalesce(totals.document_count, 0) as document_count,
        coalesce(aged.aged_supplier_count, 0) as aged_supplier_count,
        coalesce(aged.aged_due_current, 0) as aged_due_current,
        coalesce(aged.aged_due_1_30, 0) as aged_due_1_30,
        coalesce(aged.aged_due_31_60, 0) as aged_due_31_60,
        coalesce(aged.aged_due_61_90, 0) as aged_due_61_90,
        coalesce(aged.aged_due_90_plus, 0) as aged_due_90_plus,
        coalesce(aged.aged_total_due, 0) as aged_total_due,
        portals.portal_id
    from portals
    cross join weeks
    left join totals on totals.portal_id = portals.portal_id
    left join aged on aged.portal_id = portals.portal_id
)

select * from final
