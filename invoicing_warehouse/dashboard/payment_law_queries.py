"""What the two pages of French payment law read: the late-payment claims (their totals in
marts.late_payment_claims_summary and marts.late_payment_claim_tallies, by customer in
marts.late_payment_claims_by_customer, each invoice in marts.late_payment_claims and its interest lines in
marts.late_payment_interest_periods) and the D441-6 payment-terms table (marts.payment_terms_report,
marts.payment_terms_over_cap). One portal at a time; long lists are cut to DISPLAY_ROWS on screen, their row count
kept. Every figure is a mart column: these queries select, filter and sort."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

import duckdb
import pandas as pd

from invoicing_warehouse.dashboard.queries import DISPLAY_ROWS, Listing, frame
from invoicing_warehouse.dashboard.reminder_letter import LetterSums

# the claims by customer (marts.late_payment_claims_by_customer: business customers only, a consumer's late
# invoice claims nothing), the columns the page lists
_BY_CUSTOMER = """
    select customer_name, late_invoice_count, amount_late, open_amount, flat_indemnity_eur, interest_eur, claim_eur,
           interest_unknown_count, interest_flag, rate_flag, customer_id
    from marts.late_payment_claims_by_customer
    where portal_id = ?"""
BY_CUSTOMER_ORDER = "claim_eur desc, customer_name, customer_id"


@dataclass(frozen=True)
class ClaimsFigures:
    """The Late-payment claims page's figures for one portal (marts.late_payment_claims_summary, its tallies and
    its list by customer)."""

    claimed_invoice_count: int
    flat_indemnities_eur: Decimal
    interest_eur: Decimal
    consumer_invoice_count: int  # left out: consumers' late invoices
    consumer_amount_late: Decimal
    unconverted_invoice_count: int  # invoices not in euros: interest in their currency, not in the totals
    by_customer: Listing  # largest claim first
    last_rate_change: tuple[date, Decimal] | None = None  # the rate table's newest row
    rate_table_checked_on: date | None = None  # the day the rate table was last checked against the ECB
    rate_table_behind_count: int = 0  # claims with a half-year after that day: interest unknown, not in the totals
    paid_invoices_claim_eur: Decimal = Decimal(0)  # of the total claim, the part of invoices already paid
    excluded: tuple[tuple[str, int], ...] = ()  # business claims the law bars: (reason, count)
    rate_bases: str = ""  # the rates the claims use (legal, contractual, public buyer), `, `-joined
    # claims at a contractual rate below 3 x the legal interest rate (L441-10 II): count, their interest at that
    # rate (in the totals) and at the floor; and claims whose half-year's legal rate is unknown (rate unchecked)
    below_floor: tuple[int, Decimal, Decimal] = (0, Decimal(0), Decimal(0))
    floor_unchecked_count: int = 0
    # the claims the law allows by what the user recorded (to claim, claimed, waived): (status, count, euros)
    by_status: tuple[tuple[str, int, Decimal], ...] = ()
    total_claim_eur: Decimal = Decimal(0)  # indemnities + interest
    open_invoices_claim_eur: Decimal = Decimal(0)  # of the total claim, the part of invoices still open


_SUMMARY = """
    select claimed_invoice_count, flat_indemnities_eur, interest_eur, consumer_invoice_count, consumer_amount_late,
           unconverted_invoice_count, rate_table_behind_count, paid_invoices_claim_eur, rate_bases, below_floor_count,
           below_floor_interest_eur, below_floor_interest_at_floor_eur, floor_unchecked_count, total_claim_eur,
           open_invoices_claim_eur
    from marts.late_payment_claims_summary where portal_id = ?"""
# a portal without a late invoice has no summary row: nothing claimed
_NO_CLAIM = (0, Decimal(0), Decimal(0), 0, Decimal(0), 0, 0, Decimal(0), None, 0, Decimal(0), Decimal(0), 0,
             Decimal(0), Decimal(0))


def claims(connection: duckdb.DuckDBPyConnection, portal_id: str) -> ClaimsFigures:
    """Totals, the consumers left out and the claims by customer of one portal."""
    row = connection.execute(_SUMMARY, [portal_id]).fetchone() or _NO_CLAIM
    (claimed, indemnities, interest, consumers, consumer_late, unconverted, behind, paid, bases, below_count,
     below_interest, below_at_floor, unchecked, total_claim, open_claim) = row
    total = connection.execute(f"select count(*) from ({_BY_CUSTOMER})", [portal_id]).fetchone()
    rows = frame(connection, f"{_BY_CUSTOMER} order by {BY_CUSTOMER_ORDER} limit {DISPLAY_ROWS}", [portal_id])
    tallies = connection.execute(
        "select tally, label, invoice_count, claim_eur from marts.late_payment_claim_tallies where portal_id = ? "
        "order by tally, label", [portal_id]).fetchall()
    # the rate table cannot know a change published after it was checked: the page names both days
    last = connection.execute("select effective_date, rate_percent, table_checked_on "
                              "from reference.ecb_main_refinancing_rates order by effective_date desc limit 1"
                              ).fetchone()
    return ClaimsFigures(
        int(claimed), indemnities, interest, int(consumers), consumer_late, int(unconverted),
        Listing(rows, int(total[0]) if total else 0),
        (last[0], last[1]) if last else None, last[2] if last else None, int(behind), paid,
        tuple((label, int(count)) for tally, label, count, _ in tallies if tally == "excluded"),
        bases or "",
        (int(below_count), below_interest, below_at_floor), int(unchecked),
        tuple((label, int(count), euros) for tally, label, count, euros in tallies if tally == "status"),
        total_claim, open_claim,
    )


def claims_by_customer(connection: duckdb.DuckDBPyConnection, portal_id: str) -> pd.DataFrame:
    """Every row of the claims by customer (the CSV download)."""
    return frame(connection, f"{_BY_CUSTOMER} order by {BY_CUSTOMER_ORDER}", [portal_id])


def customer_letter(connection: duckdb.DuckDBPyConnection, portal_id: str, customer_id: str) -> LetterSums:
    """What one customer's reminder letter asks for (marts.late_payment_claims_by_customer's `letter_*`)."""
    row = connection.execute(
        """select letter_invoice_count, letter_open_amount, letter_interest_amount, letter_indemnities_eur,
                  letter_unknown_interest_count, letter_total
           from marts.late_payment_claims_by_customer where portal_id = ? and customer_id = ?""",
        [portal_id, customer_id]).fetchone()
    if row is None:  # not a business customer with a late invoice: the letter claims nothing
        return LetterSums(0, Decimal(0), Decimal(0), Decimal(0), 0, None)
    return LetterSums(int(row[0]), row[1], row[2], row[3], int(row[4]), row[5])


def customer_claims(connection: duckdb.DuckDBPyConnection, portal_id: str, customer_id: str) -> pd.DataFrame:
    """One customer's late invoices as a reminder letter cites them, the oldest due date first."""
    return frame(
        connection,
        """select reference, emit_date, due_date, is_due_date_assumed, paid_date, is_paid_date_assumed, days_late,
                  total_incl_tax, amount_late, open_amount, flat_indemnity_eur, interest_amount, interest_flag,
                  rate_basis, rate_flag, claim_status, customer_type, customer_type_basis, is_customer_type_inferred,
                  currency, claim_excluded_reason, invoice_id
           from marts.late_payment_claims where portal_id = ? and customer_id = ?
           order by due_date, reference, invoice_id""",
        [portal_id, customer_id],
    )


