"""The French texts of the dashboard's legal pages (Late-payment claims and its reminder letter, Payment terms
D441-6 I and II, Benchmarks). Keys are the English texts the code writes (invoicing_warehouse/dashboard/page_texts.py).
Where a legal text has its own words they are used as it writes them: "pénalités de retard" and "taux directeur de la
Banque centrale européenne majoré de 10 points de pourcentage" (code de commerce L441-10 II), "indemnité forfaitaire
pour frais de recouvrement" of 40 euros (D441-5), "intérêts moratoires" (code de la commande publique R2192-31), the
D441-6 model's "tranche de retard", "0 jour (indicatif)", "exercice", "date de clôture", "TTC"."""

from __future__ import annotations

FRENCH_LAW: dict[str, str] = {
    # Late-payment claims
    "Between professionals a late invoice owes, from the day after its due date and without a reminder, interest "
    "at the rate the terms of sale set or, by default, the ECB's main refinancing rate + 10 points (the rate in "
    "force on 1 January for January-June, on 1 July for July-December; code de commerce L441-10 II) and a flat "
    "40 € recovery indemnity (D441-5); a public buyer owes the ECB rate of the half-year the delay began + 8 points "
    "(R2192-31). Interest: amount late × rate × days / 365, per half-year.":
        "Entre professionnels, une facture payée en retard fait courir, dès le lendemain de son échéance et sans "
        "qu'un rappel soit nécessaire, des pénalités de retard au taux fixé par les conditions générales de vente "
        "ou, à défaut, au taux directeur de la BCE majoré de 10 points (le taux en vigueur au 1er janvier pour "
        "janvier-juin, au 1er juillet pour juillet-décembre ; Code de commerce, article L441-10 II) et une "
        "indemnité forfaitaire pour frais de recouvrement de 40 € (article D441-5) ; un acheteur public doit le "
        "taux de la BCE du semestre où le retard a commencé + 8 points (R2192-31). Pénalités : montant en retard × "
        "taux × jours / 365, par semestre.",
    "ECB rate table: checked against the ECB's decisions up to {checked}; newest change {since} ({rate} %).":
        "Table des taux BCE : vérifiée auprès des décisions de la BCE jusqu'au {checked} ; dernier changement le "
        "{since} ({rate} %).",
    "Rate table behind: {count} claim(s) run into a half-year starting after the day the ECB rate table was last "
    "checked; their interest is unknown (blank, flagged 'rate table behind') and not in the totals, never computed "
    "from an old rate. Check the ECB's 'Key ECB interest rates', add any change and the day you checked to your own "
    "table (INVOICING_ECB_RATES_PATH, column checked_on) and rebuild the models.":
        "Table des taux en retard : {count} réclamation(s) courent sur un semestre commencé après la dernière "
        "vérification de la table des taux BCE ; leurs pénalités sont inconnues (vides, signalées « rate table "
        "behind ») et hors des totaux, jamais calculées sur un taux ancien. Consultez les « Key ECB interest "
        "rates » de la BCE, ajoutez tout changement et la date de votre vérification à votre propre table "
        "(INVOICING_ECB_RATES_PATH, colonne checked_on) et reconstruisez les modèles.",
    "Late invoices claimed": "Factures en retard réclamées",
    "invoices of business customers overdue or paid after their due date, but those the law bars (collective "
    "proceedings, time-barred)": "factures de clients professionnels échues ou payées après leur échéance, sauf "
    "celles que la loi exclut (procédure collective, prescription)",
    "Recovery indemnities": "Indemnités forfaitaires",
    "40 € per late invoice": "40 € par facture en retard",
    "Late-payment interest": "Pénalités de retard",
    "invoices in euros; others are listed with their interest in their own currency":
        "factures en euros ; les autres sont listées avec leurs pénalités dans leur propre devise",
    "Total claim": "Total réclamé",
    "of open invoices and of invoices already paid (their penalties only), told apart below":
        "des factures ouvertes et des factures déjà payées (leurs seules pénalités), distinguées ci-dessous",
    "Of the total claim: open invoices {open}; invoices already paid {paid} (whether their penalties were invoiced "
    "or waived is not recorded). Interest rate: {bases} (INVOICING_PENALTY_RATE_PERCENT sets the rate of your terms "
    "of sale; INVOICING_PUBLIC_BUYERS lists public buyers, R2192-31).":
        "Du total réclamé : factures ouvertes {open} ; factures déjà payées {paid} (on ne sait pas si leurs "
        "pénalités ont été facturées ou abandonnées). Taux des pénalités : {bases} (INVOICING_PENALTY_RATE_PERCENT "
        "fixe le taux de vos conditions générales de vente ; INVOICING_PUBLIC_BUYERS liste les acheteurs publics, "
        "R2192-31).",
    "Nothing claimed, by law: {reasons} (INVOICING_COLLECTIVE_PROCEEDINGS lists debtors in collective proceedings; "
    "a claim ended more than five years ago is time-barred, L110-4).":
        "Rien de réclamé, de par la loi : {reasons} (INVOICING_COLLECTIVE_PROCEEDINGS liste les débiteurs en "
        "procédure collective ; une créance éteinte depuis plus de cinq ans est prescrite, L110-4).",
    "{reason}: {count} invoice(s)": "{reason} : {count} facture(s)",
    "Left out: {count} late invoice(s) of consumer customers ({amount} late). L441-10 and D441-5 apply between "
    "professionals; a customer is a consumer when the API says so, or, without a type, when it has no SIRET.":
        "Non comptées : {count} facture(s) en retard de clients particuliers ({amount} en retard). Les articles "
        "L441-10 et D441-5 s'appliquent entre professionnels ; un client est un particulier quand l'API le dit, "
        "ou, sans type, quand il n'a pas de SIRET.",
    "{count} late invoice(s) are not in euros: their interest is in their own currency, not converted, and not in "
    "the interest total.": "{count} facture(s) en retard ne sont pas en euros : leurs pénalités sont dans leur "
    "propre devise, non converties, et hors du total des pénalités.",
    "By customer": "Par client",
    "Reminder letter": "Lettre de relance",
    "Customer (largest claim first; type to search)": "Client (la plus grosse réclamation d'abord ; tapez pour "
                                                      "rechercher)",
    "The invoices the letter cites: amount late = what was unpaid at the end of the due date (credit notes "
    "deducted); interest in the invoice's currency. What the letter assumes is said on each line: a due date the "
    "API did not serve (the legal 30 days), a paid date taken from the invoice's last change, a customer type "
    "inferred from the SIRET; 'rate table behind': interest unknown.":
        "Les factures citées par la lettre : montant en retard = ce qui restait impayé à la fin du jour d'échéance "
        "(avoirs déduits) ; pénalités dans la devise de la facture. Ce que la lettre suppose est dit à chaque "
        "ligne : une échéance que l'API n'a pas fournie (les 30 jours légaux), une date de règlement tirée de la "
        "dernière modification de la facture, un type de client déduit du SIRET ; « rate table behind » : "
        "pénalités inconnues.",
    "Interest line by line: each run of days at one amount late and one half-year's rate (ECB rate + 10 points).":
        "Pénalités ligne par ligne : chaque période de jours à un même montant en retard et au taux d'un même "
        "semestre (taux BCE + 10 points).",
    "Claim for this customer: {claim} (indemnities and interest in euros).":
        "Réclamation pour ce client : {claim} (indemnités et pénalités en euros).",
    # the reminder letter (invoicing_warehouse/dashboard/reminder_letter.py)
    "Subject: overdue invoices, late-payment penalties and fixed indemnity for recovery costs":
        "Objet : factures impayées à échéance, pénalités de retard et indemnité forfaitaire pour frais de "
        "recouvrement",
    "Dear Sir or Madam,": "Madame, Monsieur,",
    "Unless we are mistaken, the {count} invoice(s) listed below were not paid by their due date.":
        "Sauf erreur ou omission de notre part, les {count} facture(s) ci-dessous n'ont pas été réglées à leur "
        "échéance.",
    "at the rate our terms of sale set ({rates} %)": "au taux fixé par nos conditions générales de vente ({rates} %)",
    "at the European Central Bank's main refinancing rate plus 10 points ({rates} %)":
        "au taux appliqué par la Banque centrale européenne à son opération de refinancement la plus récente majoré "
        "de 10 points de pourcentage ({rates} %)",
    "Under article L441-10 of the French commercial code (code de commerce), late payment makes late-payment "
    "penalties (pénalités de retard) due by law, without a reminder being needed, {rate}, on the amount incl. tax "
    "left unpaid, from the day after the due date to the day of payment, and a fixed indemnity for recovery costs "
    "of 40 euros per invoice (indemnité forfaitaire pour frais de recouvrement, article D441-5 of the code de "
    "commerce).":
        "En application de l'article L441-10 du Code de commerce, tout retard de paiement rend exigibles de plein "
        "droit, sans qu'un rappel soit nécessaire, des pénalités de retard {rate}, calculées sur le montant TTC "
        "resté impayé, du lendemain de la date d'échéance au jour du paiement, ainsi qu'une indemnité forfaitaire "
        "pour frais de recouvrement de 40 euros par facture (article D441-5 du Code de commerce).",
    "As a public buyer, late payment makes default interest due at the European Central Bank's rate in force on "
    "the first day of the half-year the delay began in, plus 8 points (article R2192-31 of the public procurement "
    "code), and the fixed indemnity for recovery costs of 40 euros (article D2192-35).":
        "Pour un acheteur public, tout retard de paiement fait courir des intérêts moratoires au taux de la Banque "
        "centrale européenne en vigueur au premier jour du semestre au cours duquel le retard a commencé, majoré de "
        "8 points (article R2192-31 du code de la commande publique), et rend due l'indemnité forfaitaire pour "
        "frais de recouvrement de 40 euros (article D2192-35).",
    "We ask you to pay: the balance still due, {open}; the late-payment penalties, {interest}; the fixed "
    "indemnities for recovery costs, {indemnities}; in all {total}.":
        "Nous vous remercions de bien vouloir nous régler : le solde restant dû, {open} ; les pénalités de retard, "
        "{interest} ; les indemnités forfaitaires pour frais de recouvrement, {indemnities} ; soit au total {total}.",
    "We ask you to pay: the balance still due, {open}; the late-payment penalties, {interest}; the fixed "
    "indemnities for recovery costs, {indemnities}.":
        "Nous vous remercions de bien vouloir nous régler : le solde restant dû, {open} ; les pénalités de retard, "
        "{interest} ; les indemnités forfaitaires pour frais de recouvrement, {indemnities}.",
    "The penalties of {count} invoice(s) are not stated: the ECB rate of a half-year of the delay is not known yet.":
        "Les pénalités de {count} facture(s) ne sont pas chiffrées : le taux de la BCE d'un semestre du retard "
        "n'est pas encore connu.",
    "Due date assumed (emit date + 30 days, article L441-10 I of the code de commerce): {references}.":
        "Échéance supposée (date d'émission + 30 jours, article L441-10 I du Code de commerce) : {references}.",
    "Paid date assumed (the invoice's last change): {references}.":
        "Date de règlement supposée (dernière modification de la facture) : {references}.",
    "Customer taken as a business, inferred from its identifiers: {references}.":
        "Client considéré comme professionnel, d'après ses identifiants : {references}.",
    "Nothing to claim from this customer: each late invoice is a consumer's, barred by law or waived (see Not "
    "claimed and Claim status below).":
        "Rien à réclamer à ce client : chaque facture en retard est celle d'un particulier, exclue par la loi ou "
        "abandonnée (voir Non réclamé et Statut de la réclamation ci-dessous).",
    "Yours faithfully,": "Nous vous prions d'agréer, Madame, Monsieur, l'expression de nos salutations distinguées.",
    # Payment terms (D441-6 I and II)
    "No invoice nor bill on this date.": "Aucune facture émise ni reçue à cette date.",
    "Date de clôture {end}; exercice du {start} au {end} (the setting INVOICING_FISCAL_YEAR_START gives the first "
    "day of the fiscal year; unset, the twelve months ending on the report date: choose the closing date as the "
    "report date). Montants TTC (amounts incl. tax, what is still unpaid); shares of the year's purchases or "
    "turnover incl. tax, net of credit notes, as the API holds them (purchases the supplier module does not hold "
    "are not counted). The model of the arrêté of 20 March 2017 (annexe 4-1): (A) the invoices by days late, "
    "\"0 jour (indicatif)\" those not yet due; (B) disputed bills, excluded from (A); (C) the reference terms.":
        "Date de clôture {end} ; exercice du {start} au {end} (le réglage INVOICING_FISCAL_YEAR_START donne le "
        "premier jour de l'exercice ; à défaut, les douze mois finissant à la date d'arrêté : choisissez la date de "
        "clôture comme date d'arrêté). Montants TTC (ce qui reste impayé) ; pourcentages du montant TTC des achats "
        "ou du chiffre d'affaires de l'exercice, nets des avoirs, tels que l'API les connaît (les achats absents du "
        "module fournisseurs ne sont pas comptés). Modèle de l'arrêté du 20 mars 2017 (annexe 4-1) : (A) les "
        "factures par tranche de retard, « 0 jour (indicatif) » celles non échues ; (B) les factures contestées, "
        "exclues de (A) ; (C) les délais de paiement de référence.",
    "Detail by band": "Détail par tranche de retard",
    "Invoices received (suppliers), unpaid and past due": "Factures reçues (fournisseurs) non réglées, échues",
    "Invoices issued (customers), unpaid and past due": "Factures émises (clients) non réglées, échues",
    "Terms beyond the legal caps": "Délais au-delà des plafonds légaux",
    "Invoices and bills of the fiscal year due later than 60 days after their date and later than 45 days end of "
    "month, in either reading (code de commerce L441-10 I); business customers only. Periodic invoices are capped "
    "at 45 days after their date, but the API does not mark them: only those INVOICING_PERIODIC_INVOICES names are "
    "(column cap_rule). Sector caps are not applied.":
        "Factures émises et reçues de l'exercice à échéance au-delà de 60 jours après leur date et au-delà de 45 "
        "jours fin de mois, dans l'une ou l'autre lecture (Code de commerce, article L441-10 I) ; clients "
        "professionnels seulement. Les factures périodiques sont plafonnées à 45 jours après leur date, mais l'API "
        "ne les signale pas : seules celles que nomme INVOICING_PERIODIC_INVOICES le sont (colonne cap_rule). Les "
        "plafonds sectoriels ne sont pas appliqués.",
    "Contractual rate below its legal floor: {count} claim(s) use a rate of your terms of sale below three times the "
    "legal interest rate of a half-year (code de commerce L441-10 II), so the clause may be void. Their interest at "
    "that rate, {at_rate}, is in the totals; at the floor it would be {at_floor}. Each is flagged in the letter "
    "(rate_flag).":
        "Taux contractuel inférieur à son plancher légal : {count} créance(s) appliquent un taux de vos conditions "
        "générales de vente inférieur à trois fois le taux de l'intérêt légal d'un semestre (Code de commerce, "
        "article L441-10 II) ; la clause peut être nulle. Leurs pénalités à ce taux, {at_rate}, sont dans les "
        "totaux ; au plancher elles seraient de {at_floor}. Chacune est signalée dans la lettre (rate_flag).",
    "{count} claim(s) at a contractual rate run into a half-year whose legal interest rate the table does not hold: "
    "that rate is not checked against its floor (INVOICING_LEGAL_INTEREST_RATES_PATH).":
        "{count} créance(s) à un taux contractuel couvrent un semestre dont la table ne contient pas le taux de "
        "l'intérêt légal : ce taux n'est pas comparé à son plancher (INVOICING_LEGAL_INTEREST_RATES_PATH).",
    "By what you recorded (INVOICING_CLAIM_STATUSES_PATH): {statuses}.":
        "Selon ce que vous avez enregistré (INVOICING_CLAIM_STATUSES_PATH) : {statuses}.",
    "Paid late during the year (D441-6 II)": "Factures ayant connu un retard de paiement au cours de l'exercice "
                                             "(D441-6 II)",
    "Exercice du {start} au {end} (INVOICING_FISCAL_YEAR_START). A company may present this table instead of the "
    "one of D441-6 I: the invoices paid during the year, by days paid after their due date (\"0 jour (indicatif)\": "
    "paid on time), in number and amount TTC, as shares of the number and amount of the invoices received or "
    "issued in the year (model of the arrêté of 20 March 2017, second table). (B): bills of the year disputed on "
    "the closing date; (C): the reference terms.":
        "Exercice du {start} au {end} (INVOICING_FISCAL_YEAR_START). Une société peut présenter ce tableau au lieu "
        "de celui du D441-6 I : les factures réglées pendant l'exercice, par nombre de jours de retard de paiement "
        "(« 0 jour (indicatif) » : réglées à l'échéance), en nombre et en montant TTC, en pourcentage du nombre et "
        "du montant des factures reçues ou émises dans l'exercice (modèle de l'arrêté du 20 mars 2017, second "
        "tableau). (B) : factures de l'exercice contestées à la date de clôture ; (C) : les délais de paiement de "
        "référence.",
    # Benchmarks
    "Customer payment terms, DSO (days of sales): receivables / annual turnover incl. tax x 360, as the "
    "observatory computes it": "Délais clients, DSO (jours de chiffre d'affaires) : créances clients / chiffre "
    "d'affaires annuel TTC x 360, comme l'Observatoire le calcule",
    "Average lateness (days paid after the due date, per invoice)":
        "Retard moyen (jours payés après l'échéance, par facture)",
    "Supplier payment terms (days of purchases)": "Délais fournisseurs (jours d'achats)",
    "all sizes": "toutes tailles",
    " (no {size} figure in the file)": " (pas de chiffre {size} dans le fichier)",
    "This portal's figures as of the report date beside the Banque de France payment-terms observatory's "
    "(Observatoire des délais de paiement) for companies of size {size} ({size_setting}; the observatory's figure "
    "for all sizes when the data file has none for {size}). Figures from {file} ({file_setting} names another). "
    "Customer payment terms: the portal's figure is computed as the observatory computes its own, customer "
    "receivables (each customer's balance net of its unapplied credit notes and payments) / turnover incl. tax of "
    "the 12 months ending on the report date, net of credit notes, x 360 (marts.dso.annual_dso_days_360); the "
    "Receivables page's headline DSO (sales method over 90 days) is another method and is not compared here. "
    "Average lateness: marts.payment_behaviour, the invoices paid over the 365 days ending on the report date, each "
    "counting max(0, paid date - due date) days, unweighted (as the payment-behaviour studies count payments); the "
    "amount-weighted figure is below. The observatory's figures are national averages of other years: a yardstick, "
    "not a target.":
        "Les chiffres de ce portail à la date d'arrêté à côté de ceux de l'Observatoire des délais de paiement "
        "(Banque de France) pour les entreprises de taille {size} ({size_setting} ; le chiffre de l'Observatoire "
        "toutes tailles quand le fichier n'en a pas pour {size}). Chiffres de {file} ({file_setting} en désigne un "
        "autre). Délais clients : le chiffre du portail est calculé comme l'Observatoire calcule le sien, créances "
        "clients (le solde de chaque client net de ses avoirs et paiements non imputés) / chiffre d'affaires TTC "
        "des 12 mois finissant à la date d'arrêté, net des avoirs, x 360 (marts.dso.annual_dso_days_360) ; le DSO "
        "de la page Créances clients (méthode des ventes sur 90 jours) est une autre méthode et n'est pas comparé "
        "ici. Retard moyen : marts.payment_behaviour, les factures payées dans les 365 jours finissant à la date "
        "d'arrêté, chacune comptant max(0, date de paiement - échéance) jours, sans pondération (comme les études "
        "de comportement de paiement comptent les paiements) ; le chiffre pondéré par les montants est ci-dessous. "
        "Les chiffres de l'Observatoire sont des moyennes nationales d'autres années : un repère, pas un objectif.",
    "No invoice paid in the 365 days ending on the report date: no lateness to compare.":
        "Aucune facture payée dans les 365 jours finissant à la date d'arrêté : pas de retard à comparer.",
    "{paid} invoices paid from {start}, {late} of them after their due date; average lateness weighted by amount: "
    "{weighted} days; of the late ones only: {when_late} days; median days after due: {median}.":
        "{paid} factures payées depuis le {start}, dont {late} après leur échéance ; retard moyen pondéré par les "
        "montants : {weighted} jours ; des seules factures en retard : {when_late} jours ; médiane des jours après "
        "échéance : {median}.",
}
