"""Figures resting on an assumed due date say so. The hand-built portal of tests/sql/model_fixture.py, served
without `dueDate` for two invoices, published by `invoicing-warehouse models`, then the dashboard's own script
run by Streamlit's AppTest (no browser needed): the Receivables page warns with the count and the amounts worked
out by hand, and its Overdue figure follows the legal default (emit date + 30 days); with every due date served
there is no warning."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).parents[2] / "sql"))
from tests.sql.model_fixture import D, load_fixture

APP = Path(__file__).parents[3] / "invoicing_warehouse" / "dashboard" / "app.py"
NBSP = "\u00a0"


def _published(tmp_path: Path, *statements: str) -> Path:
    """The fixture warehouse changed by `statements`, its models built as of D and published; its path."""
    warehouse = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(warehouse)) as connection:
        load_fixture(connection)
        for statement in statements:
            connection.execute(statement)
    result = subprocess.run(
        [sys.executable, "-m", "invoicing_warehouse.cli", "models", "--warehouse", str(warehouse),
         "--as-of", D.isoformat()],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr
    return warehouse


def _receivables_page(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setattr(sys, "argv", ["app.py", "--warehouse", str(warehouse)])
    monkeypatch.setenv("INVOICING_LANGUAGE", "en")  # the texts asserted are the English ones
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.run()
    assert not app.exception
    return app


GATE_FLAGS = "**Figures flagged by the checks**"


def _page_warnings(app: AppTest, *, banner: bool = True) -> list[str]:
    """The page's own warnings. The gate's banner (app.py's, not a lone screen's) is apart: on the fixture it
    names exactly the payments dated at 09:00 and 23:30 UTC, neither a UTC nor a Paris midnight
    (`dates_at_midnight`, a flag on every path since issue 29)."""
    warnings = [element.value for element in app.warning]
    flags = [text for text in warnings if text.startswith(GATE_FLAGS)]
    assert len(flags) == (1 if banner else 0), warnings
    if banner:
        assert "dates_at_midnight" in flags[0] and "transaction.date (4)" in flags[0], flags
        assert "due date" not in flags[0].lower(), flags
    return [text for text in warnings if not text.startswith(GATE_FLAGS)]


def test_the_receivables_page_marks_figures_on_an_assumed_due_date(tmp_path, monkeypatch):
    # inv3b (850.00 open, emitted 2025-11-01) and inv5 (140.00 open, emitted 2026-01-03) come without dueDate:
    # assumed due 2025-12-01 (overdue on D) and 2026-02-02 (not yet due); served, inv5 was due 2026-01-30
    warehouse = _published(
        tmp_path, "update invoicing_raw.documents set due_date = null where id in ('inv3b', 'inv5')"
    )
    app = _receivables_page(warehouse, monkeypatch)
    [warning] = _page_warnings(app)
    assert warning.startswith(
        f"Assumed due dates: 2 open invoice(s), 990,00{NBSP}€ open, of which 850,00{NBSP}€ overdue"
    )
    assert "emit date + 30 days" in warning
    metrics = {metric.label: metric.value for metric in app.metric}
    # overdue on D: inv1 699.50 + inv3b 850.00 + inv7 60.00 (inv5 no longer, on its assumed due date)
    assert metrics["Overdue"] == f"1{NBSP}609,50{NBSP}€"


def _cash_outlook_page() -> None:
    """The Cash outlook page as app.py lays it out, for the warehouse named in sys.argv (run by AppTest)."""
    import sys
    from dataclasses import replace

    from invoicing_warehouse.dashboard import cache
    from invoicing_warehouse.dashboard.screens import cash_outlook
    from invoicing_warehouse.dashboard.source import Source, warehouse_argument
    from invoicing_warehouse.dashboard.widgets import PageContext

    landing, as_of, portals = cache.landing_view(Source(warehouse_argument(sys.argv[1:])))
    cash_outlook.render(PageContext(replace(landing, portal=portals[0]), as_of, "fr"))


def test_the_cash_outlook_page_marks_inflows_on_an_assumed_due_date(tmp_path, monkeypatch):
    warehouse = _published(
        tmp_path, "update invoicing_raw.documents set due_date = null where id in ('inv3b', 'inv5')"
    )
    monkeypatch.setattr(sys, "argv", ["app.py", "--warehouse", str(warehouse)])
    monkeypatch.setenv("INVOICING_LANGUAGE", "en")
    app = AppTest.from_function(_cash_outlook_page, default_timeout=120)
    app.run()
    assert not app.exception
    [warning] = _page_warnings(app, banner=False)
    assert warning.startswith(f"Assumed due dates: 2 open invoice(s), 990,00{NBSP}€ of the inflows")


def test_no_warning_when_every_due_date_is_served(tmp_path, monkeypatch):
    app = _receivables_page(_published(tmp_path), monkeypatch)
    assert _page_warnings(app) == []
    # overdue on D: inv1 699.50 + inv3b 850.00 + inv5 140.00 + inv7 60.00
    assert {metric.label: metric.value for metric in app.metric}["Overdue"] == f"1{NBSP}749,50{NBSP}€"
