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
and ``harmonic`` β/(t + τ) (eq. 5.18). For each, (c, η̃(0)) — and τ for the harmonic family — minimizes the ODE's
final private risk, with η̃(0) ≤ 2/γ (§5.1). The number of ODE solves is what a plan costs, so the search
(:func:`privdyn.tuning.search`, on the ODE objective that the figures' tuners use too) follows the landscape's
shape: it moves along the total clock V = c∫η̃ dt, on which the risk depends most and whose optimum the families
nearly share, and along c, in which the valley is flat, by one-dimensional bracketing and parabolic steps that stop
once the valley is flat to a relative 2e-4. The search
solves the ODE on the spectrum with eigenvalues within 1% merged (:meth:`privdyn.spectra.Spectrum.from_eigenvalues`)
at ``rtol`` 1e-4; the chosen plan's risk and curve, and any runner-up within 1e-3 of it, are solved again on the
exact spectrum at ``rtol`` 1e-6 (the other runner-ups report their search risk).

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.plan._budget import Budget, PlanningShare, budget, rho_from_zcdp, zcdp_for_epsilon, zcdp_statement
from privdyn.plan._plan import Alternative, ParetoFront, Plan, Verification
from privdyn.privacy.labels import NeighboringRelation
from privdyn.schedules import LearningRate, OutsideTheoryWarning
from privdyn.spectra import Spectrum, isotropic_target, power_law_target
from privdyn.tuning import Candidate, Found, Objective, candidates, search

__all__ = ["DPGDModel", "DPGDPlan", "dpgd", "model", "parse_spectrum", "SCHEDULES"]

SCHEDULES = ("constant", "polynomial", "harmonic")
"""The schedule families searched (the paper's Section 5)."""
SEARCH_RTOL = 1e-4
"""The ODE's relative tolerance during the search (the risk differences it ranks are far larger)."""
FINAL_RTOL = 1e-6
"""The ODE's relative tolerance of every reported risk."""
GROUPING_RTOL = 1e-2
"""Eigenvalues within this relative distance are merged for the search (the reported risks use the exact spectrum)."""
EXACT_RUNNER_UP_GAP = 1e-3
"""Runner-ups whose search risk is within this relative gap of the best are solved again exactly; the others report
their search risk (merged spectrum, rtol 1e-4: within 2e-4 of the exact solve, tested), far below their own
distance to their optimum (up to 1%)."""
CURVE_TIMES = tuple(np.linspace(0.0, 1.0, 51).tolist())
"""Where the plan's risk curve is reported (every reported time costs the solver a sub-step)."""

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
        assessment: for a model from data, its :class:`~privdyn.plan._dpgd_data.DataAssessment` (residual,
            effective rank, assumption checks); None for public numbers.
        clip_bias: under public statistics, the clipping fixed point's excess risk as a function of c
            (:class:`~privdyn.plan._dpgd_data.ClipBias`), added to the ODE's prediction; None otherwise.
        release: under a planning share, the :class:`~privdyn.plan._data.Release` the model was estimated from.
        preconditioner: with ``precondition``, the (d, d) matrix P the rows are multiplied by (x ↦ P x, before
            ``feature_scale``); the model is that of the whitened rows.
    """

    n: int
    d: int
    spectrum: Spectrum
    target_projections: np.ndarray
    label_noise: float
    feature_scale: float = 1.0
    description: dict[str, Any] = dataclasses.field(default_factory=dict)
    assessment: Any = None
    clip_bias: Any = None
    release: Any = None
    preconditioner: np.ndarray | None = None

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
        chosen: the chosen schedule family.
        prediction: ``excess_mse`` (= :attr:`predicted_excess_mse`), ``test_mse`` (excess plus the residual
            variance ζ² of the best linear predictor), ``interval`` (the model's own uncertainty: the planning
            share's DP noise, by redrawing it, and the finite-d error, a factor 1 + r^(−1/2) for effective rank r),
            ``label`` (``model``, or ``heuristic`` when an assumption of the ODE failed) and ``reasons``.
    """

    model: DPGDModel
    learning_rate: LearningRate
    clip: float
    rho: float
    budget: Budget
    planning: PlanningShare
    schedules: tuple[str, ...]
    chosen: Candidate
    prediction: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def predicted_excess_mse(self) -> float:
        """The predicted excess test MSE over the best linear predictor, in squared label units: 2·predicted_risk.

        (R = ½‖Σ^(1/2)(θ − θ*)‖² in the features' training units, labels unscaled, so E(xᵀθ − y)² − E(xᵀθ* − y)² =
        2R.) ``prediction`` gives its interval, label and reasons.
        """
        return 2.0 * self.predicted_risk

    def simulate(self, num_runs: int, seed: int = 0, *,
                 data: tuple[ArrayLike, ArrayLike] | None = None) -> Verification:
        """Algorithm 1 ``num_runs`` times on the assumed model, or on ``data`` = (features, labels).

        Without ``data``: :func:`privdyn.algorithms.dpgd.simulate_dpgd` on Gaussian data from the model, against
        the excess risk. With ``data`` (the rows the plan was made from, declared public: only for a plan made with
        ``public_stats``): the planned DP-GD on the rows times ``feature_scale``, in ``num_runs`` random orders
        with independent noise, against :attr:`predicted_excess_mse`; each run's measure is its in-sample MSE minus
        least squares' on the same rows.
        """
        from privdyn.algorithms.dpgd import DPGDHyperparameters, simulate_dpgd

        _check.integer(minimum=2, num_runs=num_runs)
        _check.integer(minimum=0, seed=seed)
        if data is not None:
            return self._simulate_on_data(num_runs, seed, data)
        row = DPGDHyperparameters(clip=self.clip, learning_rate=self.learning_rate, rho=self.rho)
        sim = simulate_dpgd(data=self.model.design(), rows=[row], num_runs=int(num_runs), seed=int(seed),
                            unit_key="privdyn-plan/dpgd", n=self.model.n)
        assert sim.final_private_risk is not None  # simulate_dpgd always records the released iterate's risk
        return Verification.from_runs(
            sim.final_private_risk[0], predicted=self.predicted_risk, quantity=self.quantity, seed=int(seed),
            note=(f"excess risk of the released iterate at d = {self.model.d}; the ODE is the d -> infinity limit "
                  "(Theorem 1), so a gap of order d^(-1/2) beyond the Monte-Carlo error is expected at small d"))

    def _simulate_on_data(self, num_runs: int, seed: int, data: tuple[ArrayLike, ArrayLike]) -> Verification:
        from privdyn.algorithms.dpgd import dpgd as run

        if self.planning.mode != "public_stats":
            raise ValueError("data= runs the plan on the rows as public data: give it only for a plan made with "
                             f"public_stats=True (--public-stats); this plan's statistics are {self.planning.mode!r}.")
        features, labels = (np.asarray(v, dtype=float) for v in data)
        if features.ndim != 2 or features.shape != (self.model.n, self.model.d) or labels.shape != (self.model.n,):
            raise ValueError(f"data must be the plan's rows: features ({self.model.n}, {self.model.d}) and labels "
                             f"({self.model.n},); got {features.shape} and {labels.shape}.")
        _check.finite(features=features, labels=labels)
        z = features * self.model.feature_scale
        best, *_ = np.linalg.lstsq(z, labels, rcond=None)
        floor = float(np.mean((z @ best - labels) ** 2))
        root = np.random.SeedSequence([int(seed), 27])
        measured = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OutsideTheoryWarning)
            for child in root.spawn(int(num_runs)):
                rng = np.random.default_rng(child)
                order = rng.permutation(self.model.n)
                theta = run(z[order], labels[order], clip=self.clip, learning_rate=self.learning_rate, rho=self.rho,
                            rng=rng)
                measured.append(float(np.mean((z @ theta - labels) ** 2)) - floor)
        return Verification.from_runs(
            measured, predicted=self.predicted_excess_mse, quantity="excess_mse", seed=int(seed),
            note=(f"in-sample excess MSE over least squares on the {self.model.n} given rows, random orders; the "
                  f"prediction is labelled {self.prediction.get('label', 'model')!r}"
                  + ("" if self.prediction.get("label") != "heuristic" else
                     " (" + "; ".join(self.prediction.get("reasons", ())) + ")")))

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
        risks: list[float] = []
        params: list[dict[str, Any]] = []
        for value in values.tolist():
            total = zcdp_for_epsilon(value, b.delta) if name == "epsilon" else value  # type: ignore[arg-type]
            if total <= share:
                risks.append(math.inf)
                params.append({})
                continue
            rho = rho_from_zcdp(total - share)
            found = search(objective, [self.chosen], rho, self.model.aspect_ratio, start=self.point)[0]
            risks.append(_final_risk(self.model, found.candidate, found.point, rho))
            params.append({**found.candidate.hyperparameters(found.point), "rho": rho})
        return ParetoFront(budget_name=name, budgets=values, predicted=np.array(risks), quantity=self.quantity,
                           hyperparameters=tuple(params),
                           note=f"the {self.chosen.name} schedule re-optimized on the ODE at every budget "
                                "(the plan's search started at the plan's optimum); planning share held fixed")

    @property
    def point(self) -> tuple[float, ...]:
        """The chosen (c, η̃(0)) or (c, η̃(0), τ)."""
        h = self.hyperparameters
        extra = (float(h["harmonic_offset"]),) if self.chosen.schedule == "harmonic" else ()
        return (self.clip, float(h["initial_learning_rate"]), *extra)


