"""Planning one-pass noisy SGD on least squares through homogenized SGD (Lin, Kolaczyk, Smith, Paquette,
arXiv 2510.16687).

:func:`hsgd` chooses a constant step size η and the noise std σ of Algorithm 1 (batch size 1, one pass, no
clipping, Gaussian noise N(0, σ²I) added to every stochastic gradient) for a Rényi target (α, ε_α), with the
Volterra risk curve.

* **Risk.** The expected population risk P_t of HSGD from the Volterra equations (6)-(7) of Theorem 4.2
  (:func:`privdyn.dynamics.hsgd.volterra_risk`), at t = k/d; the released x_n has risk P_{n/d}.
* **Privacy: a surrogate.** The last-iterate RDP of Theorem 4.3, eq. (15)
  (:func:`privdyn.privacy.hsgd.rdp_epsilon`): the Rényi divergence between linearized homogenized-SGD laws of
  neighbouring datasets, with the differing record at a uniformly random position, maximized over the
  ``num_pairs`` record pairs with the largest gradient gap of a sample drawn from the assumed Gaussian design
  (the paper's Section 5 proxy, :func:`privdyn.privacy.hsgd.select_pairs`). It is a diffusion approximation on a
  data-dependent set of pairs, labelled ``surrogate`` everywhere, and **never a differential-privacy guarantee**:
  unclipped noisy SGD on unbounded data has no finite worst-case sensitivity.
* **Search.** Step sizes at fractions (1%, 2%, 5%, 10%, 20%, 40%) of the largest stable constant learning rate
  (κ_K < 1, :func:`privdyn.dynamics.hsgd.max_stable_learning_rate`); at each, the smallest σ on a log grid (then
  refined by bisection) whose surrogate ε_α(n) meets the target; the step size with the smallest predicted risk
  wins, the others are the runner-ups. When no searched setting meets the target the plan is refused with the
  smallest surrogate ε_α found (the paper's Figure 2(b) plateau does not shrink with σ: a small enough target is
  out of reach).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.plan._budget import PlanningShare, PrivacyStatement
from privdyn.plan._plan import Alternative, ParetoFront, Plan, Verification
from privdyn.privacy.labels import Guarantee, NeighboringRelation
from privdyn.schedules import Constant

if TYPE_CHECKING:

    from privdyn.privacy.hsgd import NeighboringPairs
    from privdyn.spectra import Spectrum

__all__ = ["HSGDPlan", "hsgd", "STEP_FRACTIONS"]

STEP_FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.4)
"""Searched step sizes, as fractions of the largest stable constant learning rate."""
NOISE_GRID = tuple(np.geomspace(1e-2, 1e3, 16).tolist())
"""Searched noise stds, relative to the root-mean-square gradient norm at the start."""
BISECTIONS = 6
"""Bisection steps (in log σ) between the last σ that misses the target and the first that meets it."""


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class _Setting:
    n: int
    design: Any
    ridge: float
    renyi_order: float
    pairs: Any
    gamma_max: float
    gradient_scale: float


def _problem(s: _Setting, step_size: float, noise_std: float) -> Any:
    from privdyn.data.hsgd_design import hsgd_problem

    d = s.design.dim
    return hsgd_problem(s.design, x0=np.zeros(d), learning_rate=Constant(step_size * d), ridge=s.ridge,
                        noise_std=noise_std)


def _surrogate(s: _Setting, step_size: float, noise_std: float) -> float:
    from privdyn.privacy import hsgd as accountant

    try:
        law = accountant.sgd_grid_law(_problem(s, step_size, noise_std), s.n)
        curve = np.atleast_1d(accountant.rdp_epsilon(s.renyi_order, law, s.pairs, num_steps=s.n,
                                                     iterates=[s.n]).value)
        value = float(curve[0])
    except ValueError:
        return math.inf
    return value if math.isfinite(value) else math.inf


def _risk_curve(s: _Setting, step_size: float, noise_std: float) -> Any:
    from privdyn.dynamics import hsgd as engine

    d = s.design.dim
    return engine.volterra_risk(_problem(s, step_size, noise_std), np.linspace(0.0, s.n / d, 101), max_step=1.0 / d,
                                refinements=2)


def _smallest_noise(s: _Setting, step_size: float, target: float) -> tuple[float | None, float, int]:
    """The smallest σ (grid, then bisection) whose surrogate meets ``target``; also the smallest value seen."""
    evaluations, best = 0, math.inf
    previous = None
    for factor in NOISE_GRID:
        sigma = factor * s.gradient_scale
        value = _surrogate(s, step_size, sigma)
        evaluations += 1
        best = min(best, value)
        if value <= target:
            if previous is None:
                return sigma, best, evaluations
            lo, hi = math.log(previous), math.log(sigma)
            for _ in range(BISECTIONS):
                mid = 0.5 * (lo + hi)
                value = _surrogate(s, step_size, math.exp(mid))
                evaluations += 1
                best = min(best, value)
                lo, hi = (lo, mid) if value <= target else (mid, hi)
            return math.exp(hi), best, evaluations
        previous = sigma
    return None, best, evaluations


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class HSGDPlan(Plan):
    """An hsgd plan; ``setting`` holds the assumed design, the pairs and the Rényi order."""

    setting: _Setting
    rdp_epsilon_target: float

    def surrogate_rdp(self, pairs: NeighboringPairs | None = None) -> float:
        """The plan's surrogate ε_α (Theorem 4.3) at its hyper-parameters, on ``pairs`` (default: the plan's own),
        ``inf`` where the accountant cannot evaluate it."""
        setting = self.setting if pairs is None else dataclasses.replace(self.setting, pairs=pairs)
        return _surrogate(setting, float(self.hyperparameters["step_size"]), float(self.hyperparameters["noise_std"]))

    def simulate(self, num_runs: int, seed: int = 0) -> Verification:
        """Noisy SGD (:func:`privdyn.algorithms.noisy_sgd.simulate_noisy_sgd`) on fresh samples of the design."""
        from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd

        _check.integer(minimum=2, num_runs=num_runs)
        _check.integer(minimum=0, seed=seed)
        s, h = self.setting, self.hyperparameters
        sim = simulate_noisy_sgd(data=s.design, x0=np.zeros(s.design.dim), ridge=s.ridge, num_steps=s.n,
                                 num_runs=int(num_runs), seed=int(seed), unit_key="privdyn-plan/hsgd",
                                 step_size=float(h["step_size"]), noise_std=float(h["noise_std"]),
                                 record_steps=[s.n])
        return Verification.from_runs(
            sim.population_risk[:, -1], predicted=self.predicted_risk, quantity=self.quantity, seed=int(seed),
            note="population risk of x_n; the Volterra curve is exact for the expected risk of HSGD and matches "
                 "noisy SGD as d -> infinity (Theorem 3.1)")

    def pareto_front(self, budgets: Sequence[float] | None = None, *, num_points: int = 7) -> ParetoFront:
        """The predicted risk against the surrogate ε_α target, re-searched per target (label ``surrogate``)."""
        _check.integer(minimum=2, num_points=num_points)
        values = (np.geomspace(self.rdp_epsilon_target / 8.0, self.rdp_epsilon_target * 8.0, num_points)
                  if budgets is None else np.sort(np.asarray(budgets, dtype=float)))
        _check.positive(budgets=values)
        risks: list[float] = []
        params: list[dict[str, Any]] = []
        for target in values.tolist():
            found = _search(self.setting, target)
            if not found["rows"]:
                risks.append(math.inf)
                params.append({})
                continue
            row = min(found["rows"], key=lambda r: r["risk"])
            risks.append(row["risk"])
            params.append({"step_size": row["step_size"], "noise_std": row["noise_std"]})
        return ParetoFront(budget_name="rdp_epsilon (surrogate)", budgets=values, predicted=np.array(risks),
                           quantity=self.quantity, hyperparameters=tuple(params),
                           note="surrogate privacy (not a DP guarantee); the search of hsgd() at every target")


def _search(s: _Setting, target: float) -> dict[str, Any]:
    rows, best, evaluations = [], math.inf, 0
    d = s.design.dim
    for fraction in STEP_FRACTIONS:
        step = fraction * s.gamma_max / d
        sigma, smallest, used = _smallest_noise(s, step, target)
        evaluations += used
        best = min(best, smallest)
        if sigma is not None:
            curve = _risk_curve(s, step, sigma)
            rows.append({"fraction": fraction, "step_size": step, "noise_std": sigma,
                         "risk": float(curve.population_risk[-1]), "curve": curve,
                         "rdp_epsilon": _surrogate(s, step, sigma)})
    return {"rows": rows, "smallest": best, "evaluations": evaluations}


def hsgd(*, n: int, d: int | None = None, spectrum: str | Spectrum | ArrayLike = "identity",
         target_norm: float = 1.0, label_noise: float, ridge: float, renyi_order: float, rdp_epsilon: float,
         num_pairs: int = 5, seed: int = 0) -> HSGDPlan:
    """Plan one-pass noisy SGD on least squares for a surrogate Rényi target (arXiv 2510.16687).

    Args:
        n, d: the number of examples (= steps) and the dimension.
        spectrum: the covariance spectrum of the Gaussian design: ``"identity"``, ``"uniform"``,
            ``"power_law:φ"`` or eigenvalues (as in :func:`privdyn.plan._dpgd.parse_spectrum`), rescaled to tr Σ = d.
        target_norm, label_noise: ‖x̃‖ (spread evenly) and the label-noise std ζ.
        ridge: δ >= 0 (the paper uses 0.1).
        renyi_order, rdp_epsilon: the target (α > 1, ε_α > 0) of the last iterate's surrogate RDP.
        num_pairs: the record pairs (largest gradient gap) of the assumed sample the surrogate maximizes over.
        seed: the seed of that sample.

    Returns:
        An :class:`HSGDPlan`: ``step_size``, ``noise_std``, ``learning_rate`` (γ = η d), ``ridge``; the predicted
        population risk of x_n (``method="volterra"``) and its curve; privacy label ``surrogate``.

    Raises:
        ValueError: bad sizes or constants; a target that no searched setting meets (with the smallest value found).
    """
    from privdyn.dynamics import hsgd as engine
    from privdyn.plan._dpgd import parse_spectrum
    from privdyn.privacy import hsgd as accountant

    started = time.perf_counter()
    _check.integer(minimum=2, n=n)
    _check.scalar(label_noise=label_noise, ridge=ridge, renyi_order=renyi_order, rdp_epsilon=rdp_epsilon,
                  target_norm=target_norm)
    _check.non_negative(label_noise=label_noise, ridge=ridge)
    _check.positive(rdp_epsilon=rdp_epsilon, target_norm=target_norm)
    _check.in_range(1.0, math.inf, closed="neither", renyi_order=renyi_order)
    _check.integer(minimum=1, num_pairs=num_pairs)
    _check.integer(minimum=0, seed=seed)
    base, description = parse_spectrum(spectrum, d)
    spec = base.normalized() if abs(base.trace - base.dim) > 1e-9 * base.dim else base
    if spec.eigenvalues[0] + ridge <= 0:
        raise ValueError(f"ridge must be > 0 when the spectrum has a zero eigenvalue; got ridge={ridge!r}.")
    from privdyn.data.hsgd_design import gaussian_design

    design = gaussian_design(spec, label_noise=float(label_noise), target_norm=float(target_norm))
    features, labels = design.sample(int(n), np.random.default_rng(seed))
    pairs = accountant.select_pairs(features, labels, ridge=float(ridge), num_pairs=int(num_pairs))
    initial = 0.5 * (float(np.dot(spec.eigenvalues, design.squared_projections)) + label_noise**2)
    setting = _Setting(n=int(n), design=design, ridge=float(ridge), renyi_order=float(renyi_order), pairs=pairs,
                       gamma_max=float(engine.max_stable_learning_rate(spec, ridge=float(ridge))),
                       gradient_scale=math.sqrt(2.0 * initial * spec.trace))
    found = _search(setting, float(rdp_epsilon))
    if not found["rows"]:
        raise ValueError(f"rdp_epsilon={rdp_epsilon!r} (renyi_order {renyi_order:g}) is below what any searched "
                         f"setting reaches: the smallest surrogate rdp_epsilon found is {found['smallest']:.4g}; "
                         "give rdp_epsilon >= that (the surrogate's plateau does not shrink with noise_std).")
    rows = sorted(found["rows"], key=lambda r: r["risk"])
    best = rows[0]
    d = spec.dim
    hyper = {"step_size": best["step_size"], "noise_std": best["noise_std"], "learning_rate": best["step_size"] * d,
             "ridge": float(ridge)}
    alternatives = tuple(Alternative(
        name=f"step_size {r['fraction']:g} x stable limit",
        hyperparameters={"step_size": r["step_size"], "noise_std": r["noise_std"]}, predicted_risk=r["risk"])
        for r in rows[1:])
    statement = PrivacyStatement(
        unit="one example (a row (a, b))", neighboring=NeighboringRelation.REPLACE_ONE, sampler="shuffle",
        released="the last iterate x_n only", guarantee=Guarantee.SURROGATE,
        accountant=(f"{accountant.REFERENCE}, Theorem 4.3 eq. (15): Renyi divergence of linearized homogenized-SGD "
                    f"laws, maximized over the {pairs.num_pairs} pairs with the largest gradient gap of a sample of "
                    "the assumed design (seed " + str(seed) + ")"),
        planning=PlanningShare(), epsilon=None, delta=None, zcdp=None, training_zcdp=None, rdp_curve=None,
        conversion=None,
        assumptions=("a diffusion approximation of noisy SGD (exact as d -> infinity, the paper's Conjecture 3.1)",
                     "the supremum over neighbours replaced by a maximum over pairs of one assumed sample",
                     "the differing record at a uniformly random position of one pass (shuffled once)",
                     "x_0 = 0 fixed and public; no clipping"),
        extra={"renyi_order": float(renyi_order), "rdp_epsilon": best["rdp_epsilon"],
               "rdp_epsilon_target": float(rdp_epsilon)},
        membership_reason=("the Renyi number is a surrogate of a diffusion approximation, not a privacy guarantee: no "
                           "bound on a membership test follows from it"))
    curve = best["curve"]
    return HSGDPlan(
        family="hsgd", inputs={**description, "n": int(n), "d": d, "target_norm": float(target_norm),
                               "label_noise": float(label_noise), "num_pairs": int(num_pairs), "seed": int(seed)},
        hyperparameters=hyper, per_step={}, predicted_risk=best["risk"], quantity="population_risk",
        method="volterra",
        risk_curve={"times": curve.times.tolist(), "risk": curve.population_risk.tolist(), "x_label": "t = k/d",
                    "y_label": "population risk P_t (Volterra, Theorem 4.2)"},
        alternatives=alternatives, privacy=statement,
        notes=("privacy is a SURROGATE (homogenized-SGD diffusion approximation on data-dependent pairs), not a "
               "differential-privacy guarantee",),
        search={"surrogate_evaluations": found["evaluations"], "elapsed_s": time.perf_counter() - started},
        setting=setting, rdp_epsilon_target=float(rdp_epsilon))
