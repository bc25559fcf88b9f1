"""Hyper-parameter search on the theory engines.

:func:`minimize_final_risk` minimizes any objective over positive hyper-parameters: a log-spaced grid (plus optional
random log-uniform points) maps the landscape and picks well-separated starts, then a bounded local optimizer in
log-parameter space refines each start. Every evaluation is kept, so the explored landscape is part of the result
(:class:`TuningResult`).

:func:`tune_polynomial` and :func:`tune_harmonic` apply it to the final private risk of one-pass DP-GD predicted by
the ODE deterministic equivalent of Bombari, Luo, Seroussi, Mondelli (arXiv 2505.16329v2, Definition 4.2 and
Proposition 4.4), ``privdyn.dynamics.dpgd.final_private_risk``: over (clip, initial_learning_rate) for the polynomial
schedule η̃(t) = η̃(0)(1 − t)^α (5.1), or over (harmonic_scale, harmonic_offset) for η̃(t) = β/(t + τ) (5.18).
The paper does not say how it optimized these; its risk landscape in (β, τ) is flat and
ill-conditioned, and for large aspect ratios the harmonic optimum runs off to β, τ → ∞ (a constant schedule), which
is why the search is in log parameters, multi-start, and warns when the optimum sits on a bound.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import math
import types
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize

from privdyn import _check
from privdyn._arrays import read_only
from privdyn.schedules import Harmonic, OutsideTheoryWarning, Polynomial

if TYPE_CHECKING:

    from privdyn.spectra import Spectrum

__all__ = [
    "TuningResult",
    "OptimumAtBoundWarning",
    "minimize_final_risk",
    "tune_polynomial",
    "tune_harmonic",
    "DEFAULT_GRID_POINTS",
    "DEFAULT_STARTS",
    "DEFAULT_TOLERANCE",
    "DEFAULT_MAX_LOCAL_EVALUATIONS",
    "LOCAL_METHODS",
    "refine_log_minimum",
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

_MAX_GRID_SIZE = 100_000
_MAX_RESTARTS = 5
_STAGES = ("grid", "random", "local")


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


def _parse_bounds(bounds: Mapping[str, Any], argument: str = "bounds") -> tuple[tuple[str, ...], np.ndarray,
                                                                                     np.ndarray]:
    """Names and (low, high) arrays in natural units, validated."""
    if not isinstance(bounds, Mapping) or len(bounds) == 0:
        raise ValueError(f"{argument} must be a non-empty mapping name -> (low, high); got {argument}={bounds!r}.")
    names, lows, highs = [], [], []
    for name, pair in bounds.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{argument} keys must be parameter names (identifiers); got {name!r}.")
        try:
            low, high = pair
        except (TypeError, ValueError):
            raise ValueError(f"{argument}[{name!r}] must be a pair (low, high); got {pair!r}.") from None
        _check.scalar(**{f"{argument}[{name!r}] low": low, f"{argument}[{name!r}] high": high})
        _check.positive(**{f"{argument}[{name!r}] low": low, f"{argument}[{name!r}] high": high})
        if not low < high:
            raise ValueError(f"{argument}[{name!r}] must have low < high (fix the parameter in the objective "
                             f"instead of giving equal bounds); got ({low!r}, {high!r}).")
        names.append(name)
        lows.append(float(low))
        highs.append(float(high))
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


# ----------------------------------------------------------------------------------------------------------------
# Wrappers on the dpgd ODE engine
# ----------------------------------------------------------------------------------------------------------------


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


def _dpgd_engine() -> Any:
    """The dpgd ODE engine, imported lazily (tuning may use dynamics; dynamics never imports tuning)."""
    try:
        return importlib.import_module("privdyn.dynamics.dpgd")
    except ModuleNotFoundError as exc:
        if exc.name not in ("privdyn.dynamics.dpgd", "privdyn.dynamics"):
            raise
        raise ImportError("tuning the dpgd schedules needs the ODE engine privdyn.dynamics.dpgd "
                          "(final_private_risk), which could not be imported.") from exc


def _pair(name: str, value: Any) -> tuple[float, float]:
    try:
        low, high = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (low, high); got {name}={value!r}.") from None
    _check.scalar(**{f"{name} low": low, f"{name} high": high})
    _check.positive(**{f"{name} low": low, f"{name} high": high})
    if not low < high:
        raise ValueError(f"{name} must have low < high; got {name}=({low!r}, {high!r}).")
    return float(low), float(high)


def _common_checks(aspect_ratio: Any, rho: Any, label_noise: Any) -> None:
    _check.scalar(aspect_ratio=aspect_ratio, rho=rho, label_noise=label_noise)
    _check.positive(aspect_ratio=aspect_ratio, rho=rho, label_noise=label_noise)


def tune_polynomial(*, spectrum: Spectrum, target_projections: ArrayLike, aspect_ratio: float, rho: float,
                    label_noise: float,
                    schedule_exponent: float, clip: float | None = None,
                    clip_bounds: tuple[float, float] = (1e-3, 10.0),
                    learning_rate_bounds: tuple[float, float] | None = None, method: str = "exponential",
                    rtol: float = 1e-8, grid_points: int = DEFAULT_GRID_POINTS, starts: int = DEFAULT_STARTS,
                    random_starts: int = 0, tol: float = DEFAULT_TOLERANCE, local_method: str = "nelder-mead",
                    max_local_evaluations: int = DEFAULT_MAX_LOCAL_EVALUATIONS, seed: int = 0) -> TuningResult:
    """Tune the polynomial schedule η̃(t) = η̃(0)(1 − t)^α on the ODE final private risk (arXiv 2505.16329).

    Minimizes R(1) + 2c²η̃(1)²γ²/ρ² (Definition 4.2, Proposition 4.4), computed by
    ``privdyn.dynamics.dpgd.final_private_risk``, over (``clip``, ``initial_learning_rate``), or over
    ``initial_learning_rate`` alone when ``clip`` is given (the paper's Figures 2, 3 and 7 fix c = 0.1), with
    :func:`minimize_final_risk`. The default learning-rate box ends at 2/γ: beyond it the descent is capped while
    the noise keeps growing (§5.1, "Optimal hyper-parameters"), and Theorem 4 assumes η̃(0) ≤ 2/γ.

    Args:
        spectrum, target_projections: the covariance spectrum and the squared projections of θ*, passed to the
            ODE engine unchanged.
        aspect_ratio: γ = d/n > 0.
        rho: ρ > 0 (ρ²/2-zCDP).
        label_noise: ζ > 0.
        schedule_exponent: α ≥ 0 (values in (0, 1) other than ½ run with an ``OutsideTheoryWarning``).
        clip: a fixed c > 0, or None to tune it within ``clip_bounds``.
        clip_bounds: (low, high) for c when it is tuned.
        learning_rate_bounds: (low, high) for η̃(0); None means (1e-2, 2/aspect_ratio).
        method, rtol: the ODE engine's solver and relative tolerance.
        grid_points, starts, random_starts, tol, local_method, max_local_evaluations, seed: as in
            :func:`minimize_final_risk`.

    Returns:
        A :class:`TuningResult` with names ``("clip", "initial_learning_rate")`` or ``("initial_learning_rate",)``;
        ``fixed`` records ``schedule_exponent`` (and ``clip`` when fixed).
    """
    _common_checks(aspect_ratio, rho, label_noise)
    _check.scalar(schedule_exponent=schedule_exponent)
    Polynomial(initial_learning_rate=1.0, schedule_exponent=schedule_exponent)  # validates α, warns once
    alpha = float(schedule_exponent)
    if learning_rate_bounds is None:
        learning_rate_bounds = (1e-2, 2.0 / float(aspect_ratio))
    box: dict[str, tuple[float, float]] = {}
    fixed: dict[str, Any] = {"schedule_exponent": alpha}
    if clip is None:
        box["clip"] = _pair("clip_bounds", clip_bounds)
    else:
        _check.scalar(clip=clip)
        _check.positive(clip=clip)
        fixed["clip"] = float(clip)
    box["initial_learning_rate"] = _pair("learning_rate_bounds", learning_rate_bounds)
    engine = _dpgd_engine()

    def objective(*, initial_learning_rate: float, clip: float | None = None) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OutsideTheoryWarning)  # already issued once above
            schedule = Polynomial(initial_learning_rate=initial_learning_rate, schedule_exponent=alpha)
        return engine.final_private_risk(spectrum=spectrum, target_projections=target_projections,
                                         aspect_ratio=aspect_ratio, learning_rate=schedule,
                                         clip=fixed["clip"] if clip is None else clip, rho=rho,
                                         label_noise=label_noise, method=method, rtol=rtol)

    result = minimize_final_risk(objective, bounds=box, grid_points=grid_points, starts=starts,
                                 random_starts=random_starts, tol=tol, local_method=local_method,
                                 max_local_evaluations=max_local_evaluations, seed=seed)
    return dataclasses.replace(result, fixed=fixed)


def tune_harmonic(*, spectrum: Spectrum, target_projections: ArrayLike, aspect_ratio: float, rho: float,
                  label_noise: float,
                  clip: float, harmonic_offset_bounds: tuple[float, float],
                  harmonic_scale_bounds: tuple[float, float] | None = None,
                  initial_learning_rate_bounds: tuple[float, float] | None = None, method: str = "exponential",
                  rtol: float = 1e-8, grid_points: int = DEFAULT_GRID_POINTS,
                  starts: int = DEFAULT_STARTS, random_starts: int = 0, tol: float = DEFAULT_TOLERANCE,
                  local_method: str = "nelder-mead", max_local_evaluations: int = DEFAULT_MAX_LOCAL_EVALUATIONS,
                  seed: int = 0) -> TuningResult:
    """Tune the harmonic schedule η̃(t) = β/(t + τ) on the ODE final private risk (arXiv 2505.16329, (5.18)).

    Minimizes R(1) + 2c²η̃(1)²γ²/ρ² (Definition 4.2, Proposition 4.4), computed by
    ``privdyn.dynamics.dpgd.final_private_risk``, over (``harmonic_scale`` β, ``harmonic_offset`` τ) at a fixed
    ``clip`` c, with :func:`minimize_final_risk`. The landscape is flat along curves of nearly constant β/τ and
    for large γ the optimum runs off to β, τ → ∞ (a constant schedule): expect an
    :class:`OptimumAtBoundWarning` there, and read :attr:`TuningResult.values` for the flatness.

    Give ``initial_learning_rate_bounds`` instead of ``harmonic_scale_bounds`` to search over (η̃(0) = β/τ, τ):
    the flat valley is then aligned with an axis, and η̃(0) ≤ 2/γ (beyond which the cap binds and the noise still
    grows, §5.1) is a plain box bound. Coarse grids in (β, τ) tend to land on the box's corners; this
    parametrization does not. The result then has names ``("initial_learning_rate", "harmonic_offset")`` and
    β = η̃(0)·τ.

    Args:
        spectrum, target_projections: passed to the ODE engine unchanged.
        aspect_ratio, rho, label_noise: γ, ρ, ζ > 0.
        clip: c > 0.
        harmonic_offset_bounds: (low, high) box for τ.
        harmonic_scale_bounds, initial_learning_rate_bounds: (low, high) box for β, or for η̃(0) = β/τ; exactly one.
        method, rtol: the ODE engine's solver and relative tolerance.
        grid_points, starts, random_starts, tol, local_method, max_local_evaluations, seed: as in
            :func:`minimize_final_risk`.

    Returns:
        A :class:`TuningResult` with names ``("harmonic_scale", "harmonic_offset")`` (or ``("initial_learning_rate",
        "harmonic_offset")``); ``fixed`` records ``clip``.
    """
    _common_checks(aspect_ratio, rho, label_noise)
    _check.scalar(clip=clip)
    _check.positive(clip=clip)
    if (harmonic_scale_bounds is None) == (initial_learning_rate_bounds is None):
        raise ValueError("give exactly one of harmonic_scale_bounds and initial_learning_rate_bounds; got "
                         f"harmonic_scale_bounds={harmonic_scale_bounds!r}, "
                         f"initial_learning_rate_bounds={initial_learning_rate_bounds!r}.")
    offset_box = _pair("harmonic_offset_bounds", harmonic_offset_bounds)
    if harmonic_scale_bounds is not None:
        box = {"harmonic_scale": _pair("harmonic_scale_bounds", harmonic_scale_bounds), "harmonic_offset": offset_box}
    else:
        box = {"initial_learning_rate": _pair("initial_learning_rate_bounds", initial_learning_rate_bounds),
               "harmonic_offset": offset_box}
    engine = _dpgd_engine()

    def risk(harmonic_scale: float, harmonic_offset: float) -> float:
        schedule = Harmonic(harmonic_scale=harmonic_scale, harmonic_offset=harmonic_offset)
        return engine.final_private_risk(spectrum=spectrum, target_projections=target_projections,
                                         aspect_ratio=aspect_ratio, learning_rate=schedule, clip=clip, rho=rho,
                                         label_noise=label_noise, method=method, rtol=rtol)

    def by_scale(*, harmonic_scale: float, harmonic_offset: float) -> float:
        return risk(harmonic_scale, harmonic_offset)

    def by_initial_rate(*, initial_learning_rate: float, harmonic_offset: float) -> float:
        return risk(initial_learning_rate * harmonic_offset, harmonic_offset)

    objective: Callable[..., float] = by_scale if harmonic_scale_bounds is not None else by_initial_rate

    result = minimize_final_risk(objective, bounds=box, grid_points=grid_points, starts=starts,
                                 random_starts=random_starts, tol=tol, local_method=local_method,
                                 max_local_evaluations=max_local_evaluations, seed=seed)
    return dataclasses.replace(result, fixed={"clip": float(clip)})
