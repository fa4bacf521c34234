-- ---
-- description: >
--   each customer's type for the payment law (business or consumer), served or inferred, and why: the served
--   `type`; else a siret (the API contract's own inference) or a VAT number (an intra-community VAT number is
--   given to taxable persons, VAT directive 2006/112/EC art. 214: a foreign business has one and no siret) make a
--   business; else consumer. L441-10 and D441-5 apply between professionals only.
-- materialized: view
-- grain: [portal_id, customer_id]
-- ---
-- the rules of c. com. L441-10 and D441-5 (late-payment penalties, the 40 euro indemnity, the caps on payment
-- terms) apply between professionals only, so each customer's type decides what is claimed or flagged:
--   1. the customer's `type` when served (business or consumer, any case): customer_type_basis 'served';
--   2. else a siret: business, the contract's own inference ('siret');
--   3. else a vat number: business ('vat number': an intra-community vat number identifies a taxable business,
--      a foreign one has no siret; the contract would infer consumer, which would drop its claims silently);
--   4. else consumer ('no siret nor vat number').
-- is_customer_type_inferred: the type was not served (2 to 4).
with customers as (
    select * from staging.stg_invoicing__customers
),

final as (
    select
        portal_id,
        customer_id,
        coalesce(
            case lower(regexp_replace(customer_type, '[^A-Za-z]', '', 'g'))
                when 'business' then 'business'
                when 'consumer' then 'consumer'
            end,
            case
                when nullif(trim(siret), '') is not null or nullif(trim(vat_number), '') is not null then 'business'
                else 'consumer'
            end
        ) as customer_type,
        case
            when lower(regexp_replace(customer_type, '[^A-Za-z]', '', 'g')) in ('business', 'consumer') then 'served'
            when nullif(trim(siret), '') is not null then 'siret'
            when nullif(trim(vat_number), '') is not null then 'vat number'
            else 'no siret nor vat number'
        end as customer_type_basis,
        coalesce(lower(regexp_replace(customer_type, '[^A-Za-z]', '', 'g')) not in ('business', 'consumer'), true)
            as is_customer_type_inferred
    from customers
)

select * from final
