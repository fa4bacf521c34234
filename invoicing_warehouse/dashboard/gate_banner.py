"""The banner every page shows while the gate (invoicing_warehouse/runs/gate.py) holds figures back: which blocking
check failed and since when, or which marts keep their last good figures because a read may be incomplete, and so which
figures on the page are older than the warehouse. Read from the gate's state beside the warehouse
(invoicing_warehouse/runs/gate_state.py), not from the readers' copy, which a held build never reaches."""

from __future__ import annotations

from invoicing_warehouse.engine.target import WarehouseTarget
from invoicing_warehouse.runs.gate import held_marts
from invoicing_warehouse.runs.gate_state import GateStateError, load


def banner_lines(target: WarehouseTarget, detailed: bool = True) -> list[str]:
    """What the banner says, one line each; empty when every figure shown is the latest. `detailed` False (a
    dashboard limited to some portals): without the checks' descriptions, which may name any portal's rows."""
    try:
        state = load(target)
    except GateStateError as error:
        return [str(error)]
    lines = []
    if state.failures:
        since = state.failing_since or "unknown"
        published = state.last_published_at or "never"
        for failure in state.failures:
            figures = ", ".join(failure["protects"]) or "every figure"
            detail = (failure["description"] or "failed") if detailed else "failed"
            lines.append(f"Blocking check {failure['check']} on {failure['relation']} fails since {since}: "
                         f"{detail}. Stale: {figures}.")
        lines.append(f"Every figure shown is the last good copy, published {published}; nothing newer was published.")
    held = {**state.held_marts, **held_marts(state)}
    for mart, why in sorted(held.items()):
        lines.append(f"{mart} keeps its last good figures: {why if detailed else 'held by the checks'}.")
    return lines


def flag_lines(target: WarehouseTarget, detailed: bool = True) -> list[str]:
    """The checks that failed without holding figures back when the shown figures were published: those
    figures may be wrong where the check says (one line each; `detailed` as for `banner_lines`)."""
    try:
        state = load(target)
    except GateStateError:
        return []  # banner_lines says it
    return [f"{warning['check']} on {warning['relation']} ({warning.get('severity', 'ERROR')}): "
            f"{(warning['description'] or 'failed') if detailed else 'failed'}. "
            f"May be wrong: {', '.join(warning['protects']) or 'see the check'}."
            for warning in state.warnings]
