-- ---
-- description: >
--   How customers paid over the 365 days ending on D, one row per portal, for the dashboard's Benchmarks page.
-- grain: [portal_id]
-- tests:
--   not_null: [as_of_date, paid_invoice_count, late_invoice_count]
--   accepted_range: {late_share: {min: 0, max: 1}}
-- columns:
--   as_of_date: "the report date D"
--   window_start: "D − 364"
--   paid_invoice_count: "invoices paid in full in the window (dated by their last payment)"
--   late_invoice_count: "those paid after their due date"
--   late_share: "late_invoice_count / paid_invoice_count"
--   paid_amount: "total incl. tax of the invoices paid in the window"
--   average_days_late: "mean of max(0, paid date − due date) over every paid invoice, unweighted (on time counts 0)"
--   average_days_late_weighted: "weighted by total incl. tax"
--   average_days_late_when_late: "over the late ones only"
--   median_days_after_due: "median of paid date − due date"
--   dso_days: "`marts.dso`'s headline"
--   annual_dso_days_360: "`marts.dso`'s Banque de France ratio (the Benchmarks page's)"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- the portal's payment behaviour over the 365 days ending on the report date D (D - 364 to D), from the
-- invoices paid in full in that window (marts.payment_history: dated by their last payment;
-- invoices settled by credit notes alone are no payment and are left out). days late = max(0, paid date - due
-- date): an invoice paid on or before its due date is 0 days late.
--   average_days_late           = mean of days late over every paid invoice (on time counts 0), unweighted:
--                                 the figure the payment-behaviour studies the observatory quotes publish
--                                 ("retard moyen de paiement", per payment, not per euro);
--   average_days_late_weighted  = the same weighted by the invoice's total incl. tax (a late large invoice
--                                 weighs more: what the delay costs in cash);
--   average_days_late_when_late = mean days late of the invoices paid late only;
--   median_days_after_due       = median of paid date - due date (negative: paid early), all paid invoices.
-- rounded to one decimal (day counts); null when nothing was paid in the window (the row stays, counts 0).
-- dso_days: marts.dso's headline (sales method over 90 days, gross); annual_dso_days_360: marts.dso's
-- Banque de France ratio (customer receivables / annual turnover incl. tax x 360), the figure the observatory's
-- "délais clients" are computed by, so the Benchmarks page compares like with like. a portal with open receivables or
-- sales but no payment in the window has a row (counts 0, averages null), from marts.dso.
-- one row per portal_id.
with report_date as (
    select * from intermediate.int_report_date
),

paid_invoices as (
    select * from marts.payment_history
),

dso as (
    select * from marts.dso
),

in_window as (
    select
        paid_invoices.portal_id,
        paid_invoices.total_incl_tax,
        paid_invoices.days_after_due,
        greatest(paid_invoices.days_after_due, 0) as days_late
    from paid_invoices
    cross join report_date
    where paid_invoices.paid_date between report_date.as_of_date - 364 and report_date.as_of_date
),

per_portal as (
    select
        portal_id,
        count(*) as paid_invoice_count,
        count(*) filter (where days_late > 0) as late_invoice_count,
        sum(total_incl_tax) as paid_amount,
        avg(days_late) as average_days_late,
        sum(days_late * total_incl_tax) / nullif(sum(total_incl_tax), 0) as average_days_late_weighted,
        avg(days_late) filter (where days_late > 0) as average_days_late_when_late,
        median(days_after_due) as median_days_after_due
    from in_window
    group by portal_id
),

portal_ids as (
    select portal_id from per_portal
    union
    select portal_id from dso
),

final as (
    select
        report_date.as_of_date,
        cast(report_date.as_of_date - 364 as date) as window_start,
        cast(coalesce(per_portal.paid_invoice_count, 0) as bigint) as paid_invoice_count,
        cast(coalesce(per_portal.late_invoice_count, 0) as bigint) as late_invoice_count,
        cast(per_portal.late_invoice_count / per_portal.paid_invoice_count as decimal(5, 4)) as late_share,
        cast(coalesce(per_portal.paid_amount, 0) as decimal(18, 2)) as paid_amount,
        cast(round(per_portal.average_days_late, 1) as decimal(9, 1)) as average_days_late,
        cast(round(per_portal.average_days_late_weighted, 1) as decimal(9, 1)) as average_days_late_weighted,
        cast(round(per_portal.average_days_late_when_late, 1) as decimal(9, 1)) as average_days_late_when_late,
        cast(round(per_portal.median_days_after_due, 1) as decimal(9, 1)) as median_days_after_due,
        -- marts.dso's headline (sales method over 90 days) and its annual x 360 ratio, the observatory's method
        dso.dso_days,
        dso.annual_dso_days_360,
        portal_ids.portal_id
    from portal_ids
    cross join report_date
    left join per_portal on per_portal.portal_id = portal_ids.portal_id
    left join dso on dso.portal_id = portal_ids.portal_id
)

select * from final
