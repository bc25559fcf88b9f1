"""Minimizers over positive hyper-parameters, in log-parameter space: the optimizers of the dpgd ODE search.

* :func:`minimize_final_risk` minimizes any objective over a box: a log-spaced grid (plus optional random
  log-uniform points) maps the landscape and picks well-separated starts, then a bounded local optimizer refines
  each start. Every evaluation is kept, so the explored landscape is part of the result (:class:`TuningResult`).
  The figures' tuners (:func:`privdyn.tuning.dpgd.tune_polynomial`, :func:`privdyn.tuning.dpgd.tune_harmonic`) run
  it on the ODE.
* :func:`refine_log_minimum`: Nelder-Mead from a grid minimum that the caller already has (Figure 4's heatmaps).
* :func:`line_search`: one parameter, bracketing and safeguarded parabolic steps that stop on a flat valley; the
  stages of the planner's staged search (:func:`privdyn.tuning.staged.search`).
* :func:`optimize_initial_learning_rate`: one parameter on an interval, a log grid then bounded Brent (Figures 2
  and 3: η̃(0) at a fixed clip).

None of them knows the objective: the dpgd ODE enters through :class:`privdyn.tuning.dpgd.Objective`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from scipy import optimize

from privdyn import _check
from privdyn._arrays import read_only

__all__ = [
    "TuningResult",
    "OptimumAtBoundWarning",
    "minimize_final_risk",
    "DEFAULT_GRID_POINTS",
    "DEFAULT_STARTS",
    "DEFAULT_TOLERANCE",
    "DEFAULT_MAX_LOCAL_EVALUATIONS",
    "LOCAL_METHODS",
    "refine_log_minimum",
    "line_search",
    "optimize_initial_learning_rate",
    "LOG_TOLERANCE",
    "FLAT_TOLERANCE",
]

#: Grid points per parameter: about two per decade over the usual 3-5 decade ranges, enough to see the basins;
#: the local refinement supplies the precision.
DEFAULT_GRID_POINTS = 9
#: Local refinements, from the best grid points that are more than 1.5 grid cells apart (distinct basins).
DEFAULT_STARTS = 3
#: Stopping tolerance: absolute in log-parameter (i.e. relative in the parameter) and relative in the objective.
#: 1e-4 is far below what the figures resolve and well above the ODE's own error at rtol = 1e-8.
DEFAULT_TOLERANCE = 1e-4
#: Objective evaluations allowed per local refinement (restarts included).
DEFAULT_MAX_LOCAL_EVALUATIONS = 400
#: Local optimizers in log-parameter space.
LOCAL_METHODS = ("nelder-mead", "l-bfgs-b")

LOG_TOLERANCE = 0.02
"""A line search stops when its bracket is narrower than this in the logarithm of the parameter (2%)."""
FLAT_TOLERANCE = 2e-4
"""... or when the parabola through its bracket predicts less than this relative improvement (a flat valley)."""

_MAX_GRID_SIZE = 100_000
_MAX_RESTARTS = 5
_STAGES = ("grid", "random", "local")
_MAX_LINE_EVALUATIONS = 14
_LOCAL_BRACKET = 0.6
"""The widest bracket (in log units, a factor 1.8) on which a parabola's predicted improvement may stop a search."""
_GOLDEN = 0.381966


class OptimumAtBoundWarning(UserWarning):
    """The optimum lies on a bound of the search box: the true optimum may be outside it."""



