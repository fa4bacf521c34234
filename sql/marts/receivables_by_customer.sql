-- ---
-- description: >
--   One row per customer who owes something on D or holds unapplied money (a customer absent from the table owes
--   0). `total_open` equals the API's customer `dueAmount` when D is today. Unapplied money is shown beside
--   `total_open`, never subtracted from it (the API's `dueAmount` does not subtract it either); the net position
--   is `total_open - unapplied_payments - unapplied_credit_notes`.
-- grain: [portal_id, customer_id]
-- tests:
--   not_null: [as_of_date]
-- columns:
--   as_of_date: >-
--     the customer; `is_deleted`: soft-deleted upstream (`deleted`) or gone (`_deleted_at`): its invoices are
--     still owed
--   customer_id: "the customer's id"
--   customer_name: "the customer's name"
--   customer_reference: "the customer's reference"
--   is_deleted: "soft-deleted upstream (`deleted`) or gone (`_deleted_at`): its invoices are still owed"
--   open_current: "open amount not yet due"
--   open_1_30: "open amount 1-30 days past due"
--   open_31_60: "open amount 31-60 days past due"
--   open_61_90: "open amount 61-90 days past due"
--   open_90_plus: "open amount more than 90 days past due"
--   total_open: "sum of the buckets"
--   overdue_amount: "open amount of the overdue invoices (all buckets but `current`)"
--   overdue_invoice_count: "overdue invoices"
--   open_invoice_count: "open invoices"
--   oldest_due_date: "earliest due date of the open invoices"
--   last_payment_date: "latest payment (transaction with amount > 0) dated on or before D"
--   unapplied_payments: >-
--     Σ over payments dated on or before D of amount − used on or before D, less the refunds of payments:
--     negative transactions dated on or before D that name no credit note, and any `refundedAmount` no negative
--     transaction shows (docs/contract.md, "Refunds")
--   unapplied_credit_notes: >-
--     Σ over credit notes (subtype `CREDIT_NOTE`) emitted on or before D of amount − applied on or before D −
--     paid back (refunds naming it, dated on or before D; else its `totalPayments` beyond its usages), by size
--     whatever their sign (free credit notes included)
--   currency: "the customer's invoices' (else payments') currency, `EUR` when none is served"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- one row per customer who owes money or holds unapplied money on the report date.
-- total_open equals the api's customer `dueAmount` (sum of `remaining` of open invoices) as of today.
-- unapplied payments and credit notes are shown beside it, not subtracted from it.
-- one row per (portal_id, customer_id).
with report_date as (
    select * from intermediate.int_report_date
),

receivables as (
    select * from marts.receivables
),

customers as (
    select * from staging.stg_invoicing__customers
),

documents as (
    select * from intermediate.int_documents_emitted_as_of
),

transactions as (
    select * from staging.stg_invoicing__transactions
),

usages as (
    select * from intermediate.int_usages_as_of
),

open_per_customer as (
    select
        portal_id,
        customer_id,
        sum(open_amount) filter (where aging_bucket = 'current') as open_current,
        sum(open_amount) filter (where aging_bucket = '1-30') as open_1_30,
        sum(open_amount) filter (where aging_bucket = '31-60') as open_31_60,
        sum(open_amount) filter (where aging_bucket = '61-90') as open_61_90,
        sum(open_amount) filter (where aging_bucket = '90+') as open_90_plus,
        sum(open_amount) as total_open,
        sum(open_amount) filter (where is_overdue) as overdue_amount,
        count(*) filter (where is_overdue) as overdue_invoice_count,
        count(*) as open_invoice_count,
        min(due_date) as oldest_due_date,
        min(currency) as currency
    from receivables
    group by portal_id, customer_id
),

-- what each payment (TRANSACTION) or credit note (CREDIT_NOTE) paid on invoices up to the report date
used_per_source as (
    select
        portal_id,
        usage_type,
        case usage_type when 'TRANSACTION' then transaction_id else credit_note_id end as source_id,
        -- a credit note's usages may be served negative: what it settled is their size
        sum(case usage_type when 'CREDIT_NOTE' then abs(amount) else amount end) as used
    from usages
    group by all
),

-- credit note remainder: amount incl. tax - what was applied to invoices on or before the report date.
-- a credit note is known by its subtype alone (the contract's), and counts by its size whatever its sign.
credit_notes as (
    select
        portal_id,
        document_id,
        customer_id,
        abs(amount_vat_net) as amount_vat_net,
        abs(coalesce(api_total_payments, 0)) as api_total_payments
    from documents
    where document_subtype = 'CREDIT_NOTE' and not is_draft
),

-- refunds (docs/contract.md, `transactions.refunds`): transactions whose amount is negative, by their size.
-- one naming a credit note by documentId pays that credit note back; any other pays back payments.
refunds as (
    select
        transactions.portal_id,
        transactions.customer_id,
        transactions.payment_date,
        -transactions.amount as refunded,
        credit_notes.document_id as credit_note_id
    from transactions
    left join credit_notes
        on credit_notes.portal_id = transactions.portal_id
        and credit_notes.document_id = transactions.first_invoice_id
    where transactions.amount < 0
),

credit_note_refunds_linked as (
    select
        refunds.portal_id,
        refunds.credit_note_id,
        coalesce(sum(refunds.refunded) filter (where refunds.payment_date <= report_date.as_of_date), 0)
            as refunded
    from refunds
    cross join report_date
    where refunds.credit_note_id is not null
    group by all
),

credit_note_used_ever as (
    select portal_id, credit_note_id, sum(abs(amount)) as used
    from staging.stg_invoicing__transaction_usages
    where usage_type = 'CREDIT_NOTE'
    group by all
),

-- a credit note paid back by a refund that does not name it (no documentId served): its totalPayments
-- beyond its usages. undated, so counted on every report date (docs/contract.md)
credit_note_refunds_unlinked as (
    select
        credit_notes.portal_id,
        credit_notes.document_id,
        credit_notes.customer_id,
        greatest(credit_notes.api_total_payments - coalesce(used_ever.used, 0), 0) as refunded
    from credit_notes
    left join credit_note_used_ever as used_ever
        on used_ever.portal_id = credit_notes.portal_id and used_ever.credit_note_id = credit_notes.document_id
    where not exists (
        select 1 from credit_note_refunds_linked as linked
        where linked.portal_id = credit_notes.portal_id and linked.credit_note_id = credit_notes.document_id
    )
),

unapplied_credit_per_customer as (
    select
        credit_notes.portal_id,
        credit_notes.customer_id,
        sum(
            credit_notes.amount_vat_net - coalesce(applied.used, 0) - coalesce(linked.refunded, 0)
            - coalesce(unlinked.refunded, 0)
        ) as unapplied_credit_notes,
        sum(coalesce(unlinked.refunded, 0)) as refunded_without_link
    from credit_notes
    left join used_per_source as applied
        on applied.portal_id = credit_notes.portal_id
        and applied.usage_type = 'CREDIT_NOTE' and applied.source_id = credit_notes.document_id
    left join credit_note_refunds_linked as linked
        on linked.portal_id = credit_notes.portal_id and linked.credit_note_id = credit_notes.document_id
    left join credit_note_refunds_unlinked as unlinked
        on unlinked.portal_id = credit_notes.portal_id and unlinked.document_id = credit_notes.document_id
    group by credit_notes.portal_id, credit_notes.customer_id
),

-- payments received on or before the report date (negative amounts are refunds, not payments)
payments as (
    select transactions.*
    from transactions
    cross join report_date
    where transactions.amount > 0 and transactions.payment_date <= report_date.as_of_date
),

payments_gross as (
    select
        payments.portal_id,
        payments.customer_id,
        sum(payments.amount - coalesce(used.used, 0)) as unused,
        sum(payments.refunded_amount) as refunded_amount,
        min(payments.currency) as currency,
        max(payments.payment_date) as last_payment_date
    from payments
    left join used_per_source as used
        on used.portal_id = payments.portal_id
        and used.usage_type = 'TRANSACTION' and used.source_id = payments.transaction_id
    group by payments.portal_id, payments.customer_id
),

refunds_per_customer as (
    select
        refunds.portal_id,
        refunds.customer_id,
        coalesce(sum(refunds.refunded) filter (where refunds.payment_date <= report_date.as_of_date), 0)
            as refunded_by_date,
        sum(refunds.refunded) as refunded_ever
    from refunds
    cross join report_date
    where refunds.credit_note_id is null
    group by all
),

-- what was paid back out of payments: the negative transactions that name no credit note (dated), less the
-- credit notes known to be paid back without a link, plus any `refundedAmount` no negative transaction shows
payments_per_customer as (
    select
        keys.portal_id,
        keys.customer_id,
        coalesce(gross.unused, 0)
        - greatest(coalesce(refunds.refunded_by_date, 0) - coalesce(credit.refunded_without_link, 0), 0)
        - greatest(
            coalesce(gross.refunded_amount, 0)
            - greatest(coalesce(refunds.refunded_ever, 0) - coalesce(credit.refunded_without_link, 0), 0),
            0
        ) as unapplied_payments,
        gross.last_payment_date,
        gross.currency
    from (
        select portal_id, customer_id from payments_gross
        union
        select portal_id, customer_id from refunds_per_customer
    ) as keys
    left join payments_gross as gross
        on gross.portal_id = keys.portal_id and gross.customer_id = keys.customer_id
    left join refunds_per_customer as refunds
        on refunds.portal_id = keys.portal_id and refunds.customer_id = keys.customer_id
    left join unapplied_credit_per_customer as credit
        on credit.portal_id = keys.portal_id and credit.customer_id = keys.customer_id
),

customer_ids as (
    select portal_id, customer_id from open_per_customer
    union
    select portal_id, customer_id from unapplied_credit_per_customer where unapplied_credit_notes <> 0
    union
    select portal_id, customer_id from payments_per_customer where unapplied_payments <> 0
),

final as (
    select
        report_date.as_of_date,
        customer_ids.customer_id,
        case
            when customers.is_deleted and customers.customer_name is null
                then 'deleted customer ' || customer_ids.customer_id
            else customers.customer_name
        end as customer_name,
        customers.customer_reference,
        coalesce(customers.is_deleted, false) as is_deleted,
        coalesce(open.open_current, 0) as open_current,
        coalesce(open.open_1_30, 0) as open_1_30,
        coalesce(open.open_31_60, 0) as open_31_60,
        coalesce(open.open_61_90, 0) as open_61_90,
        coalesce(open.open_90_plus, 0) as open_90_plus,
        coalesce(open.total_open, 0) as total_open,
        coalesce(open.overdue_amount, 0) as overdue_amount,
        coalesce(open.overdue_invoice_count, 0) as overdue_invoice_count,
        coalesce(open.open_invoice_count, 0) as open_invoice_count,
        open.oldest_due_date,
        payments_per_customer.last_payment_date,
        coalesce(payments_per_customer.unapplied_payments, 0) as unapplied_payments,
        coalesce(unapplied_credit_per_customer.unapplied_credit_notes, 0) as unapplied_credit_notes,
        -- one currency per portal (receivables_single_currency blocks a mix); euros when nothing says
        coalesce(open.currency, payments_per_customer.currency, 'EUR') as currency,
        customer_ids.portal_id
    from customer_ids
    cross join report_date
    left join open_per_customer as open
        on open.portal_id = customer_ids.portal_id and open.customer_id = customer_ids.customer_id
    left join customers
        on customers.portal_id = customer_ids.portal_id and customers.customer_id = customer_ids.customer_id
    left join payments_per_customer
        on payments_per_customer.portal_id = customer_ids.portal_id
        and payments_per_customer.customer_id = customer_ids.customer_id
    left join unapplied_credit_per_customer
        on unapplied_credit_per_customer.portal_id = customer_ids.portal_id
        and unapplied_credit_per_customer.customer_id = customer_ids.customer_id
)

select * from final
