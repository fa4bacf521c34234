-- ---
-- description: >
--   the ECB's main refinancing operations rate, one row per change (effective_date, rate_percent, source), and
--   table_checked_on, the day the table was last checked against the ECB: the seed
--   invoicing_warehouse/engine/seeds/ecb_main_refinancing_rates.csv, or the CSV the setting INVOICING_ECB_RATES_PATH names.
-- grain: [effective_date]
-- tests:
--   not_null: [effective_date, rate_percent, table_checked_on]
--   accepted_range: {rate_percent: {min: -5, max: 25}}
-- ---
-- a seed: the runner sets the variable ecb_rates_csv to the file (invoicing_warehouse/engine/seed_files.py), so a user's own
-- table replaces the shipped one without touching the sql. one row per change of rate; the late-payment interest
-- (marts.late_payment_interest_periods) takes the rate in force on 1 january and 1 july (c. com. L441-10 II).
-- a table, not a view: the file is read once per build, and readers never need it.
with source as (
    select *
    from read_csv(
        getvariable('ecb_rates_csv'),
        header = true,
        -- named types, not a fixed column list: a table with the optional checked_on column reads as well as one
        -- without it (invoicing_warehouse/engine/seed_files.py reads checked_on into the variable ecb_rates_checked_on)
        types = {'effective_date': 'date', 'rate_percent': 'decimal(9,4)', 'source': 'varchar'}
    )
),

final as (
    select
        effective_date,
        rate_percent,
        source,
        -- the day the table was last checked against the ecb's decisions (the variable ecb_rates_checked_on, from
        -- the file's checked_on column); a file without one counts as checked up to its newest change
        coalesce(
            cast(getvariable('ecb_rates_checked_on') as date), max(effective_date) over ()
        ) as table_checked_on
    from source
)

select * from final
