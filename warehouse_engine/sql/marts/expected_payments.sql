-- ---
-- description: >
--   one row per open invoice on the report date with the date it will likely be paid, from the customer's own
--   payment history (shrunk toward the portal's when the customer has few paid invoices).
-- grain: [portal_id, invoice_id]
-- tests:
--   not_null: [as_of_date, basis, customer_history_count, portal_history_count]
--   accepted_range: {customer_weight: {min: 0, max: 1}}
-- ---
-- when each invoice open on the report date D (marts.receivables) will likely be paid, learnt from the portal's
-- own history of invoices paid in full on or before D (marts.payment_history: the last payment
-- dates an invoice; only what was paid by D counts, so a report date in the past sees the history of its day).
-- the rule, one an accountant can redo by hand with the history sorted by days after due:
--   days_open_after_due = D - due date: how long after its due date the invoice is still unpaid (negative: not
--                     yet due). it will be paid after D, so only paid invoices that took longer count:
--   the history    = the paid invoices with days_after_due (last payment date - due date) > days_open_after_due;
--   customer_median = the median of days_after_due over the customer's history (n invoices,
--                     customer_history_count);
--   portal_median   = the same median over the portal's history (portal_history_count);
--   customer_weight = min(n, 5) / 5: from 5 such invoices on, the customer's own median counts alone; below, it
--                     borrows (5 - n) fifths from the portal's (a customer with no history gets the portal's);
--   expected_days_after_due = round(customer_weight x customer_median + (1 - customer_weight) x portal_median),
--                     whole days, halves away from zero;
--   expected_payment_date = due_date + expected_days_after_due (always after D: every day count in the history
--                     is above days_open_after_due).
-- basis: `customer` (n >= 5), `customer+portal` (1 <= n < 5), `portal` (n = 0), `due date` (no paid invoice
-- of the portal took that long: the due date, or D + 1 when it is past, the "paid on its due date" rule).
-- why these choices (due date rather than invoice date, the median, 5, the history that took longer): the
-- backtest, bench/expected_payments_backtest.py, figures in bench/RESULTS.md and warehouse_engine/sql/README.md.
-- an invoice without a due date (neither a served one nor an emit date) has no expected date (null).
-- the portal's median of the invoices above a day count is read from the history sorted once per portal: the k
-- invoices paid at most days_open_after_due days after due come first, the median of the m = total - k after
-- them sits at the positions k + (m + 1) // 2 and k + m // 2 + 1 (one per distinct day count, not per invoice:
-- a join of every open invoice to the whole portal's history would not scale to 1,000,000 documents).
-- one row per (portal_id, invoice_id), as marts.receivables.
with report_date as (
    select * from intermediate.int_report_date
),

receivables as (
    select * from marts.receivables
),

paid_invoices as (
    select * from marts.payment_history
),

open_invoices as (
    select receivables.*, report_date.as_of_date - receivables.due_date as days_open_after_due
    from receivables
    cross join report_date
),

-- the customer's paid invoices that took longer than the open one already has
customer_history as (
    select
        open_invoices.portal_id,
        open_invoices.invoice_id,
        count(*) as history_count,
        median(paid_invoices.days_after_due) as median_days_after_due
    from open_invoices
    inner join paid_invoices
        on paid_invoices.portal_id = open_invoices.portal_id
        and paid_invoices.customer_id = open_invoices.customer_id
        and paid_invoices.days_after_due > open_invoices.days_open_after_due
    group by open_invoices.portal_id, open_invoices.invoice_id
),

portal_sorted as (
    select
        portal_id,
        days_after_due,
        row_number() over (partition by portal_id order by days_after_due) as position,
        count(*) over (partition by portal_id) as total
    from paid_invoices
),

-- per portal and day count: how many paid invoices took at most that many days
portal_at_most as (
    select portal_id, days_after_due, max(position) as at_most_count, any_value(total) as total
    from portal_sorted
    group by portal_id, days_after_due
),

thresholds as (
    select distinct portal_id, days_open_after_due
    from open_invoices
    where days_open_after_due is not null
),

