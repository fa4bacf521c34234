-- ---
-- description: >
--   The alternative table of D441-6 II in the model's layout: the invoices paid during the fiscal year by days
--   paid after their due date (`0 jour (indicatif)`: on time), rows (A) number, amount TTC, share of the number
--   and of the amount of the invoices issued or received in the year; (B) bills of the year disputed on D; (C) the
--   reference terms.
-- grain: [portal_id, side, row_order]
-- tests:
--   not_null: [as_of_date, fiscal_year_start, side, row_order]
--   accepted_range: {row_order: {min: 1, max: 7}}
-- columns:
--   as_of_date: "the report date D"
--   fiscal_year_start: >-
--     first day of the fiscal year ending on D (`INVOICING_FISCAL_YEAR_START`, else D minus twelve months plus
--     one day)
--   side: "`issued` (customer invoices) or `received` (supplier bills)"
--   "Tableau": "the table's title for the side, as in the arrêté of 20 March 2017"
--   row_order: "the row's place in the legal model (1-6)"
--   "Ligne": "the row's label: (A) number, amount TTC, share of the year; (B) excluded invoices; (C) reference terms"
--   "0 jour (indicatif)": "not yet due on D (indicative column of the model)"
--   "1 à 30 jours": "1 to 30 days past due"
--   "31 à 60 jours": "31 to 60 days past due"
--   "61 à 90 jours": "61 to 90 days past due"
--   "91 jours et plus": "91 days or more past due"
--   "Total (1 jour et plus)": "every invoice at least one day past due"
--   "Précisions": >-
--     for row (C): the reference terms used (contractual for served due dates, legal for assumed ones, with their
--     counts)
--   portal_id: >-
--     the portal the row belongs to (part of the key: one warehouse may hold many portals, whose ids may collide)
-- ---
-- "factures reçues et émises ayant connu un retard de paiement au cours de l'exercice": a company may present this
-- table instead of the one of D441-6 I (marts.payment_terms_table). the year: intermediate.int_fiscal_year.
-- issued: customer invoices paid in full during the year (marts.payment_history: dated by their last payment);
-- days late = paid date - due date (served, or the legal 30 days when assumed), 0 or less in "0 jour (indicatif)".
-- received: supplier bills (not credit notes) paid on the report date whose payment date falls in the year;
-- days late = payment date - due date (served, or the legal 30 days after the issue date when assumed).
-- shares: row 3 the number / the number of invoices issued (received) in the year, row 4 the amount / their
-- amount incl. tax, both x 100 rounded to 2 decimals, null when the year has none.
-- (B): the bills disputed on the closing date issued in the year (the api gives customer invoices no dispute).
-- (C): contractual terms for the invoices whose due date was served, the legal term (30 days, L441-10 I) for the
-- ones whose due date was assumed, with their count.
with fiscal_year as (
    select * from intermediate.int_fiscal_year
),

payment_history as (
    select * from marts.payment_history
),

invoices as (
    select * from intermediate.int_invoices_as_of
),

supplier_documents as (
    select
        *,
        abs(coalesce(amount_vat, amount + coalesce(vat_amount, 0), 0)) as amount_incl_tax
    from intermediate.int_supplier_documents__status_as_of
    where not is_credit_note
),

sides as (
    select * from (values ('issued'), ('received')) as t(side)
),

bands as (
    select * from (values
        ('0', null, 0),
        ('1-30', 1, 30),
        ('31-60', 31, 60),
        ('61-90', 61, 90),
        ('91+', 91, null),
        ('total', 1, null)
    ) as t(band, min_days_late, max_days_late)
),

paid_in_year as (
    select
        payment_history.portal_id,
        'issued' as side,
        greatest(payment_history.days_after_due, 0) as days_late,
        payment_history.total_incl_tax as amount_incl_tax,
        invoices.is_due_date_assumed
    from payment_history
    cross join fiscal_year
    inner join invoices
        on invoices.portal_id = payment_history.portal_id and invoices.document_id = payment_history.invoice_id
    where payment_history.paid_date between fiscal_year.fiscal_year_start and fiscal_year.as_of_date
    union all
    select
        supplier_documents.portal_id,
        'received',
        greatest(supplier_documents.payment_date - supplier_documents.due_date, 0),
        supplier_documents.amount_incl_tax,
        supplier_documents.is_due_date_assumed
    from supplier_documents
    cross join fiscal_year
    where supplier_documents.status_as_of = 'paid' and supplier_documents.due_date is not null
        and supplier_documents.payment_date between fiscal_year.fiscal_year_start and fiscal_year.as_of_date
),

issued_in_year as (
    select invoices.portal_id, 'issued' as side, count(*) as invoice_count, sum(invoices.amount_vat_net) as amount
    from invoices
    cross join fiscal_year
    where invoices.emit_date between fiscal_year.fiscal_year_start and fiscal_year.as_of_date
    group by all
    union all
    select supplier_documents.portal_id, 'received', count(*), sum(supplier_documents.amount_incl_tax)
    from supplier_documents
    cross join fiscal_year
    where supplier_documents.status_as_of is distinct from 'refused'
        and supplier_documents.issue_date between fiscal_year.fiscal_year_start and fiscal_year.as_of_date
    group by all
),

excluded as (
    select supplier_documents.portal_id, 'received' as side, count(*) as invoice_count,
        sum(supplier_documents.amount_incl_tax) as amount
    from supplier_documents
    cross join fiscal_year
    where supplier_documents.status_as_of = 'disputed'
        and supplier_documents.issue_date between fiscal_year.fiscal_year_start and fiscal_year.as_of_date
    group by all
),

