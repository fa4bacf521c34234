-- ---
-- description: >
--   expected cash in (open receivables net of each customer's unapplied credit notes and payments, deducted up to
--   what that customer owes, as marts.dso's net figure) against cash out (approved and awaiting bills; the credit
--   balances owed to customers, the rest of their credit: a liability, Plan comptable général account 419
--   "clients créditeurs", not a deduction from other customers' debts) by due date, ten periods per portal from
--   past due to later; disputed bills apart, on hold, outside past due.
-- grain: [portal_id, period_index]
-- tests:
--   not_null: [as_of_date]
--   accepted_range: {period_index: {min: 0, max: 9}}
-- columns:
--   as_of_date: "the period (0 past due, 1-8 weeks, 9 later; dates for weeks only)"
--   period_index: "0 past due, 1-8 the weeks, 9 later"
--   period_label: "`past due`, `week 1` .. `week 8`, `later`"
--   week_start: "the week's Monday (weeks only)"
--   week_end: "the week's Sunday (weeks only)"
--   expected_inflows: "`open_receivables` − it"
--   expected_outflows: >-
--     amounts due to suppliers in the period, approved or awaiting approval (credit notes negative), plus in
--     `later` the credit balances owed to customers
--   net_flow: "inflows − outflows"
--   cumulative_net: "running over the periods, past due included"
--   receivable_count: "number of those invoices"
--   payable_count: "number of those supplier documents"
--   forecast_inflows: "the same open receivables placed by their expected payment date (`marts.expected_payments`)"
--   forecast_net_flow: "`forecast_inflows` − outflows"
--   forecast_cumulative_net: "running over the periods"
--   forecast_receivable_count: "past due holds none"
--   open_receivables: "open amounts of invoices due in the period (the ten rows add up to the open receivables)"
--   credit_deducted: >-
--     each customer's unapplied credit notes and payments on its oldest due invoices, up to what it owes
--   credit_balances_owed: "what customers' credit exceeds their debt by: owed back to them (in `later`'s outflows)"
--   disputed_outflows: "disputed bills by due date: on hold, not in the outflows"
--   currency: >-
--     the currency of the portal's receivables and payables (`EUR` when none is served); two joined by `/` (e.g.
--     `EUR/USD`) fail `cash_outlook_single_currency` (blocking)
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- expected cash in (open receivables, net of what each customer will deduct) against cash out (supplier payables:
-- the bills approved or awaiting approval, as marts.supplier_payables holds them, and the credit balances owed to
-- customers) by due date, from the report date D, one row per period and portal, ten periods always present:
--   0 `past due`  due before D: what customers already owe late, what is already late to pay suppliers;
--   1-8 `week 1` .. `week 8`  calendar weeks (monday to sunday), week 1 being D's week (its days before D
--        hold nothing: what fell due then is past due), as marts.payables_schedule counts weeks;
--   9 `later`  due after week 8, or without a due date.
-- open_receivables: the open amounts by their due date; the ten periods add up to the total open receivables.
-- expected_inflows = open_receivables - credit_deducted: each customer's unapplied credit notes and payments
-- (marts.receivables_by_customer) are deducted from what that customer owes, its oldest due invoices first (the
-- customer pays the rest, not the whole), up to what it owes: marts.dso's net rule. unapplied payments are cash
-- already received, so they are never an inflow again. what a customer's credit exceeds its debt by is owed back to
-- it: credit_balances_owed, an outflow in `later` (no due date: it is paid back or used on request).
-- expected_outflows: the bills approved or awaiting approval (credit notes negative) by due date, plus the credit
-- balances owed to customers. disputed bills are on hold (the business does not mean to pay them until the
-- dispute ends): disputed_outflows by their due date, outside expected_outflows, net_flow and `past due`.
-- inflows are amounts by their due date, not a forecast of when customers really pay; beside them,
-- forecast_inflows place the same net amounts by their expected payment date (marts.expected_payments: the
-- customer's own payment history, or the portal's), so the ten periods of both add up to the same total.
-- an expected date is always after D: the past due period holds no forecast inflow (what is late is expected
-- from D + 1 on, at the earliest); forecast_net_flow and forecast_cumulative_net use the same outflows.
-- net_flow = inflows - outflows; cumulative_net runs over the periods in order, past due included.
-- one row per (portal_id, period_index).
with report_date as (
    select * from intermediate.int_report_date
),

receivables as (
    select * from marts.receivables
),

supplier_payables as (
    select * from marts.supplier_payables
),

expected_payments as (
    select * from marts.expected_payments
),

-- each customer's credit: its unapplied credit notes and payments, what it owes, and what is owed back to it
customer_credit as (
    select
        portal_id,
        customer_id,
        greatest(unapplied_credit_notes + unapplied_payments, 0) as credit,
        greatest(unapplied_credit_notes + unapplied_payments - total_open, 0) as credit_balance_owed,
        currency
    from marts.receivables_by_customer
),

-- the credit goes on the customer's oldest due invoices first, each up to its open amount
receivables_net as (
    select
        receivables.portal_id,
        receivables.invoice_id,
        receivables.due_date,
        receivables.open_amount,
        receivables.currency,
        least(receivables.open_amount, greatest(coalesce(customer_credit.credit, 0) - coalesce(sum(
            receivables.open_amount) over (
                partition by receivables.portal_id, receivables.customer_id
                order by receivables.due_date nulls last, receivables.invoice_id
                rows between unbounded preceding and 1 preceding
            ), 0), 0)) as credit_deducted
    from receivables
    left join customer_credit
        on customer_credit.portal_id = receivables.portal_id and customer_credit.customer_id = receivables.customer_id
),

