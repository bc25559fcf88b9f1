"""The dpgd ODE as a search objective: the schedule families, the search box, and the figures' tuners.

The final private risk of one-pass DP-GD predicted by the ODE deterministic equivalent of Bombari, Luo, Seroussi,
Mondelli (arXiv 2505.16329v2, Definition 4.2 and Proposition 4.4), R(1) + 2c²η̃(1)²γ²/ρ²
(``privdyn.dynamics.dpgd.final_private_risk``), as a function of the hyper-parameters of one schedule family
(:class:`Candidate`: ``constant``, ``polynomial`` η̃(0)(1 − t)^α (5.1), ``harmonic`` β/(t + τ) (5.18)) at a point
(c, η̃(0)) or (c, η̃(0), τ). :class:`Objective` is the one place that solves it for a search: every solve counted,
a failed solve ranked +inf, repeated points solved once. Both searches run on it:

* :func:`privdyn.tuning.staged.search`, the planner's (``privdyn plan dpgd``): every family at once, in few solves,
  along the shape of the landscape;
* :func:`tune_polynomial` and :func:`tune_harmonic`, the figures' (``dpgd-fig7``): one family, exhaustively, by
  :func:`privdyn.tuning.minimize.minimize_final_risk` (a log grid and multi-start bounded Nelder-Mead). The paper does
  not say how it optimized these; its risk landscape in (β, τ) is flat and ill-conditioned, and for large aspect
  ratios the harmonic optimum runs off to β, τ → ∞ (a constant schedule), which is why the search is in log
  parameters, multi-start, and warns when the optimum sits on a bound.

The search box is shared: c ∈ :data:`CLIP_BOUNDS` and η̃(0) ≤ 2/γ (§5.1: beyond 2/γ the step cap binds while the
noise still grows; Theorem 4 assumes η̃(0) ≤ 2/γ).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import types
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.schedules import Constant, Harmonic, LearningRate, OutsideTheoryWarning, Polynomial
from privdyn.tuning.minimize import (
    DEFAULT_GRID_POINTS,
    DEFAULT_MAX_LOCAL_EVALUATIONS,
    DEFAULT_STARTS,
    DEFAULT_TOLERANCE,
    TuningResult,
    _positive_pair,
    minimize_final_risk,
)

if TYPE_CHECKING:
    from privdyn.spectra import Spectrum

__all__ = ["Candidate", "Objective", "candidates", "tune_polynomial", "tune_harmonic", "POLYNOMIAL_EXPONENTS",
           "CLIP_BOUNDS", "LEARNING_RATE_MIN", "HARMONIC_OFFSET_BOUNDS"]

POLYNOMIAL_EXPONENTS = (0.5, 1.0, 2.0)
"""The exponents α of the planner's polynomial family (Assumption 2 allows {0, ½} ∪ [1, ∞); α = 0 is
``constant``)."""
CLIP_BOUNDS = (1e-3, 10.0)
"""The search box of c (C_clip = c√d)."""
LEARNING_RATE_MIN = 1e-3
"""The smallest η̃(0) the planner searches; the largest is 2/γ."""
HARMONIC_OFFSET_BOUNDS = (1e-3, 1e3)
"""The planner's search box of the harmonic offset τ (τ → ∞ is the constant schedule)."""


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One schedule family: ``schedule`` and the polynomial exponent α (None for harmonic)."""

    schedule: str
    exponent: float | None

    @property
    def name(self) -> str:
        """The family's name in a plan: ``"polynomial (schedule_exponent 1)"``, ``"constant"``, ``"harmonic"``."""
        if self.schedule == "polynomial":
            return f"polynomial (schedule_exponent {self.exponent:g})"
        return self.schedule

    @property
    def names(self) -> tuple[str, ...]:
        """The coordinates of a point: ``("clip", "initial_learning_rate"[, "harmonic_offset"])``."""
        base = ("clip", "initial_learning_rate")
        return base + ("harmonic_offset",) if self.schedule == "harmonic" else base

    def learning_rate(self, point: Sequence[float]) -> LearningRate:
        """The profile at ``point`` = (c, η̃(0)) or (c, η̃(0), τ) (harmonic: β = η̃(0)·τ)."""
        eta0 = float(point[1])
        if self.schedule == "constant":
            return Constant(eta0)
        if self.schedule == "polynomial":
            return Polynomial(eta0, float(self.exponent))  # type: ignore[arg-type]
        offset = float(point[2])
        return Harmonic(harmonic_scale=eta0 * offset, harmonic_offset=offset)

    def hyperparameters(self, point: Sequence[float]) -> dict[str, str | float]:
        """The plan's record of ``point``: schedule, clip, η̃(0), and the exponent or (β, τ)."""
        out: dict[str, str | float] = {"schedule": self.schedule, "clip": float(point[0]),
                                       "initial_learning_rate": float(point[1])}
        if self.schedule == "harmonic":
            out.update(harmonic_scale=float(point[1] * point[2]), harmonic_offset=float(point[2]))
        else:
            out["schedule_exponent"] = 0.0 if self.schedule == "constant" else float(self.exponent)  # type: ignore
        return out

    def shape_integral(self, offset: float | None = None) -> float:
        """S = ∫₀¹ η̃(t) dt / η̃(0) (``offset`` τ for the harmonic family)."""
        point = (1.0, 1.0) if offset is None else (1.0, 1.0, offset)
        return float(self.learning_rate(point).integral(1.0))


