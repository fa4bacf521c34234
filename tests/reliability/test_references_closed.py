"""References closed in the run, never held at the gate (issue 40; test review 2, F15 and F17).

End to end over real HTTP against the sandbox, with the CLI a new user runs (`sync`, then `models`):

- a first sync whose parents (customers holding invoices) were edited just before it starts: those customers fall
  in its settle lag while their older invoices are read. The run reads the lag zone once the lag has passed
  (pipelines/invoicing/load/settle.py) and the parents still missing by id (load/parents.py): it exits 0, the
  readers' copy has the receivables, and they equal the sandbox's own figures (each customer's `dueAmount`, the
  LATE list). On 4f148c4 `customers_exist` held every receivable mart (exit 1).
- a server that hides soft-deleted customers (strict profile) and archives customers still owed (their invoices
  kept, listed and owed; `deleted_customer_documents="kept"`), answering GET by id with the record flagged or with
  404: the invoices are counted in the receivables, flagged (`deleted_customers_owed`, rows and amount), and the
  figures equal the sandbox's own. On 4f148c4 `customers_exist` refused every run.

The truth is the sandbox's records (`Portal.snapshot`, `harness/marts_truth.compare_marts`), never the product.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import duckdb
import pytest

from harness.marts_truth import compare_marts
from invoicing_sandbox.contract import ContractProfile
from invoicing_sandbox.mutator import Mutator
from invoicing_warehouse.cli import main
from invoicing_warehouse.dashboard.gate_banner import flag_lines
from invoicing_warehouse.dashboard.source import Source
from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.checks import REFERENCE_CHECKS


def _point_cli_at(sb, monkeypatch) -> None:
    for name, value in (("BASE_URL", sb.base_url), ("CLIENT_ID", sb.client_id), ("CLIENT_SECRET", sb.client_secret)):
        monkeypatch.setenv(f"SOURCES__INVOICING__{name}", value)


def _published(warehouse) -> duckdb.DuckDBPyConnection:
    """The readers' copy, as the dashboard opens it."""
    return Source(warehouse).connect()


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_first_sync_with_parents_edited_in_its_lag_publishes_exact_receivables(contract, sandbox_factory, tmp_path,
                                                                                monkeypatch, capsys):
    sb = sandbox_factory(seed=31, scale=40, rate_limit_per_s=0, contract=ContractProfile.named(contract))
    edited = Mutator(sb.portal, 0, seed=7).edit_customers_with_invoices(3)
    assert len(edited) == 3
    _point_cli_at(sb, monkeypatch)
    warehouse = tmp_path / "warehouse.duckdb"
    assert main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0"]) == 0, capsys.readouterr().err
    assert main(["models", "--warehouse", str(warehouse)]) == 0, capsys.readouterr().err
    emails = {c["id"]: c.get("email") for c in sb.portal.snapshot("customers") if c["id"] in edited}
    reader = _published(warehouse)
    try:
        published = {row[0] for row in reader.execute(
            "select table_name from information_schema.tables where table_schema = 'marts'").fetchall()}
        truth = compare_marts(reader, sb)
        loaded = dict(reader.execute(
            "select id, email from invoicing_raw.customers where id in (select unnest(?))", [edited]).fetchall())
    finally:
        reader.close()
    assert {"receivables", "receivables_by_customer", "overdue_customers"} <= published
    assert truth.mismatches == [], truth.summary()
    assert loaded == emails  # the edited parents themselves, as they are now (read after the lag)


@pytest.mark.parametrize("contract", ["default", "strict"])
def test_a_first_sync_reads_a_payment_made_in_its_lag_before_it_publishes(contract, sandbox_factory, tmp_path,
                                                                         monkeypatch, capsys):
    """Not a parent: an invoice half paid just before the first sync (the invoice, its payment and its usage
    all in the lag). Only the read of the lag zone once the lag has passed brings them: no reference names them."""
    sb = sandbox_factory(seed=33, scale=40, rate_limit_per_s=0, contract=ContractProfile.named(contract))
    records = sb.portal.stores["documents"].records  # the sandbox's own records (remaining = total - paid)
    invoice = records[min(i for i, d in records.items() if sb.portal.is_open_invoice(d))]
    half = round(float(sb.portal.remaining(invoice)) / 2, 2)
    sb.portal.pay_document(invoice["id"], {"amount": half, "method": "TRANSFER"})
    _point_cli_at(sb, monkeypatch)
    warehouse = tmp_path / "warehouse.duckdb"
    assert main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0"]) == 0, capsys.readouterr().err
    assert main(["models", "--warehouse", str(warehouse)]) == 0, capsys.readouterr().err
    remaining = Decimal(str(sb.portal.remaining(records[invoice["id"]])))
    assert remaining > 0
    reader = _published(warehouse)
    try:
        truth = compare_marts(reader, sb)
        open_amount = reader.execute("select open_amount from marts.receivables where invoice_id = ?",
                                     [invoice["id"]]).fetchall()
    finally:
        reader.close()
    assert open_amount == [(remaining,)]
    assert truth.mismatches == [], truth.summary()


