-- ---
-- description: >
--   Exactly the customers of `GET /customers?documentStatus=LATE` (on D): not deleted, at least one overdue
--   invoice.
-- grain: [portal_id, customer_id]
-- tests:
--   not_null: [as_of_date]
-- columns:
--   as_of_date: "the customer"
--   customer_id: "the customer's id"
--   customer_name: "the customer's name"
--   customer_reference: "the customer's reference"
--   email: "contact e-mail"
--   phone: "mobile, else landline"
--   overdue_amount: "open amount of the overdue invoices"
--   overdue_invoice_count: "overdue invoices"
--   total_open: "everything open"
--   oldest_overdue_invoice_id: "the oldest overdue invoice (earliest due date)"
--   oldest_overdue_reference: "its reference"
--   oldest_due_date: "its due date"
--   oldest_days_past_due: "D − its due date"
--   last_payment_date: "latest payment on or before D"
--   next_reminder_template: >-
--     template the API would pick for the oldest overdue invoice: `RELAUNCH1`, or `RELAUNCH2` once a
--     `RELAUNCH1`/`RELAUNCH2` mail was sent about it; NULL when its `messages` were not served (unknown)
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- the customers the api lists for GET /customers?documentStatus=LATE on the report date: not deleted, with
-- at least one overdue invoice (open, due date strictly before the report date), with what collections needs.
-- one row per (portal_id, customer_id).
with receivables as (
    select * from marts.receivables
),

receivables_by_customer as (
    select * from marts.receivables_by_customer
),

customers as (
    select * from staging.stg_invoicing__customers
),

overdue_invoices as (
    select
        *,
        row_number() over (
            partition by portal_id, customer_id order by due_date, emit_date, reference, invoice_id
        ) as overdue_rank
    from receivables
    where is_overdue
),

oldest_overdue_invoice as (
    select * from overdue_invoices where overdue_rank = 1
),

overdue_per_customer as (
    select portal_id, customer_id, sum(open_amount) as overdue_amount, count(*) as overdue_invoice_count
    from overdue_invoices
    group by portal_id, customer_id
),

final as (
    select
        oldest.as_of_date,
        customers.customer_id,
        customers.customer_name,
        customers.customer_reference,
        customers.email,
        -- the api orders customers by phone using the mobile number first, then the landline
        coalesce(customers.mobile, customers.phone) as phone,
        overdue_per_customer.overdue_amount,
        overdue_per_customer.overdue_invoice_count,
        by_customer.total_open,
        oldest.invoice_id as oldest_overdue_invoice_id,
        oldest.reference as oldest_overdue_reference,
        oldest.due_date as oldest_due_date,
        oldest.days_past_due as oldest_days_past_due,
        by_customer.last_payment_date,
        -- the template the api would pick for a reminder about the oldest overdue invoice
        oldest.next_reminder_template,
        customers.portal_id
    from overdue_per_customer
    inner join customers
        on customers.portal_id = overdue_per_customer.portal_id
        and customers.customer_id = overdue_per_customer.customer_id
    inner join oldest_overdue_invoice as oldest
        on oldest.portal_id = overdue_per_customer.portal_id and oldest.customer_id = overdue_per_customer.customer_id
    left join receivables_by_customer as by_customer
        on by_customer.portal_id = overdue_per_customer.portal_id
        and by_customer.customer_id = overdue_per_customer.customer_id
    where not customers.is_deleted
)

select * from final
