-- ---
-- description: the fiscal year the legal reports cover on the report date D (one row).
-- materialized: view
-- grain: []
-- ---
-- the fiscal year ending on D, the closing date (c. com. D441-6 reports on the year closed on it):
-- with the setting INVOICING_FISCAL_YEAR_START (month-day, the runner's variable fiscal_year_start), the year runs
-- from the last such day on or before D to D (the whole year when D is the closing date, the year to date
-- otherwise); unset, the twelve months ending on D (D - 1 year + 1 day to D).
with report_date as (
    select * from intermediate.int_report_date
),

setting as (
    select cast(getvariable('fiscal_year_start') as varchar) as month_day
),

candidates as (
    select
        report_date.as_of_date,
        case when setting.month_day is not null then make_date(
            year(report_date.as_of_date),
            cast(split_part(setting.month_day, '-', 1) as integer),
            cast(split_part(setting.month_day, '-', 2) as integer)
        ) end as start_this_year
    from report_date
    cross join setting
)

select
    as_of_date,
    case
        when start_this_year is null then cast(as_of_date - interval 1 year + interval 1 day as date)
        when start_this_year <= as_of_date then start_this_year
        else cast(start_this_year - interval 1 year as date)
    end as fiscal_year_start
from candidates
