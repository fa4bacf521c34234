"""Every page of the dashboard read in Chromium in French (`?lang=fr`) and in English (`?lang=en`): its title, a
tile or a column header in that language, the report date as the language writes it; the reminder letter and the
downloaded files' headers in both; and, without the setting, French for the demo's portal, whose figures are in
euros (invoicing_warehouse/engine/report_language.py). The legal model's French labels (D441-6) are the same in both."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from dashboard_browser import WAIT_S, download, metric, open_page, parse_eur, settled
from openpyxl import load_workbook
from playwright.sync_api import Page

from harness.dashboard_process import dashboard_process
from harness.demo_warehouse import build_demo_warehouse
from invoicing_warehouse.dashboard.payment_law_queries import claims_by_customer

# page path, its key table, then per language: the title, a column of the key table and its header
PAGES = {
    "receivables": ("", "overdue_customers", "customer_name",
                    {"fr": ("Créances clients", "Client"), "en": ("Receivables", "Customer")}),
    "payables": ("payables", "payables_this_week", "supplier_name",
                 {"fr": ("Dettes fournisseurs", "Fournisseur"), "en": ("Payables", "Supplier")}),
    "cash_outlook": ("cash_outlook", "cash_outlook", "period_label",
                     {"fr": ("Prévision de trésorerie", "Période"), "en": ("Cash outlook", "Period")}),
    "trends": ("trends", "trends", "month_end", {"fr": ("Tendances", "Fin de mois"), "en": ("Trends", "Month end")}),
    "late_payment_claims": ("late_payment_claims", "claims_by_customer", "claim_eur",
                            {"fr": ("Pénalités de retard", "Créance réclamée (€)"),
                             "en": ("Late-payment claims", "Claim (€)")}),
    "payment_terms": ("payment_terms", "payment_terms_received", "delay_bucket",
                      {"fr": ("Délais de paiement (D441-6)", "Tranche de retard de paiement"),
                       "en": ("Payment terms (D441-6)", "Days late (tranche de retard)")}),
    "payment_terms_paid_late": ("payment_terms_paid_late", "d441_6_paid_late_issued", "0 jour (indicatif)",
                                {"fr": (("Factures ayant connu un retard de paiement au cours de l'exercice "
                                        "(D441-6 II)"), "0 jour (indicatif)"),
                                 "en": ("Paid late during the year (D441-6 II)", "0 jour (indicatif)")}),
    "benchmarks": ("benchmarks", "benchmarks", "measure",
                   {"fr": ("Comparaisons", "Mesure"), "en": ("Benchmarks", "Measure")}),
    "freshness": ("freshness", "raw_tables", "raw_table",
                  {"fr": ("Fraîcheur des données", "Table brute"), "en": ("Freshness", "Raw table")}),
}
# the sidebar's names of the pages, in each language
NAVIGATION = {"fr": ["Créances clients", "Dettes fournisseurs", "Prévision de trésorerie", "Pénalités de retard"],
              "en": ["Receivables", "Payables", "Cash outlook", "Late-payment claims"]}


def _open(page: Page, url: str, path: str, key_table: str, language: str) -> None:
    open_page(page, url, f"{path}?lang={language}", key_table)


def _title(page: Page) -> str:
    return page.locator('[data-testid="stMain"] h1').first.inner_text().strip()


def _header(page: Page, table: str, column: str) -> str:
    # the header above the cells of `column` (same position in the row)
    return page.evaluate(
        """([table, column]) => {
            const element = document.querySelector(`table[data-table="${table}"]`);
            const cell = element.querySelector(`td[data-column="${column}"]`);
            const index = [...cell.parentElement.children].indexOf(cell);
            return element.querySelectorAll('thead th')[index].innerText.trim();
        }""",
        [table, column],
    )


@pytest.mark.parametrize("language", ["fr", "en"])
@pytest.mark.parametrize("name", list(PAGES))
def test_each_page_speaks_the_language_chosen(dashboard, page, name, language):
    path, key_table, column, texts = PAGES[name]
    _open(page, dashboard.url, path, key_table, language)
    title, header = texts[language]
    assert _title(page) == title
    assert _header(page, key_table, column) == header
    day = dashboard.as_of.strftime("%d/%m/%Y") if language == "fr" else dashboard.as_of.isoformat()
    caption = f"Au {day} · portail " if language == "fr" else f"As of {day} · portal "
    assert page.get_by_text(caption).count() >= 1
    navigation = page.locator('[data-testid="stSidebarNav"]')
    for shown in NAVIGATION[language]:
        assert navigation.get_by_text(shown, exact=True).count() == 1


@pytest.fixture(scope="module")
def trends_dashboard(tmp_path_factory) -> Iterator[tuple[str, Path]]:
    """A small demo warehouse published with its month-end trends, and a dashboard on it, of this module's own:
    the session's dashboard warehouse is republished by other files' tests (without the trends the suite turns
    off), so the dates of its Trends page depend on which files ran before."""
    warehouse = tmp_path_factory.mktemp("trends") / "warehouse.duckdb"
    with pytest.MonkeyPatch.context() as build:
        build.setenv("INVOICING_PUBLISH_TRENDS", "1")
        build_demo_warehouse(warehouse, seed=1, scale=100)
    with dashboard_process(warehouse, warehouse.with_name("dashboard.log")) as url:
        yield url, warehouse.with_name("warehouse.read.duckdb")


@pytest.mark.parametrize("language", ["fr", "en"])
def test_tiles_and_dates_follow_the_language(trends_dashboard, page, language):
    url, snapshot = trends_dashboard
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        [(open_total,)] = connection.execute("select open_receivables from marts.dso").fetchall()
        month_ends = [row[0] for row in connection.execute(
            "select month_end from marts.month_end_trends order by month_end").fetchall()]
    assert month_ends, "published without its trend: the dates would prove nothing"
    _open(page, url, "", "overdue_customers", language)
    assert parse_eur(metric(page, "Encours total" if language == "fr" else "Total open")) == open_total
    _open(page, url, "trends", "trends", language)
    shown = page.evaluate("""() => [...document.querySelectorAll(
                                        'table[data-table="trends"] td[data-column="month_end"]')]
                                     .map(cell => cell.innerText.trim())""")
    written = [d.strftime("%d/%m/%Y") if language == "fr" else d.isoformat() for d in month_ends]
    assert shown and set(shown) <= set(written)


LETTER = {
    "fr": [("Objet : factures impayées à échéance, pénalités de retard et indemnité forfaitaire pour frais de "
           "recouvrement"), "En application de l'article L441-10 du Code de commerce",
           ("indemnité forfaitaire pour frais de recouvrement de 40 euros par facture (article D441-5 du Code de "
           "commerce)"), "soit au total "],
    "en": ["Subject: overdue invoices, late-payment penalties and fixed indemnity for recovery costs",
           "Under article L441-10 of the French commercial code", ("fixed indemnity for recovery costs of 40 euros "
           "per invoice"), "in all "],
}


@pytest.mark.parametrize("language", ["fr", "en"])
def test_the_reminder_letter_is_written_in_the_language(dashboard, page, language):
    with duckdb.connect(str(dashboard.snapshot), read_only=True) as connection:
        portal = connection.execute("select min(portal_id) from marts.late_payment_claims").fetchone()[0]
        first = claims_by_customer(connection, portal)["customer_id"].iloc[0]  # the letter's customer by default
        # what the letter asks for, from the mart: the claimable invoices' rest, interest and indemnities
        [(claim,)] = connection.execute(
            """select sum(open_amount) + coalesce(sum(interest_amount), 0) + sum(flat_indemnity_eur)
               from marts.late_payment_claims where portal_id = ? and customer_id = ?
                 and customer_type = 'business' and claim_excluded_reason is null and claim_status <> 'waived'""",
            [portal, first]).fetchall()
    _open(page, dashboard.url, "late_payment_claims", "claims_by_customer", language)
    letter = page.locator('[data-letter="reminder"]')
    letter.wait_for(timeout=WAIT_S * 1000)
    settled(page)
    text = letter.inner_text()
    for expected in LETTER[language]:
        assert expected in text
    total = re.search(r"(?:soit au total|in all) (.+?)\.(?:\n|$)", text)
    assert total and parse_eur(total[1]) == claim


@pytest.mark.parametrize("language", ["fr", "en"])
def test_downloaded_files_carry_the_headers_of_the_language_and_the_legal_terms_in_both(dashboard, page, language):
    _open(page, dashboard.url, "benchmarks", "benchmarks", language)
    xlsx = download(page, lambda: page.locator(".st-key-download_xlsx_benchmarks button"))
    with open(xlsx.path(), "rb") as file:
        header = next(load_workbook(io.BytesIO(file.read()), read_only=True).active.iter_rows(values_only=True))
    assert header[:3] == (("Mesure", "Ce portail (jours)", "Observatoire (jours)") if language == "fr"
                          else ("Measure", "This portal (days)", "Observatory (days)"))
    _open(page, dashboard.url, "payment_terms", "payment_terms_received", language)
    french_csv = download(page, lambda: page.locator(".st-key-download_csv-fr_d441_6_issued button"))
    with open(french_csv.path(), "rb") as file:
        first_line = file.read().decode("utf-8-sig").splitlines()[0]
    # the arrêté's own labels, identical in both languages
    assert first_line == ("Ligne;0 jour (indicatif);1 à 30 jours;31 à 60 jours;61 à 90 jours;91 jours et plus;"
                          "Total (1 jour et plus);Précisions")
    by_band = download(page, lambda: page.locator(".st-key-download_csv-fr_payment_terms_issued button"))
    with open(by_band.path(), "rb") as file:
        first_line = file.read().decode("utf-8-sig").splitlines()[0]
    assert first_line.startswith("Sens;Tranche de retard de paiement;Factures;Montant TTC" if language == "fr"
                                 else "Side;Days late (tranche de retard);Invoices;Amount incl. tax (TTC)")


def test_without_the_setting_a_portal_in_euros_reads_in_french(dashboard, page, tmp_path, monkeypatch):
    monkeypatch.delenv("INVOICING_LANGUAGE", raising=False)
    with dashboard_process(dashboard.warehouse, tmp_path / "dashboard.log", language=None) as url:
        open_page(page, url, "", "overdue_customers")
        assert _title(page) == "Créances clients"
    monkeypatch.setenv("INVOICING_LANGUAGE", "en")
    with dashboard_process(dashboard.warehouse, tmp_path / "dashboard.log", language=None) as url:
        open_page(page, url, "", "overdue_customers")
        assert _title(page) == "Receivables"