@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class TuningResult:
    """The optimum of :func:`minimize_final_risk` and the landscape it explored.

    Attributes:
        names: the parameter names, in the order of the columns of ``points``.
        optimum: name -> optimal value (the best evaluated point).
        value: the objective at ``optimum`` (the smallest finite value evaluated).
        points: (N, k) every evaluated point, in natural (not log) units, in evaluation order; read-only.
        values: (N,) the objective at each point as returned (NaN and inf kept); read-only.
        stages: (N,) where each point came from: ``"grid"``, ``"random"`` or ``"local"``; read-only.
        starts: (s, k) the points the local refinements started from; read-only.
        tolerance: the stopping tolerance (log-parameter and relative objective).
        at_bound: names whose optimal value lies on a bound of the search box (within the tolerance).
        converged: every local refinement met the tolerance within its evaluation budget.
        fixed: hyper-parameters held fixed by a wrapper (e.g. ``clip``), for the record.
    """

    names: tuple[str, ...]
    optimum: Mapping[str, float]
    value: float
    points: np.ndarray
    values: np.ndarray
    stages: np.ndarray
    starts: np.ndarray
    tolerance: float
    at_bound: tuple[str, ...]
    converged: bool
    fixed: Mapping[str, float] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("points", "values", "stages", "starts"):
            object.__setattr__(self, name, read_only(getattr(self, name), dtype=None))
        object.__setattr__(self, "optimum", types.MappingProxyType(dict(self.optimum)))
        object.__setattr__(self, "fixed", types.MappingProxyType(dict(self.fixed)))

    @property
    def num_evaluations(self) -> int:
        """Number of distinct objective evaluations."""
        return int(self.values.size)

    def column(self, name: str) -> np.ndarray:
        """The evaluated values of one parameter: shape (N,)."""
        _check.one_of(self.names, name=name)
        return self.points[:, self.names.index(name)]


def _positive_pair(label: str, value: Any, hint: str = "") -> tuple[float, float]:
    """A box (low, high) with 0 < low < high, as floats; errors name ``label``."""
    try:
        low, high = value
    except (TypeError, ValueError):
        raise ValueError(f"{label} must be a pair (low, high); got {label}={value!r}.") from None
    _check.scalar(**{f"{label} low": low, f"{label} high": high})
    _check.positive(**{f"{label} low": low, f"{label} high": high})
    if not low < high:
        raise ValueError(f"{label} must have low < high{hint}; got {label}=({low!r}, {high!r}).")
    return float(low), float(high)


def _parse_bounds(bounds: Mapping[str, Any], argument: str = "bounds") -> tuple[tuple[str, ...], np.ndarray,
                                                                                     np.ndarray]:
    """Names and (low, high) arrays in natural units, validated."""
    if not isinstance(bounds, Mapping) or len(bounds) == 0:
        raise ValueError(f"{argument} must be a non-empty mapping name -> (low, high); got {argument}={bounds!r}.")
    names, lows, highs = [], [], []
    for name, pair in bounds.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{argument} keys must be parameter names (identifiers); got {name!r}.")
        low, high = _positive_pair(f"{argument}[{name!r}]", pair,
                                   " (fix the parameter in the objective instead of giving equal bounds)")
        names.append(name)
        lows.append(low)
        highs.append(high)
    return tuple(names), np.array(lows), np.array(highs)