def candidates(schedules: Sequence[str]) -> list[Candidate]:
    """The families of ``schedules`` in search order (polynomial α = 1 first: its ODE is among the cheapest)."""
    out = []
    if "polynomial" in schedules:
        out += [Candidate("polynomial", a) for a in sorted(POLYNOMIAL_EXPONENTS, key=lambda a: a != 1.0)]
    if "constant" in schedules:
        out.append(Candidate("constant", 0.0))
    if "harmonic" in schedules:
        out.append(Candidate("harmonic", None))
    return out


def _engine() -> types.ModuleType:
    """The dpgd ODE engine, imported lazily (tuning may use dynamics; dynamics never imports tuning)."""
    try:
        return importlib.import_module("privdyn.dynamics.dpgd")
    except ModuleNotFoundError as exc:
        if exc.name not in ("privdyn.dynamics.dpgd", "privdyn.dynamics"):
            raise
        raise ImportError("tuning the dpgd schedules needs the ODE engine privdyn.dynamics.dpgd "
                          "(final_private_risk), which could not be imported.") from exc


class Objective:
    """The ODE's final private risk R(1) + 2c²η̃(1)²γ²/ρ² of one data model, as the searches evaluate it.

    ``spectrum`` and ``projections`` (the squared projections of θ*) are passed to
    ``privdyn.dynamics.dpgd.final_private_risk`` unchanged, with the ODE's ``method`` and ``rtol``. ``extra``, when
    given, adds a function of the clip c (the planner's clipping fixed-point bias under public statistics).
    :meth:`risk` solves once; calling the objective with a family and a point caches by (family, ρ, point).
    ``solves`` counts the solves.
    """

    def __init__(self, spectrum: Spectrum, projections: ArrayLike, aspect_ratio: float, label_noise: float,
                 rtol: float, extra: Callable[[float], float] | None = None, method: str = "exponential") -> None:
        self.spectrum, self.projections, self.extra = spectrum, projections, extra
        self.aspect_ratio, self.label_noise, self.rtol, self.method = aspect_ratio, label_noise, rtol, method
        self.cache: dict[tuple[object, ...], float] = {}
        self.solves = 0
        self.engine = _engine()

    def risk(self, learning_rate: LearningRate, clip: float, rho: float) -> float:
        """One ODE solve at (η̃, c, ρ), plus ``extra(c)``; +inf where the solver fails or the value is not finite."""
        self.solves += 1
        try:
            value = float(self.engine.final_private_risk(
                spectrum=self.spectrum, target_projections=self.projections, aspect_ratio=self.aspect_ratio,
                learning_rate=learning_rate, clip=clip, rho=rho, label_noise=self.label_noise, method=self.method,
                rtol=self.rtol))
        except self.engine.ODESolverError:
            value = math.inf
        if self.extra is not None and math.isfinite(value):
            value += self.extra(clip)
        return value if math.isfinite(value) else math.inf

    def __call__(self, candidate: Candidate, point: Sequence[float], rho: float) -> float:
        """The risk of ``candidate`` at ``point`` = (c, η̃(0)[, τ]) and ρ, solved once per point."""
        key = (candidate, rho, *(round(float(p), 12) for p in point))
        if key not in self.cache:
            self.cache[key] = self.risk(candidate.learning_rate(point), float(point[0]), rho)
        return self.cache[key]


