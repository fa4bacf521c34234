-- days sales outstanding on the report date D, one row per portal, by the sales method over 90 days:
--   dso_days = open receivables on D / invoiced sales of the 90 days ending on D (D-89 to D) x 90
-- open receivables = sum of marts.receivables.open_amount (incl. tax, what customers owe on D);
-- invoiced sales = total incl. tax of the invoices emitted in the window (intermediate.int_invoices_as_of:
-- deposits included, credit notes and proformas not, paid or not). gross: credit notes do not lower it.
-- null when nothing was invoiced in the window. rounded to one decimal (a day count, not money).
-- one row per portal_id (a portal with neither open receivables nor sales in the window has no row).
with report_date as (
    select * from intermediate.int_report_date
),

invoices as (
    select * from intermediate.int_invoices_as_of
),

receivables as (
    select * from marts.receivables
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

open_receivables as (
    select
        portal_id,
        sum(open_amount) as open_receivables,
        coalesce(sum(open_amount) filter (where is_overdue), 0) as overdue_receivables,
        count(*) as open_invoice_count
    from receivables
    group by portal_id
),

portal_ids as (
    select portal_id from sales
    union
    select portal_id from open_receivables
),

final as (
    select
        window_bounds.as_of_date,
        window_bounds.window_start,
        window_bounds.as_of_date as window_end,
        coalesce(open_receivables.open_receivables, 0) as open_receivables,
        coalesce(open_receivables.overdue_receivables, 0) as overdue_receivables,
        coalesce(open_receivables.open_invoice_count, 0) as open_invoice_count,
        coalesce(sales.invoiced_last_90_days, 0) as invoiced_last_90_days,
        coalesce(sales.invoice_count_last_90_days, 0) as invoice_count_last_90_days,
        case
            when coalesce(sales.invoiced_last_90_days, 0) > 0
                then cast(round(
                    coalesce(open_receivables.open_receivables, 0) / sales.invoiced_last_90_days * 90, 1
                ) as decimal(9, 1))
        end as dso_days,
        portal_ids.portal_id
    from portal_ids
    cross join window_bounds
    left join sales on sales.portal_id = portal_ids.portal_id
    left join open_receivables on open_receivables.portal_id = portal_ids.portal_id
)

select * from final
