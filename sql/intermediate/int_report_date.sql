-- ---
-- description: the report date every as-of model reads (one row).
-- materialized: view
-- grain: []
-- ---
-- the report date D every as-of model reads: the duckdb variable as_of_date that the runner sets, or today
-- in the portal's time zone when the variable is unset (a model's select pasted into a session without `set variable`).
-- a view, so each select reads the variable of its own session.

select coalesce(
    cast(getvariable('as_of_date') as date),
    cast(now() at time zone (select time_zone from staging.stg_invoicing__portal_time_zone) as date)
) as as_of_date
