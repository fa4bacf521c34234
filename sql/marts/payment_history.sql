-- ---
-- description: >
--   The payment history on D: every invoice paid in full on or before D (its payments and credit notes dated by D
--   cover it, or it is `PAID` by D), dated by its last payment; invoices settled by credit notes alone are left
--   out (no payment). What `expected_payments` and `payment_behaviour` learn from.
-- grain: [portal_id, invoice_id]
-- tests:
--   not_null: [as_of_date, paid_date, days_after_due]
-- columns:
--   as_of_date: "the report date D"
--   invoice_id: "the invoice"
--   customer_id: "its customer"
--   emit_date: "its emit date"
--   due_date: "its due date"
--   total_incl_tax: "its total incl. tax"
--   paid_by_payments: "payments dated by D"
--   paid_date: "the last one's date"
--   days_after_due: "`paid_date` − due date (negative: early)"
--   days_after_emit: "`paid_date` − emit date"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- the payment history the expected payment dates (marts.expected_payments) and the portal's lateness
-- (marts.payment_behaviour) learn from, as of the report date D: only what was paid on or before D counts.
-- an invoice (intermediate.int_invoices_as_of: emitted by D, with its served or legal-default due date) is paid
-- on D when the payments and credit notes dated by D cover its total incl. tax, or when it is PAID and its last
-- change came by D (receivables' rule: the application settled the rest). paid_date = the date of its last
-- payment (TRANSACTION usage) dated by D: the day the customer's money came, which is the behaviour to learn; a
-- credit note is the seller's decision, not the customer's payment, so an invoice settled by credit notes alone
-- (no payment) is no payment history and is left out. a partial payment counts once the invoice is paid in full
-- (its last payment dates it), never before.
-- days_after_due = paid_date - due_date (negative: paid early); days_after_emit = paid_date - emit_date.
-- an invoice with a total not above zero, or without a due date, is left out (nothing to learn from).
-- a table, not an intermediate view: marts.expected_payments and marts.payment_behaviour both read it, and an
-- analyst may (computed once per build: at 1,000,000 documents a view would run its aggregate three times).

with report_date as (
    select * from intermediate.int_report_date
),

invoices as (
    select * from intermediate.int_invoices_as_of
),

usages as (
    select * from intermediate.int_usages_as_of
),

settled_per_invoice as (
    select
        portal_id,
        invoice_id,
        coalesce(sum(amount) filter (where usage_type = 'TRANSACTION'), 0) as paid_by_payments,
        coalesce(sum(abs(amount)) filter (where usage_type = 'CREDIT_NOTE'), 0) as settled_by_credit_notes,
        max(usage_date) filter (where usage_type = 'TRANSACTION') as last_payment_date
    from usages
    group by portal_id, invoice_id
),

final as (
    select
        report_date.as_of_date,
        invoices.document_id as invoice_id,
        invoices.customer_id,
        invoices.emit_date,
        invoices.due_date,
        invoices.amount_vat_net as total_incl_tax,
        settled.paid_by_payments,
        settled.last_payment_date as paid_date,
        settled.last_payment_date - invoices.due_date as days_after_due,
        settled.last_payment_date - invoices.emit_date as days_after_emit,
        invoices.portal_id
    from invoices
    cross join report_date
    inner join settled_per_invoice as settled
        on settled.portal_id = invoices.portal_id and settled.invoice_id = invoices.document_id
    where settled.last_payment_date is not null
        and invoices.amount_vat_net > 0
        and invoices.due_date is not null
        and invoices.emit_date is not null
        and (
            settled.paid_by_payments + settled.settled_by_credit_notes >= invoices.amount_vat_net
            or (invoices.status = 'PAID' and invoices.last_updated_date <= report_date.as_of_date)
        )
)

select * from final
