"""Argument validation with one wording everywhere.

Every check takes the values to validate as keyword arguments, so the parameter name in the message is the
keyword itself and cannot drift from the argument it describes::

    check.positive(noise_scale=noise_scale, n=n)

Arrays are accepted: a check fails if any element fails, and the message shows the first offending element.
All checks raise :class:`ValueError` (or :class:`TypeError` for a wrong type); none uses ``assert``.
"""

from __future__ import annotations

import enum
import math
import numbers
import reprlib
from typing import Any, TypeVar

import numpy as np

E = TypeVar("E", bound=enum.Enum)

__all__ = [
    "finite",
    "positive",
    "non_negative",
    "in_range",
    "integer",
    "less_than",
    "one_of",
    "scalar",
    "generator",
    "at_most",
    "representable",
    "real_array",
    "instance",
    "broadcastable",
    "record",
]

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 40
_SHORT.maxlevel = 2


def _show(value: Any) -> str:
    if isinstance(value, np.generic):
        return repr(value.item())
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return repr(value.item())
        return np.array2string(value, threshold=6, precision=6)
    return repr(value)


def _short(value: Any) -> str:
    """A repr of ``value`` short enough for one line of an error message."""
    if isinstance(value, np.ndarray | np.generic):
        return _show(value)
    return _SHORT.repr(value)


def _reject_text(name: str, value: Any) -> None:
    """Strings are not numbers, even when NumPy would parse them ('1.0' would otherwise pass as 1.0); nor are complex
    numbers real ones (NumPy would drop the imaginary part with only a warning)."""
    if isinstance(value, str | bytes) or (isinstance(value, np.ndarray) and value.dtype.kind in "SU"):
        raise TypeError(f"{name} must be a real number, not text; got {name}={_short(value)}.")
    if isinstance(value, complex | np.complexfloating) or (isinstance(value, np.ndarray) and value.dtype.kind == "c"):
        raise TypeError(f"{name} must be real, not complex; got {name}={_show(value)}.")


def _as_float_array(name: str, value: Any) -> np.ndarray:
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a real number; got {name}={value!r} (a bool).")
    _reject_text(name, value)
    if value is None or (isinstance(value, np.ndarray) and value.dtype.kind not in "biufO"):
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {name}={_short(value)}.")
    try:
        raw = np.asarray(value)
        _reject_text(name, raw)  # also text or complex numbers inside a list
        arr = raw.astype(float)
    except (TypeError, ValueError, OverflowError):  # a ragged list, an object, an int too large
        raise TypeError(f"{name} must be a real number or a (rectangular) array of real numbers; "
                        f"got {name}={_short(value)}.") from None
    return arr


def real_array(**named: Any) -> np.ndarray:
    """The one value given, converted to a float array; a ``TypeError`` naming the parameter if it is not numeric.

    Use it where a public function turns an argument into numbers (instead of ``np.asarray(x, dtype=float)``, whose
    errors -- "could not convert string to float", an inhomogeneous shape -- name no parameter, and which turns
    ``None`` into NaN and drops the imaginary part of a complex number)::

        features = check.real_array(features=features)

    Text (also inside a list), complex numbers, ``None``, objects and ragged nested lists are refused; bools inside
    an array count as 0 and 1 (a boolean mask is data), a bare bool is refused.
    """
    if len(named) != 1:
        raise TypeError(f"real_array takes exactly one keyword argument; got {len(named)}.")
    ((name, value),) = named.items()
    return _as_float_array(name, value)


def _first_bad(value: Any, bad: np.ndarray) -> Any:
    """The first offending element of ``value`` (as given, not as converted to float)."""
    original = np.asarray(value)
    return original[bad].flat[0] if original.ndim else original.item()


def finite(**named: Any) -> None:
    """Every value is a finite real number (no NaN, no infinity)."""
    for name, value in named.items():
        # a float array is checked as it is (converting it would copy it; the verdict is the same)
        arr = value if type(value) is np.ndarray and value.dtype.kind == "f" else _as_float_array(name, value)
        if np.isfinite(arr).all():
            continue
        bad = ~np.isfinite(arr)
        raise ValueError(f"{name} must be finite; got {name}={_show(_first_bad(value, bad))}.")


def positive(**named: Any) -> None:
    """Every value is finite and > 0."""
    finite(**named)
    for name, value in named.items():
        arr = _as_float_array(name, value)
        bad = ~(arr > 0)
        if np.any(bad):
            raise ValueError(f"{name} must be > 0; got {name}={_show(_first_bad(value, bad))}.")


