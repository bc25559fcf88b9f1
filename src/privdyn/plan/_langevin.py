"""Planning noisy GD on a strongly convex, smooth loss (Chourasia, Ye, Shokri 2021, arXiv 2102.05855).

:func:`langevin` chooses the step size η, the noise scale σ (the per-step noise std is √(2η)·σ) and the number of
steps K of Algorithm 1 (full-batch noisy GD, last iterate released) for a privacy budget.

* **Privacy: Corollary 1.** With θ_0 ~ Π_C(N(0, 2σ²/λ I)), η < 1/β and replace-one neighbours, the last iterate is
  (α, α·z)-RDP for every α > 1 with z = S_g²(1 − e^{−ληK/2})/(λσ²n²): a z-zCDP guarantee (label ``bound``).
  σ is calibrated so that z equals the budget's zCDP (the (ε, δ) target is met by the optimal conversion and by
  dp-accounting, :mod:`privdyn.plan._budget`).
* **Utility: Lemma 6 (eq. 20).** For an L-Lipschitz loss and η ≤ λ/(2β²), E[𝓛(θ_K) − 𝓛(θ*)] ≤
  (2βL²/λ²)e^{−ληK} + 2βdσ²/λ. The plan takes η = λ/(2β²) (Theorem 4's step) and the K that minimizes this bound
  with σ calibrated *at that K*: with u = e^{−ληK/2}, A = 2βL²/λ² and B = 2βdS_g²/(λ²n²z), the bound is
  A·u² + B·(1 − u), minimized at u = B/(2A) (K rounded to the better neighbouring integer).
* **A given step size** (``step_size``, any η < 1/β, e.g. near 1/β to converge in fewer steps than Lemma 6's
  λ/(2β²) allows): the utility statement is then the distance recursion of projected noisy GD (:func:`_distance_bound`):
  for η <= 2/(λ + β) and a minimizer θ* inside C, E‖θ_K − θ*‖² <= (1 − ηλ)^{2K} L²/λ² + 2dησ²/(1 − (1 − ηλ)²),
  and E[𝓛(θ_K) − 𝓛(θ*)] <= (β/2)·E‖θ_K − θ*‖²; K is the integer in [1, ``max_steps``] that minimizes it with σ
  calibrated at K.
* **The paper's chooser** (Theorem 4, (ε, δ) form: σ² = 8L²(ε + 2 ln(1/δ))/(λε²n²), K* as printed) and the
  asymptotic Corollary 1 calibration (K → ∞: a guarantee for every K, at K*) are the runner-ups.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from privdyn import _check
from privdyn.plan._budget import Budget, PlanningShare, budget, zcdp_for_epsilon, zcdp_statement
from privdyn.plan._plan import Alternative, ParetoFront, Plan, Verification
from privdyn.privacy import langevin as accountant
from privdyn.privacy.labels import NeighboringRelation

__all__ = ["LangevinPlan", "langevin"]

_SOURCE = ("Corollary 1 of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855): last-iterate RDP of noisy GD, "
           "alpha * S_g^2 (1 - exp(-lambda eta K / 2)) / (lambda sigma^2 n^2) at every order alpha")
_ASSUMPTIONS = (
    "the per-example loss is lambda-strongly convex, beta-smooth and L-Lipschitz on a closed convex set C "
    "(bounded, since lambda > 0 and L < inf), with total gradient sensitivity S_g (<= 2L)",
    "full-batch gradients (the mean over the n examples), projection onto C after every step",
    "theta_0 ~ Pi_C(N(0, 2 sigma^2 / lambda I)), independent of the data; step_size < 1/beta",
    "only the last iterate theta_K is released, after exactly num_steps steps",
)


ACCOUNTANTS = ("corollary_1", "shifted_interpolation")
"""How a plan at a given step calibrates σ (``accountant_name`` of :func:`langevin`)."""

MAX_STEPS = 1_000_000
"""The largest ``max_steps`` a plan at a given step size searches (every K up to it is evaluated)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Constants:
    n: int
    d: int
    strong_convexity: float
    smoothness: float
    lipschitz: float
    sensitivity: float


