-- ---
-- description: >
--   every invoice late on the report date (overdue, or paid after its due date), with the amount late from each
--   date on: at the due date, then after each late payment; the customer's type (business or consumer).
-- grain: [portal_id, invoice_id, balance_from]
-- tests:
--   not_null: [as_of_date, due_date, balance_until, amount_late, customer_type]
-- columns:
--   as_of_date: "the report date D"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
--   invoice_id: "the late invoice"
--   reference: "its reference"
--   customer_id: "its customer"
--   emit_date: "emit date (Paris calendar)"
--   due_date: "due date: served, else emit date + 30 days (L441-10)"
--   is_due_date_assumed: "the due date is the legal default"
--   currency: "the invoice's currency as served, `EUR` when none is"
--   total_incl_tax: "total incl. tax after the global discount"
--   amount_late_at_due: >-
--     unpaid at the end of the due date: total - payments dated by then - every credit note applied by D
--   credited_amount: "credit notes applied to the invoice by D"
--   closed_date: "the day the invoice was closed as PAID, if it was"
--   paid_date: "the day the amount late reached 0 (NULL: unpaid on D)"
--   is_paid_date_assumed: "closed as PAID with a residual: dated on its last change"
--   open_amount: "unpaid on D"
--   claim_end: "the claim's last day: paid_date, else D"
--   customer_name: "the customer's name"
--   customer_type: "`business` or `consumer` (served, else inferred)"
--   customer_type_basis: "`served`, `siret`, `vat number` or `no siret nor vat number`"
--   is_customer_type_inferred: "the type was inferred"
--   balance_from: "start of the stretch: the due date, then each late payment's date"
--   balance_until: "end of the stretch (included): the next payment's date, else claim_end"
--   amount_late: "the amount late over the stretch"
-- ---
-- a table, not an intermediate view: both marts.late_payment_claims and marts.late_payment_interest_periods read it,
-- and the invoices and usages as of the report date it starts from are the costly part of the build.
-- the amounts the late-payment claims (c. com. L441-10, D441-5) run on, one row per stretch of days at one amount
-- late: from balance_from (the due date, then each late payment's date) to balance_until (the next payment's
-- date, else the end of the claim). a stretch covers the days after balance_from up to and including
-- balance_until, so an invoice paid p days after its due date owes p days of interest.
-- rules (sql/README.md, "Late-payment claims"):
--   - amount late at the due date = total incl. tax - payments dated on or before the due date - every credit
--     note applied to it by the report date, whatever its date (a credit note cancels part of the invoice: that
--     part was never owed);
--   - a payment after the due date lowers the amount late from its date on (partial payments included);
--   - the claim ends on the day the amount late reaches 0 (paid_date), else on the report date; an invoice PAID
--     with a residual its usages do not cover (a write-off) ends on its last change (lastUpdate), the only date
--     that bounds when it was closed (is_paid_date_assumed);
--   - the due date is never moved, not even off a weekend or a holiday.
-- customer_type: intermediate.int_customer_types (the served `type`, else business when the customer has a siret
-- or a vat number, otherwise consumer; customer_type_basis says which, is_customer_type_inferred when not served).
with report_date as (
    select * from intermediate.int_report_date
),

invoices as (
    select * from intermediate.int_invoices_as_of
),

usages as (
    select * from intermediate.int_usages_as_of
),

customers as (
    select * from staging.stg_invoicing__customers
),

settlements as (
    select
        portal_id,
        invoice_id,
        usage_date,
        usage_type,
        -- credit notes settle by their size, whatever sign the server gives them (as marts.receivables)
        case when usage_type = 'CREDIT_NOTE' then abs(amount) else amount end as amount
    from usages
),

settled_by_due_date as (
    select
        invoices.portal_id,
        invoices.document_id as invoice_id,
        coalesce(sum(settlements.amount) filter (
            where settlements.usage_type = 'CREDIT_NOTE' or settlements.usage_date <= invoices.due_date
        ), 0) as settled_amount,
        coalesce(sum(settlements.amount) filter (where settlements.usage_type = 'CREDIT_NOTE'), 0)
            as credited_amount
    from invoices
    inner join settlements
        on settlements.portal_id = invoices.portal_id and settlements.invoice_id = invoices.document_id
    group by invoices.portal_id, invoices.document_id
),

