-- ---
-- description: >
--   the ECB's main refinancing operations rate, one row per change (effective_date, rate_percent, source): the
--   seed warehouse_engine/seeds/ecb_main_refinancing_rates.csv, or the CSV the setting INVOICING_ECB_RATES_PATH
--   names.
-- grain: [effective_date]
-- tests:
--   not_null: [effective_date, rate_percent]
--   accepted_range: {rate_percent: {min: -5, max: 25}}
-- ---
-- a seed: the runner sets the variable ecb_rates_csv to the file (warehouse_engine/seed_files.py), so a user's own
-- table replaces the shipped one without touching the sql. one row per change of rate; the late-payment interest
-- (marts.late_payment_interest_periods) takes the rate in force on 1 january and 1 july (c. com. L441-10 II).
-- a table, not a view: the file is read once per build, and readers never need it.
with source as (
    select *
    from read_csv(
        getvariable('ecb_rates_csv'),
        header = true,
        columns = {'effective_date': 'date', 'rate_percent': 'decimal(9,4)', 'source': 'varchar'}
    )
),

final as (
    select effective_date, rate_percent, source
    from source
)

select * from final