def _choose(c: _Constants, zcdp: float) -> dict[str, Any]:
    """η, K, σ minimizing Lemma 6 with σ calibrated by Corollary 1 at K (module docstring)."""
    lam, beta, L, s, n, d = c.strong_convexity, c.smoothness, c.lipschitz, c.sensitivity, c.n, c.d
    eta = lam / (2.0 * beta**2)
    a = 2.0 * beta * L**2 / lam**2
    b = 2.0 * beta * d * s**2 / (lam**2 * n**2 * zcdp)

    def sigma_at(k: int) -> float:
        return math.sqrt(s**2 * -math.expm1(-lam * eta * k / 2.0) / (lam * n**2 * zcdp))

    def bound(k: int) -> float:
        return float(accountant.lemma6_excess_risk_bound(num_steps=k, step_size=eta, noise_scale=sigma_at(k),
                                                         lipschitz=L, strong_convexity=lam, smoothness=beta, d=d))

    u = b / (2.0 * a)
    k_real = 1.0 if u >= 1.0 else max(1.0, -2.0 * math.log(u) / (lam * eta))
    ks = {max(1, math.floor(k_real)), max(1, math.ceil(k_real))}
    k = min(ks, key=bound)
    return {"step_size": eta, "num_steps": int(k), "noise_scale": sigma_at(k),
            "noise_std": math.sqrt(2.0 * eta) * sigma_at(k), "bound": bound(k), "bound_at": bound}


def _distance_bound(c: _Constants, step_size: float, num_steps: Any, noise_scale: Any) -> np.ndarray:
    """(β/2)·[(1 − ηλ)^{2K} L²/λ² + 2dησ²/(1 − (1 − ηλ)²)]: a bound on E[𝓛(θ_K) − 𝓛(θ*)] for projected noisy GD.

    The map θ ↦ θ − η∇𝓛(θ) is a (1 − ηλ)-contraction for η <= 2/(λ + β) (λ-strongly convex, β-smooth 𝓛), the
    projection onto C is non-expansive and fixes a minimizer θ* in C, and the noise √(2η)σZ is independent of the
    past, so D_{k+1} = E‖θ_{k+1} − θ*‖² <= (1 − ηλ)² D_k + 2dησ²; D_0 <= L²/λ² (strong convexity and ‖∇𝓛‖ <= L
    on C, since ∇𝓛(θ*) = 0); smoothness turns the distance into excess risk. A standard argument (it is not in
    arXiv 2102.05855, whose Lemma 6 needs η <= λ/(2β²)).
    """
    lam, beta, L, d = c.strong_convexity, c.smoothness, c.lipschitz, c.d
    q = 1.0 - step_size * lam
    contraction = np.exp(2.0 * np.asarray(num_steps, dtype=float) * math.log(q))
    floor = 2.0 * d * step_size * np.asarray(noise_scale, dtype=float) ** 2 / -math.expm1(2.0 * math.log(q))
    return np.asarray(0.5 * beta * (contraction * L**2 / lam**2 + floor), dtype=float)


def _choose_at_step(c: _Constants, zcdp: float, step_size: float, max_steps: int,
                    accountant_name: str = "corollary_1") -> dict[str, Any]:
    """K in [1, max_steps] minimizing :func:`_distance_bound` at the given η, σ calibrated at K by Corollary 1
    (its zCDP equals ``zcdp``) or by shifted interpolation (its μ equals √(2·zcdp))."""
    lam, s, n = c.strong_convexity, c.sensitivity, c.n

    def sigma_at(k: Any) -> Any:
        steps = np.asarray(k, dtype=float)
        if accountant_name == "shifted_interpolation":  # μ(σ) = μ(1)/σ: solve μ(σ) = √(2 zcdp)
            unit = accountant.shifted_interpolation_gdp(num_steps=steps, step_size=step_size, noise_scale=1.0,
                                                        strong_convexity=lam, smoothness=c.smoothness,
                                                        sensitivity=s, n=n).value
            return np.asarray(unit, dtype=float) / math.sqrt(2.0 * zcdp)
        return np.sqrt(s**2 * -np.expm1(-lam * step_size * steps / 2.0) / (lam * n**2 * zcdp))

    ks = np.arange(1, max_steps + 1)
    bounds = _distance_bound(c, step_size, ks, sigma_at(ks))
    k = int(ks[int(np.argmin(bounds))])
    sigma = float(sigma_at(k))

    def bound(kk: Any) -> float:
        return float(_distance_bound(c, step_size, np.asarray(kk), sigma))

    return {"step_size": step_size, "num_steps": k, "noise_scale": sigma,
            "noise_std": math.sqrt(2.0 * step_size) * sigma, "bound": float(bounds[k - 1]), "bound_at": bound}


