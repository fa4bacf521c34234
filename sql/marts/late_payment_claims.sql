-- ---
-- description: >
--   one row per customer invoice overdue or paid late on the report date: days late, amount late, the flat 40 EUR
--   recovery indemnity (c. com. D441-5) and the late-payment interest (L441-10 II) a business customer owes;
--   shown and claiming nothing (claim_excluded_reason): consumers' invoices, debtors in collective proceedings
--   (L622-7), claims ended more than five years ago (L110-4); paid invoices apart (is_invoice_paid); the user's
--   claim status (to claim, claimed, waived) from their own file; a contractual rate below three times the legal
--   interest rate flagged (rate_flag, L441-10 II), with the interest at that floor beside it.
-- grain: [portal_id, invoice_id]
-- tests:
--   not_null: [as_of_date, due_date, days_late, amount_late, customer_type]
--   accepted_range: {days_late: {min: 1}, amount_late: {min: 0.01}}
-- columns:
--   as_of_date: "the invoice (due date: served, else emit + 30 days)"
--   invoice_id: "the late invoice"
--   reference: "its reference"
--   customer_id: "its customer"
--   customer_name: "the customer's name"
--   customer_type: "`business` or `consumer`: served, else inferred (a siret or a VAT number: business)"
--   customer_type_basis: "`served`, `siret`, `vat number`, `no siret nor vat number`"
--   is_customer_type_inferred: "the type was inferred"
--   emit_date: "emit date"
--   due_date: "due date: served, else emit + 30 days"
--   is_due_date_assumed: "the due date is the legal default"
--   paid_date: "the day the amount late reached 0 (NULL: still unpaid on D)"
--   is_paid_date_assumed: "assumed: closed as PAID with a residual, on its last change"
--   days_late: "(`paid_date`, else D) − `due_date`"
--   total_incl_tax: "the total"
--   credited_amount: "credit notes applied"
--   amount_late: "unpaid at the end of the due date (credit notes deducted)"
--   open_amount: "unpaid on D"
--   currency: "the invoice's currency"
--   is_invoice_paid: "the invoice is paid (only the penalties are owed)"
--   claim_status: >-
--     `to claim`, `claimed` or `waived`, from your own file (`INVOICING_CLAIM_STATUSES_PATH`, docs/settings.md),
--     kept across rebuilds
--   claim_status_date: "the date your file gives the status"
--   claim_status_note: "your file's note"
--   claim_excluded_reason: >-
--     `consumer`, `collective proceedings (L622-7)` (`INVOICING_COLLECTIVE_PROCEEDINGS`), `time-barred (L110-4)`
--     (paid more than five years before D): nothing claimed; `interest not converted to EUR`; else NULL
--   rate_basis: >-
--     the rate its interest uses: `legal: ECB + 10, L441-10 II`, `contractual`
--     (`INVOICING_PENALTY_RATES_BY_CUSTOMER`, `INVOICING_PENALTY_RATE_PERCENT`), `public buyer: R2192-31`
--     (`INVOICING_PUBLIC_BUYERS`)
--   flat_indemnity_eur: "40 for a claim the law allows, 0 otherwise (`claim_excluded_reason`)"
--   interest_amount: "interest in the invoice's currency (the sum of its lines in `late_payment_interest_periods`)"
--   is_interest_rate_known: "every line of the claim has a rate"
--   is_rate_table_behind: >-
--     a half-year of the claim starts after the day the rate table was last checked: interest NULL
--   interest_flag: >-
--     `interest_flag` says why the interest is unknown (`rate table behind`, `no rate for a half-year`)
--   interest_eur: "the interest in euros (NULL for another currency, or a half-year without a rate)"
--   is_rate_below_legal_floor: >-
--     a contractual rate below three times the legal interest rate of a half-year of the claim (L441-10 II); the
--     interest stays at the contractual rate, flagged
--   rate_flag: "why the rate is doubtful: below the legal floor, or a half-year's legal rate unknown (not checked)"
--   interest_amount_at_legal_floor: "the claim's interest at the legal floor, beside the contractual one"
--   interest_period_count: "number of interest lines"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- an invoice is late when money was still owed at the end of its due date: overdue on the report date, or paid
-- after its due date (marts.late_payment_balances, whose rules sql/README.md states).
-- days_late = (paid_date, else the report date) - due_date. amount_late = what was unpaid at the end of the due
-- date (credit notes deducted whatever their date); open_amount = what is still unpaid on the report date.
-- between professionals (customer_type business) the claim is:
--   - flat_indemnity_eur: 40 euros per late invoice (D441-5), in euros whatever the invoice's currency;
--   - interest: the sum of its lines in marts.late_payment_interest_periods (one per run of days at one amount and
--     one half-year's rate), in the invoice's currency; interest_eur is it for an invoice in euros, null otherwise
--     (not converted: the rate of which day would be a choice the law does not make; claim_excluded_reason says
--     so) and null when a half-year has no rate in the table (is_interest_rate_known false), which includes a
--     half-year starting after the day the table was last checked against the ecb (is_rate_table_behind).
-- consumer invoices (customer_type consumer: served, or inferred: intermediate.int_customer_types) stay in the mart
-- with claim_excluded_reason 'consumer' and 0 claimed: L441-10 and D441-5 apply between professionals only, and
-- the dashboard counts them beside the claims. so do, with 0 claimed:
--   - the invoices of a debtor in collective proceedings (the setting INVOICING_COLLECTIVE_PROCEEDINGS, customer
--     ids): 'collective proceedings (L622-7)': a safeguard, receivership or liquidation judgment forbids paying the
--     debts born before it, and L441-10 II bars penalties and the indemnity then;
--   - the claims that ended (invoice paid) more than five years before the report date: 'time-barred (L110-4)', the
--     five-year limitation between traders (an open invoice is never time-barred here: its claim runs on).
-- claim_status: what the user recorded for the claim (reference.claim_statuses, the file of the setting
-- INVOICING_CLAIM_STATUSES_PATH: claimed, waived), else 'to claim'; with its date and note. it survives every
-- rebuild because it lives in the user's file, not in the warehouse.
-- rate_flag: a contractual rate (INVOICING_PENALTY_RATE_PERCENT, INVOICING_PENALTY_RATES_BY_CUSTOMER) below three times
-- the legal interest rate of a half-year of the claim (reference.legal_interest_rates; L441-10 II's floor): the
-- interest stays at the contractual rate, flagged, with interest_amount_at_legal_floor (its lines at the floor)
-- beside it; or a half-year the legal table has no rate for: the rate is not checked, and the flag says so.
-- is_invoice_paid: the claim of an invoice already paid (its amount is settled; only the penalties are owed)
-- apart from those of open invoices: the dashboard shows both totals.
with balances as (
    select * from marts.late_payment_balances
),

periods as (
    select * from marts.late_payment_interest_periods
),

-- the first stretch of each invoice (from its due date) carries every invoice-level column: one row per invoice
late_invoices as (
    select
        as_of_date,
        portal_id,
        invoice_id,
        reference,
        customer_id,
        customer_name,
        customer_type,
        customer_type_basis,
        is_customer_type_inferred,
        emit_date,
        due_date,
        is_due_date_assumed,
        paid_date,
        is_paid_date_assumed,
        claim_end - due_date as days_late,
        total_incl_tax,
        credited_amount,
        amount_late_at_due as amount_late,
        open_amount,
        currency
    from balances
    where balance_from = due_date
),

interest as (
    select
        portal_id,
        invoice_id,
        sum(interest_amount) as interest_amount,
        count(*) as interest_period_count,
        bool_and(interest_rate_percent is not null) as is_interest_rate_known,
        -- one basis per invoice (its customer's): the rate the letter states
        min(rate_basis) as rate_basis,
        bool_or(is_rate_table_behind) as is_rate_table_behind,
        -- a contractual rate below 3 x the legal interest rate on a line, or a line whose floor is unknown
        bool_or(is_below_legal_floor) as is_rate_below_legal_floor,
        bool_or(is_below_legal_floor is null) as is_legal_floor_unknown,
        sum(coalesce(interest_amount_at_legal_floor, interest_amount)) as interest_amount_at_legal_floor
    from periods
    group by portal_id, invoice_id
),

-- whether the law lets the invoice's claim be made, and if not why (the first reason that holds)
claimable as (
    select
        portal_id,
        invoice_id,
        case
            when customer_type = 'consumer' then 'consumer'
            when list_contains(coalesce(getvariable('collective_proceedings'), []::varchar[]), customer_id)
                then 'collective proceedings (L622-7)'
            when paid_date < as_of_date - interval 5 year then 'time-barred (L110-4)'
            when currency <> 'EUR' then 'interest not converted to EUR'
        end as claim_excluded_reason,
        customer_type = 'business'
            and not list_contains(coalesce(getvariable('collective_proceedings'), []::varchar[]), customer_id)
            and not coalesce(paid_date < as_of_date - interval 5 year, false) as is_claimable
    from late_invoices
),

final as (
    select
        late_invoices.as_of_date,
        late_invoices.invoice_id,
        late_invoices.reference,
        late_invoices.customer_id,
        late_invoices.customer_name,
        late_invoices.customer_type,
        late_invoices.customer_type_basis,
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
        late_invoices.paid_date is not null as is_invoice_paid,
        coalesce(portal_statuses.status, any_portal_statuses.status, 'to claim') as claim_status,
        coalesce(portal_statuses.status_date, any_portal_statuses.status_date) as claim_status_date,
        coalesce(portal_statuses.note, any_portal_statuses.note) as claim_status_note,
        claimable.claim_excluded_reason,
        interest.rate_basis,
        cast(case when claimable.is_claimable then 40 else 0 end as decimal(18, 2)) as flat_indemnity_eur,
        case
            when not claimable.is_claimable then cast(0 as decimal(18, 2))
            when interest.is_interest_rate_known then interest.interest_amount
        end as interest_amount,
        coalesce(interest.is_interest_rate_known, true) as is_interest_rate_known,
        -- a half-year of the claim starts after the rate table was last checked: its interest is unknown
        coalesce(interest.is_rate_table_behind, false) as is_rate_table_behind,
        -- why the interest is unknown, in words the page and the exports show
        case
            when interest.is_rate_table_behind then 'rate table behind'
            when not interest.is_interest_rate_known then 'no rate for a half-year'
        end as interest_flag,
        case
            when not claimable.is_claimable then cast(0 as decimal(18, 2))
            when late_invoices.currency = 'EUR' and interest.is_interest_rate_known then interest.interest_amount
        end as interest_eur,
        -- the contractual rate checked against its floor (L441-10 II): the flag, and the interest at the floor
        coalesce(interest.is_rate_below_legal_floor, false) as is_rate_below_legal_floor,
        case
            when interest.is_rate_below_legal_floor
                then 'contractual rate below 3 x the legal interest rate (L441-10 II)'
            when interest.is_legal_floor_unknown then 'legal interest rate unknown: contractual rate not checked'
        end as rate_flag,
        case
            when claimable.is_claimable and interest.is_rate_below_legal_floor and interest.is_interest_rate_known
                then interest.interest_amount_at_legal_floor
        end as interest_amount_at_legal_floor,
        coalesce(interest.interest_period_count, 0) as interest_period_count,
        late_invoices.portal_id
    from late_invoices
    left join interest
        on interest.portal_id = late_invoices.portal_id and interest.invoice_id = late_invoices.invoice_id
    inner join claimable
        on claimable.portal_id = late_invoices.portal_id and claimable.invoice_id = late_invoices.invoice_id
    -- the user's line for this portal wins over one for any portal ('*')
    left join reference.claim_statuses as portal_statuses
        on portal_statuses.reference = late_invoices.reference and portal_statuses.portal_key = late_invoices.portal_id
    left join reference.claim_statuses as any_portal_statuses
        on any_portal_statuses.reference = late_invoices.reference and any_portal_statuses.portal_key = '*'
)

select * from final
