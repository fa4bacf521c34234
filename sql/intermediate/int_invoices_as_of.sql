-- ---
-- description: >
--   the invoices that count on the report date, with their due date (served or the legal default,
--   is_due_date_assumed).
-- materialized: view
-- grain: [portal_id, document_id]
-- ---
-- the invoices that count on the report date: type INVOICE, any subtype but the contract's CREDIT_NOTE and
-- PROFORMA (deposit and progress invoices count whatever their spelling), live version (not CANCELED), not a
-- draft, emitted on or before the report date. marts.receivables (what is owed) and marts.dso (what was
-- invoiced) read the same set.
-- due_date: the invoice's dueDate, or, when the server did not send one, the legal default of French commercial
-- code L441-10 (30 days after delivery, for which the emit date stands); is_due_date_assumed flags such an
-- invoice, so that every figure resting on it (aging, overdue, overdue customers, cash outlook) can say so.
-- an invoice with neither date keeps a null due date (not yet due: it has no term to run from).

with documents as (
    select * from intermediate.int_documents_emitted_as_of
),

final as (
    select
        * replace (coalesce(due_date, emit_date + 30) as due_date),
        due_date is null and emit_date is not null as is_due_date_assumed
    from documents
    where document_type = 'INVOICE'
        and coalesce(document_subtype, 'INVOICE') not in ('CREDIT_NOTE', 'PROFORMA')
        and status in ('VALIDATED', 'PAID')
)

select * from final