def minimize_final_risk(objective: Callable[..., float], *, bounds: Mapping[str, tuple[float, float]],
                        grid_points: int = DEFAULT_GRID_POINTS, starts: int = DEFAULT_STARTS, random_starts: int = 0,
                        tol: float = DEFAULT_TOLERANCE, local_method: str = "nelder-mead",
                        max_local_evaluations: int = DEFAULT_MAX_LOCAL_EVALUATIONS, seed: int = 0) -> TuningResult:
    """Minimize ``objective(**params)`` over positive parameters, by a log grid and multi-start local refinement.

    Algorithm (all in z = log(parameter)):

    1. evaluate the objective on the full tensor grid of ``grid_points`` log-spaced values per parameter (bounds
       included), plus ``random_starts`` log-uniform points drawn from ``numpy.random.default_rng(seed)``;
    2. pick up to ``starts`` start points: the best evaluated points, skipping any within 1.5 grid cells
       (in every coordinate) of a start already chosen, so that distinct basins are refined;
    3. from each start, run the bounded local optimizer (``"nelder-mead"``: scipy's Nelder-Mead with bounds and an
       initial simplex of half a grid cell; ``"l-bfgs-b"``: finite-difference L-BFGS-B, for smooth objectives),
       restarting Nelder-Mead from its result while a restart improves the objective by more than a relative
       ``tol`` (at most 5 restarts);
    4. return the best point evaluated anywhere.

    **Tolerance.** Nelder-Mead stops when the simplex spans at most ``tol`` in every log-parameter (a relative
    precision ``tol`` on each parameter) and its objective values agree to ``tol`` relative to the objective at the
    start. In a well-conditioned basin the optimum is found to about ``tol`` in log-parameter and the value to a
    relative ``tol``; along a flat valley the value is still resolved to a relative ``tol``, but the position only to
    about sqrt(tol·abs(f)/curvature) in log-parameter. L-BFGS-B uses ``ftol = tol`` on the objective scaled by its
    value at the start. The search is local in the end: a basin that the grid misses entirely can be missed.

    Non-finite objective values (NaN, inf) are recorded as returned and treated as +inf by the search. Exceptions
    raised by the objective propagate. Repeated points are evaluated once (cached on their exact log coordinates).

    Shapes: the result's ``points`` are (N, k) with k = len(bounds), ``values`` and ``stages`` (N,).

    Args:
        objective: called as ``objective(**{name: value})`` with Python floats; returns a real number.
        bounds: name -> (low, high), 0 < low < high; the search box (natural units).
        grid_points: grid values per parameter, an integer >= 2 (grid size grid_points**k at most 100000).
        starts: number of local refinements, an integer >= 0 (0: grid and random points only).
        random_starts: extra log-uniform points evaluated before choosing the starts, an integer >= 0.
        tol: stopping tolerance > 0 (see above).
        local_method: ``"nelder-mead"`` or ``"l-bfgs-b"``.
        max_local_evaluations: objective evaluations per local refinement, an integer >= 1.
        seed: seed of the random points (used only when ``random_starts > 0``), an integer >= 0.

    Returns:
        A :class:`TuningResult`.

    Raises:
        ValueError: invalid arguments, or no finite objective value on the grid and random points.

    Warns:
        OptimumAtBoundWarning: the optimum lies on a bound (within ``tol``): widen the search box.
    """
    if not callable(objective):
        raise TypeError(f"objective must be callable; got objective={objective!r}.")
    names, natural_lo, natural_hi = _parse_bounds(bounds)
    lo, hi = np.log(natural_lo), np.log(natural_hi)
    _check.integer(minimum=2, grid_points=grid_points)
    _check.integer(minimum=0, starts=starts, random_starts=random_starts, seed=seed)
    _check.integer(minimum=1, max_local_evaluations=max_local_evaluations)
    _check.scalar(tol=tol)
    _check.positive(tol=tol)
    _check.one_of(LOCAL_METHODS, local_method=local_method)
    k = len(names)
    if grid_points**k > _MAX_GRID_SIZE:
        raise ValueError(f"grid_points**{k} = {grid_points**k} exceeds {_MAX_GRID_SIZE}; use fewer grid_points "
                         "(and random_starts for extra coverage).")
    tol = float(tol)

    cache: dict[tuple[float, ...], float] = {}
    log_points: list[np.ndarray] = []
    raw_values: list[float] = []
    stages: list[str] = []

    def evaluate(z: np.ndarray, stage: str) -> float:
        z = np.clip(np.asarray(z, dtype=float), lo, hi)
        key = tuple(float(v) for v in z)
        if key in cache:
            return cache[key]
        x = np.clip(np.exp(z), natural_lo, natural_hi)
        returned = objective(**{name: float(v) for name, v in zip(names, x, strict=True)})
        try:
            value = float(returned)
        except (TypeError, ValueError):
            raise TypeError(f"objective must return a real number; got {returned!r} at "
                            f"{dict(zip(names, x.tolist(), strict=True))}.") from None
        cache[key] = value
        log_points.append(z)
        raw_values.append(value)
        stages.append(stage)
        return value

    def ranked(z: np.ndarray, stage: str = "local") -> float:
        value = evaluate(z, stage)
        return value if math.isfinite(value) else math.inf

    # 1. landscape: grid, then random points
    axes = [np.linspace(lo[i], hi[i], grid_points) for i in range(k)]
    for z in itertools.product(*axes):
        evaluate(np.array(z), "grid")
    if random_starts:
        rng = np.random.default_rng(seed)
        for z in rng.uniform(lo, hi, size=(random_starts, k)):
            evaluate(z, "random")
    explored = np.array(log_points)
    explored_values = np.array([v if math.isfinite(v) else math.inf for v in raw_values])
    if not np.any(np.isfinite(explored_values)):
        raise ValueError("objective returned no finite value on the grid or random points; check the objective "
                         "and the bounds.")

    # 2. well-separated starts
    cell = (hi - lo) / (grid_points - 1)
    order = [i for i in np.argsort(explored_values, kind="stable") if np.isfinite(explored_values[i])]
    chosen: list[int] = []
    for i in order:
        if len(chosen) == starts:
            break
        if all(np.max(np.abs(explored[i] - explored[j]) / cell) > 1.5 for j in chosen):
            chosen.append(i)
    for i in order:  # fewer separated basins than starts: fill with the next best points
        if len(chosen) >= starts:
            break
        if i not in chosen:
            chosen.append(i)
    start_points = explored[chosen] if chosen else np.empty((0, k))

    # 3. local refinement
    converged = True
    for z0 in start_points:
        converged &= _refine(ranked, z0, lo, hi, cell, tol, local_method, max_local_evaluations)

    # 4. result
    all_log = np.array(log_points)
    all_values = np.array(raw_values)
    finite_values = np.where(np.isfinite(all_values), all_values, np.inf)
    best = int(np.argmin(finite_values))
    z_best = all_log[best]
    x_best = np.clip(np.exp(z_best), natural_lo, natural_hi)
    margin = max(tol, 1e-12)
    at_bound = tuple(name for i, name in enumerate(names)
                     if z_best[i] - lo[i] <= margin or hi[i] - z_best[i] <= margin)
    if at_bound:
        where = ", ".join(f"{name}={x_best[names.index(name)]:.6g} (bounds {natural_lo[names.index(name)]:.6g}, "
                          f"{natural_hi[names.index(name)]:.6g})" for name in at_bound)
        warnings.warn(f"the optimum lies on a bound of the search box: {where}; the true optimum may be outside "
                      "it (widen the bounds).", OptimumAtBoundWarning, stacklevel=2)
    starts_natural = np.clip(np.exp(start_points), natural_lo, natural_hi).reshape(-1, k)
    return TuningResult(names=names, optimum=dict(zip(names, x_best.tolist(), strict=True)),
                        value=float(all_values[best]), points=np.clip(np.exp(all_log), natural_lo, natural_hi),
                        values=all_values, stages=np.array(stages), starts=starts_natural, tolerance=tol,
                        at_bound=at_bound, converged=bool(converged))