periods as (
    select
        period_index,
        case period_index when 0 then 'past due' when 9 then 'later' else 'week ' || period_index end
            as period_label,
        case when period_index between 1 and 8
            then cast(date_trunc('week', report_date.as_of_date) + (period_index - 1) * interval 7 day as date)
        end as week_start,
        case when period_index between 1 and 8
            then cast(date_trunc('week', report_date.as_of_date) + (period_index * 7 - 1) * interval 1 day as date)
        end as week_end
    from range(0, 10) as period_range (period_index)
    cross join report_date
),

-- the period of a flow's date (a due date, or an expected payment date) on D: past due before D, the week
-- holding it up to week 8's sunday, else later
flows as (
    select portal_id, due_date as flow_date, open_amount - credit_deducted as inflow, 0 as outflow,
        1 as inflow_count, 0 as outflow_count, 0 as forecast_inflow, 0 as forecast_count, open_amount,
        credit_deducted, 0 as credit_balance_owed, 0 as disputed_outflow, currency
    from receivables_net
    union all
    select portal_id, due_date, 0,
        case when is_disputed then 0 else amount_due end,
        0, case when is_disputed then 0 else 1 end, 0, 0, 0, 0, 0,
        case when is_disputed then amount_due else 0 end,
        currency
    from supplier_payables
    union all
    -- credit balances owed back to customers: an outflow without a due date (later)
    select portal_id, null, 0, credit_balance_owed, 0, 0, 0, 0, 0, 0, credit_balance_owed, 0, currency
    from customer_credit
    where credit_balance_owed > 0
    union all
    -- the same open invoices again, net, dated by when they are expected to be paid (counted in forecast_* only)
    select expected_payments.portal_id, expected_payments.expected_payment_date, 0, 0, 0, 0,
        expected_payments.open_amount - receivables_net.credit_deducted, 1, 0, 0, 0, 0, expected_payments.currency
    from expected_payments
    inner join receivables_net
        on receivables_net.portal_id = expected_payments.portal_id
        and receivables_net.invoice_id = expected_payments.invoice_id
),

placed as (
    select
        flows.*,
        case
            when flows.flow_date is null then 9
            when flows.flow_date < report_date.as_of_date then 0
            when flows.flow_date > cast(date_trunc('week', report_date.as_of_date) + interval 55 day as date) then 9
            else 1 + date_diff('day', cast(date_trunc('week', report_date.as_of_date) as date), flows.flow_date) // 7
        end as period_index
    from flows
    cross join report_date
),

per_period as (
    select
        portal_id,
        period_index,
        sum(inflow) as expected_inflows,
        sum(outflow) as expected_outflows,
        sum(inflow_count) as receivable_count,
        sum(outflow_count) as payable_count,
        sum(forecast_inflow) as forecast_inflows,
        sum(forecast_count) as forecast_receivable_count,
        sum(open_amount) as open_receivables,
        sum(credit_deducted) as credit_deducted,
        sum(credit_balance_owed) as credit_balances_owed,
        sum(disputed_outflow) as disputed_outflows
    from placed
    group by portal_id, period_index
),

-- the currencies summed (two or more, joined by '/', fail the blocking check cash_outlook_single_currency)
portal_ids as (
    select portal_id, string_agg(distinct coalesce(currency, 'EUR'), '/' order by coalesce(currency, 'EUR')) as currency
    from flows
    group by portal_id
),

final as (
    select
        report_date.as_of_date,
        periods.period_index,
        periods.period_label,
        periods.week_start,
        periods.week_end,
        cast(coalesce(per_period.expected_inflows, 0) as decimal(18, 2)) as expected_inflows,
        cast(coalesce(per_period.expected_outflows, 0) as decimal(18, 2)) as expected_outflows,
        cast(coalesce(per_period.expected_inflows, 0) - coalesce(per_period.expected_outflows, 0) as decimal(18, 2))
            as net_flow,
        cast(sum(coalesce(per_period.expected_inflows, 0) - coalesce(per_period.expected_outflows, 0)) over (
            partition by portal_ids.portal_id order by periods.period_index
        ) as decimal(18, 2)) as cumulative_net,
        cast(coalesce(per_period.receivable_count, 0) as bigint) as receivable_count,
        cast(coalesce(per_period.payable_count, 0) as bigint) as payable_count,
        cast(coalesce(per_period.forecast_inflows, 0) as decimal(18, 2)) as forecast_inflows,
        cast(coalesce(per_period.forecast_inflows, 0) - coalesce(per_period.expected_outflows, 0) as decimal(18, 2))
            as forecast_net_flow,
        cast(sum(coalesce(per_period.forecast_inflows, 0) - coalesce(per_period.expected_outflows, 0)) over (
            partition by portal_ids.portal_id order by periods.period_index
        ) as decimal(18, 2)) as forecast_cumulative_net,
        cast(coalesce(per_period.forecast_receivable_count, 0) as bigint) as forecast_receivable_count,
        cast(coalesce(per_period.open_receivables, 0) as decimal(18, 2)) as open_receivables,
        cast(coalesce(per_period.credit_deducted, 0) as decimal(18, 2)) as credit_deducted,
        cast(coalesce(per_period.credit_balances_owed, 0) as decimal(18, 2)) as credit_balances_owed,
        cast(coalesce(per_period.disputed_outflows, 0) as decimal(18, 2)) as disputed_outflows,
        portal_ids.currency,
        portal_ids.portal_id
    from portal_ids
    cross join periods
    cross join report_date
    left join per_period
        on per_period.portal_id = portal_ids.portal_id and per_period.period_index = periods.period_index
)

select * from final
