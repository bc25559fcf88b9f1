"""Fuzz every public callable of the lazy public API (``privdyn.<subpackage>.__all__``) with adversarial arguments.

Each example draws, for every parameter of a callable's signature, either nothing (when it has a default) or a value
from a pool of random, boundary and adversarial inputs: 0, negatives, subnormals, 1e308, NaN, infinities, huge
integers, text, bools, None, empty, ragged and wrong-dtype arrays. The call must end within a deadline and either
raise ``ValueError``/``TypeError`` whose message names one of the callable's parameters, or return a result whose
numbers are not NaN and are finite unless the docstring documents ``inf``. Any other exception, a RuntimeWarning, a
NaN, an undocumented ``inf`` or a hang fails.

The default run (CI) draws :data:`CI_EXAMPLES` examples in total; ``pytest -m fuzz`` draws :data:`DEEP_EXAMPLES`.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import math
import signal
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

SUBPACKAGES = ("privacy", "dynamics", "algorithms", "bounds", "models", "data", "plan")
SKIPPED_PREFIXES = ("load_",)  # the dataset loaders download files: not fuzzed
CI_EXAMPLES = 2_000
DEEP_EXAMPLES = 20_000
DEADLINE_S = 10

# Callables whose result may hold NaN by documented design, with the reason: the suite accepts their NaN (every other
# part of the contract still applies to them).
DOCUMENTED_NAN: dict[str, str] = {
    "algorithms.DPSGDLog": "nan is documented and meaningful here: a training loss not evaluated, the batch loss and "
                           "fractions at step 0 (before any step), the batch loss of a window of empty Poisson "
                           "batches",
}

# What this suite finds on the current code and is not fixed yet, by callable (none at present). Non-strict xfails:
# which adversarial values a run draws depends on the hypothesis version.
KNOWN_FAILURES: dict[str, str] = {}


def _public_callables() -> list[tuple[str, Callable[..., Any]]]:
    found = []
    for name in SUBPACKAGES:
        module = importlib.import_module(f"privdyn.{name}")
        for attribute in sorted(module.__all__):
            value = getattr(module, attribute)
            if not callable(value) or attribute.startswith(SKIPPED_PREFIXES):
                continue
            if isinstance(value, type) and issubclass(value, BaseException | enum.Enum):
                continue
            if inspect.isabstract(value) or getattr(value, "_is_protocol", False):
                continue  # an abstract base or a Protocol: Python itself refuses to instantiate it, by design
            try:
                inspect.signature(value)
            except (TypeError, ValueError):
                continue
            found.append((f"{name}.{attribute}", value))
    return found


CALLABLES = _public_callables()
PER_CALLABLE_CI = math.ceil(CI_EXAMPLES / len(CALLABLES))
PER_CALLABLE_DEEP = math.ceil(DEEP_EXAMPLES / len(CALLABLES))

_SPECIAL = [0, 1, -1, 2, 0.0, -0.0, 0.5, 1.0, -1.0, 5e-324, 1e-320, 2.2e-308, 1e-300, 1e308, -1e308,
            1.7976931348623157e308, math.nan, math.inf, -math.inf, 2**31, 2**63, 10**20, -(10**20), True, False, None,
            "1.0", "", "nan", b"1", [], [1.0, 2.0], [[1.0], [1.0, 2.0]], (), {}, object()]


def _arrays() -> st.SearchStrategy[Any]:
    floats = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True)
    return st.one_of(
        st.just(np.array([])),
        st.just(np.zeros((0, 3))),
        st.just(np.array([1.0, 2.0], dtype=complex)),
        st.just(np.array(["a", "b"])),
        st.just(np.array([1, 2], dtype=np.int8)),
        st.lists(floats, min_size=1, max_size=4).map(np.asarray),
        st.lists(st.floats(-3, 3), min_size=2, max_size=6).map(lambda v: np.asarray(v).reshape(-1, 1)),
        st.lists(st.floats(0.01, 2.0), min_size=1, max_size=5),
    )


VALUES = st.one_of(
    st.sampled_from(_SPECIAL),
    st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.floats(-1e3, 1e3),
    st.integers(-(10**6), 10**6),
    st.integers(0, 40),
    st.sampled_from(["fixed_size", "poisson", "shuffle", "replace_one", "add_remove", "zero_out", "exact", "bound",
                     "exponential", "lsoda", "bun_steinke", "optimal", "x"]),
    _arrays(),
)


class _Timeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout(f"no answer within {DEADLINE_S} s")


def _numbers(value: Any, depth: int = 0) -> list[float]:
    """Every real number inside a result (floats, arrays, dataclass fields, mappings, sequences), a few levels deep."""
    if depth > 4:
        return []
    if isinstance(value, bool | np.bool_ | str | bytes | enum.Enum) or value is None:
        return []
    if isinstance(value, int | float | np.integer | np.floating):
        return [float(value)]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fiu" and value.size:
            return [float(x) for x in np.asarray(value, dtype=float).ravel()[:10_000]]
        return []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [x for f in dataclasses.fields(value) for x in _numbers(getattr(value, f.name, None), depth + 1)]
    if isinstance(value, Mapping):
        return [x for v in list(value.values())[:100] for x in _numbers(v, depth + 1)]
    if isinstance(value, list | tuple):
        return [x for v in value[:100] for x in _numbers(v, depth + 1)]
    return []


def _call(name: str, function: Callable[..., Any], data: st.DataObject) -> None:
    parameters = inspect.signature(function).parameters
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for parameter in parameters.values():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if parameter.default is not parameter.empty and data.draw(st.booleans(), label=f"omit {parameter.name}"):
            continue
        value = data.draw(VALUES, label=parameter.name)
        if parameter.kind == parameter.POSITIONAL_ONLY:
            args.append(value)
        else:
            kwargs[parameter.name] = value
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(DEADLINE_S)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            result = function(*args, **kwargs)
    except (ValueError, TypeError) as error:
        message = str(error)
        named = [p for p in parameters if p in message]
        assert named, f"{name}: {type(error).__name__} does not name a parameter: {message!r}"
        return
    except _Timeout:
        pytest.fail(f"{name}({args}, {kwargs}) did not return within {DEADLINE_S} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    numbers = _numbers(result)
    assert name in DOCUMENTED_NAN or not any(math.isnan(x) for x in numbers), \
        f"{name} returned NaN for {args}, {kwargs}"
    if any(math.isinf(x) for x in numbers):
        assert "inf" in (inspect.getdoc(function) or ""), f"{name} returned an undocumented inf for {args}, {kwargs}"


def _cases(*, strict: bool) -> list[Any]:
    return [pytest.param(name, function, id=name,
                         marks=[pytest.mark.xfail(strict=strict, reason=f"fuzz finding: {KNOWN_FAILURES[name]}")]
                         if name in KNOWN_FAILURES else [])
            for name, function in CALLABLES]


FUZZ_SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None,
                     phases=(Phase.explicit, Phase.generate))  # no shrinking: the failing call is printed as drawn


@pytest.mark.skipif(sys.platform == "win32", reason="the per-call deadline uses SIGALRM")
@pytest.mark.parametrize(("name", "function"), _cases(strict=False))  # draws differ between hypothesis versions
@settings(max_examples=PER_CALLABLE_CI, derandomize=True, **FUZZ_SETTINGS)  # the same draws on every CI run
@given(data=st.data())
def test_public_callable(name, function, data):
    _call(name, function, data)


@pytest.mark.fuzz
@pytest.mark.skipif(sys.platform == "win32", reason="the per-call deadline uses SIGALRM")
@pytest.mark.parametrize(("name", "function"), _cases(strict=False))
@settings(max_examples=PER_CALLABLE_DEEP, **FUZZ_SETTINGS)
@given(data=st.data())
def test_public_callable_deep(name, function, data):
    _call(name, function, data)


BAD_VALUES = {"text": "1.0", "bytes": b"1", "none": None, "complex": np.array([1.0, 2.0], dtype=complex),
              "ragged": [[1.0], [1.0, 2.0]], "object": object(), "text-array": np.array(["a", "b"])}


def _bad_calls(function: Callable[..., Any], bad: Any) -> list[tuple[list[Any], dict[str, Any]]]:
    """Calls with ``bad`` for every required parameter, then also for each optional one in turn."""
    parameters = [p for p in inspect.signature(function).parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    required = [p for p in parameters if p.default is p.empty]
    calls = []
    for extra in [None, *(p for p in parameters if p.default is not p.empty)]:
        chosen = [*required, *([extra] if extra is not None else [])]
        args = [bad for p in chosen if p.kind == p.POSITIONAL_ONLY]
        kwargs = {p.name: bad for p in chosen if p.kind != p.POSITIONAL_ONLY}
        calls.append((args, kwargs))
    return calls


@pytest.mark.parametrize("kind", sorted(BAD_VALUES))
@pytest.mark.parametrize(("name", "function"), CALLABLES, ids=[name for name, _ in CALLABLES])
def test_wrong_type_names_the_parameter(name, function, kind):
    """Deterministic (no draws): text, None, complex, ragged or object arguments raise a ValueError/TypeError that
    names a parameter -- the common leaks (numpy's "could not convert string to float", an AttributeError, a
    ComplexWarning, None turned into NaN) fail here on every run, whatever hypothesis draws."""
    parameters = inspect.signature(function).parameters
    for args, kwargs in _bad_calls(function, BAD_VALUES[kind]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                result = function(*args, **kwargs)
            except (ValueError, TypeError) as error:
                assert any(p in str(error) for p in parameters), \
                    f"{name}({list(kwargs)}={kind}): {type(error).__name__} names no parameter: {error}"
                continue
        numbers = _numbers(result)
        assert name in DOCUMENTED_NAN or not any(math.isnan(x) for x in numbers), \
            f"{name}({list(kwargs)}={kind}) returned NaN"