def _risk(c: _Constants, step_size: float, num_steps: Any, noise_scale: float, given_step: bool) -> Any:
    """The utility bound the plan states: the distance recursion at a given step, else Lemma 6."""
    if given_step:
        value = _distance_bound(c, step_size, np.asarray(num_steps), noise_scale)
        return float(value) if np.ndim(value) == 0 else value
    return accountant.lemma6_excess_risk_bound(num_steps=num_steps, step_size=step_size, noise_scale=noise_scale,
                                               lipschitz=c.lipschitz, strong_convexity=c.strong_convexity,
                                               smoothness=c.smoothness, d=c.d)


def _gdp_statement(statement: Any, zcdp: float, delta: float | None) -> Any:
    """The statement of a plan calibrated by shifted interpolation: μ-GDP with μ = √(2·zcdp), ε by the Gaussian
    mechanism's curve (Balle & Wang 2018, Theorem 8), membership rates Φ(Φ⁻¹(FPR) + μ)."""
    from privdyn.privacy.correlated_allocation import gaussian_epsilon
    from privdyn.privacy.mechanism import NoisyGDMechanism
    from privdyn.privacy.membership import gaussian_tpr, membership_table

    mu = math.sqrt(2.0 * zcdp)
    return dataclasses.replace(
        statement, accountant=NoisyGDMechanism.SOURCES["shifted_interpolation"], zcdp=zcdp, training_zcdp=zcdp,
        epsilon=None if delta is None else gaussian_epsilon(mu, delta),
        conversion=None if delta is None else "the Gaussian mechanism's curve at mu (Balle & Wang 2018, Theorem 8)",
        rdp_curve={"renyi_orders": statement.rdp_curve["renyi_orders"],
                   "rdp_epsilons": [zcdp * a for a in statement.rdp_curve["renyi_orders"]]},
        cross_checks={}, extra={**statement.extra, "gdp_mu": mu},
        membership=membership_table(lambda a: gaussian_tpr(mu, a), "mu-GDP: Phi(Phi^-1(FPR) + mu), exact"))


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class LangevinPlan(Plan):
    """A langevin plan; ``constants`` are the loss's (n, d, λ, β, L, S_g), ``budget`` the budget as given."""

    constants: _Constants
    budget: Budget
    given_step_size: float | None = None
    max_steps: int = 100_000

    def simulate(self, num_runs: int, seed: int = 0) -> Verification:
        """Noisy GD on the instance ℓ(θ; x) = (λ/2)‖θ − x‖² with data and C in the ball of radius L/(2λ).

        That loss is λ-strongly convex, λ-smooth (so β-smooth for any β >= λ) and L-Lipschitz on C, so Lemma 6's
        bound applies: the check is one-sided (mean excess empirical risk <= bound + 5 SE). The n examples are
        drawn uniformly in the ball once (seeded); runs differ in their noise and start.
        """
        from privdyn.algorithms.noisy_gd import L2Ball, QuadraticLoss, noisy_gd

        _check.integer(minimum=2, num_runs=num_runs)
        _check.integer(minimum=0, seed=seed)
        c, h = self.constants, self.hyperparameters
        rng = np.random.default_rng(seed)
        radius = c.lipschitz / (2.0 * c.strong_convexity)
        directions = rng.standard_normal((c.n, c.d))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        x = directions * radius * rng.random((c.n, 1)) ** (1.0 / c.d)
        mean = x.mean(axis=0)
        lam = c.strong_convexity
        # (λ/2)‖θ − x‖² at step η is the unit quadratic at step λη with noise scale σ/√λ (same per-step noise)
        theta = noisy_gd(QuadraticLoss(), mean[None, :], num_steps=int(h["num_steps"]),
                         step_size=lam * float(h["step_size"]), noise_scale=float(h["noise_scale"]) / math.sqrt(lam),
                         rng=rng, num_runs=int(num_runs), projection=L2Ball(radius), strong_convexity=1.0)
        excess = 0.5 * lam * np.sum((theta - mean) ** 2, axis=1)
        return Verification.from_runs(
            excess, predicted=self.predicted_risk, quantity=self.quantity, seed=int(seed), one_sided=True,
            note="Lemma 6 is an upper bound: the check is mean <= bound + 5 SE on the quadratic instance "
                 f"(lambda = beta = {lam:g}, L = {c.lipschitz:g}, radius L/(2 lambda))")

    def pareto_front(self, budgets: Sequence[float] | None = None, *, num_points: int = 7) -> ParetoFront:
        """Lemma 6's bound at the chosen (η, K, σ) for each ε (or zCDP when no δ was given)."""
        _check.integer(minimum=2, num_points=num_points)
        bound = "Lemma 6" if self.given_step_size is None else "the distance-recursion bound"
        b = self.budget
        name = "epsilon" if b.delta is not None else "zcdp"
        center = self.privacy.epsilon if name == "epsilon" and self.privacy.epsilon else b.zcdp
        values = (np.geomspace(center / 8.0, center * 8.0, num_points) if budgets is None
                  else np.sort(np.asarray(budgets, dtype=float)))
        _check.positive(budgets=values)
        risks, params = [], []
        for value in values.tolist():
            z = zcdp_for_epsilon(value, b.delta) if name == "epsilon" else value  # type: ignore[arg-type]
            chosen = (_choose(self.constants, z) if self.given_step_size is None
                      else _choose_at_step(self.constants, z, self.given_step_size, self.max_steps))
            risks.append(chosen["bound"])
            params.append({k: chosen[k] for k in ("step_size", "num_steps", "noise_scale")})
        return ParetoFront(budget_name=name, budgets=values, predicted=np.array(risks), quantity=self.quantity,
                           hyperparameters=tuple(params), note=f"{bound} at the Corollary 1 calibration per budget")


