-- ---
-- description: >
--   one row per supplier with documents owed on the report date: amounts per aging bucket and approval
--   state.
-- grain: [portal_id, supplier_id]
-- tests:
--   not_null: [as_of_date]
-- columns:
--   as_of_date: "the supplier"
--   supplier_id: "the supplier's id"
--   supplier_name: "the supplier's name"
--   legal_identifier: "the supplier's legal identifier"
--   due_current: "amount due, not yet past due"
--   due_1_30: "amount due 1-30 days past due"
--   due_31_60: "amount due 31-60 days past due"
--   due_61_90: "amount due 61-90 days past due"
--   due_90_plus: "amount due more than 90 days past due"
--   total_due: "everything due to the supplier"
--   approved_due: "the part of `total_due` approved"
--   awaiting_approval_due: "the part of `total_due` awaiting approval"
--   disputed_due: "the part of `total_due` disputed"
--   awaiting_approval_document_count: "documents awaiting approval"
--   disputed_document_count: "disputed documents"
--   overdue_amount: "amount due on documents past due on D"
--   overdue_document_count: "documents past due on D"
--   document_count: "documents owed to the supplier on D"
--   oldest_due_date: "earliest due date"
--   next_due_date: "earliest due date on or after D"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- one row per supplier with documents owed on the report date (marts.supplier_payables: approved, awaiting
-- approval or disputed): amounts due per aging bucket and per approval state (credit notes negative), what is
-- overdue, and the next due date. the three states add up to total_due. one row per (portal_id, supplier_id).
with supplier_payables as (
    select * from marts.supplier_payables
),

suppliers as (
    select * from staging.stg_invoicing__suppliers
),

per_supplier as (
    select
        any_value(as_of_date) as as_of_date,
        portal_id,
        supplier_id,
        sum(amount_due) filter (where aging_bucket = 'current') as due_current,
        sum(amount_due) filter (where aging_bucket = '1-30') as due_1_30,
        sum(amount_due) filter (where aging_bucket = '31-60') as due_31_60,
        sum(amount_due) filter (where aging_bucket = '61-90') as due_61_90,
        sum(amount_due) filter (where aging_bucket = '90+') as due_90_plus,
        sum(amount_due) as total_due,
        sum(amount_due) filter (where approval_state = 'approved') as approved_due,
        sum(amount_due) filter (where approval_state = 'awaiting_approval') as awaiting_approval_due,
        sum(amount_due) filter (where approval_state = 'disputed') as disputed_due,
        count(*) filter (where approval_state = 'awaiting_approval') as awaiting_approval_document_count,
        count(*) filter (where approval_state = 'disputed') as disputed_document_count,
        sum(amount_due) filter (where is_overdue) as overdue_amount,
        count(*) filter (where is_overdue) as overdue_document_count,
        count(*) as document_count,
        min(due_date) as oldest_due_date,
        min(due_date) filter (where not is_overdue) as next_due_date
    from supplier_payables
    group by portal_id, supplier_id
),

final as (
    select
        per_supplier.as_of_date,
        per_supplier.supplier_id,
        suppliers.supplier_name,
        suppliers.legal_identifier,
        coalesce(per_supplier.due_current, 0) as due_current,
        coalesce(per_supplier.due_1_30, 0) as due_1_30,
        coalesce(per_supplier.due_31_60, 0) as due_31_60,
        coalesce(per_supplier.due_61_90, 0) as due_61_90,
        coalesce(per_supplier.due_90_plus, 0) as due_90_plus,
        per_supplier.total_due,
        coalesce(per_supplier.approved_due, 0) as approved_due,
        coalesce(per_supplier.awaiting_approval_due, 0) as awaiting_approval_due,
        coalesce(per_supplier.disputed_due, 0) as disputed_due,
        per_supplier.awaiting_approval_document_count,
        per_supplier.disputed_document_count,
        coalesce(per_supplier.overdue_amount, 0) as overdue_amount,
        per_supplier.overdue_document_count,
        per_supplier.document_count,
        per_supplier.oldest_due_date,
        per_supplier.next_due_date,
        per_supplier.portal_id
    from per_supplier
    left join suppliers on suppliers.portal_id = per_supplier.portal_id and suppliers.supplier_id = per_supplier.supplier_id
)

select * from final
