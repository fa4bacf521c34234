-- the invoices that count on the report date: type INVOICE, any subtype but the contract's CREDIT_NOTE and
-- PROFORMA (deposit and progress invoices count whatever their spelling), live version (not CANCELED), not a
-- draft, emitted on or before the report date. marts.receivables (what is owed) and marts.dso (what was
-- invoiced) read the same set.

-- materialized: view
with documents as (
    select * from intermediate.int_documents_emitted_as_of
),

final as (
    select *
    from documents
    where document_type = 'INVOICE'
        and coalesce(document_subtype, 'INVOICE') not in ('CREDIT_NOTE', 'PROFORMA')
        and status in ('VALIDATED', 'PAID')
)

select * from final
