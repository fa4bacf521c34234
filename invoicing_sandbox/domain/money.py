"""Amounts: Decimal inside, rounded half-up to the cent, JSON numbers outside (JavaScript style)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
ZERO = Decimal(0)
HUNDRED = Decimal(100)

# Rates and quantities repeat endlessly (20, 5.5, 1, 2...): sharing one Decimal object per value keeps
# 100,000 documents' lines small in memory.
_shared: dict[Decimal, Decimal] = {}


def shared(value: Decimal) -> Decimal:
    """The one shared Decimal object equal to `value` (only for small sets of repeated values)."""
    found = _shared.get(value)
    if found is None:
        if len(_shared) < 10000:
            _shared[value] = value
        return value
    return found


def round2(value: Decimal) -> Decimal:
    """Rounds half-up to the cent, the rule of every amount (docs/resources.md)."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def to_decimal(value: object) -> Decimal:
    """A JSON number (int or float, never bool) or numeric string as a Decimal; ValueError otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise ValueError(f"not a number: {value!r}")  # noqa: TRY004 - callers turn ValueError into a 400
    try:
        result = Decimal(str(value))
    except InvalidOperation:
        # the message says all; decimal's own error names nothing the caller can act on
        raise ValueError(f"not a number: {value!r}") from None
    if not result.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    return result


def number_out(value: Decimal | None) -> int | float | None:
    """A JSON number as a JavaScript service writes it: whole values without a decimal point."""
    if value is None:
        return None
    if value == value.to_integral_value():
        return int(value)
    return float(value)


def number_text(value: Decimal | None) -> str:
    """The number as its JSON text (what a free-text search over an amount matches)."""
    out = number_out(value)
    return "" if out is None else repr(out)
