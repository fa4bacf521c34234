-- ---
-- description: >
--   The Late-payment claims page's tiles and notes, one row per portal with a late invoice: what is claimed
--   (indemnities, interest, their total, split between open invoices and invoices already paid), what is left out
--   (consumers, invoices not in euros, interest unknown while the rate table is behind), and the contractual rates
--   below their legal floor. Every figure is a sum or a count of `marts.late_payment_claims`' rows.
-- grain: [portal_id]
-- tests:
--   not_null: [as_of_date, claimed_invoice_count, flat_indemnities_eur, interest_eur, total_claim_eur]
-- columns:
--   as_of_date: "the report date D"
--   claimed_invoice_count: "business customers' late invoices the law lets be claimed (an indemnity of 40)"
--   flat_indemnities_eur: "sum of `flat_indemnity_eur` (40 per claimed invoice)"
--   interest_eur: "sum of the known `interest_eur` (invoices in euros; unknown interest counts 0)"
--   total_claim_eur: "`flat_indemnities_eur` + `interest_eur`"
--   paid_invoices_claim_eur: "of the total claim, business customers' invoices already paid (their penalties only)"
--   open_invoices_claim_eur: "`total_claim_eur` − `paid_invoices_claim_eur`"
--   consumer_invoice_count: "consumers' late invoices, left out (L441-10 is between professionals)"
--   consumer_amount_late: "their amount late"
--   unconverted_invoice_count: "business customers' late invoices not in euros (interest not in the totals)"
--   rate_table_behind_count: "claims running into a half-year after the rate table was last checked"
--   below_floor_count: "claims at a contractual rate below three times the legal interest rate"
--   below_floor_interest_eur: "their interest at that rate (in `interest_eur`)"
--   below_floor_interest_at_floor_eur: "their interest at the legal floor"
--   floor_unchecked_count: "claims whose rate could not be checked against its floor (`rate_flag`, not below it)"
--   rate_bases: "the rates the claims use (`rate_basis`), `, `-joined in alphabetical order (NULL: none)"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- one row per portal with a late invoice; a portal without one has no row (the page shows zeros).
with report_date as (
    select * from intermediate.int_report_date
),

late_payment_claims as (
    select * from marts.late_payment_claims
),

totals as (
    select
        portal_id,
        -- claimed: business invoices the law lets be claimed (not barred: collective proceedings, time-barred)
        count(*) filter (where customer_type = 'business' and flat_indemnity_eur > 0) as claimed_invoice_count,
        coalesce(sum(flat_indemnity_eur), 0) as flat_indemnities_eur,
        coalesce(sum(interest_eur), 0) as interest_eur,
        coalesce(sum(flat_indemnity_eur + coalesce(interest_eur, 0))
            filter (where customer_type = 'business' and is_invoice_paid), 0) as paid_invoices_claim_eur,
        count(*) filter (where customer_type = 'consumer') as consumer_invoice_count,
        coalesce(sum(amount_late) filter (where customer_type = 'consumer'), 0) as consumer_amount_late,
        count(*) filter (where customer_type = 'business' and currency <> 'EUR') as unconverted_invoice_count,
        count(*) filter (where is_rate_table_behind) as rate_table_behind_count,
        count(*) filter (where is_rate_below_legal_floor) as below_floor_count,
        coalesce(sum(interest_eur) filter (where is_rate_below_legal_floor), 0) as below_floor_interest_eur,
        coalesce(sum(interest_amount_at_legal_floor) filter (where is_rate_below_legal_floor), 0)
            as below_floor_interest_at_floor_eur,
        count(*) filter (where rate_flag is not null and not is_rate_below_legal_floor) as floor_unchecked_count,
        -- one text, as the page shows it (a list column would not export to xlsx)
        string_agg(distinct rate_basis, ', ' order by rate_basis) as rate_bases
    from late_payment_claims
    group by portal_id
),

final as (
    select
        report_date.as_of_date,
        totals.claimed_invoice_count,
        totals.flat_indemnities_eur,
        totals.interest_eur,
        totals.flat_indemnities_eur + totals.interest_eur as total_claim_eur,
        totals.paid_invoices_claim_eur,
        totals.flat_indemnities_eur + totals.interest_eur - totals.paid_invoices_claim_eur as open_invoices_claim_eur,
        totals.consumer_invoice_count,
        totals.consumer_amount_late,
        totals.unconverted_invoice_count,
        totals.rate_table_behind_count,
        totals.below_floor_count,
        totals.below_floor_interest_eur,
        totals.below_floor_interest_at_floor_eur,
        totals.floor_unchecked_count,
        totals.rate_bases,
        totals.portal_id
    from totals
    cross join report_date
)

select * from final
