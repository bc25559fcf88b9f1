"""The pieces of an experiment's ``result.json``: series, tables, metrics and checks (ARCHITECTURE.md, "Outputs").

These are plain frozen records with a ``to_json`` method. Engines never see them; experiments build them from
engine outputs, and the runner serialises them.

JSON has no infinities or NaN: a non-finite float is written as the string ``"inf"``, ``"-inf"`` or ``"nan"``
(see :func:`to_jsonable`), and read back by :func:`from_jsonable_float`.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "CheckKind",
    "Series",
    "Table",
    "Metric",
    "Check",
    "to_jsonable",
    "from_jsonable_float",
    "check_close",
    "check_ordering",
    "check_monte_carlo",
    "finite_size_allowance",
    "Z_SCORE",
    "FAMILY_LEVEL",
    "bonferroni_z",
    "MeanSE",
    "mean_se",
    "loglog_slope",
    "weighted_slope",
    "check_not_applicable",
    "finding",
    "fails_strict",
]


class CheckKind(enum.StrEnum):
    INVARIANT = "invariant"
    """Must hold for privdyn to be right; a failure is a bug."""
    PAPER_CLAIM = "paper_claim"
    """What the paper states; a claim that does not reproduce fails with a note saying why."""
    FINDING = "finding"
    """A measured statement with no expected outcome; ``passed`` is None."""


def to_jsonable(value: Any) -> Any:
    """Convert NumPy scalars/arrays, tuples, enums and non-finite floats into JSON-compatible values.

    Integer-valued NumPy integers become JSON integers; floats stay floats; ``inf``/``nan`` become strings.
    """
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        v = float(value)
        if math.isfinite(v):
            return v
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [to_jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    return value


def from_jsonable_float(value: Any) -> float | None:
    """Inverse of :func:`to_jsonable` for one float (``None`` stays ``None``)."""
    if value is None:
        return None
    if isinstance(value, str):
        return float(value)
    return float(value)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Series:
    """One curve (or heatmap). Consumers select curves by ``params``, never by parsing ``name``."""

    name: str
    params: Mapping[str, Any]
    x: Sequence[float] | np.ndarray
    y: Sequence[float] | np.ndarray
    x_label: str
    y_label: str
    y_low: Sequence[float] | np.ndarray | None = None
    y_high: Sequence[float] | np.ndarray | None = None
    standard_error: Sequence[float] | np.ndarray | None = None
    z: Sequence[Sequence[float]] | np.ndarray | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "params": to_jsonable(dict(self.params)),
            "x": to_jsonable(np.asarray(self.x)),
            "y": to_jsonable(np.asarray(self.y)),
            "x_label": self.x_label,
            "y_label": self.y_label,
        }
        for key in ("y_low", "y_high", "standard_error", "z"):
            value = getattr(self, key)
            if value is not None:
                out[key] = to_jsonable(np.asarray(value))
        return out


@dataclasses.dataclass(frozen=True, kw_only=True)
class Table:
    name: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"table {self.name!r}: a row has {len(row)} cells for {len(self.columns)} columns.")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "columns": list(self.columns), "rows": to_jsonable([list(r) for r in self.rows])}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Metric:
    name: str
    params: Mapping[str, Any]
    value: Any

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "params": to_jsonable(dict(self.params)), "value": to_jsonable(self.value)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Check:
    """One asserted (or measured) statement. ``passed`` is None for findings and not-applicable checks.

    ``margin`` is how far inside its pass region the check landed, in the units of ``tolerance``: the tolerance
    minus the deviation it bounds (abs(measured − expected), relative where the tolerance is relative; for an ordering,
    the relative excess in ``measured``). It is >= 0 when the check passes and < 0 when it fails; None where the
    check states no single tolerance (its claim says what is compared).

    ``standard_error`` is the SE of a Monte-Carlo comparison; a check over several points (a curve, a grid, the
    competitors of a schedule) records one SE per compared point, so that its power (set by its largest SE) does not
    depend on which point the seed made the worst one (``expected``, ``measured`` and ``tolerance`` are that point's).
    """

    name: str
    kind: CheckKind
    claim: str
    passed: bool | None
    expected: Any = None
    measured: Any = None
    tolerance: float | None = None
    standard_error: float | Sequence[float] | None = None
    note: str = ""
    margin: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", CheckKind(self.kind))
        if self.kind is CheckKind.FINDING and self.passed is not None:
            raise ValueError(f"check {self.name!r}: a finding has passed=None.")
        if self.passed is not None:
            object.__setattr__(self, "passed", bool(self.passed))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind.value,
            "claim": self.claim,
            "expected": to_jsonable(self.expected),
            "measured": to_jsonable(self.measured),
            "tolerance": to_jsonable(self.tolerance),
            "standard_error": to_jsonable(self.standard_error),
            "margin": None if self.margin is None else to_jsonable(float(self.margin)),
            "passed": self.passed,
            "note": self.note,
        }


def fails_strict(check: Mapping[str, Any]) -> bool:
    """Whether a serialised check fails ``--strict``: a failed invariant, or a failed paper claim without a note."""
    if check["passed"] is not False:
        return False
    return check["kind"] == CheckKind.INVARIANT or (check["kind"] == CheckKind.PAPER_CLAIM
                                                     and not str(check["note"]).strip())


def check_close(
    name: str,
    *,
    kind: CheckKind,
    claim: str,
    expected: Any,
    measured: Any,
    rtol: float | None = None,
    atol: float | None = None,
    note: str = "",
) -> Check:
    """Compare numbers (or equal-shape arrays): passes when every abs(measured − expected) ≤ atol + rtol·abs(expected).

    The recorded tolerance is ``rtol`` when only a relative tolerance is given, else ``atol``; the margin is in
    the same units (relative, resp. absolute), at the worst element.
    """
    if rtol is None and atol is None:
        raise ValueError("check_close needs rtol or atol.")
    e = np.asarray(expected, dtype=float)
    m = np.asarray(measured, dtype=float)
    bound = (atol or 0.0) + (rtol or 0.0) * np.abs(e)
    passed = bool(np.all(np.abs(m - e) <= bound)) and bool(np.all(np.isfinite(m)))
    slack = bound - np.abs(m - e)
    if atol is None:  # relative units: the slack over |expected| (where expected is 0, any deviation fails)
        with np.errstate(divide="ignore", invalid="ignore"):
            slack = np.where(np.abs(e) > 0, slack / np.abs(e), np.where(m == e, float(rtol or 0.0), -np.inf))
    margin = float(np.min(slack)) if slack.size and np.all(np.isfinite(m)) else -math.inf
    return Check(
        name=name,
        kind=kind,
        claim=claim,
        expected=expected,
        measured=measured,
        tolerance=rtol if atol is None else atol,
        passed=passed,
        note=note,
        margin=margin,
    )


def check_ordering(name: str, *, kind: CheckKind, claim: str, lower: Any, upper: Any, rtol: float = 0.0,
                   note: str = "") -> Check:
    """``lower ≤ upper·(1 + rtol)`` elementwise; ``measured`` is the largest relative excess of lower over upper."""
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    excess = (lo - hi) / np.maximum(np.abs(hi), np.finfo(float).tiny)
    worst = float(np.max(excess)) if excess.size else 0.0
    return Check(name=name, kind=kind, claim=claim, expected=None, measured=worst, tolerance=rtol,
                 passed=bool(np.all(lo <= hi + rtol * np.abs(hi))), note=note, margin=rtol - worst)


Z_SCORE = 5.0
"""The z of a single Monte-Carlo comparison (ARCHITECTURE.md, "Outputs"); over several comparisons
:func:`bonferroni_z` raises it, never below this value."""


def check_monte_carlo(name: str, *, claim: str, expected: float, measured: float, standard_error: float,
                      z: float = Z_SCORE, bias_allowance: float = 0.0, kind: CheckKind = CheckKind.INVARIANT,
                      note: str = "", point_standard_errors: Sequence[float] | np.ndarray | None = None) -> Check:
    """A Monte-Carlo comparison: passes when abs(measured − expected) ≤ z·SE + bias_allowance.

    The tolerance field records z·SE + bias_allowance (the smallest detectable error); the note states z. A check
    reported at the worst of several compared points passes that point's SE as ``standard_error`` and the SE of
    every compared point as ``point_standard_errors``, which the check records as its ``standard_error``.
    """
    tolerance = z * standard_error + bias_allowance
    text = f"z = {z:g}" + (f", derived bias allowance {bias_allowance:.3g}" if bias_allowance else "")
    if point_standard_errors is not None:
        text += f", SE at this point {standard_error:.3g} (standard_error: one per compared point)"
    recorded = standard_error if point_standard_errors is None else [float(v) for v in point_standard_errors]
    return Check(name=name, kind=kind, claim=claim, expected=expected, measured=measured, tolerance=tolerance,
                 standard_error=recorded, passed=abs(measured - expected) <= tolerance,
                 note=f"{text}. {note}".strip(), margin=tolerance - abs(measured - expected))


FAMILY_LEVEL = 1e-6
"""The family-wise level of a Monte-Carlo check over a curve's independent blocks (ARCHITECTURE.md, "Outputs")."""


def bonferroni_z(num_comparisons: int) -> float:
    """The two-sided z at family-wise level :data:`FAMILY_LEVEL` over ``num_comparisons`` comparisons, at least 5."""
    from scipy import stats

    if isinstance(num_comparisons, bool) or not isinstance(num_comparisons, int | np.integer) or num_comparisons < 1:
        raise ValueError(f"num_comparisons must be an integer >= 1; got {num_comparisons!r}.")
    return max(Z_SCORE, float(stats.norm.isf(FAMILY_LEVEL / (2.0 * int(num_comparisons)))))


class MeanSE(NamedTuple):
    """Sample mean, sample standard deviation (ddof = 1) and standard error of the mean, sd/√count."""

    mean: Any
    sd: Any
    standard_error: Any


def mean_se(values: Any, axis: int | None = None) -> MeanSE:
    """The mean ± SE of independent runs: :class:`MeanSE` of ``values`` along ``axis`` (all values when None).

    The standard error is the sample standard deviation (ddof = 1) over √count, count the number of values along
    ``axis``; arrays keep their other axes, scalars come back as numpy floats. Needs at least two values along
    ``axis`` for a finite sd (numpy gives nan otherwise).
    """
    x = np.asarray(values)
    count = x.size if axis is None else x.shape[axis]
    sd = x.std(axis=axis, ddof=1)
    return MeanSE(x.mean(axis=axis), sd, sd / math.sqrt(count))


def loglog_slope(x: ArrayLike, y: ArrayLike) -> float:
    """Least-squares slope of ln y against ln x (the "slope of the linear best fit in log-log scale" of a figure).

    Unweighted; for points with Monte-Carlo standard errors use :func:`weighted_slope` on the logarithms.
    """
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    if lx.size < 2:
        raise ValueError(f"a slope needs at least 2 points; got {lx.size}.")
    lx = lx - lx.mean()
    return float(np.dot(lx, ly - ly.mean()) / np.dot(lx, lx))


def weighted_slope(x: Any, y: Any, y_se: Any) -> tuple[float, float, float]:
    """Weighted least-squares line through independent points y (standard errors ``y_se``) against x.

    Weights 1/y_se²; returns ``(slope, standard error of the slope, intercept)``. Used for fitted decay exponents
    (log-log slopes) whose uncertainty comes from Monte-Carlo standard errors.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    w = 1.0 / np.asarray(y_se, dtype=float) ** 2
    xm = float(np.sum(w * x) / np.sum(w))
    ym = float(np.sum(w * y) / np.sum(w))
    sxx = float(np.sum(w * (x - xm) ** 2))
    slope = float(np.sum(w * (x - xm) * (y - ym)) / sxx)
    return slope, math.sqrt(1.0 / sxx), ym - slope * xm


def finite_size_allowance(small_size_bias: float, *, small_size: float, size: float, cap: float,
                          exponent: float = 0.5) -> float:
    """A bias allowance at ``size`` derived from the discrepancy measured at a smaller ``small_size``.

    Deterministic equivalents (ODEs, Volterra equations) describe the d → ∞ limit; at finite d a simulated mean sits off
    them by a bias of order d^(−exponent) (d^(−½) for the dpgd ODE of arXiv 2505.16329, Theorem 1: about 1% at d = 200).
    Measuring the bias abs(mean − prediction) at ``small_size`` and scaling it by (small_size/size)^exponent gives the
    allowance at ``size``; the result is capped at ``cap`` (an absolute amount, e.g. 3%·√(200/d) of the prediction), so
    a large discrepancy at the small size cannot excuse one at the large size.

    Args:
        small_size_bias: abs(simulated mean − prediction) measured at ``small_size`` (includes its sampling error,
            which only makes the allowance more generous, never above ``cap``).
        small_size, size: the two sizes (e.g. dimensions d), 0 < small_size <= size.
        cap: the largest allowance, >= 0.
        exponent: the bias's decay exponent in the size.
    """
    if not (math.isfinite(small_size_bias) and small_size_bias >= 0):
        raise ValueError(f"small_size_bias must be finite and >= 0; got {small_size_bias!r}.")
    if not 0 < small_size <= size:
        raise ValueError(f"need 0 < small_size <= size; got small_size={small_size!r}, size={size!r}.")
    if not (math.isfinite(cap) and cap >= 0):
        raise ValueError(f"cap must be finite and >= 0; got {cap!r}.")
    if not exponent > 0:
        raise ValueError(f"exponent must be > 0; got {exponent!r}.")
    return min(cap, small_size_bias * (small_size / size) ** exponent)


def check_not_applicable(name: str, *, kind: CheckKind, claim: str, note: str, expected: Any = None) -> Check:
    """A check that does not apply to the current config: ``passed`` is None and the note says why."""
    return Check(name=name, kind=kind, claim=claim, expected=expected, measured=None, passed=None, note=note)


def finding(name: str, *, claim: str, measured: Any, note: str = "") -> Check:
    """A measured statement with no expected outcome."""
    return Check(name=name, kind=CheckKind.FINDING, claim=claim, measured=measured, passed=None, note=note)
