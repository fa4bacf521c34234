-- ---
-- description: >
--   days sales outstanding on the report date, by the sales method over 90 days, net of credit notes
--   (one row per portal).
-- grain: [portal_id]
-- tests:
--   not_null: [as_of_date]
-- ---
-- days sales outstanding on the report date D, one row per portal, by the sales method over 90 days, net of
-- customer credit notes on both sides:
--   dso_days = net receivables on D / net sales of the 90 days ending on D (D-89 to D) x 90
-- net receivables = open receivables (sum of marts.receivables.open_amount, incl. tax, what customers owe on
-- D, already net of the credit notes applied to invoices) - the credit notes not yet applied on D
-- (marts.receivables_by_customer.unapplied_credit_notes: customers will deduct them);
-- net sales = total incl. tax of the invoices emitted in the window (intermediate.int_invoices_as_of: deposits
-- included, credit notes and proformas not, paid or not) - the credit notes emitted in the window (by size,
-- whatever their sign, as receivables_by_customer counts them): what was really sold.
-- the gross figures stay beside them. null when net sales are not positive. rounded to one decimal (a day
-- count, not money).
-- one row per portal_id (a portal with neither open receivables nor sales in the window has no row).
with report_date as (
    select * from intermediate.int_report_date
),

invoices as (
    select * from intermediate.int_invoices_as_of
),

documents as (
    select * from intermediate.int_documents_emitted_as_of
),

receivables as (
    select * from marts.receivables
),

receivables_by_customer as (
    select * from marts.receivables_by_customer
),

window_bounds as (
    select as_of_date, cast(as_of_date - interval 89 day as date) as window_start from report_date
),

sales as (
    select
        invoices.portal_id,
        sum(invoices.amount_vat_net) as invoiced_last_90_days,
        count(*) as invoice_count_last_90_days
    from invoices
    cross join window_bounds
    where invoices.emit_date between window_bounds.window_start and window_bounds.as_of_date
    group by invoices.portal_id
),

-- a credit note is known by its subtype alone and counts by its size (receivables_by_customer's rule)
credit_notes_emitted as (
    select
        documents.portal_id,
        sum(abs(documents.amount_vat_net)) as credit_notes_last_90_days,
        count(*) as credit_note_count_last_90_days
    from documents
    cross join window_bounds
    where documents.document_subtype = 'CREDIT_NOTE' and not documents.is_draft
        and documents.emit_date between window_bounds.window_start and window_bounds.as_of_date
    group by documents.portal_id
),

open_receivables as (
    select
        portal_id,
        sum(open_amount) as open_receivables,
        coalesce(sum(open_amount) filter (where is_overdue), 0) as overdue_receivables,
        count(*) as open_invoice_count
    from receivables
    group by portal_id
),

unapplied_credit as (
    select portal_id, sum(unapplied_credit_notes) as unapplied_credit_notes
    from receivables_by_customer
    group by portal_id
),

portal_ids as (
    select portal_id from sales
    union
    select portal_id from open_receivables
),

figures as (
    select
        window_bounds.as_of_date,
        window_bounds.window_start,
        window_bounds.as_of_date as window_end,
        coalesce(open_receivables.open_receivables, 0) as open_receivables,
        coalesce(open_receivables.overdue_receivables, 0) as overdue_receivables,
        coalesce(open_receivables.open_invoice_count, 0) as open_invoice_count,
        coalesce(unapplied_credit.unapplied_credit_notes, 0) as unapplied_credit_notes,
        coalesce(open_receivables.open_receivables, 0) - coalesce(unapplied_credit.unapplied_credit_notes, 0)
            as net_receivables,
        coalesce(sales.invoiced_last_90_days, 0) as invoiced_last_90_days,
        coalesce(sales.invoice_count_last_90_days, 0) as invoice_count_last_90_days,
        coalesce(credit_notes_emitted.credit_notes_last_90_days, 0) as credit_notes_last_90_days,
        coalesce(credit_notes_emitted.credit_note_count_last_90_days, 0) as credit_note_count_last_90_days,
        coalesce(sales.invoiced_last_90_days, 0) - coalesce(credit_notes_emitted.credit_notes_last_90_days, 0)
            as net_sales_last_90_days,
        portal_ids.portal_id
    from portal_ids
    cross join window_bounds
    left join sales on sales.portal_id = portal_ids.portal_id
    left join credit_notes_emitted on credit_notes_emitted.portal_id = portal_ids.portal_id
    left join open_receivables on open_receivables.portal_id = portal_ids.portal_id
    left join unapplied_credit on unapplied_credit.portal_id = portal_ids.portal_id
),

final as (
    select
        as_of_date,
        window_start,
        window_end,
        open_receivables,
        overdue_receivables,
        open_invoice_count,
        unapplied_credit_notes,
        net_receivables,
        invoiced_last_90_days,
        invoice_count_last_90_days,
        credit_notes_last_90_days,
        credit_note_count_last_90_days,
        net_sales_last_90_days,
        case
            when net_sales_last_90_days > 0
                then cast(round(net_receivables / net_sales_last_90_days * 90, 1) as decimal(9, 1))
        end as dso_days,
        portal_id
    from figures
)

select * from final
