-- ---
-- description: >
--   The Late-payment claims page's notes by kind, one row per portal, tally and label: `excluded`, the business
--   customers' claims the law bars, by `claim_excluded_reason`; `status`, the claims the law allows, by what the
--   user recorded (`claim_status`: to claim, claimed, waived), with their euros.
-- grain: [portal_id, tally, label]
-- tests:
--   not_null: [as_of_date, invoice_count, claim_eur]
-- columns:
--   as_of_date: "the report date D"
--   tally: "`excluded` or `status`"
--   label: "the reason (`excluded`) or the status (`status`)"
--   invoice_count: "late invoices"
--   claim_eur: "their indemnities and known interest in euros (the page shows it for `status`)"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
with report_date as (
    select * from intermediate.int_report_date
),

late_payment_claims as (
    select * from marts.late_payment_claims
),

business_claims as (
    select * from late_payment_claims where customer_type = 'business'
),

tallies as (
    -- a claim the law bars carries no indemnity (flat_indemnity_eur = 0): it is `excluded`, else it has a status
    select portal_id, 'excluded' as tally, claim_excluded_reason as label, count(*) as invoice_count,
           coalesce(sum(flat_indemnity_eur + coalesce(interest_eur, 0)), 0) as claim_eur
    from business_claims
    where flat_indemnity_eur = 0
    group by portal_id, claim_excluded_reason
    union all
    select portal_id, 'status', claim_status, count(*),
           coalesce(sum(flat_indemnity_eur + coalesce(interest_eur, 0)), 0)
    from business_claims
    where flat_indemnity_eur > 0
    group by portal_id, claim_status
),

final as (
    select report_date.as_of_date, tallies.tally, tallies.label, tallies.invoice_count, tallies.claim_eur,
           tallies.portal_id
    from tallies
    cross join report_date
)

select * from final
