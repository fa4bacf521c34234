-- ---
-- description: >
--   expected cash in (open receivables) against cash out (supplier payables) by due date, ten periods
--   per portal from past due to later.
-- grain: [portal_id, period_index]
-- tests:
--   not_null: [as_of_date]
--   accepted_range: {period_index: {min: 0, max: 9}}
-- ---
-- expected cash in (open receivables) against cash out (supplier payables: every owed bill, approved, awaiting
-- approval or disputed, as marts.supplier_payables holds them) by due date, from the report
-- date D, one row per period and portal, ten periods always present:
--   0 `past due`  due before D: what customers already owe late, what is already late to pay suppliers;
--   1-8 `week 1` .. `week 8`  calendar weeks (monday to sunday), week 1 being D's week (its days before D
--        hold nothing: what fell due then is past due), as marts.payables_schedule counts weeks;
--   9 `later`  due after week 8, or without a due date.
-- the ten periods add up to the total open receivables and the total payables (credit notes negative).
-- inflows are open amounts by their due date, not a forecast of when customers really pay; beside them,
-- forecast_inflows place the same open amounts by their expected payment date (marts.expected_payments: the
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
    select portal_id, due_date as flow_date, open_amount as inflow, 0 as outflow, 1 as inflow_count, 0 as outflow_count,
        0 as forecast_inflow, 0 as forecast_count, currency
    from receivables
    union all
    select portal_id, due_date, 0, amount_due, 0, 1, 0, 0, currency
    from supplier_payables
    union all
    -- the same open invoices again, dated by when they are expected to be paid (counted in forecast_* only)
    select portal_id, expected_payment_date, 0, 0, 0, 0, open_amount, 1, currency
    from expected_payments
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
        sum(forecast_count) as forecast_receivable_count
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
        portal_ids.currency,
        portal_ids.portal_id
    from portal_ids
    cross join periods
    cross join report_date
    left join per_period
        on per_period.portal_id = portal_ids.portal_id and per_period.period_index = periods.period_index
)

select * from final
