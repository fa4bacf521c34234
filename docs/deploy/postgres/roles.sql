-- A role per service in the lake's catalog database (docs/deploy.md, security review 2, M2). Run once, as a
-- superuser, connected to invoicing_lake (owned by the writer role `invoicing`), before the services start:
--   psql -v ON_ERROR_STOP=1 -d invoicing_lake -f roles.sql
-- then give each login role its password with psql's \password (never written in a file or a command line).
-- tests/security/test_attacks_least_privilege.py runs this file on a real PostgreSQL and proves each role's limits.

-- invoicing (the writer, the Dagster code servers' runs): owns the catalog, DuckLake's ducklake_* tables (schema
--   invoicing_lake).
-- invoicing_receiver (the webhook receiver, internet-facing): the hints spool only, never the catalog.
-- invoicing_budget (every process calling the API): the shared rate budget's table only.
-- invoicing_reader (the dashboard): reads the catalog and the spool, writes nothing.
create role invoicing_receiver login;
create role invoicing_budget login;
create role invoicing_reader login;

-- Only these roles connect, and only the writer creates schemas or anything in the catalog's.
revoke all on database invoicing_lake from public;
grant connect on database invoicing_lake to invoicing, invoicing_receiver, invoicing_budget, invoicing_reader;
revoke create on schema public from public;
create schema if not exists invoicing_lake authorization invoicing;

-- The hints spool (schema invoicing_hints): the receiver appends deliveries, the writer's runs apply and
-- acknowledge them. Whichever comes first creates its tables; the other gets its rows by the default privileges.
create schema if not exists invoicing_hints authorization invoicing;
grant usage, create on schema invoicing_hints to invoicing_receiver;
grant usage on schema invoicing_hints to invoicing_reader;
alter default privileges for role invoicing in schema invoicing_hints
    grant select, insert, update, delete on tables to invoicing_receiver;
alter default privileges for role invoicing_receiver in schema invoicing_hints
    grant select, insert, update, delete on tables to invoicing;
alter default privileges for role invoicing in schema invoicing_hints grant select on tables to invoicing_reader;
alter default privileges for role invoicing_receiver in schema invoicing_hints grant select on tables to invoicing_reader;

-- The rate budget (schema invoicing_budget, found by the role's search_path): its table, created on first use.
create schema if not exists invoicing_budget authorization invoicing_budget;
alter role invoicing_budget set search_path = invoicing_budget;

-- The readers: the catalog's tables, those there now and those the writer creates later, for reading only.
grant usage on schema invoicing_lake to invoicing_reader;
grant select on all tables in schema invoicing_lake to invoicing_reader;
alter default privileges for role invoicing in schema invoicing_lake grant select on tables to invoicing_reader;
