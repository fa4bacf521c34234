-- the customers the api lists for GET /customers?documentStatus=LATE on the report date: not deleted, with
-- at least one late invoice (open, due date strictly before the report date), with what collections needs.
with receivables as (
    select * from marts.receivables
),

receivables_by_customer as (
    select * from marts.receivables_by_customer
),

customers as (
    select * from staging.stg_invoicing__customers
),

late_invoices as (
    select
        *,
        row_number() over (
            partition by customer_id order by due_date, emit_date, reference, invoice_id
        ) as lateness_rank
    from receivables
    where is_late
),

oldest_late_invoice as (
    select * from late_invoices where lateness_rank = 1
),

late_per_customer as (
    select customer_id, sum(open_amount) as overdue_amount, count(*) as overdue_invoice_count
    from late_invoices
    group by customer_id
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
        late_per_customer.overdue_amount,
        late_per_customer.overdue_invoice_count,
        by_customer.total_open,
        oldest.invoice_id as oldest_overdue_invoice_id,
        oldest.reference as oldest_overdue_reference,
        oldest.due_date as oldest_due_date,
        oldest.days_past_due as oldest_days_past_due,
        by_customer.last_payment_date,
        -- the template the api would pick for a reminder about the oldest late invoice
        oldest.next_reminder_template
    from late_per_customer
    inner join customers on customers.customer_id = late_per_customer.customer_id
    inner join oldest_late_invoice as oldest on oldest.customer_id = late_per_customer.customer_id
    left join receivables_by_customer as by_customer on by_customer.customer_id = late_per_customer.customer_id
    where not customers.is_deleted
)

select * from final
