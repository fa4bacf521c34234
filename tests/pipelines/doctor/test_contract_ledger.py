"""docs/contract.md and `LEDGER` (pipelines/invoicing/doctor/contract.py) list the same rows with the same values."""

from __future__ import annotations

import re
from pathlib import Path

from pipelines.invoicing.doctor.contract import LEDGER

DOC = Path(__file__).resolve().parents[3] / "docs" / "contract.md"


def _doc_rows() -> list[tuple[str, ...]]:
    rows, in_ledger = [], False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_ledger = line.startswith("## 1.")
        if in_ledger and line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            rows.append(tuple(cells))
    return rows


def test_doc_and_ledger_list_the_same_rows():
    expected = [(f"`{r.key}`", r.source, r.used_by, r.absent, r.check or "—", ", ".join(r.marts) or "—",
                 r.behaviour) for r in LEDGER]
    assert _doc_rows() == expected


def test_every_row_has_one_explicit_behaviour_and_every_check_a_name():
    keys = [row.key for row in LEDGER]
    assert len(keys) == len(set(keys))
    for row in LEDGER:
        assert row.source in ("contract", "api-facts", "assumption")
        assert row.absent in ("derive", "check", "note", "fine")
        assert row.behaviour
        if row.absent == "check":
            assert row.check, row.key  # a check that fails must have a name


def _blocking_rules() -> dict[str, str]:
    """Section 4 of docs/contract.md: blocking check -> the rule cell."""
    rules, in_section = {}, False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_section = line.startswith("## 4.")
        if in_section and line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
            rules[cells[0].strip("`")] = cells[1]
    return rules


def test_every_blocking_check_names_its_ledger_row_or_product_rule():
    """Issue 40: blocking means wrong, and says which rule. The gate's blocking checks are exactly the table's
    rows; each names ledger rows that exist, or a product rule."""
    from invoicing_warehouse.runs.gate import warehouse_checks

    blocking = {check.name for check in warehouse_checks(None, models_dir=None)
                if check.blocking and check.severity == "ERROR"}
    rules = _blocking_rules()
    assert set(rules) == blocking
    keys = {row.key for row in LEDGER}
    for check, rule in rules.items():
        named = re.findall(r"`([^`]+)`", rule)
        assert named or "product rule" in rule, (check, rule)
        assert set(named) <= keys, (check, set(named) - keys)
    # what the contract does not promise is a flag: a parent a list did not show, a customer deleted while owed
    assert not {"customers_exist", "invoices_exist", "deleted_customers_owed"} & blocking
