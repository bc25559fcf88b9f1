"""Planning one-pass clipped DP-GD for linear regression (Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329).

:func:`dpgd` turns a privacy budget into the hyper-parameters of Algorithm 1 (clip c with C_clip = c√d, a
learning-rate profile η̃ with steps η_k = η̃(k/n)/n, and the noise-optimal σ_k of Proposition 4.1, eq. (4.2)), the
predicted excess risk of the released iterate, its risk curve, the runner-up schedule families and the certified
guarantee.

**Prediction.** The excess risk is the deterministic equivalent of Theorem 1: the ODE of Definition 4.2 (eq. 4.7)
plus the final-step jump 2c²η̃(1)²γ²/ρ² of Proposition 4.4 (:func:`privdyn.dynamics.dpgd.final_private_risk`). It
describes d → ∞; at finite d the simulated mean sits off it by O(d^(-1/2)).

**Search.** Schedule families of the paper's Section 5: ``constant`` (η̃ = η̃(0), output perturbation, α = 0),
``polynomial`` η̃(0)(1 − t)^α (eq. 5.1) with α ∈ {½, 1, 2} (the exponents Assumption 2 covers that Figure 7 studies)
and ``harmonic`` β/(t + τ) (eq. 5.18). For each, (c, η̃(0)) — and τ for the harmonic family, searched as
(c, η̃(0) = β/τ, τ) so that η̃(0) ≤ 2/γ is a box bound (§5.1) — minimizes the ODE's final private risk. The number
of ODE solves is what a plan costs, so the search is economical: the first family (α = 1, the cheapest ODE) maps
the landscape on a 4 × 4 log grid (:func:`privdyn.tuning.minimize_final_risk`) and is refined by Nelder–Mead; every
other family is refined by Nelder–Mead from the best point found so far. The search solves the ODE on the spectrum
with eigenvalues within 1% merged (:meth:`privdyn.spectra.Spectrum.from_eigenvalues`) at ``rtol`` 1e-4; every
reported risk is solved again on the exact spectrum at ``rtol`` 1e-6.

**Privacy.** Amplification by iteration (Proposition 4.1, after Feldman, Koren & Talwar 2020, arXiv 2005.04763,
Theorem 3.1): with the calibrated σ_k the released θ_n is ρ²/2-zCDP for replace-one neighbours (label ``bound``),
for one pass in a fixed order, per-sample gradients clipped at C_clip, steps capped at 2/‖x_k‖² at run time, a
data-independent start and only θ_n released.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize

from privdyn import _check
from privdyn.plan._budget import Budget, PlanningShare, budget, rho_from_zcdp, zcdp_for_epsilon, zcdp_statement
from privdyn.plan._plan import Alternative, ParetoFront, Plan, Verification
from privdyn.privacy.labels import NeighboringRelation
from privdyn.schedules import Constant, Harmonic, LearningRate, OutsideTheoryWarning, Polynomial
from privdyn.spectra import Spectrum, isotropic_target, power_law_target

__all__ = ["DPGDModel", "DPGDPlan", "dpgd", "model", "parse_spectrum", "SCHEDULES", "POLYNOMIAL_EXPONENTS"]

SCHEDULES = ("constant", "polynomial", "harmonic")
"""The schedule families searched (the paper's Section 5)."""
POLYNOMIAL_EXPONENTS = (0.5, 1.0, 2.0)
"""The exponents α of the polynomial family (Assumption 2 allows {0, ½} ∪ [1, ∞); α = 0 is ``constant``)."""

CLIP_BOUNDS = (1e-3, 10.0)
"""The search box of c (C_clip = c√d)."""
LEARNING_RATE_MIN = 1e-3
"""The smallest η̃(0) searched; the largest is 2/γ (beyond it the step cap binds while the noise still grows)."""
HARMONIC_OFFSET_BOUNDS = (1e-3, 1e3)
"""The search box of the harmonic offset τ (τ → ∞ is the constant schedule)."""
SEARCH_RTOL = 1e-4
"""The ODE's relative tolerance during the search (the risk differences it ranks are far larger)."""
FINAL_RTOL = 1e-6
"""The ODE's relative tolerance of every reported risk."""
GROUPING_RTOL = 1e-2
"""Eigenvalues within this relative distance are merged for the search (the reported risks use the exact spectrum)."""
GRID_POINTS = 4
"""Grid points per parameter of the first family's landscape map."""
LOCAL_EVALUATIONS = 25
"""ODE solves allowed per Nelder–Mead refinement."""
LOCAL_TOLERANCE = 2e-2
"""Nelder–Mead stops at a simplex within 1% in every parameter and 1e-3 relative in the risk."""

_SOURCE = ("amplification by iteration: Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329, Proposition 4.1 "
           "(Feldman, Koren & Talwar 2020, arXiv 2005.04763, Theorem 3.1)")
_ASSUMPTIONS = (
    "one pass over the data in a fixed, data-independent order, each example used once (batch size 1)",
    "per-example gradients clipped at C_clip = clip*sqrt(d) (features and labels may be unbounded)",
    "each step capped at 2/||x_k||^2 at run time (the simulator and privdyn.algorithms.dpgd do this)",
    "a data-independent start theta_0 = 0 and hyper-parameters that do not depend on the private data "
    "(except through the planning share)",
    "only the final iterate theta_n is released",
)


# ------------------------------------------------------------------------------------------------------------
# The assumed data model
# ------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class DPGDModel:
    """The data model a dpgd plan assumes: x ~ N(0, Σ), y = xᵀθ* + ζε, n samples (Assumption 1).

    Attributes:
        n, d: samples (= steps of the one pass) and dimension.
        spectrum: the eigenvalues of Σ, rescaled to tr Σ = d (the paper's normalization).
        target_projections: (m,) the squared projections of θ* on the eigenspaces, in the rescaled units.
        label_noise: ζ > 0.
        feature_scale: the factor the features must be multiplied by before training (1 unless the given
            eigenvalues did not have trace d); θ* is divided by it, labels are unchanged.
        description: how the spectrum and the target were given (for the record).
    """

    n: int
    d: int
    spectrum: Spectrum
    target_projections: np.ndarray
    label_noise: float
    feature_scale: float = 1.0
    description: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def aspect_ratio(self) -> float:
        """γ = d/n."""
        return self.d / self.n

    def design(self) -> Any:
        """The :class:`~privdyn.data.synthetic.SyntheticDesign` to simulate the plan on."""
        from privdyn.data.synthetic import SyntheticDesign

        return SyntheticDesign.from_projections(self.spectrum, self.target_projections, label_noise=self.label_noise)


def _load_eigenvalues(path: Path) -> np.ndarray:
    try:
        if path.suffix == ".npy":
            values = np.load(path, allow_pickle=False)
        else:
            values = np.loadtxt(path, delimiter="," if path.suffix == ".csv" else None, ndmin=1)
    except (OSError, ValueError) as exc:
        raise ValueError(f"spectrum file {str(path)!r} is not a readable list of numbers (one eigenvalue per entry; "
                         f"text, .csv or .npy): {' '.join(str(exc).split())}") from None
    values = np.asarray(values, dtype=float).ravel()
    if values.size == 0:
        raise ValueError(f"spectrum file {str(path)!r} holds no eigenvalues.")
    return values


def parse_spectrum(spectrum: Any, d: int | None) -> tuple[Spectrum, dict[str, Any]]:
    """A spectrum from ``"identity"``, ``"uniform"``, ``"power_law:φ"``, a file of eigenvalues, an array or a Spectrum.

    Named spectra need ``d``; a file or an array sets d (``d``, if given, must match). Returns the spectrum (not yet
    rescaled) and a description for the record.
    """
    if isinstance(spectrum, Spectrum):
        if d is not None and spectrum.dim != d:
            raise ValueError(f"d must equal the spectrum's dimension {spectrum.dim}; got d={d}.")
        return spectrum, {"spectrum": "given", "d": spectrum.dim}
    if isinstance(spectrum, str | Path):
        text = str(spectrum).strip()
        named = text in ("identity", "uniform") or text.startswith("power_law")
        if named:
            if d is None:
                raise ValueError(f"d is required with spectrum={text!r}; give d >= 1.")
            _check.integer(minimum=1, d=d)
            if text == "identity":
                return Spectrum.identity(d), {"spectrum": "identity"}
            if text == "uniform":
                return Spectrum.uniform(d), {"spectrum": "uniform", "low": 0.0, "high": 2.0}
            head, _, exponent = text.partition(":")
            try:
                phi = float(exponent)
            except ValueError:
                raise ValueError("spectrum must be 'power_law:EXPONENT' with a number EXPONENT < 1 (e.g. "
                                 f"power_law:0.5); got spectrum={text!r}.") from None
            if head != "power_law" or not math.isfinite(phi):
                raise ValueError(f"spectrum must be 'power_law:EXPONENT' with EXPONENT < 1; got spectrum={text!r}.")
            if not phi < 1.0:
                raise ValueError(f"power_law_exponent must be < 1 (Assumption 3 of arXiv 2505.16329); got {phi!r}.")
            return Spectrum.power_law(d, power_law_exponent=phi), {"spectrum": "power_law", "power_law_exponent": phi}
        path = Path(text)
        if not path.is_file():
            raise ValueError("spectrum must be 'identity', 'uniform', 'power_law:EXPONENT' or a file of eigenvalues; "
                             f"got spectrum={text!r} (not a name, and no such file).")
        values, description = _load_eigenvalues(path), {"spectrum": "file", "path": str(path)}
    else:
        values, description = np.asarray(spectrum, dtype=float).ravel(), {"spectrum": "eigenvalues"}
    _check.finite(eigenvalues=values)
    if np.any(values < 0) or not np.any(values > 0):
        raise ValueError("eigenvalues must be >= 0 with at least one > 0; got min "
                         f"{values.min():g}, max {values.max():g}.")
    if d is not None and values.size != d:
        raise ValueError(f"d must equal the number of eigenvalues {values.size}; got d={d}.")
    return Spectrum.from_eigenvalues(values), description


def model(*, n: int, d: int | None = None, spectrum: Any = "identity", target_norm: float | None = None,
          target_exponent: float | None = None, label_noise: float) -> DPGDModel:
    """The assumed data model of a plan (see :class:`DPGDModel` and :func:`parse_spectrum`).

    The target is ‖θ*‖ = ``target_norm`` (default 1) spread evenly over the directions, or with squared projections
    ∝ λ_i^(−ψ) for ``target_exponent`` ψ (Assumption 3; with a power-law spectrum ψ < 1 − φ is required). A spectrum
    whose trace is not d is rescaled to tr Σ = d (the paper's normalization) and ``feature_scale`` records the
    factor to apply to the features; ‖θ*‖ is given in the original units.
    """
    _check.integer(minimum=1, n=n)
    if d is not None:
        _check.integer(minimum=1, d=d)
    _check.scalar(label_noise=label_noise)
    _check.positive(label_noise=label_noise)
    base, description = parse_spectrum(spectrum, d)
    dim = base.dim
    trace = base.trace
    scaled = base.normalized() if abs(trace - dim) > 1e-9 * dim else base
    feature_scale = math.sqrt(dim / trace)
    norm = 1.0 if target_norm is None else target_norm
    _check.scalar(target_norm=norm)
    _check.positive(target_norm=norm)
    norm_scaled = float(norm) / feature_scale
    if target_exponent is None:
        projections = isotropic_target(scaled, norm=norm_scaled)
        description.update(target_norm=float(norm))
    else:
        _check.scalar(target_exponent=target_exponent)
        _check.finite(target_exponent=target_exponent)
        phi = description.get("power_law_exponent")
        if phi is not None and not target_exponent < 1.0 - phi:
            raise ValueError(f"target_exponent must be < 1 - power_law_exponent = {1.0 - phi:g} (Assumption 3 of "
                             f"arXiv 2505.16329); got target_exponent={target_exponent!r}.")
        projections = power_law_target(scaled, target_exponent=float(target_exponent), norm=norm_scaled)
        description.update(target_norm=float(norm), target_exponent=float(target_exponent))
    description.update(n=int(n), d=dim, label_noise=float(label_noise), feature_scale=feature_scale)
    return DPGDModel(n=int(n), d=dim, spectrum=scaled, target_projections=projections, label_noise=float(label_noise),
                     feature_scale=feature_scale, description=description)


# ------------------------------------------------------------------------------------------------------------
# Schedules and the objective
# ------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Candidate:
    """One schedule family: ``schedule`` and the polynomial exponent (None for harmonic)."""

    schedule: str
    exponent: float | None

    @property
    def name(self) -> str:
        if self.schedule == "polynomial":
            return f"polynomial (schedule_exponent {self.exponent:g})"
        return self.schedule

    @property
    def names(self) -> tuple[str, ...]:
        base = ("clip", "initial_learning_rate")
        return base + ("harmonic_offset",) if self.schedule == "harmonic" else base

    def learning_rate(self, point: Sequence[float]) -> LearningRate:
        eta0 = float(point[1])
        if self.schedule == "constant":
            return Constant(eta0)
        if self.schedule == "polynomial":
            return Polynomial(eta0, float(self.exponent))  # type: ignore[arg-type]
        offset = float(point[2])
        return Harmonic(harmonic_scale=eta0 * offset, harmonic_offset=offset)

    def hyperparameters(self, point: Sequence[float]) -> dict[str, Any]:
        out: dict[str, Any] = {"schedule": self.schedule, "clip": float(point[0]),
                               "initial_learning_rate": float(point[1])}
        if self.schedule == "harmonic":
            out.update(harmonic_scale=float(point[1] * point[2]), harmonic_offset=float(point[2]))
        else:
            out["schedule_exponent"] = 0.0 if self.schedule == "constant" else float(self.exponent)  # type: ignore
        return out


def _candidates(schedules: Sequence[str]) -> list[_Candidate]:
    out = []
    if "polynomial" in schedules:  # the landscape is mapped on the first candidate: α = 1 (its ODE is the cheapest)
        out += [_Candidate("polynomial", a) for a in sorted(POLYNOMIAL_EXPONENTS, key=lambda a: a != 1.0)]
    if "constant" in schedules:
        out.append(_Candidate("constant", 0.0))
    if "harmonic" in schedules:
        out.append(_Candidate("harmonic", None))
    return out


class _Objective:
    """The ODE's final private risk at (candidate, point), cached; counts the solves."""

    def __init__(self, spectrum: Spectrum, projections: np.ndarray, aspect_ratio: float, label_noise: float,
                 rtol: float) -> None:
        self.spectrum, self.projections = spectrum, projections
        self.aspect_ratio, self.label_noise, self.rtol = aspect_ratio, label_noise, rtol
        self.cache: dict[tuple[Any, ...], float] = {}
        self.solves = 0

    def __call__(self, candidate: _Candidate, point: Sequence[float], rho: float) -> float:
        from privdyn.dynamics import dpgd as engine

        key = (candidate, rho, *(round(float(p), 12) for p in point))
        if key not in self.cache:
            self.solves += 1
            try:
                value = engine.final_private_risk(
                    spectrum=self.spectrum, target_projections=self.projections, aspect_ratio=self.aspect_ratio,
                    learning_rate=candidate.learning_rate(point), clip=float(point[0]), rho=rho,
                    label_noise=self.label_noise, rtol=self.rtol)
            except engine.ODESolverError:
                value = math.inf
            self.cache[key] = value if math.isfinite(value) else math.inf
        return self.cache[key]


def _box(candidate: _Candidate, aspect_ratio: float) -> tuple[np.ndarray, np.ndarray]:
    lows = [CLIP_BOUNDS[0], LEARNING_RATE_MIN]
    highs = [CLIP_BOUNDS[1], 2.0 / aspect_ratio]
    if candidate.schedule == "harmonic":
        lows.append(HARMONIC_OFFSET_BOUNDS[0])
        highs.append(HARMONIC_OFFSET_BOUNDS[1])
    return np.log(lows), np.log(highs)


def _local(f: Callable[[np.ndarray], float], z0: np.ndarray, lo: np.ndarray, hi: np.ndarray, step: np.ndarray,
           budget_: int) -> np.ndarray:
    """Nelder–Mead in log-parameters from ``z0`` (initial simplex of ``step``), at most ``budget_`` evaluations."""
    z0 = np.clip(z0, lo, hi)
    simplex = [z0]
    for i in range(z0.size):
        vertex = z0.copy()
        vertex[i] = z0[i] + step[i] if z0[i] + step[i] <= hi[i] else z0[i] - step[i]
        simplex.append(vertex)
    scale = max(abs(f(z0)), 1e-300)
    res = optimize.minimize(f, z0, method="Nelder-Mead", bounds=list(zip(lo, hi, strict=True)),
                            options={"initial_simplex": np.array(simplex), "xatol": LOCAL_TOLERANCE,
                                     "fatol": 1e-3 * scale, "maxfev": budget_})
    return np.asarray(res.x, dtype=float)


@dataclasses.dataclass(frozen=True)
class _Found:
    candidate: _Candidate
    point: tuple[float, ...]
    search_risk: float
    at_bound: tuple[str, ...]


def _at_bound(candidate: _Candidate, z: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[str, ...]:
    margin = 2 * LOCAL_TOLERANCE
    return tuple(name for i, name in enumerate(candidate.names) if z[i] - lo[i] <= margin or hi[i] - z[i] <= margin)


def _search(objective: _Objective, candidates: Sequence[_Candidate], rho: float, aspect_ratio: float,
            warm: Sequence[float] | None = None) -> list[_Found]:
    """Optimize every candidate family (module docstring); ``warm`` starts the first one from a point instead."""
    from privdyn import tuning

    found: list[_Found] = []
    best_point: np.ndarray | None = None if warm is None else np.log(np.asarray(warm[:2], dtype=float))
    for candidate in candidates:
        lo, hi = _box(candidate, aspect_ratio)

        def f(z: np.ndarray, candidate: _Candidate = candidate) -> float:
            return objective(candidate, np.exp(z), rho)

        if best_point is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", tuning.OptimumAtBoundWarning)
                mapped = tuning.minimize_final_risk(
                    lambda c=candidate, **p: objective(c, [p[n] for n in c.names], rho),
                    bounds={n: (math.exp(a), math.exp(b)) for n, a, b in zip(candidate.names, lo, hi, strict=True)},
                    grid_points=GRID_POINTS, starts=1, tol=LOCAL_TOLERANCE, max_local_evaluations=LOCAL_EVALUATIONS)
            z = np.log([mapped.optimum[n] for n in candidate.names])
        else:
            start = best_point.copy()
            if candidate.schedule == "harmonic":
                start = np.append(start, 0.0)  # τ = 1: η̃ halves over the pass
            step = np.full(start.size, math.log(4.0))
            if candidate.schedule == "harmonic":
                step[2] = math.log(10.0)
            z = _local(f, start, lo, hi, step, LOCAL_EVALUATIONS)
        risk = f(z)
        found.append(_Found(candidate, tuple(np.exp(z).tolist()), risk, _at_bound(candidate, z, lo, hi)))
        if best_point is None or risk <= min(x.search_risk for x in found):
            best_point = z[:2].copy()
    return found


# ------------------------------------------------------------------------------------------------------------
# The plan
# ------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class DPGDPlan(Plan):
    """A dpgd plan (:class:`~privdyn.plan._plan.Plan`) with the objects needed to run and re-plan it.

    Attributes:
        model: the assumed data model.
        learning_rate: the chosen profile η̃.
        clip: the chosen c (C_clip = c√d).
        rho: the training privacy level (θ_n is ρ²/2-zCDP).
        budget: the budget as given.
        planning: the planning share.
        schedules: the families that were searched.
    """

    model: DPGDModel
    learning_rate: LearningRate
    clip: float
    rho: float
    budget: Budget
    planning: PlanningShare
    schedules: tuple[str, ...]
    chosen: _Candidate

    def simulate(self, num_runs: int, seed: int = 0) -> Verification:
        """Algorithm 1 (:func:`privdyn.algorithms.dpgd.simulate_dpgd`) ``num_runs`` times on the assumed model."""
        from privdyn.algorithms.dpgd import DPGDHyperparameters, simulate_dpgd

        _check.integer(minimum=2, num_runs=num_runs)
        _check.integer(minimum=0, seed=seed)
        row = DPGDHyperparameters(clip=self.clip, learning_rate=self.learning_rate, rho=self.rho)
        sim = simulate_dpgd(data=self.model.design(), rows=[row], num_runs=int(num_runs), seed=int(seed),
                            unit_key="privdyn-plan/dpgd", n=self.model.n)
        return Verification.from_runs(
            sim.final_private_risk[0], predicted=self.predicted_risk, quantity=self.quantity, seed=int(seed),
            note=(f"excess risk of the released iterate at d = {self.model.d}; the ODE is the d -> infinity limit "
                  "(Theorem 1), so a gap of order d^(-1/2) beyond the Monte-Carlo error is expected at small d"))

    def pareto_front(self, budgets: Sequence[float] | None = None, *, num_points: int = 7) -> ParetoFront:
        """The chosen family's optimized risk against ε (or zCDP when no δ was given), warm-started per budget.

        The planning share's zCDP is held fixed; budgets it exhausts are reported with risk ``inf``.
        """
        _check.integer(minimum=2, num_points=num_points)
        b, share = self.budget, self.planning.zcdp
        name = "epsilon" if b.delta is not None else "zcdp"
        center = (self.privacy.epsilon if name == "epsilon" else b.zcdp) or b.zcdp
        values = (np.geomspace(center / 8.0, center * 8.0, num_points) if budgets is None
                  else np.sort(np.asarray(budgets, dtype=float)))
        _check.positive(budgets=values)
        objective = _search_objective(self.model)
        risks, params = [], []
        for value in values.tolist():
            total = zcdp_for_epsilon(value, b.delta) if name == "epsilon" else value  # type: ignore[arg-type]
            if total <= share:
                risks.append(math.inf)
                params.append({})
                continue
            rho = rho_from_zcdp(total - share)
            start = (self.clip, float(self.learning_rate.value(0.0)))
            found = _search(objective, [self.chosen], rho, self.model.aspect_ratio, warm=start)[0]
            risks.append(_final_risk(self.model, found.candidate, found.point, rho))
            params.append({**found.candidate.hyperparameters(found.point), "rho": rho})
        return ParetoFront(budget_name=name, budgets=values, predicted=np.array(risks), quantity=self.quantity,
                           hyperparameters=tuple(params),
                           note=f"the {self.chosen.name} schedule re-optimized on the ODE at every budget "
                                "(Nelder-Mead warm-started at the plan's optimum); planning share held fixed")


def _search_objective(m: DPGDModel) -> _Objective:
    per_direction = m.spectrum.per_direction()
    coarse = Spectrum.from_eigenvalues(per_direction, rtol=GROUPING_RTOL)
    projections = coarse.group_sums((m.target_projections / m.spectrum.multiplicities)[m.spectrum.groups])
    return _Objective(coarse, projections, m.aspect_ratio, m.label_noise, SEARCH_RTOL)


def _final_risk(m: DPGDModel, candidate: _Candidate, point: Sequence[float], rho: float) -> float:
    from privdyn.dynamics import dpgd as engine

    return float(engine.final_private_risk(
        spectrum=m.spectrum, target_projections=m.target_projections, aspect_ratio=m.aspect_ratio,
        learning_rate=candidate.learning_rate(point), clip=float(point[0]), rho=rho, label_noise=m.label_noise,
        rtol=FINAL_RTOL))


def dpgd(*, n: int | None = None, d: int | None = None, spectrum: Any = "identity", target_norm: float | None = None,
         target_exponent: float | None = None, label_noise: float | None = None, epsilon: float | None = None,
         delta: float | None = None, rho: float | None = None, zcdp: float | None = None,
         schedules: Sequence[str] = SCHEDULES, data: Any = None, label_column: str | int | None = None,
         public_stats: bool = False, planning_share: float | None = None, feature_norm_bound: float | None = None,
         label_bound: float | None = None) -> DPGDPlan:
    """Plan one-pass clipped DP-GD (arXiv 2505.16329) for a privacy budget: hyper-parameters, predicted risk, guarantee.

    Give the data model as public numbers (``n``, ``d``, ``spectrum``, ``target_norm`` or ``target_exponent``,
    ``label_noise``; see :func:`model`) or as ``data`` (a CSV, .npy or .parquet file, or a pair (features, labels))
    with either ``public_stats=True`` (its statistics are treated as public: the plan records it) or a
    ``planning_share`` of the budget with which the spectrum, ‖θ*‖ and the label noise are estimated under DP
    (:mod:`privdyn.plan._data`); n and d then come from the data. The budget is (``epsilon``, ``delta``), ``rho``
    (θ_n is ρ²/2-zCDP) or ``zcdp``; it is the *total*, planning share included.

    Returns:
        A :class:`DPGDPlan`: ``hyperparameters`` (``schedule``, ``clip``, ``initial_learning_rate``,
        ``schedule_exponent`` or ``harmonic_scale``/``harmonic_offset``), ``per_step`` (``step_sizes`` η_k and
        ``noise_stds`` = 2·C_clip·σ_k, the per-coordinate std of the noise added at step k), ``predicted_risk`` (the
        excess risk of the released θ_n: R(1) + 2c²η̃(1)²γ²/ρ²), the ODE ``risk_curve``, the runner-up families in
        ``alternatives`` and the privacy statement (label ``bound``).

    Raises:
        ValueError: naming the parameter and its valid range: n < 1, d < 1, an unknown spectrum or schedule, a
            budget that is not positive, delta outside (0, 1), an unreadable data file, a data file without
            ``public_stats`` or ``planning_share``, or a planning share that leaves no budget for training.
    """
    started = time.perf_counter()
    schedules = tuple(schedules)
    for s in schedules:
        _check.one_of(SCHEDULES, schedule=s)
    if not schedules:
        raise ValueError(f"schedules must name at least one of {', '.join(SCHEDULES)}; got none.")
    b = budget(epsilon=epsilon, delta=delta, rho=rho, zcdp=zcdp)
    if data is not None:
        from privdyn.plan import _data

        m, share = _data.dpgd_model_from_data(
            data, budget_zcdp=b.zcdp, label_column=label_column, public_stats=public_stats,
            planning_share=planning_share, feature_norm_bound=feature_norm_bound, label_bound=label_bound,
            n=n, d=d, target_exponent=target_exponent, label_noise=label_noise)
    else:
        if public_stats or planning_share is not None:
            raise ValueError("public_stats and planning_share apply to a data file only; give data= (--data FILE) "
                             "or drop them.")
        if n is None:
            raise ValueError("n is required: the number of training examples, an integer >= 1.")
        if label_noise is None:
            raise ValueError("label_noise is required: a guess of the label-noise standard deviation, > 0.")
        m = model(n=n, d=d, spectrum=spectrum, target_norm=target_norm, target_exponent=target_exponent,
                  label_noise=label_noise)
        share = PlanningShare()
    training_zcdp = b.zcdp - share.zcdp
    if not training_zcdp > 0:
        raise ValueError(f"planning_share must leave a positive training budget; the planning share spends "
                         f"{share.zcdp:.4g} of the {b.zcdp:.4g}-zCDP budget.")
    train_rho = rho_from_zcdp(training_zcdp)

    objective = _search_objective(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OutsideTheoryWarning)
        found = _search(objective, _candidates(schedules), train_rho, m.aspect_ratio)
        finals = [_final_risk(m, f.candidate, f.point, train_rho) for f in found]
        order = np.argsort(finals, kind="stable")
        best = found[int(order[0])]
        from privdyn.dynamics import dpgd as engine

        curve = engine.solve_risk_ode(
            spectrum=m.spectrum, target_projections=m.target_projections, aspect_ratio=m.aspect_ratio,
            learning_rate=best.candidate.learning_rate(best.point), clip=best.point[0], rho=train_rho,
            label_noise=m.label_noise, rtol=FINAL_RTOL)
    from privdyn.privacy.iteration import noise_calibration

    learning_rate = best.candidate.learning_rate(best.point)
    step_sizes = learning_rate.step_sizes(m.n)
    noise_stds = 2.0 * best.point[0] * math.sqrt(m.d) * noise_calibration(step_sizes, rho=train_rho)
    notes = []
    alternatives = []
    for i in order[1:]:
        f = found[int(i)]
        note = f"optimum on the search box's bound: {', '.join(f.at_bound)}" if f.at_bound else ""
        alternatives.append(Alternative(name=f.candidate.name, hyperparameters=f.candidate.hyperparameters(f.point),
                                        predicted_risk=finals[int(i)], note=note))
    if best.at_bound:
        notes.append(f"the chosen optimum lies on the search box's bound in {', '.join(best.at_bound)} "
                     "(initial_learning_rate <= 2/aspect_ratio is the paper's limit; clip in [1e-3, 10])")
    if m.feature_scale != 1.0:
        notes.append(f"the given eigenvalues have trace {m.d / m.feature_scale**2:.6g}, not d = {m.d}: multiply the "
                     f"features by feature_scale = {m.feature_scale:.6g} before training (Assumption 1 takes "
                     "tr(Sigma) = d; clip is in those units)")
    notes.append("step sizes are the uncapped eta_k = eta(k/n)/n; at run time each step is capped at 2/||x_k||^2 "
                 "(this never enters the accounting)")
    statement = zcdp_statement(
        total_zcdp=share.zcdp + 0.5 * train_rho**2, training_zcdp=0.5 * train_rho**2,
        delta=b.delta, unit="one example (a row (x, y) of the training set)",
        neighboring=NeighboringRelation.REPLACE_ONE, sampler="fixed_order", released="the final iterate theta_n only",
        accountant=_SOURCE, planning=share, assumptions=_ASSUMPTIONS, extra={"rho": train_rho})
    inputs = {**m.description, "budget": {"given": b.given, "epsilon": b.epsilon, "delta": b.delta,
                                          "zcdp": b.zcdp}, "schedules": list(schedules)}
    return DPGDPlan(
        family="dpgd", inputs=inputs, hyperparameters=best.candidate.hyperparameters(best.point),
        per_step={"step_sizes": step_sizes, "noise_stds": noise_stds}, predicted_risk=finals[int(order[0])],
        quantity="excess_risk", method="ode",
        risk_curve={"times": curve.times.tolist(), "risk": curve.risk.tolist(), "final_risk": curve.final_risk,
                    "final_jump": curve.final_jump, "x_label": "t = k/n",
                    "y_label": "excess risk R(t) (ODE, Definition 4.2)"},
        alternatives=tuple(alternatives), privacy=statement, notes=tuple(notes),
        search={"ode_solves": objective.solves, "search_rtol": SEARCH_RTOL, "final_rtol": FINAL_RTOL,
                "search_groups": objective.spectrum.num_groups, "groups": m.spectrum.num_groups,
                "elapsed_s": time.perf_counter() - started},
        model=m, learning_rate=learning_rate, clip=float(best.point[0]), rho=train_rho, budget=b, planning=share,
        schedules=schedules, chosen=best.candidate)
