-- ---
-- description: >
--   what became of each late-payment claim (to claim, claimed, waived), as the user records it in the file the
--   setting INVOICING_CLAIM_STATUSES_PATH names (the shipped one is empty), kept across rebuilds.
-- grain: [portal_key, reference]
-- tests:
--   not_null: [reference, status]
-- ---
-- a seed of the user's: the runner sets the variable claim_statuses_csv to the file (invoicing_warehouse/engine/seed_files.py,
-- which refuses an unknown status, a bad date or a claim listed twice, naming the line). one row per claim the user
-- has acted on, by invoice reference; portal_id empty: the reference in any portal. marts.late_payment_claims
-- reads it: a claim not listed is 'to claim'.
with source as (
    select *
    from read_csv(
        getvariable('claim_statuses_csv'),
        header = true,
        all_varchar = true,
        columns = {
            'portal_id': 'varchar', 'reference': 'varchar', 'status': 'varchar', 'status_date': 'varchar',
            'note': 'varchar'
        }
    )
),

final as (
    select
        coalesce(nullif(trim(portal_id), ''), '*') as portal_key,
        trim(reference) as reference,
        trim(status) as status,
        cast(nullif(trim(status_date), '') as date) as status_date,
        nullif(trim(note), '') as note
    from source
)

select * from final