@pytest.mark.parametrize(("contract", "by_id"), [("default", "flagged"), ("strict", "flagged"), ("strict", "gone")])
def test_hidden_deleted_customers_publish_their_invoices_counted_and_flagged(contract, by_id, sandbox_factory, tmp_path,
                                                                             monkeypatch, capsys):
    # default: deleted customers listed with `deleted: true`; strict: hidden from lists, by id flagged or 404
    profile = replace(ContractProfile.named(contract), deleted_customer_documents="kept", hidden_customer_by_id=by_id)
    sb = sandbox_factory(seed=32, scale=40, rate_limit_per_s=0, contract=profile)
    deleted = Mutator(sb.portal, 0, seed=7).delete_customers_with_invoices(2)
    assert len(deleted) == 2
    # the sandbox's own figures: what each archived customer still owes
    owed = {c["id"]: Decimal(str(c["dueAmount"])) for c in sb.portal.snapshot("customers") if c["id"] in deleted}
    assert all(amount > 0 for amount in owed.values()), owed
    sb.clock.advance(timedelta(seconds=30))  # past the settle lag: what closes the references is the read by id
    _point_cli_at(sb, monkeypatch)
    warehouse = tmp_path / "warehouse.duckdb"
    assert main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0"]) == 0, capsys.readouterr().err
    assert main(["models", "--warehouse", str(warehouse)]) == 0
    err = capsys.readouterr().err
    total = sum(owed.values())
    assert "published, but flagged: deleted_customers_owed" in err, err
    reader = _published(warehouse)
    try:
        counted = reader.execute(
            "select customer_id, sum(open_amount), min(customer_name), count(*) from marts.receivables "
            "where customer_id in (select unnest(?)) group by customer_id", [deleted]).fetchall()
        truth = compare_marts(reader, sb)
    finally:
        reader.close()
    assert {row[0]: Decimal(str(row[1])) for row in counted} == owed
    invoices = sum(row[3] for row in counted)
    if by_id == "gone":  # the API says nothing of them but their id: named as such
        assert {row[2] for row in counted} == {f"deleted customer {customer_id}" for customer_id in deleted}
    assert truth.mismatches == [], truth.summary()
    flags = flag_lines(WarehouseTarget.duckdb_file(warehouse))
    assert any(f"{invoices} open invoice(s) of 2 deleted customer(s), {total:.2f} owed" in line
               and "marts.receivables" in line for line in flags), flags


def test_a_dangling_customer_is_a_warning_naming_its_rows_and_amount(tmp_path):
    """The check itself on a hand-made warehouse: not blocking (WARN), the rows and the amount they carry."""
    customers_exist = next(check for check in REFERENCE_CHECKS if check.name == "customers_exist")
    with duckdb.connect(str(tmp_path / "warehouse.duckdb")) as connection:
        for statement in (
            "create schema invoicing_raw",
            "create table invoicing_raw.customers (portal_id varchar, id varchar)",
            "insert into invoicing_raw.customers values ('p', 'c1'), ('q', 'c9')",  # c9: another portal's
            ("create table invoicing_raw.documents (portal_id varchar, id varchar, customer_id varchar, "
             "amount_vat_net decimal(18, 2), _deleted_at timestamptz)"),
            ("insert into invoicing_raw.documents values ('p', 'd1', 'c1', 10, null), ('p', 'd2', 'c9', 120.5, null), "
             "('p', 'd3', 'c9', 30, null), ('p', 'd4', 'c9', 1000, '2026-01-01T00:00:00Z')"),
        ):
            connection.execute(statement)
        result = customers_exist.run(connection)
    assert (result.passed, result.blocks, result.severity) == (False, False, "WARN")
    # three rows dangle; the deleted one (d4) carries nothing into the figures: 120.50 + 30.00
    assert result.description is not None and "3 documents row(s)" in result.description, result.description
    assert "150.50 in all" in result.description and "d2 -> c9" in result.description, result.description
    assert result.metadata["amount"] == 150.5 and "marts.receivables" in result.protects


def test_a_bad_parent_fetch_bound_stops_the_sync_before_the_warehouse_is_touched(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("INVOICING_PARENT_FETCH_MAX", "plenty")
    for name, value in (("BASE_URL", "http://127.0.0.1:9"), ("CLIENT_ID", "id"), ("CLIENT_SECRET", "secret-7e1f")):
        monkeypatch.setenv(f"SOURCES__INVOICING__{name}", value)
    warehouse = tmp_path / "warehouse.duckdb"
    assert main(["sync", "--warehouse", str(warehouse), "--rate-limit", "0"]) == 1
    err = capsys.readouterr().err
    assert "INVOICING_PARENT_FETCH_MAX" in err and "'plenty'" in err and "secret-7e1f" not in err, err
    assert not warehouse.exists()
