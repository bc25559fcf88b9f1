"""Small helpers shared by experiments: JSON-friendly numbers, unit keys, numbers as printed in a paper."""

from __future__ import annotations

from typing import Any

__all__ = ["json_number", "unit_key", "printed_value"]


def json_number(value: float) -> int | float:
    """An integer-valued float as a JSON integer (e.g. renyi_order 10), any other value as a float."""
    value = float(value)
    return int(value) if value.is_integer() else value


def unit_key(**params: Any) -> str:
    """A readable, deterministic unit key ``name=value/name=value`` (floats written by :func:`json_number`)."""
    return "/".join(f"{k}={json_number(v) if isinstance(v, float) else v}" for k, v in params.items())


def printed_value(text: str) -> tuple[float, float]:
    """A number as printed in a reference table, and half a unit in its last printed digit (its rounding error).

    ``printed_value("0.0624") == (0.0624, 5e-05)``; ``printed_value("1.27e-3") == (0.00127, 5e-06)``.
    """
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return float(text), 0.5 * 10.0 ** (-decimals + int(exponent or 0))
