"""What one setting is: its name, its type (a `Kind`: the accepted form and the parser), its default, what reads it,
whether it is a secret, and where its value comes from. Every setting is listed in catalogue.py; the one object
that reads them is reader.py's `Environment`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

# where a value comes from: the environment (with `.env` under it, env_file.py), read by reader.py; or dlt's
# own configuration (the environment, then `.dlt/secrets.toml` and `.dlt/config.toml`), read through dlt, listed
# here so that docs/settings.md is complete
ENVIRONMENT = "environment"
DLT = "dlt"


class SettingError(ValueError):
    """A setting holds a value of the wrong form. The message names the setting and the accepted form, and never
    repeats a secret's value."""


@dataclass(frozen=True)
class Kind(Generic[T_co]):
    """A setting's type: `accepted` says the form in words (docs/settings.md and every error); `parse` turns the
    text (stripped, never empty) into the value, raising ValueError when the text is not of that form."""

    accepted: str
    parse: Callable[[str], T_co]


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One setting. `default` is the value when it is unset (None: none); `default_doc` and `read_by` are its
    cells in docs/settings.md."""

    name: str
    kind: Kind[T]
    default: T
    default_doc: str
    read_by: str
    secret: bool = False
    source: str = ENVIRONMENT

    def parse(self, text: str) -> T:
        """`text` (as set, not empty) as this setting's value; SettingError naming the setting and its form."""
        try:
            return self.kind.parse(text.strip())
        except ValueError:
            shown = "a value that is not" if self.secret else repr(text.strip()[:60])
            raise SettingError(f"{self.name} must be {self.kind.accepted}, got {shown}") from None


def _text(text: str) -> str:
    return text


def _path(text: str) -> Path:
    return Path(text).expanduser()


def _flag(text: str) -> bool:
    # off only when said so: a typo keeps the safer default (on) rather than silently dropping a feature
    return text.lower() not in ("0", "false", "no", "off")


def number_above(low: float, unit: str, below: float | None = None) -> Kind[float]:
    """A finite number > `low` (and < `below`), in `unit`."""

    def parse(text: str) -> float:
        value = float(text)
        if not (value > low and math.isfinite(value)) or (below is not None and value >= below):
            raise ValueError(text)
        return value

    return Kind(f"a number of {unit} > {low:g}" + (f" and < {below:g}" if below is not None else ""), parse)


def number_at_least(low: float, unit: str) -> Kind[float]:
    """A finite number >= `low` (in `unit`)."""

    def parse(text: str) -> float:
        value = float(text)
        if not (value >= low and math.isfinite(value)):
            raise ValueError(text)
        return value

    return Kind(f"a number of {unit} >= {low:g}", parse)


def whole(low: int, unit: str, high: int | None = None) -> Kind[int]:
    """A whole number from `low` (to `high`), digits only (no sign, no decimal point)."""

    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < low or (high is not None and int(text) > high):
            raise ValueError(text)
        return int(text)

    most = f" and <= {high}" if high is not None else ""
    return Kind(f"a whole number of {unit} >= {low}{most}", parse)


def one_of(*choices: str) -> Kind[str]:
    """One of `choices`, case-free; the value is the choice as written here."""

    def parse(text: str) -> str:
        for choice in choices:
            if text.casefold() == choice.casefold():
                return choice
        raise ValueError(text)

    return Kind(f"one of {', '.join(choices)}", parse)


def divisor_of_60() -> Kind[int]:
    """Whole minutes that divide an hour, so that a cron `*/N` ticks evenly."""

    def parse(text: str) -> int:
        if not text.isdigit() or not 1 <= int(text) <= 60 or 60 % int(text):
            raise ValueError(text)
        return int(text)

    return Kind("a whole number of minutes that can divide 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60)", parse)


TEXT: Kind[str] = Kind("text", _text)
PATH: Kind[Path] = Kind("a path", _path)
FLAG: Kind[bool] = Kind("on, or off with 0, false, no or off", _flag)
CRON: Kind[str] = Kind("a cron expression of five fields (UTC)", _text)  # Dagster checks the fields themselves