def _refine(ranked: Callable[[np.ndarray], float], z0: np.ndarray, lo: np.ndarray, hi: np.ndarray,
            cell: np.ndarray, tol: float, local_method: str, budget: int) -> bool:
    """One local refinement from z0 (log coordinates); returns whether it met the tolerance within budget."""
    box = list(zip(lo.tolist(), hi.tolist(), strict=True))
    f0 = ranked(z0)
    scale = max(abs(f0), np.finfo(float).tiny)
    if local_method == "l-bfgs-b":
        res = optimize.minimize(lambda z: ranked(z) / scale, z0, method="L-BFGS-B", bounds=box,
                                options={"ftol": tol, "gtol": 1e-12, "eps": 1e-6, "maxfun": budget})
        return bool(res.success)
    z, f, used, step = np.array(z0, dtype=float), f0, 0, cell / 2.0
    for _ in range(_MAX_RESTARTS + 1):
        simplex = [z.copy()]
        for i in range(z.size):
            vertex = z.copy()
            vertex[i] = z[i] + step[i] if z[i] + step[i] <= hi[i] else z[i] - step[i]
            simplex.append(vertex)
        remaining = budget - used
        if remaining <= z.size + 1:
            return False
        res = optimize.minimize(ranked, z, method="Nelder-Mead", bounds=box,
                                options={"xatol": tol, "fatol": tol * scale, "maxfev": remaining,
                                         "initial_simplex": np.array(simplex)})
        used += int(res.nfev)
        improved = f - float(res.fun) > tol * scale
        if float(res.fun) < f:
            z, f = np.asarray(res.x, dtype=float), float(res.fun)
        if not res.success:
            return False
        if not improved:
            return True
        step = np.maximum(step / 2.0, 10.0 * tol)
    return False


