-- ---
-- description: >
--   the late-payment interest of each late invoice of a business customer, one row per run of days at one amount
--   late and one half-year's rate: the lines a reminder letter cites. The rate (rate_basis): the terms of sale's
--   (settings, c. com. L441-10 II), else the legal default, the ECB main refinancing rate in force on 1 January /
--   1 July + 10 points (L441-10 II); a public buyer's, the ECB rate of the half-year the delay began + 8 points,
--   fixed (public procurement code R2192-31). A half-year starting after the day the ECB table was last checked
--   has no rate and no interest (is_rate_table_behind). A contractual rate below three times the half-year's legal
--   interest rate (L441-10 II's floor) is flagged (is_below_legal_floor), with the interest at the floor beside it.
--   A contractual rate is chosen for the portal or per customer by customer id only: the API contract gives tags to
--   suppliers and supplier documents, not to customers, so no customer tag can select one.
-- grain: [portal_id, invoice_id, period_start]
-- tests:
--   not_null: [as_of_date, period_start, period_end, days_late_in_period, amount_late, half_year_start]
--   accepted_range: {days_late_in_period: {min: 1, max: 184}, amount_late: {min: 0.01}}
-- columns:
--   as_of_date: "the report date D"
--   invoice_id: "the late invoice"
--   customer_id: "its customer"
--   reference: "its reference"
--   due_date: "its due date"
--   period_start: "first day of the line"
--   period_end: "last day of the line (included)"
--   days_late_in_period: "days of the line"
--   amount_late: "the amount late over the line"
--   currency: "the invoice's currency as served, `EUR` when none is"
--   half_year_start: "1 January or 1 July: the half-year whose rate applies"
--   ecb_rate_percent: >-
--     the ECB main refinancing rate in force on the half-year's first day (NULL with is_rate_table_behind)
--   ecb_rate_effective_date: "the day that rate took effect"
--   rate_basis: "`legal: ECB + 10, L441-10 II`, `contractual` or `public buyer: R2192-31`"
--   is_rate_table_behind: >-
--     the half-year starts after the day the rate table was last checked: rate and interest NULL
--   interest_rate_percent: "the rate the line uses (ECB + 10 points by default)"
--   interest_amount: "amount_late x rate x days / 36500, to the cent"
--   legal_floor_percent: "3 x the half-year's legal interest rate (L441-10 II's floor for a contractual rate)"
--   is_below_legal_floor: "a contractual rate below that floor; NULL: the half-year's legal rate is unknown"
--   interest_amount_at_legal_floor: "the line's interest at the floor"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- interest runs from the day after the due date, without a reminder, at the rate of the european central bank's
-- most recent main refinancing operation + 10 points: the rate in force on 1 january for the days of january to
-- june, on 1 july for july to december (L441-10 II). a run of days late at one amount (a stretch of
-- marts.late_payment_balances) that crosses 30 june / 1 july or 31 december / 1 january is cut in two,
-- each part at its half-year's rate. interest of a line = amount late x (rate + 10) % x days / 365, rounded to
-- the cent per line (the claim is the sum of its lines, so the letter adds up).
-- consumers are left out (the article applies between professionals): marts.late_payment_claims shows them.
-- ecb_rate_percent is null for a half-year before the rate table's first row: the line's interest is then null.
-- the rate table is vouched for up to the day it was last checked against the ecb (its table_checked_on, from the
-- file's checked_on column; without one, its newest change): a half-year that starts after
-- that day may have a rate the table does not hold yet, so its line has no rate and no interest
-- (is_rate_table_behind), never a number computed from an old rate.
-- the rate (rate_basis), in order:
--   - a public buyer (the setting INVOICING_PUBLIC_BUYERS, variable public_buyers): the public procurement code,
--     R2192-31: the ecb rate in force on the first day of the half-year in which the delay began (the day after
--     the due date) + 8 points, fixed for the whole delay ('public buyer: R2192-31');
--   - a rate the terms of sale set (INVOICING_PENALTY_RATES_BY_CUSTOMER for one customer, else
--     INVOICING_PENALTY_RATE_PERCENT for the portal; variables penalty_rate_customers, penalty_rate_percent): that yearly
--     rate on every day, whatever the ecb table holds ('contractual': L441-10 II lets the terms of sale set any
--     rate of at least three times the legal interest rate);
--   - else the legal default, the half-year's ecb rate + 10 points ('legal: ECB + 10, L441-10 II').
-- the floor of a contractual rate (L441-10 II: "ne peut toutefois fixer un taux inférieur à trois fois le taux
-- d'intérêt légal"): 3 x the legal interest rate of the line's half-year for 'all other cases' (c. mon. fin.
-- L313-2: the creditor is a business; reference.legal_interest_rates). a contractual line below it keeps its
-- interest at the contractual rate (what the user's terms say, and less than the law allows: claiming less is the
-- creditor's right) but is flagged is_below_legal_floor, with interest_amount_at_legal_floor, the same line at
-- the floor, beside it: the clause may be void, and the page and the letter must say so, not use it as valid.
-- a half-year the legal table has no row for: the floor is unknown, is_below_legal_floor null (not checked).
-- the floor binds terms of sale only: the legal default and a public buyer's rate are never below it (false).
with report_date as (
    select * from intermediate.int_report_date
),

balances as (
    select * from marts.late_payment_balances
),

rates as (
    select * from reference.ecb_main_refinancing_rates
),

legal_rates as (
    select * from reference.legal_interest_rates
),

rate_table_checked as (
    select max(table_checked_on) as checked_on from rates
),

stretches as (
    select
        *,
        -- the customer's own terms of sale (INVOICING_PENALTY_RATES_BY_CUSTOMER), else the portal's
        -- (INVOICING_PENALTY_RATE_PERCENT), else none: the legal default
        coalesce(
            list_extract(
                coalesce(getvariable('penalty_rate_customer_rates'), []::decimal(9, 4)[]),
                list_position(coalesce(getvariable('penalty_rate_customers'), []::varchar[]), customer_id)
            ),
            cast(getvariable('penalty_rate_percent') as decimal(9, 4))
        ) as contractual_rate_percent
    from balances
    where customer_type = 'business' and amount_late > 0 and balance_until > balance_from
),

half_years as (
    select
        half_year_start,
        cast(half_year_start + interval 6 month - interval 1 day as date) as half_year_end
    from (
        select cast(unnest(generate_series(
            cast(date_trunc('year', min(balance_from)) as timestamp),
            cast(max(balance_until) as timestamp),
            interval 6 month
        )) as date) as half_year_start
        from stretches
    )
),

half_year_rates as (
    select
        half_years.*,
        case when not is_rate_table_behind then rates.rate_percent end as ecb_rate_percent,
        case when not is_rate_table_behind then rates.effective_date end as ecb_rate_effective_date,
        is_rate_table_behind
    from (
        select half_years.*, coalesce(half_years.half_year_start > checked.checked_on, false) as is_rate_table_behind
        from half_years
        cross join rate_table_checked as checked
    ) as half_years
    asof left join rates on half_years.half_year_start >= rates.effective_date
),

-- a public buyer's rate is fixed on the half-year the delay began in: the half-year of the day after the due date
public_buyer_rates as (
    select
        delays.portal_id,
        delays.invoice_id,
        rates.rate_percent + 8 as interest_rate_percent,
        delays.delay_half_year_start > checked.checked_on as is_rate_table_behind
    from (
        select distinct
            portal_id,
            invoice_id,
            make_date(year(due_date + 1), case when month(due_date + 1) <= 6 then 1 else 7 end, 1)
                as delay_half_year_start
        from stretches
        where list_contains(coalesce(getvariable('public_buyers'), []::varchar[]), customer_id)
    ) as delays
    cross join rate_table_checked as checked
    asof left join rates on delays.delay_half_year_start >= rates.effective_date
),

periods as (
    select
        report_date.as_of_date,
        stretches.portal_id,
        stretches.invoice_id,
        stretches.customer_id,
        stretches.reference,
        stretches.due_date,
        greatest(stretches.balance_from + 1, half_year_rates.half_year_start) as period_start,
        least(stretches.balance_until, half_year_rates.half_year_end) as period_end,
        stretches.amount_late,
        stretches.currency,
        half_year_rates.half_year_start,
        half_year_rates.ecb_rate_percent,
        half_year_rates.ecb_rate_effective_date,
        case
            when public_buyer_rates.invoice_id is not null then 'public buyer: R2192-31'
            when stretches.contractual_rate_percent is not null then 'contractual'
            else 'legal: ECB + 10, L441-10 II'
        end as rate_basis,
        case
            when public_buyer_rates.invoice_id is not null then public_buyer_rates.is_rate_table_behind
            when stretches.contractual_rate_percent is not null then false
            else half_year_rates.is_rate_table_behind
        end as is_rate_table_behind,
        case
            when public_buyer_rates.invoice_id is not null
                then case when not public_buyer_rates.is_rate_table_behind
                    then public_buyer_rates.interest_rate_percent end
            when stretches.contractual_rate_percent is not null then stretches.contractual_rate_percent
            else half_year_rates.ecb_rate_percent + 10
        end as interest_rate_percent,
        3 * legal_rates.other_cases_rate_percent as legal_floor_percent
    from stretches
    cross join report_date
    inner join half_year_rates
        on half_year_rates.half_year_start <= stretches.balance_until
        and half_year_rates.half_year_end > stretches.balance_from
    left join public_buyer_rates
        on public_buyer_rates.portal_id = stretches.portal_id and public_buyer_rates.invoice_id = stretches.invoice_id
    left join legal_rates on legal_rates.half_year_start = half_year_rates.half_year_start
),

floored as (
    select
        *,
        case
            when rate_basis <> 'contractual' then false
            when legal_floor_percent is not null then interest_rate_percent < legal_floor_percent
        end as is_below_legal_floor
    from periods
),

final as (
    select
        as_of_date,
        invoice_id,
        customer_id,
        reference,
        due_date,
        period_start,
        period_end,
        period_end - period_start + 1 as days_late_in_period,
        amount_late,
        currency,
        half_year_start,
        ecb_rate_percent,
        ecb_rate_effective_date,
        rate_basis,
        is_rate_table_behind,
        interest_rate_percent,
        -- in the invoice's currency (marts.late_payment_claims says when that is not euros)
        cast(round(amount_late * interest_rate_percent * (period_end - period_start + 1) / 36500, 2)
            as decimal(18, 2)) as interest_amount,
        legal_floor_percent,
        is_below_legal_floor,
        -- the same line at the floor, for a contractual rate below it: what the terms of sale could at least claim
        case when is_below_legal_floor then cast(
            round(amount_late * legal_floor_percent * (period_end - period_start + 1) / 36500, 2) as decimal(18, 2))
        end as interest_amount_at_legal_floor,
        portal_id
    from floored
)

select * from final
