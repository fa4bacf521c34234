-- ---
-- description: >
--   One row per invoice with money owed on D: type `INVOICE`, any subtype but `CREDIT_NOTE` and `PROFORMA`
--   (deposit and progress invoices count whatever their spelling; `document_subtypes_known` warns about a subtype
--   the product does not know), live version (not `CANCELED`), not a draft, status `VALIDATED` or `PAID`, emitted
--   on or before D, open amount > 0.
-- grain: [portal_id, invoice_id]
-- tests:
--   not_null: [as_of_date]
-- columns:
--   as_of_date: "the report date D"
--   invoice_id: "the invoice's id"
--   reference: "the invoice's reference (number)"
--   is_deposit: "a deposit or progress invoice"
--   customer_id: "the customer's id"
--   customer_name: "the customer's name from the customer record, else the invoice's `to.name`"
--   emit_date: "emit date (Paris calendar)"
--   due_date: >-
--     due date (Paris calendar); without a served `dueDate`, the legal default `emit_date` + 30 days (C. com.
--     L441-10)
--   total_incl_tax: "`amountVatNet`: total incl. tax after the global discount"
--   paid_by_payments: "usages of type `TRANSACTION` dated on or before D (those left on a replaced version included)"
--   settled_by_credit_notes: >-
--     usages of type `CREDIT_NOTE` dated on or before D, by size (a server may serve them negative)
--   open_amount: >-
--     total − paid − settled, 0 once the invoice is `PAID` (a residual is a write-off, named by
--     `paid_invoices_settled`); equals the API's `remaining` when D is today and the invoice is not `PAID`
--   days_past_due: "D − due date"
--   aging_bucket: "`current`, `1-30`, `31-60`, `61-90` or `90+` days past due"
--   is_overdue: "due before D"
--   next_reminder_template: >-
--     what POST /documents/{id}/messages would pick on D: `STANDARD` (due > 7 days away or no due date),
--     `PRELAUNCH` (due in 0-7 days), `RELAUNCH1` (overdue), `RELAUNCH2` (overdue and a `RELAUNCH1`/`RELAUNCH2`
--     mail sent on or before D); NULL = unknown: overdue, and the server did not serve the invoice's `messages`
--     (the check `fields_served` warns)
--   is_due_date_assumed: >-
--     true when the server sent no `dueDate` and `due_date` is the legal default (the dashboard shows how much
--     rests on it)
--   currency: >-
--     the invoice's `currency` as served, `EUR` when none is (`receivables_single_currency`, blocking, fails when
--     a portal mixes currencies)
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- one row per invoice with money still owed on the report date (as_of_date, default today in the portal's
-- time zone). an invoice: intermediate.int_invoices_as_of (the check document_subtypes_known names subtypes
-- the product does not know).
-- payments and credit notes settle by their absolute amount, whatever sign the server gives credit notes.
-- next_reminder_template is null when it cannot be known: the invoice is overdue and the server did not
-- serve its `messages` history (whether a RELAUNCH went out decides between RELAUNCH1 and RELAUNCH2).
-- invoices of deleted customers (soft-deleted, hidden from lists, or gone: a tombstone row the sync loads,
-- pipelines/invoicing/load/parents.py) are still owed and counted; the check deleted_customers_owed names them.
-- due_date: served, else the legal default emit date + 30 days, flagged is_due_date_assumed
-- (intermediate.int_invoices_as_of).
-- open amount = total incl. tax after global discount - payments and credit notes dated on or before the
-- report date; 0 once the invoice is PAID (a residual is a write-off, named by the check
-- paid_invoices_settled). as of today this is the api's `remaining` (or 0 when PAID).
-- one row per (portal_id, invoice_id): every join is within one portal, whose ids may collide with another's.
with report_date as (
    select * from intermediate.int_report_date
),

invoices as (
    select * from intermediate.int_invoices_as_of
),

usages as (
    select * from intermediate.int_usages_as_of
),

aging_buckets as (
    select * from intermediate.int_aging_buckets
),

customers as (
    select * from staging.stg_invoicing__customers
),

messages as (
    select * from staging.stg_invoicing__document_messages
),