def non_negative(**named: Any) -> None:
    """Every value is finite and >= 0."""
    finite(**named)
    for name, value in named.items():
        arr = _as_float_array(name, value)
        bad = ~(arr >= 0)
        if np.any(bad):
            raise ValueError(f"{name} must be >= 0; got {name}={_show(_first_bad(value, bad))}.")


def in_range(low: float, high: float, *, closed: str = "both", **named: Any) -> None:
    """Every value lies in the interval from ``low`` to ``high``.

    Args:
        low, high: the bounds (either may be infinite).
        closed: which ends belong to the interval: ``"both"``, ``"left"``, ``"right"`` or ``"neither"``.
    """
    left = closed in ("both", "left")
    right = closed in ("both", "right")
    text = f"{'[' if left else '('}{low}, {high}{']' if right else ')'}"
    for name, value in named.items():
        arr = _as_float_array(name, value)
        if np.any(np.isnan(arr)):
            raise ValueError(f"{name} must be in {text}; got {name}=nan.")
        ok_low = arr >= low if left else arr > low
        ok_high = arr <= high if right else arr < high
        bad = ~(ok_low & ok_high)
        if np.any(bad):
            raise ValueError(f"{name} must be in {text}; got {name}={_show(_first_bad(value, bad))}.")


def less_than(bound: float, bound_text: str, **named: Any) -> None:
    """Every value is < ``bound``; ``bound_text`` explains the bound (e.g. ``"1/smoothness = 0.25"``)."""
    for name, value in named.items():
        arr = _as_float_array(name, value)
        bad = ~(arr < bound)
        if np.any(bad):
            raise ValueError(f"{name} must be < {bound_text}; got {name}={_show(_first_bad(value, bad))}.")


def integer(minimum: int | None = None, **named: Any) -> None:
    """Every value is an integer (a Python or NumPy integer, or an integer-valued array) >= ``minimum``."""
    for name, value in named.items():
        if isinstance(value, bool | np.bool_):
            raise TypeError(f"{name} must be an integer; got {name}={value!r} (a bool).")
        if isinstance(value, numbers.Integral):
            arr = np.asarray(int(value))
        else:
            try:
                arr = np.asarray(value)
            except ValueError:  # a ragged nested list
                raise TypeError(f"{name} must be an integer; got {name}={_short(value)}.") from None
            if arr.dtype.kind not in "iu":
                integral = arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr))
                if not (integral and arr.ndim):
                    raise TypeError(f"{name} must be an integer; got {name}={_show(value)}.")
        if minimum is not None:
            bad = ~(arr >= minimum)
            if np.any(bad):
                raise ValueError(f"{name} must be an integer >= {minimum}; got {name}={_show(_first_bad(value, bad))}.")


def at_most(maximum: int, **named: Any) -> None:
    """Every value is <= ``maximum``: the documented upper limit of a size or iteration argument (so no call hangs)."""
    for name, value in named.items():
        arr = _as_float_array(name, value)
        bad = ~(arr <= maximum)
        if np.any(bad):
            raise ValueError(f"{name} must be <= {maximum} (the documented upper limit); "
                             f"got {name}={_show(_first_bad(value, bad))}.")


def representable(result: Any, what: str, **named: Any) -> None:
    """``result`` (computed from the inputs ``named``) is finite; otherwise those inputs are outside the float range.

    Used after a computation whose mathematical answer is finite but can exceed the largest float (about 1.8e308):
    the ``ValueError`` names the inputs instead of returning a silent ``inf`` or ``nan``.
    """
    arr = np.asarray(result, dtype=float)
    if not np.all(np.isfinite(arr)):
        shown = ", ".join(f"{name}={_show(value)}" for name, value in named.items())
        raise ValueError(f"{', '.join(named)} out of range: {what} exceeds the float range (about 1.8e308) "
                         f"for {shown}.")


def one_of(allowed: tuple[Any, ...], **named: Any) -> None:
    """Every value is one of ``allowed``."""
    for name, value in named.items():
        try:
            known = value in allowed
        except (TypeError, ValueError):  # an array: its truth value is ambiguous
            known = False
        if not known:
            choices = ", ".join(repr(a) for a in allowed)
            raise ValueError(f"{name} must be one of {choices}; got {name}={_short(value)}.")


