"""`invoicing-warehouse demo` end to end on a small sandbox: exit 0, a filled warehouse, its readers'
snapshot, and a report whose figures are the marts' own; it refuses to overwrite a warehouse it did
not make."""

from __future__ import annotations

import argparse
import re
from decimal import Decimal

import duckdb

from invoicing_warehouse.demo import command as demo


def _args(warehouse, **overrides) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    args = parser.parse_args(["--warehouse", str(warehouse), "--scale", "100", "--rate-limit", "0"])
    for name, value in overrides.items():
        setattr(args, name, value)
    return args


def test_demo_fills_the_warehouse_and_prints_the_marts(tmp_path, capsys):
    warehouse = tmp_path / "data" / "warehouse.duckdb"
    assert demo.run(_args(warehouse)) == 0
    out = capsys.readouterr().out
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        total_open, customers = connection.execute(
            "select sum(total_open), count(*) filter (where total_open > 0) from marts.receivables_by_customer"
        ).fetchone()
        overdue = connection.execute("select count(*) from marts.overdue_customers").fetchone()[0]
    assert total_open > 0
    printed_total = re.search(r"total open\s+([\d,]+\.\d\d) EUR\s+\d+ invoices, (\d+) customers", out)
    assert printed_total is not None, out
    assert Decimal(printed_total.group(1).replace(",", "")) == total_open
    assert int(printed_total.group(2)) == customers
    assert f"of {overdue} overdue customers" in out
    assert "Payables due this week" in out
    assert (tmp_path / "data" / "warehouse.read.duckdb").exists()
    # it ends with the command that opens the dashboard on what it built
    assert out.rstrip().splitlines()[-2:] == [
        f"  invoicing-warehouse dashboard --warehouse {warehouse}",
        "  then open http://127.0.0.1:8501 in a browser",
    ]

    # a second demo replaces its own warehouse (new sandbox, new ids) and still agrees with itself; with
    # --follow, the sandbox keeps changing and each change is printed as it reaches the marts
    assert demo.run(_args(warehouse, seed=2, follow=True, follow_seconds=10.0, mutations_per_s=3.0)) == 0
    out = capsys.readouterr().out
    changes = re.findall(r"in the marts after (\d+\.\d) s", out)
    summary = re.search(r"(\d+) changes reached the marts in \d+ runs: latency p50 ([\d.]+) s", out)
    assert changes and summary is not None, out
    assert int(summary.group(1)) == len(changes)
    assert float(summary.group(2)) <= max(float(c) for c in changes)


def test_demo_refuses_a_warehouse_it_did_not_make(tmp_path, capsys):
    warehouse = tmp_path / "warehouse.duckdb"
    duckdb.connect(str(warehouse)).execute("create table precious as select 42 as answer").close()
    assert demo.run(_args(warehouse)) == 2
    assert "was not made by the demo" in capsys.readouterr().err
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        assert connection.execute("select answer from precious").fetchone() == (42,)