settled_per_invoice as (
    select
        portal_id,
        invoice_id,
        coalesce(sum(amount) filter (where usage_type = 'TRANSACTION'), 0) as paid_by_payments,
        coalesce(sum(abs(amount)) filter (where usage_type = 'CREDIT_NOTE'), 0) as settled_by_credit_notes
    from usages
    group by portal_id, invoice_id
),

-- reminder rule 4: RELAUNCH2 once a RELAUNCH1 or RELAUNCH2 reminder went out on or before the report date
reminded_invoices as (
    select distinct messages.portal_id, messages.document_id
    from messages
    cross join report_date
    where messages.template in ('RELAUNCH1', 'RELAUNCH2')
        and messages.sent_date <= report_date.as_of_date
),

open_invoices as (
    select
        report_date.as_of_date,
        invoices.portal_id,
        invoices.document_id as invoice_id,
        invoices.reference,
        coalesce(invoices.document_subtype = 'DEPOSIT', false) as is_deposit,
        invoices.customer_id,
        -- a customer the api answered as gone (a tombstone row, no name of its own): still owed, named so
        case
            when customers.is_deleted and customers.customer_name is null
                then 'deleted customer ' || invoices.customer_id
            else coalesce(customers.customer_name, invoices.to_name)
        end as customer_name,
        invoices.emit_date,
        invoices.due_date,
        invoices.is_due_date_assumed,
        invoices.amount_vat_net as total_incl_tax,
        coalesce(settled.paid_by_payments, 0) as paid_by_payments,
        coalesce(settled.settled_by_credit_notes, 0) as settled_by_credit_notes,
        -- status PAID closes the invoice: what its usages leave is a write-off (bank fees, rounding, a loss)
        -- the application settled, not money owed. it was PAID on D when its last change came on or before D;
        -- otherwise it may have been closed after D, and D keeps what the usages dated by D leave open
        case
            when invoices.status = 'PAID' and invoices.last_updated_date <= report_date.as_of_date then 0
            else invoices.amount_vat_net
                - coalesce(settled.paid_by_payments, 0)
                - coalesce(settled.settled_by_credit_notes, 0)
        end as open_amount,
        report_date.as_of_date - invoices.due_date as days_past_due,
        invoices.currency,
        -- unknown (null) when the history was not served: no reminder seen is then no evidence of none
        case
            when reminded_invoices.document_id is not null then true
            when invoices.messages_served then false
        end as has_reminder
    from invoices
    cross join report_date
    left join settled_per_invoice as settled
        on settled.portal_id = invoices.portal_id and settled.invoice_id = invoices.document_id
    left join customers on customers.portal_id = invoices.portal_id and customers.customer_id = invoices.customer_id
    left join reminded_invoices
        on reminded_invoices.portal_id = invoices.portal_id and reminded_invoices.document_id = invoices.document_id
),

final as (
    select
        open_invoices.as_of_date,
        open_invoices.invoice_id,
        open_invoices.reference,
        open_invoices.is_deposit,
        open_invoices.customer_id,
        open_invoices.customer_name,
        open_invoices.emit_date,
        open_invoices.due_date,
        open_invoices.total_incl_tax,
        open_invoices.paid_by_payments,
        open_invoices.settled_by_credit_notes,
        open_invoices.open_amount,
        open_invoices.days_past_due,
        aging_buckets.aging_bucket,
        aging_buckets.is_overdue,
        -- the template POST /documents/{id}/messages would pick by default on the report date
        case
            when aging_buckets.is_overdue and open_invoices.has_reminder then 'RELAUNCH2'
            when aging_buckets.is_overdue and open_invoices.has_reminder is null then null
            when aging_buckets.is_overdue then 'RELAUNCH1'
            when open_invoices.days_past_due >= -7 then 'PRELAUNCH'
            else 'STANDARD'
        end as next_reminder_template,
        -- true: due_date is the legal default (emit date + 30 days), the server sent none
        open_invoices.is_due_date_assumed,
        open_invoices.currency,
        -- last, so that the columns before it keep their places
        open_invoices.portal_id
    from open_invoices
    asof inner join aging_buckets on coalesce(open_invoices.days_past_due, 0) >= aging_buckets.min_days_past_due
    where open_invoices.open_amount > 0
)

select * from final