# ----------------------------------------------------------------------------------------------------------------
# The figures' tuners: one family, exhaustively
# ----------------------------------------------------------------------------------------------------------------


def _common_checks(aspect_ratio: object, rho: object, label_noise: object) -> None:
    _check.scalar(aspect_ratio=aspect_ratio, rho=rho, label_noise=label_noise)
    _check.positive(aspect_ratio=aspect_ratio, rho=rho, label_noise=label_noise)


def tune_polynomial(*, spectrum: Spectrum, target_projections: ArrayLike, aspect_ratio: float, rho: float,
                    label_noise: float,
                    schedule_exponent: float, clip: float | None = None,
                    clip_bounds: tuple[float, float] = CLIP_BOUNDS,
                    learning_rate_bounds: tuple[float, float] | None = None, method: str = "exponential",
                    rtol: float = 1e-8, grid_points: int = DEFAULT_GRID_POINTS, starts: int = DEFAULT_STARTS,
                    random_starts: int = 0, tol: float = DEFAULT_TOLERANCE, local_method: str = "nelder-mead",
                    max_local_evaluations: int = DEFAULT_MAX_LOCAL_EVALUATIONS, seed: int = 0) -> TuningResult:
    """Tune the polynomial schedule η̃(t) = η̃(0)(1 − t)^α on the ODE final private risk (arXiv 2505.16329).

    Minimizes R(1) + 2c²η̃(1)²γ²/ρ² (Definition 4.2, Proposition 4.4), the :class:`Objective`, over (``clip``,
    ``initial_learning_rate``), or over ``initial_learning_rate`` alone when ``clip`` is given (the paper's Figures
    2, 3 and 7 fix c = 0.1), with :func:`~privdyn.tuning.minimize.minimize_final_risk`. The default learning-rate
    box ends at 2/γ: beyond it the descent is capped while the noise keeps growing (§5.1, "Optimal
    hyper-parameters"), and Theorem 4 assumes η̃(0) ≤ 2/γ. A point where the ODE solver fails counts as +inf.

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
            :func:`~privdyn.tuning.minimize.minimize_final_risk`.

    Returns:
        A :class:`~privdyn.tuning.minimize.TuningResult` with names ``("clip", "initial_learning_rate")`` or
        ``("initial_learning_rate",)``; ``fixed`` records ``schedule_exponent`` (and ``clip`` when fixed).
    """
    _common_checks(aspect_ratio, rho, label_noise)
    _check.scalar(schedule_exponent=schedule_exponent)
    Polynomial(initial_learning_rate=1.0, schedule_exponent=schedule_exponent)  # validates α, warns once
    alpha = float(schedule_exponent)
    if learning_rate_bounds is None:
        learning_rate_bounds = (1e-2, 2.0 / float(aspect_ratio))
    box: dict[str, tuple[float, float]] = {}
    fixed: dict[str, float] = {"schedule_exponent": alpha}
    if clip is None:
        box["clip"] = _positive_pair("clip_bounds", clip_bounds)
    else:
        _check.scalar(clip=clip)
        _check.positive(clip=clip)
        fixed["clip"] = float(clip)
    box["initial_learning_rate"] = _positive_pair("learning_rate_bounds", learning_rate_bounds)
    ode = Objective(spectrum, target_projections, aspect_ratio, label_noise, rtol, method=method)
    family = Candidate("polynomial", alpha)

    def objective(*, initial_learning_rate: float, clip: float | None = None) -> float:
        c = fixed["clip"] if clip is None else clip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OutsideTheoryWarning)  # already issued once above
            schedule = family.learning_rate((c, initial_learning_rate))
        return ode.risk(schedule, c, rho)

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

    Minimizes R(1) + 2c²η̃(1)²γ²/ρ² (Definition 4.2, Proposition 4.4), the :class:`Objective`, over
    (``harmonic_scale`` β, ``harmonic_offset`` τ) at a fixed ``clip`` c, with
    :func:`~privdyn.tuning.minimize.minimize_final_risk`. The landscape is flat along curves of nearly constant β/τ
    and for large γ the optimum runs off to β, τ → ∞ (a constant schedule): expect an
    :class:`~privdyn.tuning.minimize.OptimumAtBoundWarning` there, and read ``TuningResult.values`` for the flatness.
    A point where the ODE solver fails counts as +inf.

    Give ``initial_learning_rate_bounds`` instead of ``harmonic_scale_bounds`` to search over (η̃(0) = β/τ, τ),
    the harmonic :class:`Candidate`'s own coordinates: the flat valley is then aligned with an axis, and η̃(0) ≤ 2/γ
    (beyond which the cap binds and the noise still grows, §5.1) is a plain box bound. Coarse grids in (β, τ) tend
    to land on the box's corners; this parametrization does not. The result then has names
    ``("initial_learning_rate", "harmonic_offset")`` and β = η̃(0)·τ.

    Args:
        spectrum, target_projections: passed to the ODE engine unchanged.
        aspect_ratio, rho, label_noise: γ, ρ, ζ > 0.
        clip: c > 0.
        harmonic_offset_bounds: (low, high) box for τ.
        harmonic_scale_bounds, initial_learning_rate_bounds: (low, high) box for β, or for η̃(0) = β/τ; exactly one.
        method, rtol: the ODE engine's solver and relative tolerance.
        grid_points, starts, random_starts, tol, local_method, max_local_evaluations, seed: as in
            :func:`~privdyn.tuning.minimize.minimize_final_risk`.

    Returns:
        A :class:`~privdyn.tuning.minimize.TuningResult` with names ``("harmonic_scale", "harmonic_offset")`` (or
        ``("initial_learning_rate", "harmonic_offset")``); ``fixed`` records ``clip``.
    """
    _common_checks(aspect_ratio, rho, label_noise)
    _check.scalar(clip=clip)
    _check.positive(clip=clip)
    if (harmonic_scale_bounds is None) == (initial_learning_rate_bounds is None):
        raise ValueError("give exactly one of harmonic_scale_bounds and initial_learning_rate_bounds; got "
                         f"harmonic_scale_bounds={harmonic_scale_bounds!r}, "
                         f"initial_learning_rate_bounds={initial_learning_rate_bounds!r}.")
    offset_box = _positive_pair("harmonic_offset_bounds", harmonic_offset_bounds)
    if harmonic_scale_bounds is not None:
        box = {"harmonic_scale": _positive_pair("harmonic_scale_bounds", harmonic_scale_bounds),
               "harmonic_offset": offset_box}
    else:
        box = {"initial_learning_rate": _positive_pair("initial_learning_rate_bounds", initial_learning_rate_bounds),
               "harmonic_offset": offset_box}
    ode = Objective(spectrum, target_projections, aspect_ratio, label_noise, rtol, method=method)
    family = Candidate("harmonic", None)
    c = float(clip)

    def by_scale(*, harmonic_scale: float, harmonic_offset: float) -> float:
        return ode.risk(Harmonic(harmonic_scale=harmonic_scale, harmonic_offset=harmonic_offset), c, rho)

    def by_initial_rate(*, initial_learning_rate: float, harmonic_offset: float) -> float:
        return ode.risk(family.learning_rate((c, initial_learning_rate, harmonic_offset)), c, rho)

    objective: Callable[..., float] = by_scale if harmonic_scale_bounds is not None else by_initial_rate

    result = minimize_final_risk(objective, bounds=box, grid_points=grid_points, starts=starts,
                                 random_starts=random_starts, tol=tol, local_method=local_method,
                                 max_local_evaluations=max_local_evaluations, seed=seed)
    return dataclasses.replace(result, fixed={"clip": float(clip)})