late_invoices as (
    select
        report_date.as_of_date,
        invoices.portal_id,
        invoices.document_id as invoice_id,
        invoices.reference,
        invoices.customer_id,
        invoices.emit_date,
        invoices.due_date,
        invoices.is_due_date_assumed,
        invoices.currency,
        invoices.amount_vat_net as total_incl_tax,
        invoices.amount_vat_net - coalesce(settled.settled_amount, 0) as amount_late_at_due,
        coalesce(settled.credited_amount, 0) as credited_amount,
        -- PAID closes the invoice from its last change on (as marts.receivables): the end of any residual
        case
            when invoices.status = 'PAID' and invoices.last_updated_date <= report_date.as_of_date
                then invoices.last_updated_date
        end as closed_date
    from invoices
    cross join report_date
    left join settled_by_due_date as settled
        on settled.portal_id = invoices.portal_id and settled.invoice_id = invoices.document_id
    where invoices.due_date < report_date.as_of_date
),

late_payments as (
    select
        late_invoices.portal_id,
        late_invoices.invoice_id,
        settlements.usage_date as paid_on,
        sum(settlements.amount) as paid_amount
    from late_invoices
    inner join settlements
        on settlements.portal_id = late_invoices.portal_id and settlements.invoice_id = late_invoices.invoice_id
    where settlements.usage_type = 'TRANSACTION' and settlements.usage_date > late_invoices.due_date
    group by all
),

balance_changes as (
    select portal_id, invoice_id, due_date as balance_from, amount_late_at_due as amount_late
    from late_invoices
    where amount_late_at_due > 0
    union all
    select
        late_payments.portal_id,
        late_payments.invoice_id,
        late_payments.paid_on,
        late_invoices.amount_late_at_due - sum(late_payments.paid_amount) over (
            partition by late_payments.portal_id, late_payments.invoice_id order by late_payments.paid_on
        )
    from late_payments
    inner join late_invoices
        on late_invoices.portal_id = late_payments.portal_id and late_invoices.invoice_id = late_payments.invoice_id
    where late_invoices.amount_late_at_due > 0
),

late_paid as (
    select portal_id, invoice_id, sum(paid_amount) as late_paid_amount
    from late_payments
    group by portal_id, invoice_id
),

paid_off as (
    select portal_id, invoice_id, min(balance_from) as paid_off_date
    from balance_changes
    where amount_late <= 0
    group by all
),

claims as (
    select
        late_invoices.*,
        -- paid in full by payments, else closed as PAID with a residual, else still open on the report date
        coalesce(paid_off.paid_off_date, late_invoices.closed_date) as paid_date,
        paid_off.paid_off_date is null and late_invoices.closed_date is not null as is_paid_date_assumed,
        -- what is still unpaid on the report date: 0 once paid off or closed
        case
            when coalesce(paid_off.paid_off_date, late_invoices.closed_date) is null
                then late_invoices.amount_late_at_due - coalesce(late_paid.late_paid_amount, 0)
            else 0
        end as open_amount,
        least(
            coalesce(paid_off.paid_off_date, late_invoices.closed_date, late_invoices.as_of_date),
            late_invoices.as_of_date
        ) as claim_end
    from late_invoices
    left join paid_off
        on paid_off.portal_id = late_invoices.portal_id and paid_off.invoice_id = late_invoices.invoice_id
    left join late_paid
        on late_paid.portal_id = late_invoices.portal_id and late_paid.invoice_id = late_invoices.invoice_id
    -- an invoice closed as PAID by its due date was not late
    where late_invoices.amount_late_at_due > 0
        and coalesce(late_invoices.closed_date, late_invoices.as_of_date) > late_invoices.due_date
),

typed_claims as (
    select
        claims.*,
        customers.customer_name,
        coalesce(customer_types.customer_type, 'consumer') as customer_type,
        coalesce(customer_types.customer_type_basis, 'no siret nor vat number') as customer_type_basis,
        coalesce(customer_types.is_customer_type_inferred, true) as is_customer_type_inferred
    from claims
    left join customers on customers.portal_id = claims.portal_id and customers.customer_id = claims.customer_id
    left join intermediate.int_customer_types as customer_types
        on customer_types.portal_id = claims.portal_id and customer_types.customer_id = claims.customer_id
),

final as (
    select
        typed_claims.*,
        balance_changes.balance_from,
        least(
            coalesce(
                lead(balance_changes.balance_from) over (
                    partition by balance_changes.portal_id, balance_changes.invoice_id
                    order by balance_changes.balance_from
                ),
                typed_claims.claim_end
            ),
            typed_claims.claim_end
        ) as balance_until,
        balance_changes.amount_late
    from balance_changes
    inner join typed_claims
        on typed_claims.portal_id = balance_changes.portal_id and typed_claims.invoice_id = balance_changes.invoice_id
)

select * from final
