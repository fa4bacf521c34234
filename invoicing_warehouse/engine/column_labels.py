"""What people read above a column, in each language the product speaks (invoicing_warehouse/engine/report_language.py):
the dashboard's tables and the headers of the files made for people (CSV for French spreadsheets, xlsx). The
plain CSV and Parquet keep the marts' own column names, which programs re-read.

A column without a label here keeps its mart name in both languages. The D441-6 tables' columns are already the
arrêté's French terms (`0 jour (indicatif)`, `Total (1 jour et plus)`...): legal terms, kept identical in both.
"""

from __future__ import annotations

import pandas as pd

from invoicing_warehouse.engine.report_language import ENGLISH, FRENCH

# column -> (English, French); the French terms are the law's where a text has one (TTC, tranche de retard,
# indemnité forfaitaire, pénalités de retard: code de commerce L441-10, D441-5, D441-6)
COLUMN_LABELS: dict[str, tuple[str, str]] = {
    "customer_name": ("Customer", "Client"),
    "customer_reference": ("Ref.", "Réf."),
    "overdue_amount": ("Overdue", "Échu"),
    "overdue_invoice_count": ("Overdue invoices", "Factures échues"),
    "total_open": ("Total open", "Encours total"),
    "oldest_overdue_reference": ("Oldest overdue", "Plus ancienne échue"),
    "oldest_due_date": ("Due", "Échéance"),
    "oldest_days_past_due": ("Days late", "Jours de retard"),
    "next_reminder_template": ("Next reminder", "Prochaine relance"),
    "aging_bucket": ("Days past due", "Jours après échéance"),
    "open_amount": ("Open", "Restant dû"),
    "overdue": ("Overdue?", "Échue ?"),
    "invoice_count": ("Invoices", "Factures"),
    "reference": ("Reference", "Référence"),
    "emit_date": ("Emitted", "Émise le"),
    "due_date": ("Due", "Échéance"),
    "total_incl_tax": ("Total incl. tax", "Total TTC"),
    "paid_by_payments": ("Paid", "Réglé"),
    "settled_by_credit_notes": ("Credit notes", "Avoirs"),
    "days_past_due": ("Days late", "Jours de retard"),
    "supplier_name": ("Supplier", "Fournisseur"),
    "document_type": ("Type", "Type"),
    "issue_date": ("Issued", "Émise le"),
    "amount_due": ("Amount due", "Montant dû"),
    "week_start": ("Week from", "Semaine du"),
    "week_end": ("to", "au"),
    "falling_due_amount": ("Falling due", "À échoir"),
    "undated_amount": ("No due date", "Sans échéance"),
    "total_amount": ("Total", "Total"),
    "document_count": ("Documents", "Documents"),
    "legal_identifier": ("SIRET", "SIRET"),
    "total_due": ("Total due", "Total dû"),
    "due_current": ("Not yet due", "Non échu"),
    "next_due_date": ("Next due", "Prochaine échéance"),
    "period_label": ("Period", "Période"),
    "expected_inflows": ("Inflows (net of customers' credit)", "Encaissements (nets des crédits clients)"),
    "expected_outflows": ("Outflows (payables)", "Décaissements (fournisseurs)"),
    "net_flow": ("Net", "Solde"),
    "credit_deducted": ("Customers' credit deducted", "Crédits clients déduits"),
    "credit_balances_owed": ("Credit owed to customers (in outflows)",
                             "Crédits dus aux clients (dans les décaissements)"),
    "disputed_outflows": ("Disputed bills (on hold)", "Factures contestées (en attente)"),
    "cumulative_net": ("Cumulative net", "Solde cumulé"),
    "receivable_count": ("Receivables", "Créances"),
    "payable_count": ("Payables", "Dettes"),
    "raw_table": ("Raw table", "Table brute"),
    "rows": ("Rows", "Lignes"),
    "last_loaded_at": ("Last loaded", "Dernier chargement"),
    "load_id": ("dlt load", "Chargement dlt"),
    "open_current": ("Current", "Non échu"),
    "open_1_30": ("1-30", "1-30"),
    "open_31_60": ("31-60", "31-60"),
    "open_61_90": ("61-90", "61-90"),
    "open_90_plus": ("90+", "90+"),
    "due_1_30": ("1-30", "1-30"),
    "due_31_60": ("31-60", "31-60"),
    "due_61_90": ("61-90", "61-90"),
    "due_90_plus": ("90+", "90+"),
    "row_count": ("Rows", "Lignes"),
    "month_end": ("Month end", "Fin de mois"),
    "overdue_share": ("Overdue share (%)", "Part échue (%)"),
    "check": ("Check", "Contrôle"),
    "asset": ("Asset", "Actif"),
    "passed": ("Passed", "Réussi"),
    "severity": ("Severity", "Gravité"),
    "detail": ("Detail", "Détail"),
    "portal": ("Portal", "Portail"),
    "open_receivables": ("Open receivables", "Créances ouvertes"),
    "overdue_receivables": ("Overdue", "Échu"),
    "dso_days": ("DSO (days)", "DSO (jours)"),
    "last_sync": ("Last sync (UTC)", "Dernière synchronisation (UTC)"),
    "failing_checks": ("Failing checks", "Contrôles en échec"),
    "late_invoice_count": ("Late invoices", "Factures en retard"),
    "amount_late": ("Amount late", "Montant en retard"),
    "flat_indemnity_eur": ("Indemnity (40 €)", "Indemnité forfaitaire (40 €)"),
    "interest_eur": ("Interest (€)", "Pénalités de retard (€)"),
    "claim_eur": ("Claim (€)", "Créance réclamée (€)"),
    "interest_unknown_count": ("Interest unknown", "Pénalités inconnues"),
    "paid_date": ("Paid", "Réglée le"),
    "days_late": ("Days late", "Jours de retard"),
    "interest_amount": ("Interest", "Pénalités de retard"),
    "interest_flag": ("Interest note", "Remarque sur les pénalités"),
    "rate_basis": ("Rate basis", "Fondement du taux"),
    "claim_status": ("Claim status", "Statut de la réclamation"),
    "customer_type": ("Customer type", "Type de client"),
    "customer_type_basis": ("Type from", "Type déduit de"),
    "is_customer_type_inferred": ("Type inferred", "Type déduit"),
    "is_due_date_assumed": ("Due date assumed", "Échéance supposée"),
    "is_paid_date_assumed": ("Paid date assumed", "Date de règlement supposée"),
    "claim_excluded_reason": ("Not claimed", "Non réclamé"),
    "period_start": ("From", "Du"),
    "period_end": ("To", "Au"),
    "days_late_in_period": ("Days", "Jours"),
    "ecb_rate_percent": ("ECB rate (%)", "Taux BCE (%)"),
    "interest_rate_percent": ("Rate applied (%)", "Taux appliqué (%)"),
    "delay_bucket": ("Days late (tranche de retard)", "Tranche de retard de paiement"),
    "amount_incl_tax": ("Amount incl. tax (TTC)", "Montant TTC"),
    "share_of_year_percent": ("Share of the year (%)", "Part de l'exercice (%)"),
    "year_total_incl_tax": ("Year's purchases / sales (TTC)", "Achats / chiffre d'affaires de l'exercice (TTC)"),
    "side": ("Side", "Sens"),
    "counterparty_name": ("Customer / supplier", "Client / fournisseur"),
    "term_days": ("Term (days)", "Délai (jours)"),
    "cap_date": ("Legal cap", "Plafond légal"),
    "days_beyond_cap": ("Days beyond cap", "Jours au-delà du plafond"),
    "forecast_inflows": ("Expected inflows (payment history)", "Encaissements attendus (historique de paiement)"),
    "forecast_cumulative_net": ("Cumulative net (expected)", "Solde cumulé (attendu)"),
    "forecast_receivable_count": ("Receivables (expected)", "Créances (attendues)"),
    "expected_payment_date": ("Expected payment", "Paiement attendu"),
    "basis": ("Basis", "Base"),
    "customer_paid_count": ("Customer's paid invoices", "Factures réglées du client"),
    "expected_days_after_due": ("Days after due (expected)", "Jours après échéance (attendus)"),
    "is_estimate_passed": ("Estimate passed", "Estimation dépassée"),
    "measure": ("Measure", "Mesure"),
    "portal_days": ("This portal (days)", "Ce portail (jours)"),
    "benchmark_days": ("Observatory (days)", "Observatoire (jours)"),
    "benchmark_size": ("Observatory size", "Taille (observatoire)"),
    "figure_year": ("Figure year", "Année du chiffre"),
    "report": ("Report", "Rapport"),
    "source": ("Source", "Source"),
    "note": ("Note", "Note"),
}
INDEX = {ENGLISH: 0, FRENCH: 1}


def column_label(column: str, language: str) -> str:
    """What people read above `column` in `language` (`fr` or `en`); the column's own name when it has no label."""
    labels = COLUMN_LABELS.get(column)
    return labels[INDEX[language]] if labels else column


def labelled(frame: pd.DataFrame, language: str) -> pd.DataFrame:
    """`frame` with its columns renamed to their labels in `language`. Two columns of one label (`Due` for
    `due_date` and `oldest_due_date`) keep the mart's name beside it, so no header is ambiguous."""
    labels = [column_label(str(column), language) for column in frame.columns]
    unique = [label if labels.count(label) == 1 or label == column else f"{label} ({column})"
              for label, column in zip(labels, frame.columns, strict=True)]
    return frame.set_axis(unique, axis=1)