def _search_objective(m: DPGDModel) -> Objective:
    per_direction = m.spectrum.per_direction()
    coarse = Spectrum.from_eigenvalues(per_direction, rtol=GROUPING_RTOL)
    projections = coarse.group_sums((m.target_projections / m.spectrum.multiplicities)[m.spectrum.groups])
    return Objective(coarse, projections, m.aspect_ratio, m.label_noise, SEARCH_RTOL, extra=m.clip_bias)


def _final_risk(m: DPGDModel, candidate: Candidate, point: Sequence[float], rho: float,
                rtol: float = FINAL_RTOL) -> float:
    """The ODE's final private risk, plus the clipping fixed point's bias where the rows are public."""
    from privdyn.dynamics import dpgd as engine

    risk = float(engine.final_private_risk(
        spectrum=m.spectrum, target_projections=m.target_projections, aspect_ratio=m.aspect_ratio,
        learning_rate=candidate.learning_rate(point), clip=float(point[0]), rho=rho, label_noise=m.label_noise,
        rtol=rtol))
    return risk + (m.clip_bias(float(point[0])) if m.clip_bias is not None else 0.0)


def _risk_curve(m: DPGDModel, found: Found, rho: float) -> Any:
    from privdyn.dynamics import dpgd as engine

    return engine.solve_risk_ode(
        spectrum=m.spectrum, target_projections=m.target_projections, aspect_ratio=m.aspect_ratio,
        learning_rate=found.candidate.learning_rate(found.point), clip=found.point[0], rho=rho,
        label_noise=m.label_noise, times=CURVE_TIMES, rtol=FINAL_RTOL)


