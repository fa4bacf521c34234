-- ---
-- description: the portal's time zone, the calendar of date-only fields (one row).
-- materialized: view
-- grain: []
-- ---
-- the one place the portal's time zone is read: the duckdb variable portal_time_zone that the runner sets,
-- or Europe/Paris (the service's zone) when it is unset (a select pasted into a session of its own).
-- date-only fields (emitDate, dueDate, a transaction's date, ...) are taken as the calendar date in this
-- zone: a server storing them at utc midnight (01:00 or 02:00 in Paris) and one storing them at Paris
-- midnight (22:00 or 23:00 utc the day before) give the same date.

select coalesce(getvariable('portal_time_zone'), 'Europe/Paris') as time_zone
