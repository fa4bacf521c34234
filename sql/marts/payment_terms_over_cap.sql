-- ---
-- description: >
--   customer invoices and supplier bills of the fiscal year ending on the report date whose payment term is
--   beyond the legal caps of c. com. L441-10 I (60 days after the invoice date, or 45 days end of month; 45 days
--   after issue for a periodic invoice), business customers only (the caps bind professionals). The API marks no
--   invoice as periodic: the setting INVOICING_PERIODIC_INVOICES names them by reference or reference prefix
--   (is_periodic, cap_rule); without it every invoice is judged by the general caps.
-- grain: [portal_id, side, document_id]
-- tests:
--   not_null: [as_of_date, side, document_id, emit_date, due_date, cap_date, days_beyond_cap]
--   accepted_range: {days_beyond_cap: {min: 1}}
-- columns:
--   as_of_date: "the report date D"
--   side: "`issued` (customer invoices) or `received` (supplier bills)"
--   document_id: "the customer invoice or supplier bill"
--   reference: "its reference"
--   counterparty_id: "the customer or supplier"
--   counterparty_name: "its name"
--   emit_date: "invoice date"
--   due_date: "due date"
--   term_days: "due date - invoice date"
--   cap_date: "the later of the two caps of L441-10 I (60 days after the invoice date; 45 days end of month)"
--   is_periodic: "a periodic invoice, named by INVOICING_PERIODIC_INVOICES (the API marks none)"
--   cap_rule: "the cap applied: 60 days or 45 days end of month, or 45 days after issue for a periodic invoice"
--   days_beyond_cap: "due date - cap date"
--   amount_incl_tax: "total incl. tax"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- L441-10 I: the agreed term may not exceed 60 days after the invoice's date; by way of exception, 45 days end of
-- month when the contract says so. the law does not say which reading of "45 days end of month" holds, and the
-- administration accepts both (45 days then the end of that month; the end of the month then 45 days), so a term
-- is flagged only when it is beyond all three: cap_date = the latest of emit + 60 days, the last day of the month
-- of emit + 45 days, and the last day of the emit month + 45 days. sector caps (transport, perishable food, ...)
-- are not known to the product and are not applied. the caps apply between professionals: customer invoices of
-- business customers only (intermediate.int_customer_types). periodic invoices (factures périodiques, invoices
-- under article 289 I 3 of the tax code): L441-10 I caps their term at 45 days after the invoice's date
-- (cap_date = emit + 45). nothing the api contract serves says an invoice is periodic (document subtypes: credit
-- notes, proformas, deposit and progress invoices; supplier documents' tags have no fields the contract shows), so
-- the setting INVOICING_PERIODIC_INVOICES (variables periodic_invoice_references, periodic_invoice_prefixes) lists
-- their references, exact or as a prefix, on either side; an invoice it does not list is judged by the general
-- caps, which cannot see a periodic invoice's term of 46 to 60 days.
-- documents: those issued in the fiscal year of marts.payment_terms_report (intermediate.int_fiscal_year: the
-- INVOICING_FISCAL_YEAR_START setting, else the twelve months ending on the report date), with a served due date (an assumed one, emit + 30, is never beyond the cap): customer invoices
-- (intermediate.int_invoices_as_of, side 'issued') and supplier bills (not credit notes, not refused, side
-- 'received').
with report_date as (
    select * from intermediate.int_fiscal_year
),

invoices as (
    select * from intermediate.int_invoices_as_of
),

customers as (
    select * from staging.stg_invoicing__customers
),

supplier_documents as (
    select * from intermediate.int_supplier_documents__status_as_of
),

suppliers as (
    select * from staging.stg_invoicing__suppliers
),

documents as (
    select
        invoices.portal_id,
        'issued' as side,
        invoices.document_id,
        invoices.reference,
        invoices.customer_id as counterparty_id,
        coalesce(customers.customer_name, invoices.to_name) as counterparty_name,
        invoices.emit_date,
        invoices.due_date,
        invoices.amount_vat_net as amount_incl_tax
    from invoices
    left join customers on customers.portal_id = invoices.portal_id and customers.customer_id = invoices.customer_id
    inner join intermediate.int_customer_types as customer_types
        on customer_types.portal_id = invoices.portal_id and customer_types.customer_id = invoices.customer_id
    -- the caps bind professionals: a consumer's terms are not capped by L441-10 I
    where not invoices.is_due_date_assumed and customer_types.customer_type = 'business'
    union all
    select
        supplier_documents.portal_id,
        'received',
        supplier_documents.supplier_document_id,
        supplier_documents.reference,
        supplier_documents.supplier_id,
        suppliers.supplier_name,
        supplier_documents.issue_date,
        supplier_documents.due_date,
        coalesce(supplier_documents.amount_vat, supplier_documents.amount + coalesce(supplier_documents.vat_amount, 0))
    from supplier_documents
    left join suppliers
        on suppliers.portal_id = supplier_documents.portal_id and suppliers.supplier_id = supplier_documents.supplier_id
    where not supplier_documents.is_credit_note and supplier_documents.status_as_of is distinct from 'refused'
        and not supplier_documents.is_due_date_assumed
),

periodic as (
    select
        *,
        coalesce(
            list_contains(getvariable('periodic_invoice_references'), reference)
            or list_bool_or(list_transform(
                getvariable('periodic_invoice_prefixes'), prefix -> starts_with(reference, prefix)
            )),
            false
        ) as is_periodic
    from documents
),

capped as (
    select
        documents.*,
        case
            when documents.is_periodic then documents.emit_date + 45
            else greatest(
                documents.emit_date + 60,
                last_day(documents.emit_date + 45),
                last_day(documents.emit_date) + 45
            )
        end as cap_date,
        case
            when documents.is_periodic then 'periodic invoice: 45 days after issue (L441-10 I)'
            else 'general: 60 days after issue or 45 days end of month (L441-10 I)'
        end as cap_rule
    from periodic as documents
    cross join report_date
    where documents.emit_date between report_date.fiscal_year_start and report_date.as_of_date
        and documents.due_date is not null
),

final as (
    select
        report_date.as_of_date,
        capped.side,
        capped.document_id,
        capped.reference,
        capped.counterparty_id,
        capped.counterparty_name,
        capped.emit_date,
        capped.due_date,
        capped.due_date - capped.emit_date as term_days,
        capped.cap_date,
        capped.is_periodic,
        capped.cap_rule,
        capped.due_date - capped.cap_date as days_beyond_cap,
        capped.amount_incl_tax,
        capped.portal_id
    from capped
    cross join report_date
    where capped.due_date > capped.cap_date
)

select * from final
