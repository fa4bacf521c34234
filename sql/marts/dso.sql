-- ---
-- description: >
--   days sales outstanding on the report date D (one row per portal). Headline `dso_days`, the sales method,
--   gross: open receivables incl. tax on D / invoices incl. tax emitted in the 90 days ending on D x 90 (the
--   accounting method of DSO, "méthode comptable"). `net_dso_days`: each customer's unapplied credit notes and
--   payments deducted up to what that customer owes (the rest, `credit_balances_owed`, is owed to the customer:
--   a credit balance, PCG account 419 "clients créditeurs", not a deduction from others), over sales net of the
--   window's credit notes. `count_back_dso_days`: the open receivables exhausted against each month's sales
--   going back from D ("méthode par épuisement du chiffre d'affaires"). `annual_dso_days_360`: the Banque de France's ratio
--   (Observatoire des délais de paiement, "délais clients" = customer receivables / annual turnover incl. tax x
--   360), receivables as a balance sheet shows them (net debit balances) over the 12 months' sales net of
--   credit notes, for the Benchmarks page.
-- grain: [portal_id]
-- tests:
--   not_null: [as_of_date]
-- columns:
--   as_of_date: "D; the window D − 89 .. D"
--   window_start: "D − 89, first day of the 90-day window"
--   window_end: "D, last day of the window"
--   open_receivables: "open amount of `marts.receivables`"
--   overdue_receivables: "its overdue part"
--   open_invoice_count: "open invoices"
--   unapplied_credit_notes: "credit notes not yet applied on D (`receivables_by_customer`)"
--   unapplied_payments: "payments not yet applied on D (`receivables_by_customer`)"
--   credit_deducted: "per customer, that credit up to what the customer owes"
--   credit_balances_owed: "the rest, owed to customers"
--   net_receivables: "`open_receivables` − `credit_deducted` (each customer's net debit balance)"
--   invoiced_last_90_days: >-
--     total incl. tax of the invoices emitted in the window (the receivables' definition of an invoice: deposits
--     in, credit notes and proformas out, paid or not)
--   invoice_count_last_90_days: "number of those invoices"
--   credit_notes_last_90_days: "credit notes emitted in the window, by their size"
--   credit_note_count_last_90_days: "number of those credit notes"
--   net_sales_last_90_days: "invoices less credit notes emitted in the 90 days ending on D"
--   net_sales_last_12_months: "invoices less credit notes emitted in the 12 months ending on D"
--   dso_days: >-
--     the headline: `open_receivables / invoiced_last_90_days × 90`; NULL when nothing was invoiced in the window
--   net_dso_days: "`net_receivables / net_sales_last_90_days × 90`; NULL when net sales are not positive"
--   count_back_dso_days: >-
--     count-back: receivables exhausted against each month's sales going back from D; NULL beyond 36 months
--   annual_dso_days_360: "the Banque de France's ratio: `net_receivables / net_sales_last_12_months × 360`"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- days sales outstanding on the report date D, one row per portal (docs/models.md, "DSO", states the sources):
--   dso_days (the headline, sales method, gross) = open receivables incl. tax on D
--       / invoices incl. tax emitted in the 90 days ending on D (D-89 to D) x 90
--   net_dso_days = (open receivables - each customer's unapplied credit notes and payments, capped at what that
--       customer owes) / (those invoices - the credit notes emitted in the window) x 90. A customer's credit
--       beyond what it owes is a debt owed *to* it (credit_balances_owed), never a deduction from what others owe.
--   count_back_dso_days = the open receivables exhausted against the sales of each month going back from D
--       (months ending on D, D - 1 month, ...): the days of the months wholly used, plus the last month's days
--       pro rata of its sales still needed. null when 36 months of sales do not exhaust them.
--   annual_dso_days_360 (the Banque de France's ratio, for comparison with its figures) = customer receivables
--       as a balance sheet shows them (each customer's net debit balance: net_receivables) / turnover incl. tax
--       of the 12 months ending on D, net of credit notes x 360.
-- open receivables: sum of marts.receivables.open_amount (already net of the credit notes applied to invoices).
-- sales: intermediate.int_invoices_as_of (deposits included, credit notes and proformas not, paid or not); a
-- credit note counts by its size whatever its sign, as receivables_by_customer counts it.
-- every ratio is null when its denominator is not positive, and rounded to one decimal (a day count, not money).
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
    select
        as_of_date,
        cast(as_of_date - interval 89 day as date) as window_start,
        cast(as_of_date - interval 1 year + interval 1 day as date) as year_start
    from report_date
),

sales as (
    select
        invoices.portal_id,
        coalesce(sum(invoices.amount_vat_net) filter (where invoices.emit_date >= window_bounds.window_start), 0)
            as invoiced_last_90_days,
        count(*) filter (where invoices.emit_date >= window_bounds.window_start) as invoice_count_last_90_days,
        coalesce(sum(invoices.amount_vat_net), 0) as invoiced_last_12_months
    from invoices
    cross join window_bounds
    where invoices.emit_date between window_bounds.year_start and window_bounds.as_of_date
    group by invoices.portal_id
),

-- a credit note is known by its subtype alone and counts by its size (receivables_by_customer's rule)
credit_notes_emitted as (
    select
        documents.portal_id,
        coalesce(sum(abs(documents.amount_vat_net)) filter (where documents.emit_date >= window_bounds.window_start), 0)
            as credit_notes_last_90_days,
        count(*) filter (where documents.emit_date >= window_bounds.window_start) as credit_note_count_last_90_days,
        coalesce(sum(abs(documents.amount_vat_net)), 0) as credit_notes_last_12_months
    from documents
    cross join window_bounds
    where documents.document_subtype = 'CREDIT_NOTE' and not documents.is_draft
        and documents.emit_date between window_bounds.year_start and window_bounds.as_of_date
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

-- each customer's credit (unapplied credit notes and payments) is deducted up to what that customer owes; the
-- rest is owed back to it
customer_credit as (
    select
        portal_id,
        sum(unapplied_credit_notes) as unapplied_credit_notes,
        sum(unapplied_payments) as unapplied_payments,
        sum(least(greatest(unapplied_credit_notes + unapplied_payments, 0), total_open)) as credit_deducted,
        sum(greatest(unapplied_credit_notes + unapplied_payments - total_open, 0)) as credit_balances_owed
    from receivables_by_customer
    group by portal_id
),

-- count-back: calendar months ending on D, D - 1 month, ... (36 at most: a bounded look-back)
count_back_months as (
    select
        month_index,
        cast(window_bounds.as_of_date - to_months(month_index) + interval 1 day as date) as month_start,
        cast(window_bounds.as_of_date - to_months(month_index - 1) as date) as month_end
    from window_bounds
    cross join range(1, 37) as months(month_index)
),

count_back_sales as (
    select
        portal_ids.portal_id,
        count_back_months.month_index,
        count_back_months.month_end - count_back_months.month_start + 1 as month_days,
        coalesce(sum(invoices.amount_vat_net), 0) as month_sales
    from (select distinct portal_id from invoices) as portal_ids
    cross join count_back_months
    left join invoices
        on invoices.portal_id = portal_ids.portal_id
        and invoices.emit_date between count_back_months.month_start and count_back_months.month_end
    group by all
),

count_back_running as (
    select
        portal_id,
        month_index,
        month_days,
        month_sales,
        sum(month_sales) over months_so_far as sales_to_month,
        sum(month_days) over months_so_far - month_days as days_before_month
    from count_back_sales
    window months_so_far as (partition by portal_id order by month_index rows unbounded preceding)
),

count_back as (
    select
        count_back_running.portal_id,
        -- the first month whose sales, added to the later months', cover the open receivables
        arg_min(
            count_back_running.days_before_month
            + (open_receivables.open_receivables - (count_back_running.sales_to_month - count_back_running.month_sales))
            / count_back_running.month_sales * count_back_running.month_days,
            count_back_running.month_index
        ) filter (where count_back_running.sales_to_month >= open_receivables.open_receivables
            and count_back_running.month_sales > 0) as count_back_days
    from count_back_running
    inner join open_receivables on open_receivables.portal_id = count_back_running.portal_id
    group by count_back_running.portal_id
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
        coalesce(customer_credit.unapplied_credit_notes, 0) as unapplied_credit_notes,
        coalesce(customer_credit.unapplied_payments, 0) as unapplied_payments,
        coalesce(customer_credit.credit_deducted, 0) as credit_deducted,
        coalesce(customer_credit.credit_balances_owed, 0) as credit_balances_owed,
        coalesce(open_receivables.open_receivables, 0) - coalesce(customer_credit.credit_deducted, 0)
            as net_receivables,
        coalesce(sales.invoiced_last_90_days, 0) as invoiced_last_90_days,
        coalesce(sales.invoice_count_last_90_days, 0) as invoice_count_last_90_days,
        coalesce(credit_notes_emitted.credit_notes_last_90_days, 0) as credit_notes_last_90_days,
        coalesce(credit_notes_emitted.credit_note_count_last_90_days, 0) as credit_note_count_last_90_days,
        coalesce(sales.invoiced_last_90_days, 0) - coalesce(credit_notes_emitted.credit_notes_last_90_days, 0)
            as net_sales_last_90_days,
        coalesce(sales.invoiced_last_12_months, 0) - coalesce(credit_notes_emitted.credit_notes_last_12_months, 0)
            as net_sales_last_12_months,
        case
            when coalesce(open_receivables.open_receivables, 0) = 0 then 0
            else count_back.count_back_days
        end as count_back_days,
        portal_ids.portal_id
    from portal_ids
    cross join window_bounds
    left join sales on sales.portal_id = portal_ids.portal_id
    left join credit_notes_emitted on credit_notes_emitted.portal_id = portal_ids.portal_id
    left join open_receivables on open_receivables.portal_id = portal_ids.portal_id
    left join customer_credit on customer_credit.portal_id = portal_ids.portal_id
    left join count_back on count_back.portal_id = portal_ids.portal_id
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
        unapplied_payments,
        credit_deducted,
        credit_balances_owed,
        net_receivables,
        invoiced_last_90_days,
        invoice_count_last_90_days,
        credit_notes_last_90_days,
        credit_note_count_last_90_days,
        net_sales_last_90_days,
        net_sales_last_12_months,
        case
            when invoiced_last_90_days > 0
                then cast(round(open_receivables / invoiced_last_90_days * 90, 1) as decimal(9, 1))
        end as dso_days,
        case
            when net_sales_last_90_days > 0
                then cast(round(net_receivables / net_sales_last_90_days * 90, 1) as decimal(9, 1))
        end as net_dso_days,
        cast(round(count_back_days, 1) as decimal(9, 1)) as count_back_dso_days,
        case
            when net_sales_last_12_months > 0
                then cast(round(net_receivables / net_sales_last_12_months * 360, 1) as decimal(9, 1))
        end as annual_dso_days_360,
        portal_id
    from figures
)

select * from final
