-- ---
-- description: >
--   the French legal interest rate (taux de l'intérêt légal, c. mon. fin. L313-2 and D313-1-A), set by arrêté for
--   each half-year since 2015, one row per half-year: the rate for creditors who are individuals not acting for
--   their business and the rate for all other cases (the one a business's claim uses), with its source and
--   table_checked_on, the day the table was last checked against the Journal officiel: the seed
--   invoicing_warehouse/engine/seeds/legal_interest_rates.csv, or the CSV the setting INVOICING_LEGAL_INTEREST_RATES_PATH
--   names. Three times the other-cases rate is the floor of a contractual penalty rate (c. com. L441-10 II).
-- grain: [half_year_start]
-- tests:
--   not_null: [half_year_start, individuals_rate_percent, other_cases_rate_percent]
--   accepted_range: {individuals_rate_percent: {min: 0, max: 100}, other_cases_rate_percent: {min: 0, max: 100}}
-- ---
-- a seed: the runner sets the variable legal_interest_rates_csv to the file (invoicing_warehouse/engine/seed_files.py, which
-- refuses a row whose half-year does not start on 1 january or 1 july, naming the line). each half-year has its own
-- arrêté, so a half-year without a row has no known rate: marts.late_payment_interest_periods then cannot check a
-- contractual rate against its floor and says so, never taking the floor as met.
with source as (
    select *
    from read_csv(
        getvariable('legal_interest_rates_csv'),
        header = true,
        -- named types, not a fixed column list: a table without the optional checked_on column reads as well
        types = {
            'half_year_start': 'date', 'individuals_rate_percent': 'decimal(9,4)',
            'other_cases_rate_percent': 'decimal(9,4)', 'source': 'varchar'
        }
    )
),

final as (
    select
        half_year_start,
        individuals_rate_percent,
        other_cases_rate_percent,
        source,
        -- the variable legal_interest_rates_checked_on, from the file's checked_on column (null without one)
        cast(getvariable('legal_interest_rates_checked_on') as date) as table_checked_on
    from source
)

select * from final
