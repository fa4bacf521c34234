"""Every setting the product knows, in the order docs/settings.md lists them: the one list the reader, the docs
and the house rules walk."""

from __future__ import annotations

from typing import Any

from invoicing_warehouse.engine.environment import (
    api_settings,
    engine_settings,
    external_settings,
    run_settings,
)
from invoicing_warehouse.engine.environment.kinds import DLT, Setting

# dlt's keys first (the API account), then the product's own and the standard variables it reads
EVERY_SETTING: tuple[Setting[Any], ...] = (
    *external_settings.SETTINGS, *engine_settings.SETTINGS, *run_settings.SETTINGS, *api_settings.SETTINGS,
)
BY_NAME: dict[str, Setting[Any]] = {setting.name: setting for setting in EVERY_SETTING}
# the settings this product reads itself (dlt reads its own keys)
READ_HERE: tuple[Setting[Any], ...] = tuple(setting for setting in EVERY_SETTING if setting.source != DLT)

assert len(BY_NAME) == len(EVERY_SETTING), "a setting is listed twice"
