"""Which models a dbt-style selection names: `name` (or `schema.name`) is that model alone, `name+` that model and
every model downstream of it. The `models --select` option and `build_models(select=...)` read it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol


class SelectableModel(Protocol):
    """What selection reads of a model (the runner's `SqlModel`; named here so the runner can import this module
    without a cycle)."""

    @property
    def key(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def model_dependencies(self) -> frozenset[str]: ...


class UnknownModelError(ValueError):
    """A selection names a model that does not exist, or a bare name two schemas share."""


def resolve_selection(models: Sequence[SelectableModel], specs: Iterable[str]) -> list[str]:
    """The keys (in build order) chosen by dbt-style `specs`: `name` or `schema.name` is that model alone,
    `name+` that model and every model downstream of it. Raises UnknownModelError naming unknown models."""
    by_name: dict[str, set[str]] = {}
    for model in models:
        by_name.setdefault(model.name, set()).add(model.key)
        by_name.setdefault(model.key, set()).add(model.key)
    chosen: set[str] = set()
    downstream_of: set[str] = set()
    unknown: list[str] = []
    for spec in specs:
        name = spec.removesuffix("+").lower()
        keys = by_name.get(name)
        if not keys:
            unknown.append(name)
            continue
        if len(keys) > 1:
            raise UnknownModelError(f"model name {name} is ambiguous: say {' or '.join(sorted(keys))}")
        chosen |= keys
        if spec.endswith("+"):
            downstream_of |= keys
    if unknown:
        known = ", ".join(sorted(m.name for m in models))
        raise UnknownModelError(f"unknown model(s): {', '.join(unknown)} (known: {known})")
    for model in models:  # build order: a model's inputs are decided before it
        if model.model_dependencies & downstream_of:
            downstream_of.add(model.key)
            chosen.add(model.key)
    return [m.key for m in models if m.key in chosen]