def langevin(*, n: int, d: int, strong_convexity: float, smoothness: float, lipschitz: float,
             sensitivity: float | None = None, epsilon: float | None = None, delta: float | None = None,
             zcdp: float | None = None, step_size: float | None = None,
             max_steps: int = 100_000, accountant_name: str = "corollary_1") -> LangevinPlan:
    """Plan noisy GD (Algorithm 1 of arXiv 2102.05855) for (ε, δ) or a zCDP budget.

    Args:
        n, d: the number of examples and the dimension (integers >= 1).
        strong_convexity, smoothness, lipschitz: λ <= β and L of the per-example loss (all > 0).
        sensitivity: the total gradient sensitivity S_g (default 2L, replace-one neighbours).
        epsilon, delta / zcdp: the budget.
        step_size: None (Lemma 6's η = λ/(2β²), the paper's Theorem 4 step), or a given η in (0, 1/β) and also
            <= 2/(λ + β): the number of steps then minimizes the distance-recursion bound (module docstring).
        max_steps: with a given step_size, the most steps the plan may choose (an integer in [1, 10^6]).
        accountant_name: how σ is calibrated at K: ``"corollary_1"`` (the paper's, the default) or, with a given
            step_size (< 2/smoothness suffices for it), ``"shifted_interpolation"``: the last iterate is then
            μ-GDP (Bok, Su & Altschuler 2024, arXiv 2403.00278) with μ the largest Gaussian shift whose exact
            (ε, δ) curve meets the budget (μ = √(2·zcdp) for a zCDP budget), about half Corollary 1's zCDP.

    Returns:
        A :class:`LangevinPlan`: ``step_size``, ``noise_scale`` (σ), ``noise_std`` (√(2η)σ) and ``num_steps``;
        ``predicted_risk`` is Lemma 6's bound on the expected excess empirical risk (``method="theory"``); the
        runner-ups are the paper's Theorem 4 chooser and the asymptotic calibration.

    Raises:
        ValueError: n or d < 1, non-positive constants, strong_convexity > smoothness, a bad budget.
    """
    started = time.perf_counter()
    _check.integer(minimum=1, n=n, d=d)
    _check.scalar(strong_convexity=strong_convexity, smoothness=smoothness, lipschitz=lipschitz)
    _check.positive(strong_convexity=strong_convexity, smoothness=smoothness, lipschitz=lipschitz)
    if strong_convexity > smoothness:
        raise ValueError(f"strong_convexity must be <= smoothness = {smoothness!r}; got "
                         f"strong_convexity={strong_convexity!r}.")
    s = 2.0 * float(lipschitz) if sensitivity is None else sensitivity
    _check.scalar(sensitivity=s)
    _check.positive(sensitivity=s)
    b = budget(epsilon=epsilon, delta=delta, zcdp=zcdp)
    c = _Constants(n=int(n), d=int(d), strong_convexity=float(strong_convexity), smoothness=float(smoothness),
                   lipschitz=float(lipschitz), sensitivity=float(s))
    if accountant_name not in ACCOUNTANTS:
        raise ValueError(f"accountant_name must be one of {', '.join(ACCOUNTANTS)}; got "
                         f"accountant_name={accountant_name!r}.")
    target_zcdp = b.zcdp
    if accountant_name == "shifted_interpolation":
        if step_size is None:
            raise ValueError("accountant_name='shifted_interpolation' needs a given step_size (the plan at Lemma 6's "
                             "step is Corollary 1's); give step_size or drop accountant_name.")
        if b.epsilon is not None and b.delta is not None:  # the exact Gaussian curve, tighter than zCDP's
            from privdyn.privacy.correlated_allocation import gaussian_mu

            target_zcdp = 0.5 * gaussian_mu(float(b.epsilon), float(b.delta)) ** 2
    if step_size is None:
        chosen = _choose(c, b.zcdp)
    else:
        _check.scalar(step_size=step_size)
        _check.integer(minimum=1, max_steps=max_steps)
        _check.at_most(MAX_STEPS, max_steps=max_steps)
        limit = min(1.0 / c.smoothness, 2.0 / (c.strong_convexity + c.smoothness))
        if not 0.0 < step_size < limit:
            raise ValueError(f"step_size must be in (0, min(1/smoothness, 2/(strong_convexity + smoothness))) = "
                             f"(0, {limit!r}) (Corollary 1 needs step_size < 1/smoothness); got "
                             f"step_size={step_size!r}.")
        chosen = _choose_at_step(c, target_zcdp, float(step_size), int(max_steps), accountant_name)
    eta, k = chosen["step_size"], chosen["num_steps"]
    alternatives = []
    # the asymptotic calibration: valid for every K, run for the same K
    sigma_inf = math.sqrt(c.sensitivity**2 / (c.strong_convexity * c.n**2 * b.zcdp))
    risk_inf = _risk(c, eta, k, sigma_inf, step_size is not None)
    alternatives.append(Alternative(
        name="asymptotic calibration (K -> infinity)", predicted_risk=risk_inf,
        hyperparameters={"step_size": eta, "num_steps": k, "noise_scale": sigma_inf},
        note="the same guarantee for any number of steps"))
    if b.epsilon is not None:
        try:
            paper = accountant.theorem4_parameters(lipschitz=c.lipschitz, strong_convexity=c.strong_convexity,
                                                   smoothness=c.smoothness, n=c.n, d=c.d, epsilon=b.epsilon,
                                                   delta=b.delta)
            alternatives.append(Alternative(
                name="Theorem 4 (the paper's chooser)", predicted_risk=float(paper.excess_risk_bound),
                hyperparameters={"step_size": float(paper.step_size), "num_steps": int(paper.num_steps),
                                 "noise_scale": float(paper.noise_scale)},
                note="renyi_order 1 + 2 ln(1/delta)/epsilon, Mironov's conversion; S_g = 2L"))
        except ValueError as exc:
            alternatives.append(Alternative(name="Theorem 4 (the paper's chooser)", predicted_risk=math.inf,
                                            hyperparameters={}, note=f"not applicable: {exc}"))
    alternatives.sort(key=lambda a: a.predicted_risk)
    ks = np.unique(np.linspace(0, 2 * k, 101).round().astype(int))
    curve = np.asarray(_risk(c, eta, ks, chosen["noise_scale"], step_size is not None), dtype=float)
    bound_name = "the distance-recursion bound" if step_size is not None else "Lemma 6"
    statement = zcdp_statement(
        total_zcdp=b.zcdp, training_zcdp=b.zcdp, delta=b.delta, unit="one example (one record of the dataset)",
        neighboring=NeighboringRelation.REPLACE_ONE, sampler="full_batch",
        released=f"the last iterate theta_K only, K = {k}", accountant=_SOURCE, planning=PlanningShare(),
        assumptions=_ASSUMPTIONS)
    if accountant_name == "shifted_interpolation":
        statement = _gdp_statement(statement, target_zcdp, b.delta)
    hyper = {"step_size": eta, "num_steps": k, "noise_scale": chosen["noise_scale"], "noise_std": chosen["noise_std"],
             "sensitivity": c.sensitivity}
    return LangevinPlan(
        family="langevin", inputs={**dataclasses.asdict(c), "budget": {"given": b.given, "epsilon": b.epsilon,
                                                                        "delta": b.delta, "zcdp": b.zcdp}},
        hyperparameters=hyper, per_step={}, predicted_risk=chosen["bound"], quantity="excess_empirical_risk_bound",
        method="theory",
        risk_curve={"times": ks.tolist(), "risk": curve.tolist(), "x_label": "steps k",
                    "y_label": f"{bound_name} after k steps at the planned noise"},
        alternatives=tuple(alternatives), privacy=statement,
        notes=(f"the guarantee holds for exactly num_steps = {k} steps (sigma is calibrated at K); the asymptotic "
               "calibration holds for every K",
               f"predicted_risk is an upper bound on the expected excess empirical risk ({bound_name}), not an "
               "estimate"),
        search={"elapsed_s": time.perf_counter() - started}, constants=c, budget=b,
        given_step_size=None if step_size is None else float(step_size), max_steps=int(max_steps))
