-- ---
-- description: >
--   one row per allocation of a payment or credit note to an invoice, dated and typed (derived when not
--   served).
-- materialized: view
-- grain: [portal_id, usage_id]
-- date_only:
--   - {raw: transaction_usages.date, field: transactionUsage.date}
--   - {raw: transaction_usages.transaction__date, field: transactionUsage.transaction.date}
-- ---
-- one row per allocation of money to an invoice: a payment (TRANSACTION) or a credit note (CREDIT_NOTE).
-- usage_date is the payment date or the credit note's emit date (docs/resources.md), not the day the
-- allocation was made. the contract promises neither the usage's `date` nor its `type`: each is used when
-- served, else derived from promised fields (docs/contract.md, A12):
--   used_at: the usage's date, else its embedded transaction's date, else the loaded transaction's date,
--            else the credit note's emitDate;
--   usage_type: the usage's type, else CREDIT_NOTE when a credit note is linked, TRANSACTION when a
--               transaction is. the checks usages_dated / usages_typed stop the marts when one stays null.

with source as (
    select * from invoicing_raw.transaction_usages
),

time_zone as (
    select * from staging.stg_invoicing__portal_time_zone
),

transactions as (
    select portal_id, id, date from invoicing_raw.transactions
),

-- any version of the credit note: a document id is one version, and a version keeps its emit date.
-- only credit notes (the contract's subtype): the join stays small beside a million documents
credit_notes as (
    select portal_id, id, emit_date from invoicing_raw.documents where subtype = 'CREDIT_NOTE'
),

linked as (
    select
        source.*,
        coalesce(source.transaction_id, source.transaction__id) as linked_transaction_id,
        coalesce(
            cast(source.date as timestamptz),
            cast(source.transaction__date as timestamptz),
            cast(transactions.date as timestamptz),
            cast(credit_notes.emit_date as timestamptz)
        ) as derived_used_at,
        coalesce(
            cast(source.type as varchar),
            case
                when source.credit_note_id is not null then 'CREDIT_NOTE'
                when coalesce(source.transaction_id, source.transaction__id) is not null then 'TRANSACTION'
            end
        ) as derived_type
    from source
    left join transactions
        on transactions.portal_id = source.portal_id
        and transactions.id = coalesce(source.transaction_id, source.transaction__id)
    left join credit_notes on credit_notes.portal_id = source.portal_id and credit_notes.id = source.credit_note_id
    where source._deleted_at is null
),

renamed as (
    select
        cast(linked.id as varchar) as usage_id,
        cast(linked.portal_id as varchar) as portal_id,
        linked.derived_type as usage_type,
        cast(linked.customer_id as varchar) as customer_id,
        cast(linked.invoice_id as varchar) as invoice_id,
        cast(linked.linked_transaction_id as varchar) as transaction_id,
        cast(linked.credit_note_id as varchar) as credit_note_id,
        cast(linked.amount as decimal(18, 2)) as amount,
        linked.derived_used_at as used_at,
        cast(linked.derived_used_at at time zone time_zone.time_zone as date) as usage_date,
        linked.derived_type = 'CREDIT_NOTE' as is_credit_note,
        cast(linked.metadata as varchar) as metadata,
        cast(linked.last_update as timestamptz) as last_updated_at
    from linked
    cross join time_zone
)

select * from renamed