def _percent(value: Decimal | None) -> Decimal | None:
    # the marts keep 4 decimals (a user's rate table may need them); a rate is read with 2 when it has no more
    if value is None:
        return None
    two = value.quantize(Decimal("0.01"))
    return two if two == value else value.normalize()


def customer_interest_lines(connection: duckdb.DuckDBPyConnection, portal_id: str, customer_id: str) -> pd.DataFrame:
    """One customer's interest lines: each run of days at one amount late and one half-year's rate."""
    lines = frame(
        connection,
        """select reference, period_start, period_end, days_late_in_period, amount_late, ecb_rate_percent,
                  interest_rate_percent, interest_amount, invoice_id
           from marts.late_payment_interest_periods where portal_id = ? and customer_id = ?
           order by due_date, reference, invoice_id, period_start""",
        [portal_id, customer_id],
    )
    for column in ("ecb_rate_percent", "interest_rate_percent"):
        lines[column] = [_percent(value) for value in lines[column]]
    return lines


@dataclass(frozen=True)
class PaymentTermsFigures:
    """The D441-6 page's figures for one portal."""

    table: pd.DataFrame  # marts.payment_terms_report: both sides, every column
    over_cap: Listing  # marts.payment_terms_over_cap, furthest beyond the cap first
    model_table: pd.DataFrame | None = None  # marts.payment_terms_table: the legal model's layout, French labels