REDRAWS = 8
"""Planning-share redraws behind a prediction's interval (each one ODE solve at the chosen hyper-parameters)."""


def _prediction(m: DPGDModel, best: Found, rho: float, risk: float, rng: np.random.Generator | None) -> dict[str, Any]:
    """``prediction``: excess and test MSE, interval, label and reasons (see :class:`DPGDPlan`)."""
    from privdyn.plan._dpgd_data import assess, data_model

    label, reasons = assess(m, float(best.point[0]))
    excess = 2.0 * risk
    risks = [risk]
    if m.release is not None:  # parametric redraws of the planning share's noise around the released sums
        r = m.release
        draw = np.random.default_rng(rng.integers(2**63) if rng is not None else None)
        dim = m.d
        for _ in range(REDRAWS):
            upper = draw.standard_normal((dim, dim)) * r.stds["second_moment_features"]
            sxx = r.sxx + np.triu(upper) + np.triu(upper, 1).T
            sxy = r.sxy + draw.standard_normal(dim) * r.stds["feature_label_moment"]
            syy = r.syy + float(draw.standard_normal()) * r.stds["label_second_moment"]
            try:
                other = data_model(sxx, sxy, syy, rows=m.n, release=r, features=None, labels=None, source="redraw",
                                   statistics="dp", precondition=m.preconditioner is not None)
            except ValueError:
                continue
            risks.append(_final_risk(other, best.candidate, best.point, rho, rtol=SEARCH_RTOL))
    rank = m.assessment.effective_rank if m.assessment is not None else float(m.d)
    factor = 1.0 + 1.0 / math.sqrt(rank)
    residual = m.label_noise**2
    return {"excess_mse": excess, "test_mse": excess + residual,
            "interval": [2.0 * min(risks) / factor, 2.0 * max(risks) * factor], "label": label,
            "reasons": list(reasons), "residual_variance": residual,
            "clip_bias": 2.0 * m.clip_bias(float(best.point[0])) if m.clip_bias is not None else 0.0,
            "assessment": m.assessment.to_json() if m.assessment is not None else None}