def refine_log_minimum(objective: Callable[[np.ndarray], float], start: np.ndarray, *,
                       grid_value: float) -> tuple[float, np.ndarray, int]:
    """The continuous minimum near a grid minimum: Nelder–Mead in log parameters from ``start``.

    ``objective`` takes the logs of the parameters; ``start`` holds the logs of the grid argmin and ``grid_value`` the
    objective there. Stops at ``xatol`` 0.02 in the logs, ``fatol`` 1e-5·``grid_value``, or 400 evaluations.

    Returns:
        ``(best, best_point, evaluations)``: the smaller of the refined and the grid value, the parameters (not their
        logs) where it is attained, and the number of objective evaluations of the refinement.
    """
    refined = optimize.minimize(objective, start, method="Nelder-Mead",
                                options={"xatol": 0.02, "fatol": 1e-5 * float(grid_value), "maxfev": 400})
    best = min(float(refined.fun), float(grid_value))
    best_point = np.exp(refined.x) if refined.fun <= grid_value else np.exp(start)
    return best, best_point, int(refined.nfev)



# ----------------------------------------------------------------------------------------------------------------
# One dimension: bracketing and safeguarded parabolic steps
# ----------------------------------------------------------------------------------------------------------------


def _vertex(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> tuple[float, float] | None:
    """Vertex (x, f) of the parabola through three points, or None if it is not convex."""
    (xa, fa), (xb, fb), (xc, fc) = a, b, c
    if not all(math.isfinite(f) for f in (fa, fb, fc)):
        return None
    p = (xb - xa) ** 2 * (fb - fc) - (xb - xc) ** 2 * (fb - fa)
    q = (xb - xa) * (fb - fc) - (xb - xc) * (fb - fa)
    if q >= 0.0:  # concave or degenerate: no interior minimum
        return None
    x = xb - 0.5 * p / q
    # the parabola's value at its vertex, from the divided differences
    d1 = (fb - fa) / (xb - xa)
    d2 = ((fc - fb) / (xc - xb) - d1) / (xc - xa)
    f = fa + d1 * (x - xa) + d2 * (x - xa) * (x - xb)
    return x, f


def line_search(f: Callable[[float], float], x0: float, step: float, lo: float, hi: float, *,
                tol: float = LOG_TOLERANCE, flat: float = FLAT_TOLERANCE) -> tuple[float, float]:
    """Minimize ``f`` on [lo, hi] from ``x0``: bracket with doubling steps, then safeguarded parabolic steps.

    While bracketing, a point replaces the incumbent (at first ``x0``) only if it is lower by more than ``flat``
    relative: along a flat direction the search stays where it started instead of drifting onto a bound. The
    refinement stops when the bracket is narrower than ``2·tol`` or flat to ``flat`` across, when the parabola
    through a bracket narrower than a factor 1.8 predicts less than ``flat`` relative improvement (on wider brackets
    a vertex that barely moves is replaced by a golden-section step), or after a fixed number of evaluations. A best
    point on a bound is returned as the bound unless the parabola through the three points nearest it has its
    vertex between the bound and the next point (then that vertex is evaluated and the search goes on). Returns
    ``(x, f(x))`` of the incumbent.
    """
    values: dict[float, float] = {}

    def at(x: float) -> float:
        x = min(max(x, lo), hi)
        if x not in values:
            values[x] = f(x)
        return x

    def lower(x: float, than: float) -> bool:
        return values[x] < values[than] - flat * abs(values[than])

    best = at(x0)
    width = step
    for x in (at(x0 - step), at(x0 + step)):
        if lower(x, best):
            best = x
    while len(values) < _MAX_LINE_EVALUATIONS:  # bracket: a higher (or equal) point on each side of the incumbent
        xs = sorted(values)
        i = xs.index(best)
        if (0 < i < len(xs) - 1) or xs[i] in (lo, hi):
            break
        width *= 2.0
        x = at(best - width if i == 0 else best + width)
        if not lower(x, best):
            break
        best = x
    while len(values) < _MAX_LINE_EVALUATIONS:
        xs = sorted(values)
        i = xs.index(best)
        if i == 0 or i == len(xs) - 1:  # on a bound: is the minimum there, or between the bound and its neighbour?
            near = xs[:3] if i == 0 else xs[-3:]
            if len(near) < 3 or abs(near[1] - near[0]) <= 2.0 * tol and abs(near[2] - near[1]) <= 2.0 * tol:
                break
            vertex = _vertex(*((x, values[x]) for x in near))
            inner = xs[1] if i == 0 else xs[-2]
            if vertex is None or not min(best, inner) < vertex[0] < max(best, inner) \
                    or abs(inner - best) <= 2.0 * tol:
                break  # the parabola through the three points nearest the bound has its minimum beyond it
            x = min(max(vertex[0], min(best, inner) + 0.5 * tol), max(best, inner) - 0.5 * tol)
            if x in values:
                break
            at(x)
            if values[x] < values[best]:
                best = x
            continue
        a, b, c = xs[i - 1], xs[i], xs[i + 1]
        settled = flat * abs(values[b])
        if c - a <= 2.0 * tol or max(values[a], values[c]) - values[b] <= settled:
            break  # resolved, or flat across the whole bracket
        vertex = _vertex((a, values[a]), (b, values[b]), (c, values[c]))
        if c - a <= _LOCAL_BRACKET:  # narrow enough for the parabola to be trusted
            if vertex is None or values[b] - vertex[1] <= settled:
                break
            x = vertex[0]
        elif vertex is not None and a < vertex[0] < c and abs(vertex[0] - b) >= 0.05 * (c - a):
            x = vertex[0]  # a wide bracket: the parabola's vertex if it moves meaningfully, else a golden step
        else:
            x = b + _GOLDEN * ((c - b) if c - b > b - a else (a - b))
        # keep new points at least tol/2 from the bracket's points, so every step shrinks the bracket
        if abs(x - b) < 0.5 * tol:
            x = b + (0.5 * tol if x >= b else -0.5 * tol)
        x = min(max(x, a + 0.5 * tol), c - 0.5 * tol)
        if x in values or not a < x < c:
            break
        at(x)
        if values[x] < values[b]:
            best = x
    return best, values[best]


def optimize_initial_learning_rate(objective: Callable[[float], float], *, low: float, high: float, grid_points: int,
                                   tolerance: float) -> dict[str, float | int | bool]:
    """Minimize ``objective(initial_learning_rate)`` over [low, high], in log space.

    A grid of ``grid_points`` log-spaced values (both ends included) locates the basin; scipy's bounded Brent
    method then refines ln η̃(0) on the two grid cells around the best grid point to an absolute ``tolerance``.
    The best value evaluated anywhere is returned (so a refinement can never make the result worse than the grid).

    Returns:
        ``{"initial_learning_rate", "value", "num_evaluations", "at_lower_bound", "at_upper_bound"}``; a bound
        counts as hit when the optimum lies within 2·``tolerance`` of it in ln η̃(0).
    """
    _check.scalar(low=low, high=high, tolerance=tolerance)
    _check.positive(low=low, tolerance=tolerance)
    _check.integer(minimum=3, grid_points=grid_points)
    if not high > low:
        raise ValueError(f"high must be > low = {low!r}; got high={high!r}.")
    lo, hi = math.log(low), math.log(high)
    seen: dict[float, float] = {}

    def f(z: float) -> float:
        z = min(max(float(z), lo), hi)
        if z not in seen:
            value = float(objective(math.exp(z)))
            seen[z] = value if math.isfinite(value) else math.inf
        return seen[z]

    grid = np.linspace(lo, hi, grid_points)
    values = [f(z) for z in grid]
    best = int(np.argmin(values))
    left, right = grid[max(best - 1, 0)], grid[min(best + 1, grid_points - 1)]
    optimize.minimize_scalar(f, bounds=(left, right), method="bounded", options={"xatol": tolerance})
    z_best = min(seen, key=lambda z: (seen[z], z))
    if not math.isfinite(seen[z_best]):
        raise ValueError("the objective has no finite value on the search interval.")
    return {"initial_learning_rate": math.exp(z_best), "value": seen[z_best], "num_evaluations": len(seen),
            "at_lower_bound": z_best - lo <= 2 * tolerance, "at_upper_bound": hi - z_best <= 2 * tolerance}
