-- ---
-- description: >
--   The figures of the payment-terms table of the management report (D441-6 I) for the closing date D: `side`
--   `received` (supplier bills) or `issued` (customer invoices), `delay_bucket` `0` (unpaid, not yet due: the
--   model's "0 jour (indicatif)"), `1-30`, `31-60`, `61-90`, `91+`, `total` (1 day and more) and `disputed
--   (excluded)` (row (B): disputed bills, due or not; no share), `bucket_order` (0 to 6); `invoice_count` and
--   `amount_incl_tax` of the invoices unpaid on D (their unpaid part); `assumed_due_date_count` (due date not
--   served: the legal 30 days); `year_total_incl_tax`, the purchases or sales incl. tax of the fiscal year
--   `fiscal_year_start` .. D (net of credit notes), and `share_of_year_percent`. The fiscal year starts on
--   `INVOICING_FISCAL_YEAR_START` (docs/settings.md), else it is the twelve months ending on D. Build it as of
--   your closing date: `models --as-of 2025-12-31`.
-- grain: [portal_id, side, delay_bucket]
-- tests:
--   not_null: [as_of_date, fiscal_year_start, side, delay_bucket, bucket_order, invoice_count, amount_incl_tax]
--   accepted_range: {bucket_order: {min: 0, max: 6}, invoice_count: {min: 0}, assumed_due_date_count: {min: 0}}
-- columns:
--   as_of_date: "the report date D"
--   fiscal_year_start: >-
--     first day of the fiscal year ending on D (`INVOICING_FISCAL_YEAR_START`, else D minus twelve months plus
--     one day)
--   side: "`issued` (customer invoices) or `received` (supplier bills)"
--   bucket_order: "the bucket's place (0 to 6)"
--   delay_bucket: >-
--     `0` (not yet due), `1-30`, `31-60`, `61-90`, `91+`, `total` (1 day and more), `disputed (excluded)`
--   invoice_count: "invoices unpaid on D in the bucket"
--   amount_incl_tax: "their unpaid part incl. tax"
--   year_total_incl_tax: "purchases or sales incl. tax of the fiscal year, net of credit notes"
--   assumed_due_date_count: "invoices whose due date was not served (the legal 30 days)"
--   share_of_year_percent: "amount_incl_tax / year_total_incl_tax x 100 (none for the excluded row)"
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- the model of the table is the one of the arrêté of 20 march 2017 (annexe 4-1 of the commercial code's
-- regulatory part): section (A), the late invoices by days late; section (B), the invoices left out of (A) because
-- they are disputed (here: supplier bills whose status is disputed; the api gives customer invoices no dispute).
-- side 'received': supplier bills owed on the closing date (marts.supplier_payables: approved or awaiting
-- approval; credit notes are not invoices and stay out) at least one day past due; side 'issued': customer
-- invoices with money owed (marts.receivables) at least one day past due. amount_incl_tax: what is still unpaid
-- on the closing date (a part-paid invoice counts its unpaid part).
-- bucket 0 '0' (the model's "0 jour (indicatif)"): invoices unpaid on the closing date and not yet due.
-- assumed_due_date_count: invoices of the row whose due date the api did not serve and the legal 30 days stand in
-- for (row C of the model: "délais légaux" for them, contractual terms for the others).
-- the disputed row carries no share: the model's row (B) gives the number and amount of excluded invoices only.
-- fiscal year: intermediate.int_fiscal_year (INVOICING_FISCAL_YEAR_START, else the twelve months ending on the
-- closing date), the year whose accounts the table goes with when the report date is the closing date.
-- share_of_year_percent = amount / the fiscal year's purchases or sales incl. tax x 100, rounded to 2 decimals:
-- sales = customer invoices emitted in the year - customer credit notes emitted in it (as marts.dso nets them);
-- purchases = supplier bills issued in the year - supplier credit notes issued in it, every status but refused.
-- both incl. tax, like the late amounts they are compared with. null when the year's total is not positive.
-- every portal gets every row (0 where nothing is late), as the published table shows every column.
with report_date as (
    select * from intermediate.int_fiscal_year
),

receivables as (
    select * from marts.receivables
),

payables as (
    select * from marts.supplier_payables
),

invoices as (
    select * from intermediate.int_invoices_as_of
),

documents as (
    select * from intermediate.int_documents_emitted_as_of
),

supplier_documents as (
    select * from intermediate.int_supplier_documents__status_as_of
),

buckets as (
    select * from (values
        (0, '0', null, 0),
        (1, '1-30', 1, 30),
        (2, '31-60', 31, 60),
        (3, '61-90', 61, 90),
        (4, '91+', 91, null),
        (5, 'total', 1, null),
        (6, 'disputed (excluded)', null, null)
    ) as t(bucket_order, delay_bucket, min_days_late, max_days_late)
),

sides as (
    select * from (values ('issued'), ('received')) as t(side)
),

-- every unpaid invoice, not yet due (days_late 0 or less: the 0-day band) or late
late_documents as (
    select portal_id, 'issued' as side, greatest(days_past_due, 0) as days_late, open_amount as amount_incl_tax,
        false as is_disputed, is_due_date_assumed
    from receivables
    where days_past_due is not null
    union all
    -- credit notes are negative in amount_due: they are not invoices
    select portal_id, 'received', greatest(days_past_due, 0), amount_incl_tax, approval_state = 'disputed',
        is_due_date_assumed
    from payables
    where days_past_due is not null and amount_due > 0
),

sales as (
    select portal_id, sum(amount_vat_net) as total_incl_tax
    from (
        select invoices.portal_id, invoices.amount_vat_net
        from invoices
        cross join report_date
        where invoices.emit_date between report_date.fiscal_year_start and report_date.as_of_date
        union all
        select documents.portal_id, -abs(documents.amount_vat_net)
        from documents
        cross join report_date
        where documents.document_subtype = 'CREDIT_NOTE' and not documents.is_draft
            and documents.emit_date between report_date.fiscal_year_start and report_date.as_of_date
    )
    group by portal_id
),

purchases as (
    select
        supplier_documents.portal_id,
        sum(
            case when supplier_documents.is_credit_note then -1 else 1 end
            * abs(coalesce(
                supplier_documents.amount_vat,
                supplier_documents.amount + coalesce(supplier_documents.vat_amount, 0),
                0
            ))
        ) as total_incl_tax
    from supplier_documents
    cross join report_date
    where supplier_documents.status_as_of is distinct from 'refused'
        and supplier_documents.issue_date between report_date.fiscal_year_start and report_date.as_of_date
    group by supplier_documents.portal_id
),

year_totals as (
    select portal_id, 'issued' as side, total_incl_tax from sales
    union all
    select portal_id, 'received', total_incl_tax from purchases
),

portals as (
    select portal_id from late_documents
    union
    select portal_id from year_totals
),

counted as (
    select
        portals.portal_id,
        sides.side,
        buckets.bucket_order,
        buckets.delay_bucket,
        count(late_documents.days_late) as invoice_count,
        coalesce(sum(late_documents.amount_incl_tax), 0) as amount_incl_tax,
        count(late_documents.days_late) filter (where late_documents.is_due_date_assumed) as assumed_due_date_count
    from portals
    cross join sides
    cross join buckets
    left join late_documents
        on late_documents.portal_id = portals.portal_id
        and late_documents.side = sides.side
        and case
            when buckets.delay_bucket = 'disputed (excluded)' then late_documents.is_disputed
            else not late_documents.is_disputed
                and late_documents.days_late >= coalesce(buckets.min_days_late, 0)
                and late_documents.days_late <= coalesce(buckets.max_days_late, late_documents.days_late)
        end
    group by all
),

final as (
    select
        report_date.as_of_date,
        report_date.fiscal_year_start,
        counted.side,
        counted.bucket_order,
        counted.delay_bucket,
        counted.invoice_count,
        cast(counted.amount_incl_tax as decimal(18, 2)) as amount_incl_tax,
        cast(year_totals.total_incl_tax as decimal(18, 2)) as year_total_incl_tax,
        counted.assumed_due_date_count,
        case when year_totals.total_incl_tax > 0 and counted.delay_bucket <> 'disputed (excluded)'
            then cast(round(counted.amount_incl_tax * 100 / year_totals.total_incl_tax, 2) as decimal(9, 2))
        end as share_of_year_percent,
        counted.portal_id
    from counted
    cross join report_date
    left join year_totals on year_totals.portal_id = counted.portal_id and year_totals.side = counted.side
)

select * from final