def _real_numbers(value: Any, depth: int = 0) -> np.ndarray:
    """The real numbers held by a record field: a number, a numeric array, or a (nested) list/tuple of them."""
    if isinstance(value, bool | np.bool_) or depth > 2:
        return np.empty(0)
    if isinstance(value, numbers.Real):
        return np.asarray([float(value)])
    if isinstance(value, np.ndarray):
        return value.astype(float, copy=False).ravel() if value.dtype.kind in "fiu" else np.empty(0)
    if isinstance(value, list | tuple):
        parts = [_real_numbers(v, depth + 1) for v in value]
        return np.concatenate(parts) if parts else np.empty(0)
    return np.empty(0)


def record(instance: Any, *, infinite: tuple[str, ...] = ()) -> None:
    """No number held by the dataclass ``instance`` is NaN, and none is infinite except in the fields ``infinite``
    (whose documentation says when they are); call it from ``__post_init__``, so a record never carries a silent NaN
    or an undocumented ``inf`` (``ValueError`` naming the field otherwise)."""
    import dataclasses

    for field in dataclasses.fields(instance):
        value = getattr(instance, field.name)
        held = _real_numbers(value)
        if np.any(np.isnan(held)):
            raise ValueError(f"{field.name} must not be NaN; got {field.name}={_short(value)}.")
        if field.name not in infinite and np.any(np.isinf(held)):
            raise ValueError(f"{field.name} must be finite; got {field.name}={_short(value)}.")


def broadcastable(**named: Any) -> None:
    """The values' shapes broadcast together (``ValueError`` naming them and their shapes otherwise)."""
    for name, value in named.items():
        _as_float_array(name, value)  # numbers in a rectangular array (np.shape fails on a ragged list)
    shapes = {name: np.shape(value) for name, value in named.items()}
    try:
        np.broadcast_shapes(*shapes.values())
    except ValueError:
        shown = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(f"{', '.join(named)} must have shapes that broadcast together; got {shown}.") from None


def instance(kind: type | tuple[type, ...], **named: Any) -> None:
    """Each value is an instance of ``kind`` (``TypeError`` naming the parameter otherwise): for arguments that are
    objects of the library (a problem, a spectrum, a law, a strategy), so a wrong one fails here and not as an
    ``AttributeError`` deep inside the computation."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    wanted = " or ".join(k.__name__ for k in kinds)
    for name, value in named.items():
        if not isinstance(value, kinds):
            raise TypeError(f"{name} must be a {wanted}; got {name}={_short(value)} (a {type(value).__name__}).")


def generator(**named: Any) -> None:
    """Each value is a :class:`numpy.random.Generator` (``TypeError`` naming the parameter otherwise)."""
    for name, value in named.items():
        if not isinstance(value, np.random.Generator):
            raise TypeError(f"{name} must be a numpy.random.Generator; got {type(value).__name__}.")


def is_real_scalar(value: Any) -> bool:
    """True for a finite Python/NumPy real number that is not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def member(kind: type[E], **named: Any) -> E:
    """The member of the enum ``kind`` given as itself or its value (``ValueError`` naming the parameter and the
    choices otherwise); one keyword argument."""
    ((name, value),) = named.items()
    try:
        return kind(value)
    except (ValueError, TypeError):
        choices = ", ".join(repr(m.value) for m in kind)
        raise ValueError(f"{name} must be one of {choices}; got {name}={value!r}.") from None


def delta(value: Any, *, name: str = "delta") -> float:
    """δ of an (ε, δ) guarantee: a finite real scalar in the open interval (0, 1), returned as a float. The one
    δ check of the package: every accountant, planner and estimator that takes a δ calls it (or :func:`deltas`)."""
    scalar(**{name: value})
    finite(**{name: value})
    in_range(0.0, 1.0, closed="neither", **{name: value})
    return float(value)


def deltas(value: Any, *, name: str = "delta") -> None:
    """:func:`delta` for functions that broadcast δ over an array: every entry finite and in (0, 1)."""
    finite(**{name: value})
    in_range(0.0, 1.0, closed="neither", **{name: value})


def scalar(**named: Any) -> None:
    """Every value is a single real number (a Python or NumPy real, or a 0-d array; not a bool)."""
    for name, value in named.items():
        if isinstance(value, bool | np.bool_):
            raise TypeError(f"{name} must be a real scalar; got {name}={value!r} (a bool).")
        _reject_text(name, value)
        if value is None:
            raise TypeError(f"{name} must be a real scalar; got {name}=None.")
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"{name} must be a real scalar; got {name}={_short(value)}.") from None
        if arr.ndim != 0:
            raise TypeError(f"{name} must be a real scalar; got {name}={_show(arr)} (shape {arr.shape}).")
