-- ---
-- description: >
--   the payment-terms table of the management report (c. com. D441-6, "tableau des délais de paiement"): on the
--   closing date (the report date), invoices received and issued unpaid and past due, by days late (1-30, 31-60,
--   61-90, 91+, total), with their number, amount incl. tax and share of the fiscal year's purchases or sales.
-- grain: [portal_id, side, delay_bucket]
-- tests:
--   not_null: [as_of_date, fiscal_year_start, side, delay_bucket, bucket_order, invoice_count, amount_incl_tax]
--   accepted_range: {bucket_order: {min: 1, max: 6}, invoice_count: {min: 0}}
-- ---
-- the model of the table is the one of the arrêté of 20 march 2017 (annexe 4-1 of the commercial code's
-- regulatory part): section (A), the late invoices by days late; section (B), the invoices left out of (A) because
-- they are disputed (here: supplier bills whose status is disputed; the api gives customer invoices no dispute).
-- side 'received': supplier bills owed on the closing date (marts.supplier_payables: approved or awaiting
-- approval; credit notes are not invoices and stay out) at least one day past due; side 'issued': customer
-- invoices with money owed (marts.receivables) at least one day past due. amount_incl_tax: what is still unpaid
-- on the closing date (a part-paid invoice counts its unpaid part).
-- fiscal year: the twelve months ending on the closing date (fiscal_year_start = closing date - 1 year + 1 day),
-- the year whose accounts the table goes with when the report date is the closing date.
-- share_of_year_percent = amount / the fiscal year's purchases or sales incl. tax x 100, rounded to 2 decimals:
-- sales = customer invoices emitted in the year - customer credit notes emitted in it (as marts.dso nets them);
-- purchases = supplier bills issued in the year - supplier credit notes issued in it, every status but refused.
-- both incl. tax, like the late amounts they are compared with. null when the year's total is not positive.
-- every portal gets every row (0 where nothing is late), as the published table shows every column.
with report_date as (
    select
        as_of_date,
        cast(as_of_date - interval 1 year + interval 1 day as date) as fiscal_year_start
    from intermediate.int_report_date
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

late_documents as (
    select portal_id, 'issued' as side, days_past_due as days_late, open_amount as amount_incl_tax,
        false as is_disputed
    from receivables
    where days_past_due >= 1
    union all
    -- credit notes are negative in amount_due: they are not invoices
    select portal_id, 'received', days_past_due, amount_incl_tax, approval_state = 'disputed'
    from payables
    where days_past_due >= 1 and amount_due > 0
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
        coalesce(sum(late_documents.amount_incl_tax), 0) as amount_incl_tax
    from portals
    cross join sides
    cross join buckets
    left join late_documents
        on late_documents.portal_id = portals.portal_id
        and late_documents.side = sides.side
        and case
            when buckets.delay_bucket = 'disputed (excluded)' then late_documents.is_disputed
            else not late_documents.is_disputed
                and late_documents.days_late >= buckets.min_days_late
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
        case when year_totals.total_incl_tax > 0
            then cast(round(counted.amount_incl_tax * 100 / year_totals.total_incl_tax, 2) as decimal(9, 2))
        end as share_of_year_percent,
        counted.portal_id
    from counted
    cross join report_date
    left join year_totals on year_totals.portal_id = counted.portal_id and year_totals.side = counted.side
)

select * from final
