"""The French texts of the dashboard's frame (sidebar, headings, tables' controls) and of its operational pages:
Receivables, Payables, Cash outlook, Trends, Freshness, Portals. Keys are the English texts the code writes
(invoicing_warehouse/dashboard/page_texts.py); the vocabulary is a French accountant's: encours, échu, à échoir,
créances, DSO."""

from __future__ import annotations

FRENCH_OPERATIONS: dict[str, str] = {
    # the frame: sidebar, banners, navigation, headings, tables
    "Portal": "Portail",
    "As of": "Date d'arrêté",
    "Amounts": "Montants",
    "Readers' copy: {path}": "Copie de lecture : {path}",
    "The published marts are as of {date}; another date builds the same SQL models for it in memory (the "
    "warehouse is not touched).": "Les tables publiées sont arrêtées au {date} ; une autre date construit les mêmes "
    "modèles SQL en mémoire pour cette date (l'entrepôt n'est pas modifié).",
    "**Figures held back by the checks.**": "**Chiffres retenus par les contrôles.**",
    "**Figures flagged by the checks** (published, but these checks failed):":
        "**Chiffres signalés par les contrôles** (publiés, mais ces contrôles ont échoué) :",
    "Receivables": "Créances clients",
    "Payables": "Dettes fournisseurs",
    "Cash outlook": "Prévision de trésorerie",
    "Trends": "Tendances",
    "Late-payment claims": "Pénalités de retard",
    "Payment terms (D441-6)": "Délais de paiement (D441-6)",
    "Paid late (D441-6 II)": "Payées en retard (D441-6 II)",
    "Benchmarks": "Comparaisons",
    "Freshness": "Fraîcheur des données",
    "Portals": "Portails",
    "published marts": "tables publiées",
    "models built for this date, in memory": "modèles construits pour cette date, en mémoire",
    "As of {date} · portal {portal} · {source}": "Au {date} · portail {portal} · {source}",
    " (first {shown} of {total})": " ({shown} premiers sur {total})",
    "Search {table}": "Rechercher dans {table}",
    "Sort {table}": "Trier {table}",
    "Download CSV ({rows} rows)": "Télécharger le CSV ({rows} lignes)",
    "CSV for French Excel (;)": "CSV pour Excel français (;)",
    "Download xlsx": "Télécharger le xlsx",
    "Search: any part of any cell": "Rechercher : tout ou partie d'une cellule",
    "{matching} of {rows} rows match": "{matching} lignes sur {rows} correspondent",
    ", the first {shown} shown": ", les {shown} premières affichées",
    "Sort: as listed": "Tri : ordre de la liste",
    "Sort: {column} ascending": "Tri : {column} croissant",
    "Sort: {column} descending": "Tri : {column} décroissant",
    # Receivables
    "Total open": "Encours total",
    "Overdue": "Échu",
    "DSO (days)": "DSO (jours)",
    "Overdue customers": "Clients en retard",
    "open amount at least one day past due": "montant restant dû échu depuis au moins un jour",
    "sales method, gross: open receivables incl. tax / invoices incl. tax emitted in the 90 days ending on the "
    "report date x 90 (marts.dso.dso_days)": "méthode des ventes, brute : créances TTC ouvertes / factures TTC "
    "émises dans les 90 jours finissant à la date d'arrêté x 90 (marts.dso.dso_days)",
    "DSO, other methods: net {net} days (open receivables less each customer's unapplied credit notes and payments "
    "up to what that customer owes, {deducted} deducted / invoices less credit notes of the 90 days x 90); "
    "count-back {count_back} days (open receivables exhausted against each month's sales going back from the "
    "report date). Credit balances owed to customers, not deducted from what others owe: {owed}.":
        "DSO, autres méthodes : net {net} jours (créances ouvertes moins les avoirs et paiements non imputés de "
        "chaque client, dans la limite de ce qu'il doit, {deducted} déduits / factures moins avoirs des 90 jours "
        "x 90) ; par épuisement {count_back} jours (créances ouvertes épuisées sur le chiffre d'affaires de chaque "
        "mois en remontant depuis la date d'arrêté). Soldes créditeurs dus aux clients, non déduits de ce que "
        "doivent les autres : {owed}.",
    "Assumed due dates: {count} open invoice(s), {open} open, of which {overdue} overdue, have no due date from "
    "the API; their due date is assumed to be the emit date + 30 days (French commercial code L441-10). Aging, "
    "Overdue, overdue customers and the cash outlook rest on it.":
        "Échéances supposées : {count} facture(s) ouverte(s), {open} restant dû, dont {overdue} échu, n'ont pas "
        "d'échéance fournie par l'API ; leur échéance est supposée à la date d'émission + 30 jours (article "
        "L441-10 du Code de commerce). La balance âgée, l'échu, les clients en retard et la prévision de trésorerie "
        "en dépendent.",
    "Aging": "Balance âgée",
    "open receivables": "créances ouvertes",
    "days past due": "jours après échéance",
    "Aged balance by customer": "Balance âgée par client",
    "What each customer owes by days past due (marts.receivables_by_customer); the totals below are over every "
    "customer and equal Total open (all columns) and Overdue (1-30 to 90+).":
        "Ce que doit chaque client par jours de retard (marts.receivables_by_customer) ; les totaux ci-dessous "
        "portent sur tous les clients et égalent l'Encours total (toutes les colonnes) et l'Échu (1-30 à 90+).",
    "Overdue customers (top {top} by overdue amount)": "Clients en retard ({top} premiers par montant échu)",
    "Customer drill-down": "Détail par client",
    "No customer owes money on this date.": "Aucun client ne doit d'argent à cette date.",
    "Customer (those owing money, most overdue first{shown}; type to search)":
        "Client (ceux qui doivent de l'argent, le plus en retard d'abord{shown} ; tapez pour rechercher)",
    # Payables
    "Due this week": "À payer cette semaine",
    "Due in the next {weeks} weeks": "À payer dans les {weeks} prochaines semaines",
    "Past due": "Échu",
    "Total to pay": "Total à payer",
    "Approved": "Approuvé",
    "Awaiting approval": "En attente d'approbation",
    "Disputed": "Contesté",
    "due from the report date to sunday (credit notes negative)":
        "échéance entre la date d'arrêté et dimanche (avoirs en négatif)",
    "due from the report date to the end of week {weeks}":
        "échéance entre la date d'arrêté et la fin de la semaine {weeks}",
    "approved or awaiting approval, due before the report date; disputed bills are on hold and counted apart "
    "(Disputed). A bill without a due date is due 30 days after its issue date (L441-10 I, assumed)":
        "approuvé ou en attente d'approbation, échu avant la date d'arrêté ; les factures contestées sont en "
        "attente et comptées à part (Contesté). Une facture sans échéance est due 30 jours après son émission "
        "(L441-10 I, supposé)",
    "every bill received and not paid, approved or not; includes {undated} without a due date":
        "toute facture reçue non payée, approuvée ou non ; dont {undated} sans échéance",
    "of the total to pay": "du total à payer",
    "received, not yet approved: owed all the same (of the total to pay)":
        "reçu, pas encore approuvé : dû tout de même (du total à payer)",
    "owed until settled by a credit note or a refusal (of the total to pay)":
        "dû jusqu'à règlement par un avoir ou un refus (du total à payer)",
    "Week by week ({weeks} weeks, marts.payables_weeks)": "Semaine par semaine ({weeks} semaines, "
                                                           "marts.payables_weeks)",
    "The first week also holds what is past due and what has no due date, as the mart counts them.":
        "La première semaine contient aussi l'échu et ce qui n'a pas d'échéance, comme la table les compte.",
    "By supplier": "Par fournisseur",
    "Aged balance by supplier": "Balance âgée par fournisseur",
    "What is owed to each supplier by days past due (marts.payables_by_supplier). Not yet due also holds the bills "
    "without a due date ({undated}). The totals below are over every supplier and equal Total to pay (all columns) "
    "and, 1-30 to 90+, Past due plus the disputed bills past due (on hold: counted in Disputed, not in Past due).":
        "Ce qui est dû à chaque fournisseur par jours de retard (marts.payables_by_supplier). Non échu contient "
        "aussi les factures sans échéance ({undated}). Les totaux ci-dessous portent sur tous les fournisseurs et "
        "égalent le Total à payer (toutes les colonnes) et, de 1-30 à 90+, l'Échu plus les factures contestées "
        "échues (en attente : comptées dans Contesté, pas dans Échu).",
    # Cash outlook
    "Open receivables and supplier payables by due date, and beside them the same receivables by the date they "
    "will likely be paid (from the customers' payment history, see Expected payments below). Inflows are net of "
    "what each customer will deduct: its unapplied credit notes and payments (cash already received), up to what "
    "it owes, from its oldest due invoices; what a customer's credit exceeds its debt by is owed back to it, an "
    "outflow in Later. Outflows count the bills received and not paid, approved or awaiting approval; a bill "
    "without a due date is due 30 days after its issue date (L441-10 I). Disputed bills are on hold: shown apart, "
    "outside the outflows and past due. Past due: due before the report date (an expected payment is never in the "
    "past: it holds none). Weeks run Monday to Sunday, week 1 being the report date's. Later: after week 8, or "
    "without a date. Outflows are negative in the chart; the lines are the cumulative net, by due date and "
    "expected.":
        "Créances clients et dettes fournisseurs ouvertes par échéance, et à côté les mêmes créances à la date "
        "probable de leur paiement (d'après l'historique de paiement des clients, voir Paiements attendus "
        "ci-dessous). Les encaissements sont nets de ce que chaque client déduira : ses avoirs et paiements non "
        "imputés (trésorerie déjà reçue), dans la limite de ce qu'il doit, sur ses factures les plus anciennes ; ce "
        "dont le crédit d'un client dépasse sa dette lui est dû, un décaissement dans Plus tard. Les décaissements "
        "comptent les factures reçues non payées, approuvées ou en attente d'approbation ; une facture sans "
        "échéance est due 30 jours après son émission (L441-10 I). Les factures contestées sont en attente : "
        "montrées à part, hors décaissements et hors échu. Échu : échéance avant la date d'arrêté (un paiement "
        "attendu n'est jamais dans le passé : il n'en a pas). Les semaines vont du lundi au dimanche, la semaine 1 "
        "étant celle de la date d'arrêté. Plus tard : après la semaine 8, ou sans date. Les décaissements sont "
        "négatifs dans le graphique ; les lignes sont le solde cumulé, par échéance et attendu.",
    "Assumed due dates: {count} open invoice(s), {amount} of the inflows, have no due date from the API; they are "
    "placed by the emit date + 30 days (French commercial code L441-10).":
        "Échéances supposées : {count} facture(s) ouverte(s), {amount} des encaissements, n'ont pas d'échéance "
        "fournie par l'API ; elles sont placées à la date d'émission + 30 jours (article L441-10 du Code de "
        "commerce).",
    "Nothing to receive nor to pay on this date.": "Rien à encaisser ni à payer à cette date.",
    "Expected payments": "Paiements attendus",
    "none": "aucune",
    "When each open invoice will likely be paid: its due date + the median days the customer paid after the due "
    "date, over its invoices paid by the report date; a customer with fewer than 5 paid invoices borrows the rest "
    "from the portal's median (weight n/5), one with none gets the portal's. An estimate already past moves to the "
    "day after the report date (estimate passed). Invoices by basis: {bases}. Backtest against \"paid on the due "
    "date\": bench/RESULTS.md.":
        "Date probable de paiement de chaque facture ouverte : son échéance + la médiane des jours de retard du "
        "client, sur ses factures payées à la date d'arrêté ; un client de moins de 5 factures payées emprunte le "
        "reste à la médiane du portail (poids n/5), un client sans facture payée prend celle du portail. Une "
        "estimation déjà passée est reportée au lendemain de la date d'arrêté (estimation dépassée). Factures par "
        "base : {bases}. Contrôle a posteriori contre « payée à l'échéance » : bench/RESULTS.md.",
    "inflows by due date": "encaissements par échéance",
    "inflows expected (payment history)": "encaissements attendus (historique de paiement)",
    "outflows": "décaissements",
    "cumulative net by due date": "solde cumulé par échéance",
    "cumulative net expected": "solde cumulé attendu",
    # Trends
    "Open receivables, the overdue part of them and DSO at each of the last {months} month-ends up to the report "
    "date, each from the SQL models built as of that month-end over the readers' copy (what `invoicing-warehouse "
    "models --as-of` would publish for it). Overdue share: overdue / open receivables, in percent. The run "
    "publishes them with the copy for its report date; another date builds them here, once.":
        "Créances ouvertes, leur part échue et le DSO à chacune des {months} dernières fins de mois jusqu'à la date "
        "d'arrêté, chacune d'après les modèles SQL construits à cette fin de mois sur la copie de lecture (ce que "
        "`invoicing-warehouse models --as-of` publierait). Part échue : échu / créances ouvertes, en pourcentage. "
        "L'exécution les publie avec la copie pour sa date d'arrêté ; une autre date les construit ici, une fois.",
    "No receivables at any of these month-ends.": "Aucune créance à ces fins de mois.",
    "receivables": "créances",
    "overdue": "échu",
    # Freshness
    "unknown": "inconnue",
    "{count} min ago": "il y a {count} min",
    "{count} h ago": "il y a {count} h",
    "{count} days ago": "il y a {count} jours",
    "Snapshot published": "Copie publiée",
    "Last sync": "Dernière synchronisation",
    "last successful dlt load in the copy": "dernier chargement dlt réussi dans la copie",
    "Snapshot size": "Taille de la copie",
    "The warehouse has changes the readers' copy does not show yet (a run did not publish). Publish them: "
    "`invoicing-warehouse models --warehouse {warehouse}`.":
        "L'entrepôt contient des modifications que la copie de lecture ne montre pas encore (une exécution n'a "
        "pas publié). Publiez-les : `invoicing-warehouse models --warehouse {warehouse}`.",
    "Snapshot published at {moment} (UTC)": "Copie publiée le {moment} (UTC)",
    "Last load per raw table": "Dernier chargement par table brute",
    "Checks on the readers' copy": "Contrôles sur la copie de lecture",
    "All {count} checks pass.": "Les {count} contrôles réussissent.",
    "{failed} of {count} checks fail.": "{failed} contrôles sur {count} échouent.",
    "Webhook hints set aside": "Notifications webhook mises de côté",
    "The hints spool could not be read: {error}": "La file des notifications n'a pas pu être lue : {error}",
    "No webhook hint is kept dead.": "Aucune notification webhook n'est en échec définitif.",
    "{total} webhook hint(s) kept dead: the API refused their record alone, or the delivery named no record. "
    "Real-time updates skipped these records; the scheduled sync still reads them. A forged delivery looks like "
    "this: trace it, or delete the row once its cause is fixed.":
        "{total} notification(s) webhook en échec définitif : l'API a refusé leur enregistrement seul, ou la "
        "livraison ne nommait aucun enregistrement. La mise à jour en temps réel les a sautés ; la synchronisation "
        "planifiée les lit quand même. Une livraison forgée ressemble à ceci : retrouvez son origine, ou supprimez "
        "la ligne une fois la cause corrigée.",
    # Portals
    "Published marts · {count} portals · the status is `invoicing-warehouse status`'s":
        "Tables publiées · {count} portails · l'état est celui de `invoicing-warehouse status`",
    "Needs attention: {portals} (stale, a failing check, or a webhook hint kept dead).":
        "À surveiller : {portals} (données anciennes, un contrôle en échec, ou une notification webhook en échec).",
}
