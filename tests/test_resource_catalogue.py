"""The endpoint catalogue is the only descriptor of a resource (issue 43, point 2): a house rule and its truths.

- No product module outside the catalogue (pipelines/invoicing/settings.py) writes a resource's path: a literal
  such as "/customers" or "/documents/{id}/pdf" anywhere else in product code fails, naming file and line. The
  product's packages are those the import contract "The product never imports the emulator" lists (pyproject.toml):
  the emulator has routes of its own and is not the product.
- What is derived from the catalogue matches the spec, an independent text: every list, by-id read, PDF and
  event the catalogue names is in docs/invoicing-api-v2.md (events also in api-facts.md).
- The marts each list feeds (the ledger's `<list>.limit/skip` rows) come from the models' SQL: they are the
  gate's own (invoicing_warehouse/runs/checks.py, from the runner's parse), and the hand-read facts of the SQL folder
  hold.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from invoicing_warehouse.engine.model_inputs import SQL_DIR, marts_fed_by
from invoicing_warehouse.runs.checks import marts_reading
from pipelines.invoicing.doctor.contract import LIST_PATHS, PAGED_LISTS
from pipelines.invoicing.settings import ENDPOINTS, EVENTS, LISTS
from pipelines.invoicing.webhooks.hint_events import EVENTS as HINT_EVENTS

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "pipelines" / "invoicing" / "settings.py"
SPEC = (ROOT / "docs" / "invoicing-api-v2.md").read_text(encoding="utf-8")
FACTS = (ROOT / "docs" / "api-facts.md").read_text(encoding="utf-8")


def _product_packages() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["name"].startswith("The product never imports the emulator"):
            return list(contract["source_modules"])
    raise AssertionError("pyproject.toml: the contract naming the product's packages is gone")


def _path_literal() -> re.Pattern[str]:
    """A string that starts with the first segment of a catalogue path: `/customers`, `/documents/`, ..."""
    roots = {endpoint.path.split("/")[1] for endpoint in (*ENDPOINTS.values(), EVENTS)}
    alternatives = "|".join(sorted(map(re.escape, roots)))
    return re.compile(rf"^/({alternatives})(/|\?|$)")


def _stray_paths(files: list[Path]) -> list[str]:
    pattern = _path_literal()
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and pattern.match(node.value):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    return found


def test_no_product_module_but_the_catalogue_writes_a_resource_path():
    packages = _product_packages()
    assert {"pipelines", "invoicing_warehouse", "assets"} <= {name.split(".")[0] for name in packages}, packages
    files = [path for name in packages for path in sorted((ROOT / name.replace(".", "/")).rglob("*.py"))]
    assert CATALOGUE in files
    # the rule can fail: the catalogue itself is caught (every path it declares, the PDFs and events included)
    assert len(_stray_paths([CATALOGUE])) >= len(ENDPOINTS) + 1 + 2
    stray = _stray_paths([path for path in files if path != CATALOGUE])
    assert stray == [], "resource paths written outside the catalogue (use ENDPOINTS[...].path):\n" + "\n".join(stray)


def test_every_path_the_catalogue_derives_is_in_the_spec():
    for name, endpoint in ENDPOINTS.items():
        assert f"| GET {endpoint.path} |" in SPEC, name
        if endpoint.mode != "single":
            assert f"| GET {endpoint.path}/{{id}} |" in SPEC, name  # the by-id read of load/parents.py
        if endpoint.pdf is not None:
            assert f"| GET {endpoint.pdf.path} |" in SPEC, name
    assert f"| GET {EVENTS.path} |" in SPEC
    assert set(LIST_PATHS) == set(LISTS) == {"customers", "items", "documents", "transactions",
                                             "transaction_usages", "suppliers", "supplier_documents", "webhooks"}
    # the spec names limit/skip for five lists and "parameter names are not shown" (or nothing) for the others
    named = {name for name, paging_named, _ in PAGED_LISTS if paging_named}
    assert named == {"customers", "items", "documents", "transactions", "transaction_usages"}


def test_every_hint_event_is_the_spec_s_or_the_facts_and_reads_the_id_they_say():
    spec_events = set(re.findall(r"\b([a-z]+(?:-[a-z]+)?\.[a-z]+(?:-[a-z]+)?)\b", SPEC.split("## Events", 1)[1]
                                 .split("## ", 1)[0]))
    assert set(HINT_EVENTS) - spec_events == {"customer.deleted"}  # api-facts: `customer.deleted` ({customerId})
    assert "`customer.deleted` event (`{customerId}`)" in FACTS
    assert HINT_EVENTS["supplier.deleted"][1]({"supplierId": "s1"}) == "s1"  # spec: object with `supplierId` only
    assert HINT_EVENTS["supplier-document.status-change"][1]({"supplierDocument": {"id": "d1"}}) == "d1"
    assert HINT_EVENTS["invoice.paid"][0] == "documents" and HINT_EVENTS["product.updated"][0] == "items"


def test_the_marts_a_list_feeds_come_from_the_sql_and_agree_with_the_gate():
    for name in LISTS:
        assert marts_fed_by(name) == tuple(sorted(m.split(".", 1)[1] for m in marts_reading([name]))), name
    # hand-read facts of the SQL folder: the items are staged and read by no other model, the webhooks by none;
    # receivables reads customers, documents and usages; the payables read suppliers and supplier documents
    sql = {path.stem: path.read_text(encoding="utf-8") for path in SQL_DIR.glob("*/*.sql")}
    assert [stem for stem, text in sql.items() if "invoicing_raw.items" in text] == ["stg_invoicing__items"]
    assert not any("stg_invoicing__items" in text for stem, text in sql.items() if stem != "stg_invoicing__items")
    assert not any("invoicing_raw.webhooks" in text for text in sql.values())
    assert marts_fed_by("items") == () and marts_fed_by("webhooks") == ()
    for name in ("customers", "documents", "transaction_usages"):
        assert "receivables" in marts_fed_by(name)
    assert "supplier_payables" in marts_fed_by("suppliers") and "supplier_payables" not in marts_fed_by("customers")