# the legal models' columns (arrêté of 20 March 2017), as marts.payment_terms_table and
# marts.payment_terms_paid_late_table name them
MODEL_COLUMNS = ("Ligne", "0 jour (indicatif)", "1 à 30 jours", "31 à 60 jours", "61 à 90 jours",
                 "91 jours et plus", "Total (1 jour et plus)", "Précisions")
# the rows of each model that hold a number of invoices, shown without decimals
COUNT_ROWS = {"payment_terms_table": (1, 4), "payment_terms_paid_late_table": (1, 5)}


def model_table(connection: duckdb.DuckDBPyConnection, mart: str, portal_id: str) -> pd.DataFrame:
    """One of the two D441-6 tables of one portal in the legal model's layout (both sides, `side` and
    `Tableau` kept to split them): `mart` is payment_terms_table (D441-6 I) or payment_terms_paid_late_table
    (D441-6 II). Numbers of invoices as whole numbers."""
    columns = ", ".join(f'"{column}"' for column in MODEL_COLUMNS)
    rows = frame(
        connection,
        f"""select side, "Tableau", row_order, {columns}, fiscal_year_start, as_of_date
            from marts.{mart} where portal_id = ? order by side, row_order""",
        [portal_id],
    )
    counts = rows["row_order"].isin(COUNT_ROWS[mart])
    for column in MODEL_COLUMNS[1:-1]:
        rows[column] = [int(value) if is_count and value is not None and not pd.isna(value) else value
                        for value, is_count in zip(rows[column], counts, strict=True)]
    return rows


_OVER_CAP = """
    select side, reference, coalesce(counterparty_name, counterparty_id) as counterparty_name, emit_date, due_date,
           term_days, cap_date, cap_rule, days_beyond_cap, amount_incl_tax, document_id
    from marts.payment_terms_over_cap where portal_id = ?"""
OVER_CAP_ORDER = "days_beyond_cap desc, side, reference, document_id"


def payment_terms(connection: duckdb.DuckDBPyConnection, portal_id: str) -> PaymentTermsFigures:
    """The payment-terms table and the terms beyond the legal caps of one portal."""
    table = frame(
        connection,
        """select side, delay_bucket, invoice_count, amount_incl_tax, share_of_year_percent, year_total_incl_tax,
                  fiscal_year_start, as_of_date
           from marts.payment_terms_report where portal_id = ? order by side, bucket_order""",
        [portal_id],
    )
    total = connection.execute(f"select count(*) from ({_OVER_CAP})", [portal_id]).fetchone()
    rows = frame(connection, f"{_OVER_CAP} order by {OVER_CAP_ORDER} limit {DISPLAY_ROWS}", [portal_id])
    return PaymentTermsFigures(table, Listing(rows, int(total[0]) if total else 0),
                               model_table(connection, "payment_terms_table", portal_id))


def over_cap(connection: duckdb.DuckDBPyConnection, portal_id: str) -> pd.DataFrame:
    """Every document beyond the legal caps (the CSV download)."""
    return frame(connection, f"{_OVER_CAP} order by {OVER_CAP_ORDER}", [portal_id])