portals as (
    select portal_id from paid_in_year
    union
    select portal_id from issued_in_year
),

band_values as (
    select
        portals.portal_id,
        sides.side,
        bands.band,
        count(paid_in_year.days_late) as invoice_count,
        coalesce(sum(paid_in_year.amount_incl_tax), 0) as amount_incl_tax,
        count(paid_in_year.days_late) filter (where paid_in_year.is_due_date_assumed) as assumed_due_date_count
    from portals
    cross join sides
    cross join bands
    left join paid_in_year
        on paid_in_year.portal_id = portals.portal_id and paid_in_year.side = sides.side
        and paid_in_year.days_late >= coalesce(bands.min_days_late, 0)
        and paid_in_year.days_late <= coalesce(bands.max_days_late, paid_in_year.days_late)
    group by all
),

rows_of_the_model as (
    select * from (values (1), (2), (3), (4), (5), (6), (7)) as t(row_order)
),

-- row 1 number, 2 amount, 3 share of the year's number, 4 share of the year's amount
cells as (
    select
        band_values.portal_id,
        band_values.side,
        band_values.band,
        rows_of_the_model.row_order,
        case rows_of_the_model.row_order
            when 1 then band_values.invoice_count
            when 2 then band_values.amount_incl_tax
            when 3 then case when issued_in_year.invoice_count > 0
                then round(band_values.invoice_count * 100 / issued_in_year.invoice_count, 2) end
            when 4 then case when issued_in_year.amount > 0
                then round(band_values.amount_incl_tax * 100 / issued_in_year.amount, 2) end
        end as cell_value
    from band_values
    cross join rows_of_the_model
    left join issued_in_year
        on issued_in_year.portal_id = band_values.portal_id and issued_in_year.side = band_values.side
    where rows_of_the_model.row_order <= 4
),

pivoted as (
    select
        portals.portal_id,
        sides.side,
        rows_of_the_model.row_order,
        max(cells.cell_value) filter (where cells.band = '0') as days_0,
        max(cells.cell_value) filter (where cells.band = '1-30') as days_1_30,
        max(cells.cell_value) filter (where cells.band = '31-60') as days_31_60,
        max(cells.cell_value) filter (where cells.band = '61-90') as days_61_90,
        max(cells.cell_value) filter (where cells.band = '91+') as days_91_plus,
        max(cells.cell_value) filter (where cells.band = 'total') as days_1_and_more
    from portals
    cross join sides
    cross join rows_of_the_model
    left join cells
        on cells.portal_id = portals.portal_id and cells.side = sides.side
        and cells.row_order = rows_of_the_model.row_order
    group by all
),

terms as (
    select
        portal_id,
        side,
        sum(invoice_count - assumed_due_date_count) filter (where band in ('0', 'total')) as contractual_count,
        sum(assumed_due_date_count) filter (where band in ('0', 'total')) as legal_count
    from band_values
    group by all
),

final as (
    select
        fiscal_year.as_of_date,
        fiscal_year.fiscal_year_start,
        pivoted.side,
        case pivoted.side
            when 'received' then 'Article D. 441 II : Factures reçues ayant connu un retard de paiement au cours '
                || 'de l''exercice'
            else 'Article D. 441 II : Factures émises ayant connu un retard de paiement au cours de l''exercice'
        end as "Tableau",
        pivoted.row_order,
        case pivoted.row_order
            when 1 then '(A) Nombre cumulé de factures concernées'
            when 2 then '(A) Montant cumulé des factures concernées (TTC)'
            when 3 then case pivoted.side
                when 'received' then '(A) Pourcentage du nombre total des factures reçues dans l''année'
                else '(A) Pourcentage du nombre total des factures émises dans l''année'
            end
            when 4 then case pivoted.side
                when 'received' then '(A) Pourcentage du montant total (TTC) des factures reçues dans l''année'
                else '(A) Pourcentage du montant total (TTC) des factures émises dans l''année'
            end
            when 5 then '(B) Nombre des factures exclues (litigieuses)'
            when 6 then '(B) Montant total des factures exclues (TTC)'
            else '(C) Délais de paiement de référence utilisés (contractuels ou délais légaux - article L. 441-10 '
                || 'du code de commerce)'
        end as "Ligne",
        cast(pivoted.days_0 as decimal(18, 2)) as "0 jour (indicatif)",
        cast(pivoted.days_1_30 as decimal(18, 2)) as "1 à 30 jours",
        cast(pivoted.days_31_60 as decimal(18, 2)) as "31 à 60 jours",
        cast(pivoted.days_61_90 as decimal(18, 2)) as "61 à 90 jours",
        cast(pivoted.days_91_plus as decimal(18, 2)) as "91 jours et plus",
        cast(case pivoted.row_order
            when 5 then coalesce(excluded.invoice_count, 0)
            when 6 then coalesce(excluded.amount, 0)
            else pivoted.days_1_and_more
        end as decimal(18, 2)) as "Total (1 jour et plus)",
        case when pivoted.row_order = 7 then
            'Délais contractuels : ' || cast(terms.contractual_count as varchar)
            || ' facture(s) ; délais légaux (30 jours, article L. 441-10 I, échéance non connue) : '
            || cast(terms.legal_count as varchar) || ' facture(s)'
        end as "Précisions",
        pivoted.portal_id
    from pivoted
    cross join fiscal_year
    left join excluded on excluded.portal_id = pivoted.portal_id and excluded.side = pivoted.side
    left join terms on terms.portal_id = pivoted.portal_id and terms.side = pivoted.side
)

select * from final
