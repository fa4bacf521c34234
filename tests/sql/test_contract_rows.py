"""One test per ledger row whose field a contract-only server may not serve (docs/contract.md, §4): on the
hand-built portal of model_fixture.py, changed the way such a server would serve it, the marts equal the
hand-computed ones of test_receivables_marts.py / test_payables_marts.py, or a contract check fails naming
the field and the marts it spoils. Never silently wrong numbers. Checks run through Dagster (in process)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal

import duckdb
import pytest
from dagster import AssetKey, AssetSelection, AssetSpec, Definitions, define_asset_job
from model_fixture import D, P, load_fixture

from assets.checks import contract_checks, model_checks
from assets.resources import WarehouseResource
from invoicing_warehouse.engine.sql_runner import build_models
from invoicing_warehouse.engine.sql_runner import discover_models as _discover_models

MARTS = [
    "receivables",
    "receivables_by_customer",
    "overdue_customers",
    "supplier_payables",
    "payables_by_supplier",
    "payables_schedule",
]
RECEIVABLES_MARTS = ("marts.receivables", "marts.receivables_by_customer", "marts.overdue_customers")


def build(tmp_path, as_of: date, *statements: str, name: str = "w") -> str:
    """The fixture portal, changed by `statements` (SQL on the raw tables), built as of `as_of`; its path."""
    path = str(tmp_path / f"{name}-{as_of.isoformat()}.duckdb")
    with duckdb.connect(path) as conn:
        conn.execute("set TimeZone = 'America/New_York'")
        load_fixture(conn)
        for statement in statements:
            conn.execute(statement)
        build_models(conn, as_of=as_of)
    return path


def marts(path: str, names: list[str] = MARTS) -> dict[str, list[tuple]]:
    """Every row of each mart, sorted, for a row-for-row comparison."""
    with duckdb.connect(path, read_only=True) as conn:
        return {
            name: sorted(conn.execute(f"select * from marts.{name}").fetchall(), key=repr) for name in names
        }


def checks(path: str, wanted: Callable[[str], bool] = lambda name: True) -> dict[tuple[str, str], tuple]:
    """Runs the contract checks on `path` through Dagster: {(asset, check): (passed, severity, description)}."""
    contract = (contract_checks() + model_checks(_discover_models()))
    targets = {key.asset_key for check in contract for key in check.check_keys}
    job = define_asset_job("contract_checks", selection=AssetSelection.checks(*contract))
    defs = Definitions(
        assets=[AssetSpec(key) for key in targets],
        asset_checks=contract,
        jobs=[job],
        resources={"warehouse": WarehouseResource(path=path)},
    )
    result = defs.resolve_job_def("contract_checks").execute_in_process(raise_on_error=False)
    return {
        (e.asset_key.to_user_string(), e.check_name): (e.passed, e.severity.value, e.description)
        for e in result.get_asset_check_evaluations()
        if wanted(e.check_name)
    }


def failing(results: dict) -> dict:
    return {key: value for key, value in results.items() if not value[0]}


@pytest.fixture(scope="module")
def truth(tmp_path_factory):
    """The fixture as served by the default sandbox, whose marts are hand-checked elsewhere."""
    tmp = tmp_path_factory.mktemp("truth")
    return {as_of: marts(build(tmp, as_of)) for as_of in (D, P)}


# ---------------------------------------------------------------- transaction usages (A12)

NO_USAGE_DATE = [
    # the embedded transaction carries the date (u1), or only the loaded transaction does (u2, u4, u5);
    # a credit note's usage takes its emitDate (u3); no usage says its type
    "update invoicing_raw.transaction_usages set transaction__date = date where id = 'u1'",
    "update invoicing_raw.transaction_usages set date = null, type = null, _absent_fields = 'date,type'",
]


def test_usages_without_date_or_type_are_dated_and_typed_from_promised_fields(tmp_path, truth):
    for as_of in (D, P):
        path = build(tmp_path, as_of, *NO_USAGE_DATE)
        assert marts(path) == truth[as_of], as_of
    results = checks(path, lambda name: name in ("usages_dated", "usages_typed"))
    assert len(results) == 2 and failing(results) == {}


def test_an_undatable_usage_fails_usages_dated_naming_the_field_and_the_marts(tmp_path):
    path = build(
        tmp_path,
        D,
        "insert into invoicing_raw.transaction_usages (id, invoice_id, credit_note_id, amount, _dlt_id) "
        "values ('u9', 'inv1', 'unknown-credit-note', 10.00, 'dlt-u9')",
    )
    passed, severity, description = checks(path)[
        ("staging/stg_invoicing__transaction_usages", "usages_dated")
    ]
    assert not passed and severity == "ERROR"
    assert "transactionUsage.date" in description and "u9" in description
    assert all(mart in description for mart in RECEIVABLES_MARTS)
    (usages_dated,) = [c for c in (contract_checks() + model_checks(_discover_models()))
                       if "usages_dated" in {k.name for k in c.check_keys}]
    assert all(spec.blocking for spec in usages_dated.check_specs)  # the marts keep their last good state


# ---------------------------------------------------------------- Paris-midnight dates (A2)

PARIS_MIDNIGHT = [
    f"update invoicing_raw.{table} set {column} = "
    f"timezone('Europe/Paris', cast(timezone('UTC', {column}) as timestamp)) "
    f"where strftime({column} at time zone 'UTC', '%H:%M:%S') = '00:00:00'"
    for table, column in [
        ("documents", "emit_date"),
        ("documents", "due_date"),
        ("transactions", "date"),
        ("transaction_usages", "date"),
        ("supplier_documents", "issue_date"),
        ("supplier_documents", "due_date"),
        ("supplier_documents", "payment_date"),
    ]
]


def test_dates_at_paris_midnight_give_the_same_marts_as_utc_midnight(tmp_path, truth):
    for as_of in (D, P):
        path = build(tmp_path, as_of, *PARIS_MIDNIGHT)
        with duckdb.connect(path, read_only=True) as conn:  # the change did happen: 23:00 UTC the day before
            assert (
                conn.execute("select emit_date from invoicing_raw.documents where id = 'inv1'")
                .fetchone()[0]
                .astimezone(__import__("datetime").UTC)
                .isoformat()
                == "2025-11-30T23:00:00+00:00"
            )
        assert marts(path) == truth[as_of], as_of
    midnight = checks(path, lambda name: name == "dates_at_midnight")
    # only the fixture's payments at 09:00 and 23:30 UTC are at neither midnight; documents are clean
    assert midnight[("staging/stg_invoicing__document_versions", "dates_at_midnight")][0] is True
    passed, severity, description = midnight[("staging/stg_invoicing__transactions", "dates_at_midnight")]
    assert not passed and severity == "WARN" and "transaction.date" in description


# ---------------------------------------------------------------- documents (A8, A9, A10, A11)


def test_a_deposit_under_another_spelling_counts_and_the_warning_names_it(tmp_path, truth):
    path = build(tmp_path, D, "update invoicing_raw.documents set subtype = 'DOWN_PAYMENT' where id = 'dep1'")
    with duckdb.connect(path, read_only=True) as conn:
        open_amounts = dict(conn.execute("select invoice_id, open_amount from marts.receivables").fetchall())
    assert open_amounts == {row[1]: row[11] for row in truth[D]["receivables"]}  # dep1's 1000.00 included
    passed, severity, description = checks(path)[
        ("staging/stg_invoicing__documents", "document_subtypes_known")
    ]
    assert (
        not passed
        and severity == "WARN"
        and "DOWN_PAYMENT" in description
        and "document.subtype" in description
    )


def test_negative_credit_notes_give_the_same_marts_as_positive_ones(tmp_path, truth):
    negative = [
        "update invoicing_raw.documents set amount_vat_net = -amount_vat_net where subtype = 'CREDIT_NOTE'",
        "update invoicing_raw.transaction_usages set amount = -amount where type = 'CREDIT_NOTE'",
    ]
    for as_of in (D, P):
        path = build(tmp_path, as_of, *negative)
        assert marts(path) == truth[as_of], as_of
    assert checks(path)[("staging/stg_invoicing__documents", "credit_note_sign_consistent")][0] is True
    mixed = build(tmp_path, D, negative[0] + " and id = 'cn1'", name="mixed")
    passed, _, description = checks(mixed)[
        ("staging/stg_invoicing__documents", "credit_note_sign_consistent")
    ]
    assert not passed and "document.amountVatNet" in description


def test_messages_not_served_leave_the_template_unknown_and_warn(tmp_path):
    path = build(
        tmp_path,
        D,
        "update invoicing_raw.documents set _absent_fields = 'messages' where type = 'INVOICE'",
        "delete from invoicing_raw.documents__messages",
    )
    with duckdb.connect(path, read_only=True) as conn:
        templates = dict(
            conn.execute("select invoice_id, next_reminder_template from marts.receivables").fetchall()
        )
        oldest = dict(
            conn.execute("select customer_id, next_reminder_template from marts.overdue_customers").fetchall()
        )
    # overdue ones (truth: inv1 RELAUNCH1, inv3b RELAUNCH2, inv5 RELAUNCH1, inv7 RELAUNCH1) are unknown, never a
    # guessed RELAUNCH1; those not overdue do not depend on the history
    assert templates == {
        "inv1": None,
        "inv3b": None,
        "inv5": None,
        "inv7": None,
        "inv2": "PRELAUNCH",
        "dep1": "PRELAUNCH",
    }
    assert oldest == {"c1": None, "c2": None}
    passed, severity, description = checks(path)[("invoicing_raw/documents", "fields_served")]
    assert not passed and severity == "WARN"
    assert (
        "documents.messages" in description
        and "marts.overdue_customers.next_reminder_template" in description
    )


def test_a_missing_due_date_takes_the_legal_default_and_fields_served_warns(tmp_path):
    # inv5 (c2, emitted 2026-01-03, served due 2026-01-30, 140.00 open) loses its dueDate: C. com. L441-10
    # puts it 30 days after delivery (the emit date): 2026-02-02, two days after D, so not yet overdue
    path = build(
        tmp_path,
        D,
        "update invoicing_raw.documents set due_date = null, _absent_fields = 'dueDate' where id = 'inv5'",
    )
    with duckdb.connect(path, read_only=True) as conn:
        inv5 = conn.execute(
            "select due_date, is_due_date_assumed, days_past_due, aging_bucket, is_overdue, open_amount, "
            "next_reminder_template from marts.receivables where invoice_id = 'inv5'"
        ).fetchall()
        served = conn.execute("select count(*) from marts.receivables where not is_due_date_assumed").fetchone()
        overdue = {r[0] for r in conn.execute("select customer_id from marts.overdue_customers").fetchall()}
    assert inv5 == [(date(2026, 2, 2), True, -2, "current", False, Decimal("140.00"), "PRELAUNCH")]
    assert served == (5,)  # inv1, inv2, inv3b, dep1 and inv7 keep their served due dates
    assert overdue == {"c1"}  # c2's only overdue invoice was inv5
    passed, severity, description = checks(path)[("invoicing_raw/documents", "fields_served")]
    assert not passed and severity == "WARN"
    assert "documents.dueDate not served on 1 row(s)" in description
    assert all(mart in description for mart in RECEIVABLES_MARTS)


def _open(path: str, invoice_id: str) -> list[tuple]:
    with duckdb.connect(path, read_only=True) as conn:
        return conn.execute(
            "select paid_by_payments, settled_by_credit_notes, open_amount from marts.receivables "
            "where invoice_id = ?",
            [invoice_id],
        ).fetchall()


def test_status_paid_closes_an_invoice_short_of_its_usages_and_the_residual_is_named(tmp_path):
    # inv2 (500.00, cn1 120.00 applied, 380.00 open) marked PAID on 2026-01-30 without a payment: a write-off
    paid = "update invoicing_raw.documents set status = 'PAID', last_update = '2026-01-30T10:00:00Z' where id = 'inv2'"
    at_d = build(tmp_path, D, paid)
    assert _open(at_d, "inv2") == []  # closed on D: nothing of it is owed
    # on P (2026-01-10) it was not PAID yet (last changed after P), and nothing had settled it: 500.00 open
    assert _open(build(tmp_path, P, paid), "inv2") == [(Decimal("0.00"), Decimal("0.00"), Decimal("500.00"))]
    passed, severity, description = checks(at_d)[("staging/stg_invoicing__documents", "paid_invoices_settled")]
    assert not passed and severity == "WARN"
    assert "inv2" in description and all(mart in description for mart in RECEIVABLES_MARTS)


# a payment of 100.00 on 2026-01-20 left on inv3, the version of F-3 that inv3b replaced (t1, c1's payment)
USAGE_ON_OLD_VERSION = (
    "insert into invoicing_raw.transaction_usages (id, type, customer_id, invoice_id, transaction_id, "
    "transaction__id, amount, date) values ('u6', 'TRANSACTION', 'c1', 'inv3', 't1', 't1', 100.00, "
    "'2026-01-20T09:00:00Z')"
)


def test_a_usage_left_on_a_replaced_version_counts_for_the_live_version(tmp_path):
    path = build(tmp_path, D, USAGE_ON_OLD_VERSION)
    assert _open(path, "inv3b") == [(Decimal("100.00"), Decimal("0.00"), Decimal("750.00"))]  # 850 - 100
    assert _open(build(tmp_path, P, USAGE_ON_OLD_VERSION), "inv3b")[0][2] == Decimal("850.00")  # paid after P
    # only prevDoc (inv3b -> inv3) links the versions: enough
    only_prev = build(tmp_path, D, USAGE_ON_OLD_VERSION, "update invoicing_raw.documents set next_doc = null",
                      name="prev")
    assert _open(only_prev, "inv3b")[0][2] == Decimal("750.00")
    assert failing(checks(path, lambda name: name == "usages_reach_live_invoices")) == {}


def test_a_usage_on_a_replaced_version_with_no_link_to_the_live_one_blocks(tmp_path):
    unlinked = "update invoicing_raw.documents set next_doc = null, prev_doc = null where id in ('inv3', 'inv3b')"
    path = build(tmp_path, D, USAGE_ON_OLD_VERSION, unlinked)
    key = ("intermediate/int_usages_on_live_versions", "usages_reach_live_invoices")
    passed, severity, description = checks(path)[key]
    assert not passed and severity == "ERROR"
    assert "u6" in description and "prevDoc" in description
    assert all(mart in description for mart in RECEIVABLES_MARTS)


def test_customers_gone_upstream_stay_flagged_and_leave_overdue_customers(tmp_path):
    # c2 vanishes upstream (the sync sets _deleted_at); its invoices are still owed
    path = build(
        tmp_path, D, "update invoicing_raw.customers set _deleted_at = '2026-01-30T10:00:00Z' where id = 'c2'"
    )
    with duckdb.connect(path, read_only=True) as conn:
        flagged = dict(
            conn.execute("select customer_id, is_deleted from marts.receivables_by_customer").fetchall()
        )
        overdue = {r[0] for r in conn.execute("select customer_id from marts.overdue_customers").fetchall()}
    assert flagged == {"c1": False, "c2": True, "c3": True}
    assert overdue == {"c1"}  # GET /customers?documentStatus=LATE lists no deleted customer


# ---------------------------------------------------------------- supplier documents (A15, A16, A17)


def test_supplier_spellings_are_normalised_and_an_unknown_one_is_named(tmp_path, truth):
    spellings = [
        "update invoicing_raw.supplier_documents set type = 'CREDIT_NOTE' where id = 'sd3'",
        "update invoicing_raw.supplier_documents set status = 'APPROVED' where id = 'sd1'",
        "update invoicing_raw.supplier_documents set status = 'Paid' where id = 'sd8'",
        "update invoicing_raw.supplier_documents set status = 'to_approve' where id = 'sd5'",
    ]
    for as_of in (D, P):
        path = build(tmp_path, as_of, *spellings)
        got = marts(path, MARTS[3:])
        # document_type is shown as served; everything else (sign of sd3, the statuses) equals the truth
        assert {k: [r[:5] + r[6:] for r in v] for k, v in got.items() if k == "supplier_payables"} == {
            "supplier_payables": [r[:5] + r[6:] for r in truth[as_of]["supplier_payables"]]
        }
        assert got["payables_by_supplier"] == truth[as_of]["payables_by_supplier"]
        assert got["payables_schedule"] == truth[as_of]["payables_schedule"]
    assert (
        checks(path)[("staging/stg_invoicing__supplier_documents", "supplier_document_values_known")][0]
        is True
    )
    odd = build(
        tmp_path,
        D,
        "update invoicing_raw.supplier_documents set status = 'settled' where id = 'sd8'",
        name="odd",
    )
    passed, _, description = checks(odd)[
        ("staging/stg_invoicing__supplier_documents", "supplier_document_values_known")
    ]
    assert not passed and "status settled" in description and "marts.supplier_payables" in description


def test_negative_supplier_credit_notes_give_the_same_payables_as_positive_ones(tmp_path, truth):
    # sd3 is the fixture's supplier credit note (120.00, counting -120.00); a server may give it any sign
    negative = (
        "update invoicing_raw.supplier_documents set amount_vat = -amount_vat, amount = -amount, vat = -vat "
        "where type = 'creditNote'"
    )
    for as_of in (D, P):
        path = build(tmp_path, as_of, negative)
        assert marts(path, MARTS[3:]) == {name: truth[as_of][name] for name in MARTS[3:]}, as_of
        # the cash outlook's hand-computed figures: test_dso_and_cash_outlook.py, on the positive fixture
        positive = build(tmp_path, as_of, name="positive")
        assert marts(path, ["cash_outlook"]) == marts(positive, ["cash_outlook"]), as_of
    sign_check = ("staging/stg_invoicing__supplier_documents", "supplier_credit_note_sign_consistent")
    assert checks(path)[sign_check][0] is True
    # a second credit note served positive beside the negative sd3: the sign means something unknown
    mixed = build(
        tmp_path,
        D,
        negative,
        """insert into invoicing_raw.supplier_documents (id, supplier_id, reference, type, status, issue_date,
           due_date, amount_vat, currency, last_update) values ('sd13', 's1', 'AV-13', 'creditNote', 'approved',
           '2026-01-12T00:00:00Z', '2026-02-11T00:00:00Z', 50.00, 'EUR', '2026-01-12T10:00:00Z')""",
        name="mixed",
    )
    passed, _, description = checks(mixed)[sign_check]
    assert not passed and "supplierDocument.amountVat" in description and "marts.cash_outlook" in description


def test_an_unknowable_past_supplier_status_is_left_out_and_named(tmp_path, truth):
    # sd2 (approved, no history) changed after P: its status on P is not known any more
    path = build(
        tmp_path,
        P,
        "update invoicing_raw.supplier_documents set last_update = '2026-01-20T10:00:00Z' where id = 'sd2'",
    )
    with duckdb.connect(path, read_only=True) as conn:
        ids = {
            r[0] for r in conn.execute("select supplier_document_id from marts.supplier_payables").fetchall()
        }
    assert ids == {r[1] for r in truth[P]["supplier_payables"]} - {"sd2"}
    passed, severity, description = checks(path)[("marts/supplier_payables", "supplier_status_as_of_known")]
    assert (
        not passed
        and severity == "ERROR"
        and "sd2" in description
        and "supplierDocumentEvent.date" in description
    )
    assert checks(build(tmp_path, D, name="today"))[
        ("marts/supplier_payables", "supplier_status_as_of_known")
    ][0]


def test_payables_without_amount_or_in_two_currencies_are_named(tmp_path):
    path = build(
        tmp_path,
        D,
        "update invoicing_raw.supplier_documents set amount_vat = null, amount = null where id = 'sd10'",
        "update invoicing_raw.supplier_documents set currency = 'USD' where id = 'sd1'",
    )
    results = checks(path)
    passed, _, description = results[("marts/supplier_payables", "payables_have_amount")]
    assert not passed and "sd10" in description and "supplierDocument.amountVat" in description
    passed, _, description = results[("marts/supplier_payables", "payables_single_currency")]
    assert not passed and "EUR" in description and "USD" in description


def test_the_fixture_as_served_passes_every_contract_check_but_its_off_midnight_payments(tmp_path):
    results = checks(build(tmp_path, D))
    assert set(failing(results)) == {
        ("staging/stg_invoicing__transactions", "dates_at_midnight"),
        ("staging/stg_invoicing__transaction_usages", "dates_at_midnight"),
    }
    assert AssetKey(["staging", "stg_invoicing__transaction_usages"]) in {
        key.asset_key for check in (contract_checks() + model_checks(_discover_models())) for key in check.check_keys
    }
