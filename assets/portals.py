"""The portals as Dagster sees them: one static partition per portal of the portals file.

The file is INVOICING_PORTALS_PATH, else `portals.toml` at the working directory (the project root under
`dg dev`); without one, the single partition `default` (today's `SOURCES__INVOICING__*` settings). Each
portal's runs, history and failures are then its partition's: a portal whose credentials fail fails its
own run, never another portal's.
"""

from __future__ import annotations

from dagster import StaticPartitionsDefinition

from invoicing_warehouse.engine.environment.reader import current_environment
from invoicing_warehouse.engine.environment.run_settings import PORTALS_PATH
from invoicing_warehouse.engine.names import DEFAULT_PORTALS_PATH
from pipelines.invoicing.portals import Portal, configured_portals

PORTALS_PATH_ENV = PORTALS_PATH.name


def load_portals() -> dict[str, Portal]:
    """The configured portals (a named INVOICING_PORTALS_PATH must exist; the default file may not)."""
    named = current_environment().text(PORTALS_PATH)
    return configured_portals(named or DEFAULT_PORTALS_PATH, required=bool(named))


def portal_partitions(portals: dict[str, Portal]) -> StaticPartitionsDefinition:
    """One partition per portal, keyed by its name (= `portal_id`)."""
    return StaticPartitionsDefinition(list(portals))
