-- ---
-- description: >
--   The same table in the legal model's own layout (arrêté of 20 March 2017, annexe 4-1), French labels, ready to
--   paste into the management report (the xlsx export and the page's downloads carry them): `Tableau` (the side's
--   title), `row_order` 1-6 and `Ligne`: (A) number of invoices (under "0 jour" and the total only, as the model
--   has it), amount TTC, share of the year's purchases or turnover TTC; (B) number and amount of the disputed
--   invoices excluded (in the total column); (C) the reference terms (`Précisions`: contractual for the served due
--   dates, legal for the assumed ones, with their counts); columns `0 jour (indicatif)`, `1 à 30 jours`, `31 à 60
--   jours`, `61 à 90 jours`, `91 jours et plus`, `Total (1 jour et plus)`.
-- grain: [portal_id, side, row_order]
-- tests:
--   not_null: [as_of_date, fiscal_year_start, side, row_order]
--   accepted_range: {row_order: {min: 1, max: 6}}
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
-- the model (JO of 21 March 2017, texte 17; D441-6 III: say whether amounts are excl. or incl. tax, here incl.
-- tax, "TTC"): the number of invoices is given under "0 jour" and the total only (the model's other cells of that
-- row are shaded); the shares under every column; (B) and (C) are one cell for the whole row: here the total
-- column for (B)'s figures and "Précisions" for (C)'s text. (C): contractual terms for the invoices whose due
-- date the api served, the legal term (30 days, L441-10 I) for those whose due date was assumed, with their count.
with report as (
    select * from marts.payment_terms_report
),

portal_sides as (
    select distinct portal_id, side, as_of_date, fiscal_year_start from report
),

rows_of_the_model as (
    select * from (values
        (1, 'figures'),
        (2, 'figures'),
        (3, 'figures'),
        (4, 'excluded'),
        (5, 'excluded'),
        (6, 'terms')
    ) as t(row_order, row_kind)
),

-- one value per band and per row: 1 number, 2 amount, 3 share
band_values as (
    select
        portal_id,
        side,
        delay_bucket,
        max(invoice_count) as invoice_count,
        max(amount_incl_tax) as amount_incl_tax,
        max(share_of_year_percent) as share_of_year_percent,
        max(assumed_due_date_count) as assumed_due_date_count
    from report
    group by all
),

-- one value per band and row of the model: (A) 1 the number (under 0 jour and the total only: the model shades the
-- other cells), 2 the amount, 3 the share; (B) 4 the number and 5 the amount of the disputed invoices, one cell
cells as (
    select
        band_values.portal_id,
        band_values.side,
        band_values.delay_bucket,
        rows_of_the_model.row_order,
        case
            when rows_of_the_model.row_order = 1 and band_values.delay_bucket in ('0', 'total')
                then band_values.invoice_count
            when rows_of_the_model.row_order = 2 and band_values.delay_bucket <> 'disputed (excluded)'
                then band_values.amount_incl_tax
            when rows_of_the_model.row_order = 3 and band_values.delay_bucket <> 'disputed (excluded)'
                then band_values.share_of_year_percent
            when rows_of_the_model.row_order = 4 and band_values.delay_bucket = 'disputed (excluded)'
                then band_values.invoice_count
            when rows_of_the_model.row_order = 5 and band_values.delay_bucket = 'disputed (excluded)'
                then band_values.amount_incl_tax
        end as cell_value
    from band_values
    cross join rows_of_the_model
),

pivoted as (
    select
        portal_sides.portal_id,
        portal_sides.side,
        portal_sides.as_of_date,
        portal_sides.fiscal_year_start,
        rows_of_the_model.row_order,
        case rows_of_the_model.row_order
            when 1 then '(A) Nombre de factures concernées'
            when 2 then '(A) Montant total des factures concernées (TTC)'
            when 3 then case portal_sides.side
                when 'received' then '(A) Pourcentage du montant total des achats de l''exercice (TTC)'
                else '(A) Pourcentage du chiffre d''affaires de l''exercice (TTC)'
            end
            when 4 then '(B) Nombre des factures exclues (litigieuses)'
            when 5 then '(B) Montant total des factures exclues (TTC)'
            else '(C) Délais de paiement de référence utilisés (contractuels ou délais légaux - article L. 441-10 '
                || 'du code de commerce)'
        end as "Ligne",
        -- a row's value in one band (cell_value): pivoted to the model's columns
        max(cells.cell_value) filter (where cells.delay_bucket = '0') as days_0,
        max(cells.cell_value) filter (where cells.delay_bucket = '1-30') as days_1_30,
        max(cells.cell_value) filter (where cells.delay_bucket = '31-60') as days_31_60,
        max(cells.cell_value) filter (where cells.delay_bucket = '61-90') as days_61_90,
        max(cells.cell_value) filter (where cells.delay_bucket = '91+') as days_91_plus,
        -- (A)'s total column, or (B)'s one cell
        max(cells.cell_value) filter (where cells.delay_bucket in ('total', 'disputed (excluded)'))
            as days_1_and_more,
        -- (C): the invoices of (A), 0 jour and 1 day and more, by the term their lateness was measured against
        case when rows_of_the_model.row_order = 6 then
            'Délais contractuels : '
            || cast(
                sum(band_values.invoice_count - band_values.assumed_due_date_count)
                    filter (where band_values.delay_bucket in ('0', 'total')) as varchar
            )
            || ' facture(s) ; délais légaux (30 jours, article L. 441-10 I, échéance non connue) : '
            || cast(
                sum(band_values.assumed_due_date_count) filter (where band_values.delay_bucket in ('0', 'total'))
                    as varchar
            )
            || ' facture(s)'
        end as "Précisions"
    from portal_sides
    cross join rows_of_the_model
    inner join band_values on band_values.portal_id = portal_sides.portal_id and band_values.side = portal_sides.side
    left join cells
        on cells.portal_id = band_values.portal_id and cells.side = band_values.side
        and cells.delay_bucket = band_values.delay_bucket and cells.row_order = rows_of_the_model.row_order
    group by
        portal_sides.portal_id, portal_sides.side, portal_sides.as_of_date, portal_sides.fiscal_year_start,
        rows_of_the_model.row_order
),

final as (
    select
        as_of_date,
        fiscal_year_start,
        side,
        case side
            when 'received' then 'Article D. 441 I.-1° : Factures reçues non réglées à la date de clôture de '
                || 'l''exercice dont le terme est échu'
            else 'Article D. 441 I.-2° : Factures émises non réglées à la date de clôture de l''exercice dont le '
                || 'terme est échu'
        end as "Tableau",
        row_order,
        "Ligne",
        cast(days_0 as decimal(18, 2)) as "0 jour (indicatif)",
        cast(days_1_30 as decimal(18, 2)) as "1 à 30 jours",
        cast(days_31_60 as decimal(18, 2)) as "31 à 60 jours",
        cast(days_61_90 as decimal(18, 2)) as "61 à 90 jours",
        cast(days_91_plus as decimal(18, 2)) as "91 jours et plus",
        cast(days_1_and_more as decimal(18, 2)) as "Total (1 jour et plus)",
        "Précisions",
        portal_id
    from pivoted
)

select * from final
