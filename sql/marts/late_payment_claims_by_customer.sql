-- ---
-- description: >
--   The Late-payment claims page's list by customer, one row per business customer with a late invoice: what it
--   was late with and what it owes for it (indemnities and interest in euros), and what its reminder letter asks
--   for (`letter_*`: the claims the law allows and the user has not waived, amounts in the invoices' currency).
--   Consumers' invoices claim nothing (L441-10 is between professionals) and are counted apart.
-- grain: [portal_id, customer_id]
-- tests:
--   not_null: [as_of_date, late_invoice_count, amount_late, flat_indemnity_eur, claim_eur, letter_invoice_count]
-- columns:
--   as_of_date: "the report date D"
--   customer_id: "the customer"
--   customer_name: "its name (its id when it has none)"
--   late_invoice_count: "its late invoices"
--   amount_late: "sum of their amount late"
--   open_amount: "sum of their open amount"
--   flat_indemnity_eur: "sum of the 40 EUR indemnities"
--   interest_eur: "sum of the interest in euros (NULL when none is known)"
--   claim_eur: "`flat_indemnity_eur` + the known interest"
--   interest_unknown_count: "late invoices whose interest in euros is unknown"
--   interest_flag: "`rate table behind` when a claim runs past the rate table's last check"
--   rate_flag: "a contractual rate below its legal floor, else a rate that could not be checked"
--   letter_invoice_count: "the invoices its reminder letter claims: not barred by law, not waived"
--   letter_open_amount: "their open amount"
--   letter_interest_amount: "their known interest, in the invoices' currency"
--   letter_indemnities_eur: "their 40 EUR indemnities"
--   letter_unknown_interest_count: "the letter's invoices whose interest is not known yet"
--   letter_total: "`letter_open_amount` + interest + indemnities when the invoices are in euros, else NULL"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- the claims of business customers only: a consumer's late invoice claims nothing (L441-10 is between
-- professionals). the letter's figures are those of its claimable rows: business (all of these), no
-- claim_excluded_reason, not waived by the user; its total adds amounts of one currency only (the indemnity is
-- in euros), so it is NULL when a letter's invoices are not all in euros.
with report_date as (
    select * from intermediate.int_report_date
),

late_payment_claims as (
    select * from marts.late_payment_claims
),

business_claims as (
    select
        *,
        claim_excluded_reason is null and claim_status <> 'waived' as is_in_letter
    from late_payment_claims
    where customer_type = 'business'
),

by_customer as (
    select
        portal_id,
        customer_id,
        coalesce(any_value(customer_name), customer_id) as customer_name,
        count(*) as late_invoice_count,
        sum(amount_late) as amount_late,
        sum(open_amount) as open_amount,
        sum(flat_indemnity_eur) as flat_indemnity_eur,
        sum(interest_eur) as interest_eur,
        sum(flat_indemnity_eur) + coalesce(sum(interest_eur), 0) as claim_eur,
        count(*) filter (where interest_eur is null) as interest_unknown_count,
        case when bool_or(is_rate_table_behind) then 'rate table behind' end as interest_flag,
        -- a contractual rate below its legal floor outweighs one that could not be checked
        coalesce(max(rate_flag) filter (where is_rate_below_legal_floor), max(rate_flag)) as rate_flag,
        count(*) filter (where is_in_letter) as letter_invoice_count,
        coalesce(sum(open_amount) filter (where is_in_letter), 0) as letter_open_amount,
        coalesce(sum(interest_amount) filter (where is_in_letter), 0) as letter_interest_amount,
        coalesce(sum(flat_indemnity_eur) filter (where is_in_letter), 0) as letter_indemnities_eur,
        count(*) filter (where is_in_letter and interest_amount is null) as letter_unknown_interest_count,
        bool_and(currency = 'EUR') filter (where is_in_letter) as is_letter_in_euros
    from business_claims
    group by portal_id, customer_id
),

final as (
    select
        report_date.as_of_date,
        by_customer.customer_id,
        by_customer.customer_name,
        by_customer.late_invoice_count,
        by_customer.amount_late,
        by_customer.open_amount,
        by_customer.flat_indemnity_eur,
        by_customer.interest_eur,
        by_customer.claim_eur,
        by_customer.interest_unknown_count,
        by_customer.interest_flag,
        by_customer.rate_flag,
        by_customer.letter_invoice_count,
        by_customer.letter_open_amount,
        by_customer.letter_interest_amount,
        by_customer.letter_indemnities_eur,
        by_customer.letter_unknown_interest_count,
        case when by_customer.is_letter_in_euros
            then by_customer.letter_open_amount + by_customer.letter_interest_amount
                + by_customer.letter_indemnities_eur
        end as letter_total,
        by_customer.portal_id
    from by_customer
    cross join report_date
)

select * from final
