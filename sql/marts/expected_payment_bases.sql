-- ---
-- description: >
--   How many of `marts.expected_payments`' invoices rest on each basis (`customer`, `customer+portal`, `portal`,
--   `due date`), one row per portal and basis in use: the caption of the Cash outlook page's expected payments.
-- grain: [portal_id, basis]
-- tests:
--   not_null: [as_of_date, invoice_count]
-- columns:
--   as_of_date: "the report date D"
--   basis: "`expected_payments.basis`"
--   invoice_count: "open invoices whose expected payment date rests on it"
--   open_amount: "their open amount"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
with report_date as (
    select * from intermediate.int_report_date
),

expected_payments as (
    select * from marts.expected_payments
),

final as (
    select
        report_date.as_of_date,
        expected_payments.basis,
        count(*) as invoice_count,
        sum(expected_payments.open_amount) as open_amount,
        expected_payments.portal_id
    from expected_payments
    cross join report_date
    group by report_date.as_of_date, expected_payments.portal_id, expected_payments.basis
)

select * from final
