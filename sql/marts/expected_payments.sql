-- ---
-- description: >
--   Every open invoice of `marts.receivables` with the date it will likely be paid: its due date + the median days
--   the customer paid after the due date over its invoices paid by D, shrunk toward the portal's median when the
--   customer has fewer than 5 paid invoices (the rule and its backtest: sql/README.md, "Expected
--   payment dates"; bench/RESULTS.md).
-- grain: [portal_id, invoice_id]
-- tests:
--   not_null: [as_of_date, basis, customer_paid_count, portal_paid_count, expected_days_after_due]
--   accepted_range: {customer_weight: {min: 0, max: 1}}
-- columns:
--   as_of_date: "the report date D"
--   invoice_id: "as in `marts.receivables`"
--   reference: "as in `marts.receivables`"
--   customer_id: "as in `marts.receivables`"
--   customer_name: "as in `marts.receivables`"
--   emit_date: "as in `marts.receivables`"
--   due_date: "as in `marts.receivables`"
--   open_amount: "as in `marts.receivables`"
--   is_overdue: "as in `marts.receivables`"
--   basis: >-
--     `customer` (5 paid invoices or more), `customer+portal` (1-4), `portal` (none), `due date` (the portal has
--     no paid invoice)
--   customer_paid_count: "the customer's invoices paid in full by D (`marts.payment_history`)"
--   customer_median_days_after_due: "median of their paid date − due date"
--   portal_paid_count: "the portal's invoices paid in full by D"
--   portal_median_days_after_due: "median of their paid date − due date"
--   customer_weight: "min(n, 5) / 5"
--   expected_days_after_due: "the rounded blend"
--   expected_payment_date: "due date + it, never on or before D"
--   is_estimate_passed: "the estimate fell on or before D: moved to D + 1"
--   is_due_date_assumed: "as in `marts.receivables`"
--   currency: "the invoice's currency as served, `EUR` when none is"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- when each invoice open on the report date D (marts.receivables) will likely be paid, learnt from the portal's
-- own history of invoices paid in full on or before D (marts.payment_history: the last payment
-- dates an invoice; only what was paid by D counts, so a report date in the past sees the history of its day).
-- the rule, one an accountant can redo by hand:
--   customer_median = the median of days_after_due (last payment date - due date) over the customer's paid
--                     invoices (n of them, customer_paid_count);
--   portal_median   = the same median over every paid invoice of the portal (portal_paid_count);
--   customer_weight = min(n, 5) / 5: from 5 paid invoices on the customer's own median counts alone, below it
--                     borrows (5 - n) fifths from the portal's (a customer with no history gets the portal's);
--   expected_days_after_due = round(customer_weight x customer_median + (1 - customer_weight) x portal_median),
--                     whole days, halves away from zero; 0 when the portal has no paid invoice at all;
--   expected_payment_date = due_date + expected_days_after_due, but never on or before D (the invoice is still
--                     open on D): an estimate already past is moved to D + 1 and flagged is_estimate_passed.
-- basis: `customer` (n >= 5), `customer+portal` (1 <= n < 5), `portal` (n = 0), `due date` (no history in the
-- portal: paid on its due date). the due date beats the invoice date as the anchor in the backtest
-- (bench/expected_payments_backtest.py, bench/RESULTS.md): customers pay by their terms, which differ by invoice.
-- an invoice without a due date (neither a served one nor an emit date) has no expected date (null).
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

customer_history as (
    select
        portal_id,
        customer_id,
        count(*) as paid_count,
        median(days_after_due) as median_days_after_due
    from paid_invoices
    group by portal_id, customer_id
),

portal_history as (
    select
        portal_id,
        count(*) as paid_count,
        median(days_after_due) as median_days_after_due
    from paid_invoices
    group by portal_id
),

weighted as (
    select
        receivables.*,
        coalesce(customer_history.paid_count, 0) as customer_paid_count,
        customer_history.median_days_after_due as customer_median_days_after_due,
        coalesce(portal_history.paid_count, 0) as portal_paid_count,
        portal_history.median_days_after_due as portal_median_days_after_due,
        -- full credibility from 5 paid invoices: below, the customer's median is shrunk toward the portal's
        least(coalesce(customer_history.paid_count, 0), 5) / 5.0 as customer_weight
    from receivables
    left join customer_history
        on customer_history.portal_id = receivables.portal_id
        and customer_history.customer_id = receivables.customer_id
    left join portal_history on portal_history.portal_id = receivables.portal_id
),

estimated as (
    select
        weighted.*,
        cast(round(
            weighted.customer_weight * coalesce(weighted.customer_median_days_after_due, 0)
            + (1 - weighted.customer_weight) * coalesce(weighted.portal_median_days_after_due, 0)
        ) as integer) as expected_days_after_due,
        case
            when weighted.customer_paid_count >= 5 then 'customer'
            when weighted.customer_paid_count > 0 then 'customer+portal'
            when weighted.portal_paid_count > 0 then 'portal'
            else 'due date'
        end as basis
    from weighted
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
        estimated.basis,
        estimated.customer_paid_count,
        cast(estimated.customer_median_days_after_due as decimal(9, 1)) as customer_median_days_after_due,
        estimated.portal_paid_count,
        cast(estimated.portal_median_days_after_due as decimal(9, 1)) as portal_median_days_after_due,
        cast(estimated.customer_weight as decimal(3, 2)) as customer_weight,
        estimated.expected_days_after_due,
        -- duckdb's greatest skips nulls: without a due date there is no expected date
        case when estimated.due_date is not null
            then greatest(estimated.due_date + estimated.expected_days_after_due, report_date.as_of_date + 1)
        end as expected_payment_date,
        coalesce(estimated.due_date + estimated.expected_days_after_due <= report_date.as_of_date, false)
            as is_estimate_passed,
        estimated.is_due_date_assumed,
        estimated.currency,
        estimated.portal_id
    from estimated
    cross join report_date
)

select * from final