thresholds_counted as (
    select
        thresholds.portal_id,
        thresholds.days_open_after_due,
        coalesce(portal_at_most.at_most_count, 0) as at_most_count,
        portal_totals.total
    from thresholds
    inner join (select portal_id, max(total) as total from portal_sorted group by portal_id) as portal_totals
        on portal_totals.portal_id = thresholds.portal_id
    asof left join portal_at_most
        on portal_at_most.portal_id = thresholds.portal_id
        and portal_at_most.days_after_due <= thresholds.days_open_after_due
),

portal_history as (
    select
        counted.portal_id,
        counted.days_open_after_due,
        counted.total - counted.at_most_count as history_count,
        (lower_value.days_after_due + upper_value.days_after_due) / 2.0 as median_days_after_due
    from thresholds_counted as counted
    inner join portal_sorted as lower_value
        on lower_value.portal_id = counted.portal_id
        and lower_value.position = counted.at_most_count + (counted.total - counted.at_most_count + 1) // 2
    inner join portal_sorted as upper_value
        on upper_value.portal_id = counted.portal_id
        and upper_value.position = counted.at_most_count + (counted.total - counted.at_most_count) // 2 + 1
    where counted.total > counted.at_most_count
),

weighted as (
    select
        open_invoices.*,
        coalesce(customer_history.history_count, 0) as customer_history_count,
        customer_history.median_days_after_due as customer_median_days_after_due,
        coalesce(portal_history.history_count, 0) as portal_history_count,
        portal_history.median_days_after_due as portal_median_days_after_due,
        -- full credibility from 5 paid invoices: below, the customer's median is shrunk toward the portal's
        least(coalesce(customer_history.history_count, 0), 5) / 5.0 as customer_weight
    from open_invoices
    left join customer_history
        on customer_history.portal_id = open_invoices.portal_id
        and customer_history.invoice_id = open_invoices.invoice_id
    left join portal_history
        on portal_history.portal_id = open_invoices.portal_id
        and portal_history.days_open_after_due = open_invoices.days_open_after_due
),

estimated as (
    select
        weighted.*,
        case when weighted.portal_history_count > 0 then cast(round(
            weighted.customer_weight * coalesce(weighted.customer_median_days_after_due, 0)
            + (1 - weighted.customer_weight) * weighted.portal_median_days_after_due
        ) as integer) end as estimated_days_after_due,
        case
            when weighted.customer_history_count >= 5 then 'customer'
            when weighted.customer_history_count > 0 then 'customer+portal'
            when weighted.portal_history_count > 0 then 'portal'
            else 'due date'
        end as basis
    from weighted
),

-- basis `due date`: paid on its due date, or the day after D when that is past (duckdb's greatest skips nulls:
-- without a due date, nothing is expected)
dated as (
    select
        estimated.*,
        cast(case when estimated.due_date is not null then coalesce(
            estimated.estimated_days_after_due,
            greatest(0, estimated.days_open_after_due + 1)
        ) end as integer) as expected_days_after_due
    from estimated
),

final as (
    select
        report_date.as_of_date,
        estimated.invoice_id,
        estimated.reference,
        estimated.customer_id,
        estimated.customer_name,
        estimated.emit_date,
        estimated.due_date,
        estimated.open_amount,
        estimated.is_overdue,
        estimated.days_open_after_due,
        estimated.basis,
        estimated.customer_history_count,
        cast(estimated.customer_median_days_after_due as decimal(9, 1)) as customer_median_days_after_due,
        estimated.portal_history_count,
        cast(estimated.portal_median_days_after_due as decimal(9, 1)) as portal_median_days_after_due,
        cast(estimated.customer_weight as decimal(3, 2)) as customer_weight,
        estimated.expected_days_after_due,
        estimated.due_date + estimated.expected_days_after_due as expected_payment_date,
        estimated.is_due_date_assumed,
        estimated.currency,
        estimated.portal_id
    from dated as estimated
    cross join report_date
)

select * from final
