"""The one door for settings: `Environment`, a frozen snapshot of every setting the catalogue lists, read from one
mapping (the process's environment, into which `.env` was loaded under it at start, env_file.py), typed and checked
on use. dlt's own keys stay dlt's: dlt reads them from the environment, then `.dlt/secrets.toml` and
`.dlt/config.toml` (credentials.py, target.py).

Once per process: `current_environment()` builds the snapshot on first use and keeps it; it builds it again only
when a variable of the catalogue changed in `os.environ` since (loading `.env`, a test's `monkeypatch.setenv`), so
every reader of one process sees the same values. `environment_from(mapping)` builds one from any mapping (tests,
a subprocess's environment)."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from invoicing_warehouse.engine.environment.catalogue import READ_HERE
from invoicing_warehouse.engine.environment.kinds import Setting, SettingError

T = TypeVar("T")
_NAMES = tuple(setting.name for setting in READ_HERE)


@dataclass(frozen=True, eq=False)
class Environment:
    """The values of the settings as set (text, unparsed; an empty or blank value is unset). `value` gives one
    typed, `text` the text as set for the few whose checks are a domain's own (a DSN, customer ids)."""

    values: Mapping[str, str] = field(default_factory=dict)

    def is_set(self, setting: Setting[Any]) -> bool:
        """Whether `setting` holds a value (not blank)."""
        return bool(self.values.get(setting.name, "").strip())

    def text(self, setting: Setting[Any]) -> str | None:
        """The value of `setting` as set, stripped; None when unset."""
        return self.values.get(setting.name, "").strip() or None

    def value(self, setting: Setting[T]) -> T:
        """The typed value of `setting`, else its default; SettingError naming the setting and its accepted form
        when the value is not of it."""
        text = self.text(setting)
        return setting.default if text is None else setting.parse(text)

    def check(self) -> list[SettingError]:
        """Every setting whose value is not of its form (none: all good); `doctor`-style checks call it."""
        problems: list[SettingError] = []
        for setting in READ_HERE:
            try:
                self.value(setting)
            except SettingError as error:
                problems.append(error)
        return problems

    def __repr__(self) -> str:
        # secrets never printed: a repr lands in logs and tracebacks
        shown = ", ".join(f"{name}={'***' if _secret(name) else value!r}" for name, value in self.values.items())
        return f"Environment({shown})"


def _secret(name: str) -> bool:
    return any(setting.secret for setting in READ_HERE if setting.name == name)


def environment_from(mapping: Mapping[str, str]) -> Environment:
    """The settings of `mapping` (an environment): only the catalogue's names are kept."""
    return Environment(MappingProxyType({name: mapping[name] for name in _NAMES if name in mapping}))


_lock = threading.Lock()
_current: Environment | None = None


def current_environment() -> Environment:
    """The process's settings: read once from `os.environ`, and again only when one of them changed there."""
    global _current
    seen = {name: os.environ[name] for name in _NAMES if name in os.environ}
    with _lock:
        if _current is None or dict(_current.values) != seen:
            _current = Environment(MappingProxyType(seen))
        return _current


def environment(environ: Mapping[str, str] | None = None) -> Environment:
    """`environ`'s settings when given (a caller's own mapping), else the process's."""
    return current_environment() if environ is None else environment_from(environ)
