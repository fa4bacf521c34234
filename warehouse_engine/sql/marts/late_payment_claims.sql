-- ---
-- description: >
--   one row per customer invoice overdue or paid late on the report date: days late, amount late, the flat 40 EUR
--   recovery indemnity (c. com. D441-5) and the late-payment interest (L441-10 II) a business customer owes;
--   consumers' invoices are shown and claim nothing (claim_excluded_reason).
-- grain: [portal_id, invoice_id]
-- tests:
--   not_null: [as_of_date, due_date, days_late, amount_late, customer_type]
--   accepted_range: {days_late: {min: 1}, amount_late: {min: 0.01}}
-- ---
-- an invoice is late when money was still owed at the end of its due date: overdue on the report date, or paid
-- after its due date (intermediate.int_late_invoice_balances, whose rules warehouse_engine/sql/README.md states).
-- days_late = (paid_date, else the report date) - due_date. amount_late = what was unpaid at the end of the due
-- date (credit notes deducted whatever their date); open_amount = what is still unpaid on the report date.
-- between professionals (customer_type business) the claim is:
--   - flat_indemnity_eur: 40 euros per late invoice (D441-5), in euros whatever the invoice's currency;
--   - interest: the sum of its lines in marts.late_payment_interest_periods (one per run of days at one amount and
--     one half-year's rate), in the invoice's currency; interest_eur is it for an invoice in euros, null otherwise
--     (not converted: the rate of which day would be a choice the law does not make; claim_excluded_reason says
--     so) and null when a half-year has no rate in the table (is_interest_rate_known false).
-- consumer invoices (customer_type consumer: served, or inferred from the missing siret) stay in the mart with
-- claim_excluded_reason 'consumer' and 0 claimed: L441-10 and D441-5 apply between professionals only, and the
-- dashboard counts them beside the claims.
with balances as (
    select * from intermediate.int_late_invoice_balances
),

periods as (
    select * from marts.late_payment_interest_periods
),

late_invoices as (
    select
        as_of_date,
        portal_id,
        invoice_id,
        any_value(reference) as reference,
        any_value(customer_id) as customer_id,
        any_value(customer_name) as customer_name,
        any_value(customer_type) as customer_type,
        any_value(is_customer_type_inferred) as is_customer_type_inferred,
        any_value(emit_date) as emit_date,
        any_value(due_date) as due_date,
        any_value(is_due_date_assumed) as is_due_date_assumed,
        any_value(paid_date) as paid_date,
        any_value(is_paid_date_assumed) as is_paid_date_assumed,
        any_value(claim_end) - any_value(due_date) as days_late,
        any_value(total_incl_tax) as total_incl_tax,
        any_value(credited_amount) as credited_amount,
        any_value(amount_late_at_due) as amount_late,
        -- what the usages dated by the report date leave; 0 once paid or closed
        case when any_value(paid_date) is null then arg_max(amount_late, balance_from) else 0 end as open_amount,
        any_value(currency) as currency
    from balances
    group by as_of_date, portal_id, invoice_id
),

interest as (
    select
        portal_id,
        invoice_id,
        sum(interest_amount) as interest_amount,
        count(*) as interest_period_count,
        bool_and(ecb_rate_percent is not null) as is_interest_rate_known
    from periods
    group by portal_id, invoice_id
),

final as (
    select
        late_invoices.as_of_date,
        late_invoices.invoice_id,
        late_invoices.reference,
        late_invoices.customer_id,
        late_invoices.customer_name,
        late_invoices.customer_type,
        late_invoices.is_customer_type_inferred,
        late_invoices.emit_date,
        late_invoices.due_date,
        late_invoices.is_due_date_assumed,
        late_invoices.paid_date,
        late_invoices.is_paid_date_assumed,
        late_invoices.days_late,
        late_invoices.total_incl_tax,
        late_invoices.credited_amount,
        late_invoices.amount_late,
        late_invoices.open_amount,
        late_invoices.currency,
        case
            when late_invoices.customer_type = 'consumer' then 'consumer'
            when late_invoices.currency <> 'EUR' then 'interest not converted to EUR'
        end as claim_excluded_reason,
        cast(case when late_invoices.customer_type = 'business' then 40 else 0 end as decimal(18, 2))
            as flat_indemnity_eur,
        case
            when late_invoices.customer_type = 'consumer' then cast(0 as decimal(18, 2))
            when interest.is_interest_rate_known then interest.interest_amount
        end as interest_amount,
        coalesce(interest.is_interest_rate_known, true) as is_interest_rate_known,
        case
            when late_invoices.customer_type = 'consumer' then cast(0 as decimal(18, 2))
            when late_invoices.currency = 'EUR' and interest.is_interest_rate_known then interest.interest_amount
        end as interest_eur,
        coalesce(interest.interest_period_count, 0) as interest_period_count,
        late_invoices.portal_id
    from late_invoices
    left join interest
        on interest.portal_id = late_invoices.portal_id and interest.invoice_id = late_invoices.invoice_id
)

select * from final