def dpgd(*, n: int | None = None, d: int | None = None, spectrum: str | Spectrum | ArrayLike = "identity",
         target_norm: float | None = None,
         target_exponent: float | None = None, label_noise: float | None = None, epsilon: float | None = None,
         delta: float | None = None, rho: float | None = None, zcdp: float | None = None,
         schedules: Sequence[str] = SCHEDULES, data: str | Path | tuple[ArrayLike, ArrayLike] | None = None,
         label_column: str | int | None = None,
         public_stats: bool = False, planning_share: float | None = None, feature_norm_bound: float | None = None,
         label_bound: float | None = None, rng: np.random.Generator | None = None,
         intercept_column: bool = False, precondition: bool = False, data_checks: bool = True) -> DPGDPlan:
    """Plan one-pass clipped DP-GD (arXiv 2505.16329) for a privacy budget: hyper-parameters, predicted risk, guarantee.

    Give the data model as public numbers (``n``, ``d``, ``spectrum``, ``target_norm`` or ``target_exponent``,
    ``label_noise``; see :func:`model`) or as ``data`` (a CSV, .npy or .parquet file, or a pair (features, labels))
    with either ``public_stats=True`` (its statistics are treated as public: the plan records it) or a
    ``planning_share`` of the budget with which the spectrum, ‖θ*‖ and the label noise are estimated under DP
    (:mod:`privdyn.plan._data`, whose noise ``rng`` draws: None means fresh OS entropy); n and d then come from the
    data (``intercept_column``: the data's last feature column is a constant intercept, exempt from the check that
    refuses constant columns; ``precondition``: with a planning share, plan DP-GD on the rows whitened by the
    released second moment, see :func:`privdyn.plan._dpgd_data.data_model`; ``data_checks=False``: skip the checks
    that read the rows, for a private caller that must not branch on them). The budget is (``epsilon``,
    ``delta``), ``rho`` (θ_n is ρ²/2-zCDP) or ``zcdp``; it is the *total*, planning share included.

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
            n=n, d=d, target_exponent=target_exponent, label_noise=label_noise, rng=rng,
            intercept_column=intercept_column, precondition=precondition, data_checks=data_checks)
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
        found = search(objective, candidates(schedules), train_rho, m.aspect_ratio)
        found.sort(key=lambda f: f.search_risk)
        curve = _risk_curve(m, found[0], train_rho)  # the search's best: its curve gives its final risk
        bias = m.clip_bias(found[0].point[0]) if m.clip_bias is not None else 0.0
        finals = [curve.final_private_risk + bias]
        exact = [True] + [f.search_risk <= finals[0] * (1.0 + EXACT_RUNNER_UP_GAP) for f in found[1:]]
        for f, solve in zip(found[1:], exact[1:], strict=True):  # close runner-ups are solved exactly: exact order
            finals.append(_final_risk(m, f.candidate, f.point, train_rho) if solve else f.search_risk)
        order = np.argsort(finals, kind="stable")
        if order[0] != 0:  # the exact spectrum reorders families the search could not separate
            curve = _risk_curve(m, found[int(order[0])], train_rho)
        best = found[int(order[0])]
    from privdyn.privacy.iteration import noise_calibration

    prediction = _prediction(m, best, train_rho, finals[int(order[0])], rng)
    learning_rate = best.candidate.learning_rate(best.point)
    step_sizes = learning_rate.step_sizes(m.n)
    noise_stds = 2.0 * best.point[0] * math.sqrt(m.d) * noise_calibration(step_sizes, rho=train_rho)
    notes = []
    alternatives = []
    for i in order[1:]:
        f = found[int(i)]
        parts = [f"optimum on the search box's bound: {', '.join(f.at_bound)}"] if f.at_bound else []
        if not exact[int(i)]:
            parts.append("risk from the search's ODE (eigenvalues within 1% merged, rtol 1e-4)")
        note = "; ".join(parts)
        alternatives.append(Alternative(name=f.candidate.name, hyperparameters=f.candidate.hyperparameters(f.point),
                                        predicted_risk=finals[int(i)], note=note))
    if best.at_bound:
        notes.append(f"the chosen optimum lies on the search box's bound in {', '.join(best.at_bound)} "
                     "(initial_learning_rate <= 2/aspect_ratio is the paper's limit; clip in [1e-3, 10])")
    if m.feature_scale != 1.0:
        notes.append(f"the given eigenvalues have trace {m.d / m.feature_scale**2:.6g}, not d = {m.d}: multiply the "
                     f"features by feature_scale = {m.feature_scale:.6g} before training (Assumption 1 takes "
                     "tr(Sigma) = d; clip is in those units)")
    if prediction["label"] == "heuristic":
        notes.append("the predicted excess MSE is labelled heuristic: " + "; ".join(prediction["reasons"]))
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
        search={"ode_solves": objective.solves, "final_solves": sum(exact) + int(order[0] != 0),
                "search_rtol": SEARCH_RTOL, "final_rtol": FINAL_RTOL,
                "search_groups": objective.spectrum.num_groups, "groups": m.spectrum.num_groups,
                "elapsed_s": time.perf_counter() - started},
        model=m, learning_rate=learning_rate, clip=float(best.point[0]), rho=train_rho, budget=b, planning=share,
        schedules=schedules, chosen=best.candidate, prediction=prediction)
