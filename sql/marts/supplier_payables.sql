-- ---
-- description: >
--   One row per supplier document owed on D, issued on or before D: a received bill is a liability whether its
--   status on D is `approved` (no payment declared), `toApprove` or `disputed` (`approval_state` says which;
--   refused and paid bills are not owed; sql/README.md, "Payables"). Credit notes count negative
--   in `amount_due` whatever sign the server gives them. Type and status spellings are compared by letters, case-
--   free (`creditNote`, `CREDIT_NOTE`); a document whose status on D cannot be known (changed after D, no dated
--   history, no payment date) is left out and `supplier_status_as_of_known` names it.
-- grain: [portal_id, supplier_document_id]
-- tests:
--   not_null: [as_of_date]
-- columns:
--   as_of_date: "the document (`invoice` or `creditNote`, as served)"
--   supplier_document_id: "the supplier document's id"
--   supplier_id: "the supplier's id"
--   supplier_name: "the supplier's name"
--   reference: "the document's reference"
--   document_type: "`invoice` or `creditNote`, as served"
--   issue_date: "issue date (Paris calendar)"
--   due_date: >-
--     due date (Paris calendar); a bill without a served due date is due 30 days after its issue date (L441-10 I)
--   is_due_date_assumed: "the due date is that legal default"
--   amount_excl_tax: "amount excl. tax as received (a credit note's by its size)"
--   amount_incl_tax: "amount incl. tax as received (a credit note's by its size)"
--   amount_due: >-
--     `amount_incl_tax`, negative for a credit note (0 without any amount: `payables_have_amount` names it)
--   approval_state: "`approved`, `awaiting_approval` (`toApprove`) or `disputed` on D"
--   currency: >-
--     as served, `EUR` when none is (spec: euros on creation); `payables_single_currency` (blocking) fails when
--     the payables mix currencies
--   days_until_due: "due date − D"
--   days_past_due: "D − due date"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
--   aging_bucket: "same buckets as receivables"
--   is_overdue: "overdue = due before D"
--   is_disputed: >-
--     a disputed bill is on hold: the cash outlook, the schedule's `overdue_amount` and the dashboard's Past due
--     leave it out
--   is_due_this_week: >-
--     due from D to the Sunday of D's week (Monday to Sunday), disputed bills included: the Payables page's "Due
--     this week" (`payables_summary.due_this_week` sums them)
-- ---
-- one row per supplier document owed on the report date, issued on or before it: a received bill is a
-- liability whether it is approved (no payment declared yet), awaiting approval (toApprove) or disputed;
-- approval_state says which. refused and paid documents are not owed. the status on a past date is
-- intermediate.int_supplier_documents__status_as_of's: a document whose status then is unknown is left
-- out, and the check supplier_status_as_of_known fails naming it. a credit note is known by its type and
-- counts by its size, negative in amount_due, whatever sign the server gives its amounts (the spec gives
-- none; the check supplier_credit_note_sign_consistent names mixed signs). a document without any amount
-- counts 0 and the check payables_have_amount names it.
-- a bill without a served due date is due 30 days after its issue date (c. com. L441-10 I, the legal default, as
-- on the customer side): is_due_date_assumed. is_disputed: a disputed bill is on hold; is_overdue and aging_bucket
-- still say its age, and the cash outlook, the schedule and the dashboard's "past due" keep it apart.
-- one row per (portal_id, supplier_document_id).
with report_date as (
    select * from intermediate.int_report_date
),

aging_buckets as (
    select * from intermediate.int_aging_buckets
),

status_on_date as (
    select * from intermediate.int_supplier_documents__status_as_of
),

-- the total incl. tax as served (sign included); amountVat may be missing on a received document: then
-- amount + vat, as the api derives it
served_totals as (
    select
        status_on_date.*,
        coalesce(status_on_date.amount_vat, status_on_date.amount + coalesce(status_on_date.vat_amount, 0))
            as served_amount_incl_tax
    from status_on_date
),

suppliers as (
    select * from staging.stg_invoicing__suppliers
),

payables as (
    select
        report_date.as_of_date,
        status_on_date.supplier_document_id,
        status_on_date.supplier_id,
        suppliers.supplier_name,
        status_on_date.reference,
        status_on_date.document_type,
        status_on_date.issue_date,
        status_on_date.due_date,
        status_on_date.is_due_date_assumed,
        case when status_on_date.is_credit_note then abs(status_on_date.amount) else status_on_date.amount end
            as amount_excl_tax,
        case when status_on_date.is_credit_note
            then abs(status_on_date.served_amount_incl_tax) else status_on_date.served_amount_incl_tax
        end as amount_incl_tax,
        -- a document without any amount still shows, counting 0 in the totals
        coalesce(
            case when status_on_date.is_credit_note
                then -abs(status_on_date.served_amount_incl_tax) else status_on_date.served_amount_incl_tax
            end,
            0
        ) as amount_due,
        case status_on_date.status_as_of
            when 'toapprove' then 'awaiting_approval'
            else status_on_date.status_as_of
        end as approval_state,
        status_on_date.currency,
        status_on_date.due_date - report_date.as_of_date as days_until_due,
        report_date.as_of_date - status_on_date.due_date as days_past_due,
        status_on_date.portal_id
    from served_totals as status_on_date
    cross join report_date
    left join suppliers
        on suppliers.portal_id = status_on_date.portal_id and suppliers.supplier_id = status_on_date.supplier_id
    where status_on_date.status_as_of in ('approved', 'toapprove', 'disputed')
        and coalesce(status_on_date.issue_date, report_date.as_of_date) <= report_date.as_of_date
),

final as (
    select
        payables.*,
        aging_buckets.aging_bucket,
        aging_buckets.is_overdue,
        payables.approval_state = 'disputed' as is_disputed,
        -- due from D to the sunday of D's week (date_trunc('week') is the monday): the Payables page's
        -- "due this week" list and tile (marts.payables_summary.due_this_week sums these rows)
        coalesce(
            payables.due_date between payables.as_of_date
                and cast(date_trunc('week', payables.as_of_date) + interval 6 day as date),
            false
        ) as is_due_this_week
    from payables
    asof inner join aging_buckets on coalesce(payables.days_past_due, 0) >= aging_buckets.min_days_past_due
)

select * from final
