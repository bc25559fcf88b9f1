"""DPLinearRegression: one pass of clipped DP-GD on whitened rows, planned from a DP release (arXiv 2505.16329).

The fit, in order:

1. **Checks** of the parameters and the data (ε > 0, δ in (0, 1), public bounds given, finite data, n >= 2).
2. **Preprocessing from public bounds** (:class:`~privdyn.sklearn._base.Preprocessed`): rows projected onto the
   ball of radius F (``feature_norm``), labels clipped to [−B, B], the intercept a constant column inside the ball
   of radius R. The rows are then multiplied by s = √d'/R and the labels divided by B, so that ‖z‖² <= d' and
   |ỹ| <= 1.
3. **The planning release** (``planning_share``, default ``"auto"`` = :data:`AUTO_SHARE` of the zCDP budget):
   S_xx, S_xy, S_yy of the preprocessed rows by three Gaussian mechanisms (:mod:`privdyn.plan._data`).
4. **Whitening** by the release (post-processing): z ↦ P z with P = V diag((λ̂⁺ + τ)^(−1/2)) Vᵀ, τ the release's
   noise level (:func:`privdyn.plan._dpgd_data.data_model`).
5. **Planning** (:func:`privdyn.plan.dpgd`, ``precondition=True``) on the release's model of the whitened rows:
   schedule (``schedule="auto"``: the constant and polynomial families, :data:`AUTO_SCHEDULES`), clip c
   (C_clip = c√d'), step sizes η_k and the noise σ_k of eq. (4.2) for the remaining budget; its
   prediction becomes ``prediction_``. With ``planning_share=None`` steps 3–4 are skipped and the plan is made on
   the model the public bounds imply (Σ = I in d' dimensions, label noise ``label_noise``/B, default 1/√2,
   ‖θ*‖ = √(1 − ζ²)), a pure function of public numbers, cached.
6. **Solver** (``solver="auto"``, with a planning release). The training share can instead buy a second Gaussian
   release of S_xx and S_xy (half of it each, the same sensitivities); averaged with the planning release by
   inverse-variance weights it is one release at the planning share's third plus half the training share, and its
   least-squares solution θ̂ = S̃_xx⁻¹S̃_xy (sufficient-statistics perturbation) is post-processing. It is chosen
   when, from the planning release alone: (a) the release resolves the spectrum, q = τ_c/(λ̂_min − τ_1) <=
   :data:`~privdyn.dynamics.ssp.RESOLVED_RATIO` (τ_c the averaged release's noise level, λ̂_min − τ_1 a lower
   confidence value of S_xx's smallest eigenvalue, Weyl), where its first-order risk
   (:mod:`privdyn.dynamics.ssp`) is a model; and (b) that risk, plus least squares' own ζ̂²d'/(n − d' − 1), is at
   most the DP-GD plan's predicted excess. The choice is a function of the planning release and public numbers, so
   the two releases and the choice compose in zCDP as before. As ε → ∞ at fixed n the averaged release becomes
   exact and the fit least squares, which one pass of DP-GD does not reach. ``solver="dpgd"`` skips the step.
7. **Training** (DP-GD): Algorithm 1 (:func:`privdyn.algorithms.dpgd.dpgd`), one pass in an order drawn from
   ``random_state`` (independent of the data), from θ_0 = 0, each step capped at 2/‖z_k‖²; only θ_n is kept.
8. **Release**: ``coef_`` and ``intercept_`` = B·s·P·θ_n, or B·s·θ̂ (post-processing). The fit keeps no
   intermediate iterate, no loss curve and no training score.

**Privacy.** θ_n is ρ²/2-zCDP for replace-one neighbours (Proposition 4.1, amplification by iteration after
Feldman, Koren & Talwar 2020, arXiv 2005.04763, Theorem 3.1; label ``bound``) given the planning release, on which
the whitening and the hyper-parameters depend; the release's three Gaussian mechanisms compose with it in zCDP
(adaptive composition), and the total is the largest zCDP whose (ε, δ) by both the optimal conversion and
dp-accounting's is at most the requested ε. ``privacy_`` records every share, and in its ``cross_checks`` the
training zCDP of the :class:`~privdyn.privacy.mechanism.OnePassDPGDMechanism` record of the steps run (η_k, σ_k),
Proposition 4.1 recomputed.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted

from privdyn import _check
from privdyn.sklearn._base import Preprocessed, PrivateLinearModel, generator_from

__all__ = ["AUTO_SCHEDULES", "DPLinearRegression", "SCHEDULE_CHOICES", "SOLVER_CHOICES"]

SCHEDULE_CHOICES = ("auto", "constant", "polynomial", "harmonic")
"""``schedule``: ``"auto"`` lets the planner pick among :data:`AUTO_SCHEDULES`; the others restrict it to one."""
AUTO_SCHEDULES = ("constant", "polynomial")
"""The families ``schedule="auto"`` searches: the harmonic family β/(t + τ) is left out. Its planned optimum sits at
offsets τ near 10⁻³ (η̃(0) = β/τ above 10³), where a huge early noise must be contracted by exp(−2λ_i∫η̃) ≈ e⁻¹⁰
along every direction: the outcome then hangs on the effective curvature of the weakest direction, which neither
the release nor the Gaussian clipping model of the ODE pins down (a rare binary column, whose curvature comes from a
few large rows that are clipped). Measured on randhie at ε = 10 (docs/sklearn.md): relative test MSE up to 1.34 on
splits where the polynomial family gives at most 1.007, and 1.00 with the privacy noise switched off. Ask for
``schedule="harmonic"`` by name to use it."""
SOLVER_CHOICES = ("auto", "dpgd")
"""``solver``: ``"auto"`` uses the planning release's least-squares solution instead of DP-GD where the release
resolves the spectrum and predicts it better (module docstring, step 6); ``"dpgd"`` always trains by DP-GD."""
_SOLUTION_STATISTICS = ("second_moment_features", "feature_label_moment")


@functools.lru_cache(maxsize=16)
def _plan(n: int, d: int, epsilon: float, delta: float, schedule: str, label_noise: float) -> dict[str, Any]:
    """The planner's choice for the public model (a pure function of public numbers, hence cached)."""
    from privdyn.plan import dpgd

    plan = dpgd(n=n, d=d, spectrum="identity", target_norm=math.sqrt(1.0 - label_noise**2), label_noise=label_noise,
                epsilon=epsilon, delta=delta, schedules=AUTO_SCHEDULES if schedule == "auto" else (schedule,))
    record = _record(plan)
    record["planning_share"] = {"use": "planning: hyper-parameters from n, d and the public bounds only",
                                "zcdp": 0.0, "fraction": 0.0}
    return record


AUTO_SHARE = 0.1
"""``planning_share="auto"`` (the default) spends this fraction of the zCDP budget on the planning release: the
release whitens the rows and gives the planner the data's spectrum, target and residual (training keeps 90% of the
zCDP budget, so ρ is √0.9 ≈ 0.95 of what it would be without planning)."""
AUTO_MIN_ROWS = 100
"""``"auto"`` plans from the public bounds (no release) below this many rows, and when n <= d′: a release from so
few rows buys little, and the public-bound plan is then a pure function of public numbers (the same on every pair
of neighbouring datasets, which the audit of the public default relies on)."""


def _record(plan: Any) -> dict[str, Any]:
    return {"plan": {"hyperparameters": dict(plan.hyperparameters), "predicted_risk": plan.predicted_risk,
                     "inputs": dict(plan.inputs), "alternatives": [a.name for a in plan.alternatives],
                     "notes": list(plan.notes)},
            "learning_rate": plan.learning_rate, "clip": plan.clip, "rho": plan.rho,
            "statement": plan.privacy, "prediction": dict(plan.prediction)}


def _plan_with_share(features: np.ndarray, labels: np.ndarray, epsilon: float, delta: float, schedule: str,
                     share: float, rng: np.random.Generator, intercept: bool) -> dict[str, Any]:
    """The plan on second moments estimated under DP from ``share`` of the budget (rows in the ball √d')."""
    from privdyn.plan import dpgd

    plan = dpgd(data=(features, labels), planning_share=share, feature_norm_bound=math.sqrt(features.shape[1]),
                label_bound=1.0, epsilon=epsilon, delta=delta, rng=rng, intercept_column=intercept, precondition=True,
                data_checks=False,
                schedules=AUTO_SCHEDULES if schedule == "auto" else (schedule,))
    record = _record(plan)
    planning = plan.planning.to_json()
    record["planning_share"] = {
        "use": "planning: second moments of the preprocessed rows and labels estimated by Gaussian mechanisms",
        **{k: planning[k] for k in ("zcdp", "fraction", "mechanisms", "neighboring")}}
    record["feature_scale"] = plan.model.feature_scale
    record["preconditioner"] = plan.model.preconditioner
    record["release"] = plan.model.release
    record["residual_variance"] = plan.model.label_noise**2
    return record


def _second_release(release: Any, training_zcdp: float) -> Any:
    """The second release of S_xx and S_xy (the planning release's replace-one sensitivities), each given half of
    ``training_zcdp``: the :class:`~privdyn.privacy.mechanism.GaussianReleases` record, noise calibrated."""
    from privdyn.privacy.labels import NeighboringRelation
    from privdyn.privacy.mechanism import GaussianRelease, GaussianReleases

    return GaussianReleases(releases=tuple(
        GaussianRelease(sensitivity=release.sensitivities[k], noise_std=release.sensitivities[k],
                        neighboring=NeighboringRelation.REPLACE_ONE, statistic=k) for k in _SOLUTION_STATISTICS)
    ).calibrate_zcdp(training_zcdp)


def _combined_stds(release: Any, second: Any) -> dict[str, float]:
    """Noise std of each statistic once the two releases are averaged with inverse-variance weights."""
    return {r.statistic: (release.stds[r.statistic] ** -2 + r.noise_std**-2) ** -0.5 for r in second.releases}


def _release_solution_outlook(release: Any, rows: int, combined: dict[str, float],
                              residual_variance: float) -> tuple[float, float]:
    """(q, predicted excess) of the release solution, from the planning release alone (module docstring, step 6).

    q = τ_c/(λ̂_min − τ_1): the combined release's noise level τ_c = 2√d'·s_c over a lower confidence value of the
    smallest eigenvalue of S_xx (Weyl: the planning release moves each eigenvalue by at most its noise matrix's
    spectral norm, τ_1 = 2√d'·s_1, up to a tail of the semicircle); inf when that value is not positive. The
    excess is :func:`~privdyn.dynamics.ssp.ssp_excess_risk` plugging in the planning release, with the combined
    noise, plus least squares' own ζ²d'/(n − d' − 1) (labels over B, as the plan's prediction).
    """
    from privdyn.dynamics.ssp import ssp_excess_risk

    width = release.sxy.shape[0]
    key = "second_moment_features"
    lowest = float(np.linalg.eigvalsh(0.5 * (release.sxx + release.sxx.T))[0])
    lowest -= 2.0 * math.sqrt(width) * release.stds[key]
    q = 2.0 * math.sqrt(width) * combined[key] / lowest if lowest > 0 else math.inf
    risk = ssp_excess_risk(release.sxx, release.sxy, rows=rows, second_moment_std=combined[key],
                           moment_std=combined["feature_label_moment"], ridge=0.0)
    statistical = residual_variance * width / (rows - width - 1) if rows > width + 1 else math.inf
    return q, risk.excess + statistical


def _release_solution(features: np.ndarray, labels: np.ndarray, release: Any, second: Any,
                      rng: np.random.Generator) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """Draw the second release on the preprocessed rows and average it with the planning release (inverse-variance
    weights); returns (the second release by statistic, S̃_xx, S̃_xy, θ̂) with θ̂ = S̃_xx⁻¹S̃_xy on the eigenvalues
    raised to the noise level."""
    width = features.shape[1]
    stds = {r.statistic: r.noise_std for r in second.releases}
    upper = np.triu(rng.standard_normal((width, width))) * stds["second_moment_features"]
    sxx = features.T @ features + upper + np.triu(upper, 1).T
    sxy = features.T @ labels + stds["feature_label_moment"] * rng.standard_normal(width)
    averaged = []
    for key, first, again in (("second_moment_features", release.sxx, sxx), ("feature_label_moment", release.sxy, sxy)):
        w1, w2 = release.stds[key] ** -2, stds[key] ** -2
        averaged.append((w1 * first + w2 * again) / (w1 + w2))
    second_moment, moment = 0.5 * (averaged[0] + averaged[0].T), averaged[1]
    combined = _combined_stds(release, second)
    values, vectors = np.linalg.eigh(second_moment)
    floor = max(2.0 * math.sqrt(width) * combined["second_moment_features"], 1e-12 * float(values.max()))
    theta = vectors @ ((vectors.T @ moment) / np.maximum(values, floor))
    return {"second_moment_features": sxx, "feature_label_moment": sxy}, second_moment, moment, theta


def _prediction_in_label_units(prediction: Mapping[str, Any], label_bound: float,
                               public_model: bool) -> dict[str, Any]:
    """``prediction_``: the plan's prediction (labels divided by B) in the units of y²."""
    b2 = label_bound**2
    reasons = list(prediction["reasons"])
    label = prediction["label"]
    if public_model:
        label = "heuristic"
        reasons = ["the plan's model is public numbers only: rows isotropic at the norm bound, label noise "
                   "label_noise (default B/sqrt(2)); real rows are neither, so the prediction is a statement about "
                   "that model, not about the data (use planning_share for a prediction from the data)"]
    return {"excess_mse": b2 * prediction["excess_mse"], "test_mse": b2 * prediction["test_mse"],
            "interval": [b2 * v for v in prediction["interval"]], "label": label, "reasons": reasons}


class DPLinearRegression(PrivateLinearModel):
    """Differentially private least squares by one pass of clipped DP-GD (arXiv 2505.16329, Algorithm 1).

    Hyper-parameters (schedule, clip, step sizes, noise) come from the planner using only n, d and the public
    bounds, so tuning spends no privacy. See the module docstring for the steps of ``fit``.

    Args:
        epsilon: ε > 0 of the (ε, δ)-DP guarantee of the whole fit.
        delta: δ in (0, 1); None means 1/n^1.1 for the n training rows, chosen at fit and recorded in ``privacy_``.
        feature_norm: F > 0, a public bound on ‖x‖: every row is projected onto the ball ‖x‖ <= F. Required.
        label_bound: B > 0, a public bound on ``|y|``: every label is clipped to [−B, B]. Required.
        fit_intercept: learn an intercept, as the coefficient of a constant feature F/√d inside the ball.
        schedule: ``"auto"`` (the planner's best of the constant and polynomial learning rates,
            :data:`AUTO_SCHEDULES`) or one family (``"harmonic"`` only by name).
        label_noise: a public guess of the label-noise standard deviation, in the units of y, in (0, B); None
            means B/√2 (half the bounded second moment is noise). Only the planner reads it.
        planning_share: ``"auto"`` (the default: :data:`AUTO_SHARE` = 0.1 of the zCDP budget, or None when
            ``label_noise`` is given), None (plan from the public bounds only), or a fraction f in (0, 1) of the
            zCDP budget spent releasing the second moments of the preprocessed rows and labels by three Gaussian
            mechanisms (:mod:`privdyn.plan._data`; "auto" plans from the public bounds when n <= d' or n < 100,
            :data:`AUTO_MIN_ROWS`). With a
            share the rows are whitened by the released second moment and the planner plans on the release's
            spectrum, target and residual (:mod:`privdyn.plan._dpgd_data`); training gets the remaining (1 − f).
            Excludes ``label_noise``.
        solver: ``"auto"`` (the default: with a planning release, the release's least-squares solution replaces
            DP-GD where the release resolves the spectrum and predicts it more accurate; module docstring, step 6)
            or ``"dpgd"`` (always one pass of DP-GD). ``training_["solver"]`` says which ran.
        random_state: None (fresh entropy: the noise of a private release should not be reproducible by others),
            an int (reproducible, e.g. for tests), or a numpy Generator. It draws the order of the pass and the
            noise.

    Attributes:
        coef_: the private coefficients, shape ``(n_features_in_,)``.
        intercept_: the private intercept (0 without one).
        privacy_: the privacy spent, a :class:`~privdyn.privacy.PrivacyStatement` (the planner's statement of
            training and the planning share's Gaussian releases composed in zCDP), read as an object or as a
            mapping: ``epsilon``, ``delta`` (and ``delta_rule``), ``zcdp``, ``rho``, ``neighboring``
            (``replace_one``), ``guarantee`` (``bound``), ``shares`` (training, planning, preprocessing: what each
            used), the accountant, its assumptions, ``membership`` (the best membership test's true-positive rate
            at false-positive rates 0.001, 0.01 and 0.1 that the total zCDP allows) and the statement's text.
        plan_: the planner's hyper-parameters and its predicted excess risk: ``predicted_risk`` (in the normalized
            units, ½‖θ̃ − θ̃*‖²) and ``predicted_excess_mse`` (in the units of y², 2B²·predicted_risk), and
            ``planning_share`` (the share spent; None: public bounds only).
        prediction_: the planner's prediction in the units of y²: ``excess_mse`` (excess test MSE over the best
            linear predictor), ``test_mse`` (excess plus the model's residual variance), ``interval`` (the model's
            own uncertainty), ``label`` (``model`` or ``heuristic``) and ``reasons`` (the assumptions that failed or
            were not checked). Without a planning share the label is ``heuristic``: the model is the public bounds'.
        training_: what training ran with (read-only; public numbers or functions of the released plan):
            ``solver`` (``"dpgd"`` or ``"release"``), ``hyperparameters`` (the
            :class:`~privdyn.algorithms.dpgd.DPGDHyperparameters` (c, η̃, ρ) given to
            Algorithm 1), ``n`` (rows), ``width`` (d', columns of the preprocessed rows), ``preconditioner`` (P, see
            :meth:`training_schedule`), ``feature_scale`` (s, the
            rows' factor after projection) and ``label_scale`` (B, the labels' divisor after clipping). The
            per-step numbers are given by :meth:`training_schedule`. With ``solver == "release"``,
            ``hyperparameters`` and ``preconditioner`` are None, ``noise_std`` gives the second release's noise by
            statistic and ``second_release`` the second release itself (S_xx + E and S_xy + e of the preprocessed
            rows, a Gaussian release the statement accounts for).
        n_features_in_, feature_names_in_: as in scikit-learn.

    Raises (in ``fit``, before any privacy is spent):
        ValueError: epsilon <= 0; delta outside (0, 1); feature_norm or label_bound missing or <= 0; NaN or infinite
            features or labels; fewer than 2 rows; more columns than :data:`~privdyn.sklearn._base.MAX_FEATURES`;
            label_noise outside (0, label_bound); an unknown schedule; sample weights.

    A search over private fits (``GridSearchCV``, cross-validation) composes privacy: each fit on the same rows
    spends its own (ε, δ), and choosing among them by a score on private data spends more. Search over public
    data, or account for k fits as k compositions.
    """

    def __init__(self, epsilon: float = 1.0, delta: float | None = None, *, feature_norm: float | None = None,
                 label_bound: float | None = None, fit_intercept: bool = True, schedule: str = "auto",
                 label_noise: float | None = None, planning_share: float | str | None = "auto",
                 solver: str = "auto",
                 random_state: int | np.random.Generator | np.random.RandomState | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.feature_norm = feature_norm
        self.label_bound = label_bound
        self.fit_intercept = fit_intercept
        self.schedule = schedule
        self.label_noise = label_noise
        self.planning_share = planning_share
        self.solver = solver
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> DPLinearRegression:
        """Fit privately (one pass of clipped DP-GD); returns self. ``sample_weight`` must be None."""
        from privdyn.algorithms.dpgd import DPGDHyperparameters, dpgd
        from privdyn.privacy.mechanism import OnePassDPGDMechanism
        from privdyn.schedules import OutsideTheoryWarning

        epsilon, feature_norm, label_bound = self._check_parameters()
        _check.one_of(SCHEDULE_CHOICES, schedule=self.schedule)
        _check.one_of(SOLVER_CHOICES, solver=self.solver)
        noise = label_bound / math.sqrt(2.0) if self.label_noise is None else self.label_noise
        _check.scalar(label_noise=noise)
        _check.in_range(0.0, label_bound, closed="neither", label_noise=noise)
        if isinstance(self.planning_share, str) and self.planning_share != "auto":
            raise ValueError("planning_share must be 'auto', None or a number in (0, 1); got "
                             f"planning_share={self.planning_share!r}.")
        if self.planning_share is not None and self.planning_share != "auto":
            _check.scalar(planning_share=self.planning_share)
            _check.in_range(0.0, 1.0, closed="neither", planning_share=self.planning_share)
        if self.planning_share is not None and self.planning_share != "auto":
            if self.label_noise is not None:
                raise ValueError("label_noise must be None with planning_share: the label noise is then estimated "
                                 f"under DP; got label_noise={self.label_noise!r}, "
                                 f"planning_share={self.planning_share!r}.")
        rng = generator_from(self.random_state)
        X, y = self._check_data(X, y, sample_weight)
        n = X.shape[0]
        delta, delta_rule = self._delta(n)

        prep = Preprocessed(X, y, feature_norm=feature_norm, label_bound=label_bound,
                            fit_intercept=self.fit_intercept)
        width = prep.features.shape[1]
        scale = math.sqrt(width) / prep.radius
        share = self.planning_share
        if isinstance(share, str):  # "auto", checked above: the share unless the user gave a label-noise guess
            share = AUTO_SHARE if self.label_noise is None and n > width and n >= AUTO_MIN_ROWS else None
        if share is None:
            planned = copy.deepcopy(_plan(n, width, epsilon, delta, self.schedule, float(noise) / label_bound))
        else:
            planned = _plan_with_share(prep.features * scale, prep.labels / label_bound, epsilon, delta,
                                       self.schedule, float(share), rng, self.fit_intercept)
            if self.solver == "auto" and self._fit_release_solution(prep, planned, scale, epsilon, delta, delta_rule,
                                                                    rng):
                return self
            scale *= planned["feature_scale"]
        preconditioner = planned.get("preconditioner")
        if preconditioner is not None and preconditioner.shape == (1, 1):  # a scalar: folded into the scale
            scale *= float(preconditioner[0, 0])
            preconditioner = None
        order = rng.permutation(n)  # data-independent: drawn apart from the data
        features = prep.features[order]  # the pass's order, rescaled in place (one copy of the rows)
        if preconditioner is not None:
            features = features @ preconditioner
        features *= scale
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OutsideTheoryWarning)
            theta = dpgd(features, prep.labels[order] / label_bound, clip=planned["clip"],
                         learning_rate=planned["learning_rate"], rho=planned["rho"], rng=rng)
        if preconditioner is not None:
            theta = preconditioner @ theta
        self._set_coefficients(theta, prep, label_bound * scale)
        self.training_ = {"hyperparameters": DPGDHyperparameters(clip=planned["clip"],
                                                                 learning_rate=planned["learning_rate"],
                                                                 rho=planned["rho"]),
                          "n": n, "width": width, "feature_scale": scale, "label_scale": label_bound,
                          "preconditioner": preconditioner, "solver": "dpgd"}

        statement = planned["statement"]
        assert statement.zcdp is not None and statement.training_zcdp is not None  # a zCDP statement
        self.plan_ = {**planned["plan"],
                      "predicted_excess_mse": 2.0 * label_bound**2 * planned["plan"]["predicted_risk"],
                      "feature_scale": scale, "label_scale": label_bound, "planning_share": share,
                      "solver": "dpgd", "release_solution": planned.get("release_solution")}
        self.prediction_ = _prediction_in_label_units(planned["prediction"], label_bound, share is None)
        shares = [
            {"use": "training: one pass of clipped DP-GD (Algorithm 1), noise calibrated by Proposition 4.1",
             "zcdp": statement.training_zcdp, "fraction": statement.training_zcdp / statement.zcdp},
            planned["planning_share"],
            prep.share()]
        hyper = self.training_["hyperparameters"]
        record = OnePassDPGDMechanism(step_sizes=hyper.step_sizes(n), noise_multipliers=hyper.noise_multipliers(n))
        self.privacy_ = dataclasses.replace(
            statement, unit="one row (x, y) of the training set",
            released="coef_ and intercept_ (the final iterate only)",
            cross_checks={**statement.cross_checks, "training_zcdp_of_the_record": record.zcdp},
            extra={**statement.extra, "requested_epsilon": epsilon, "delta_rule": delta_rule, "shares": shares})
        return self

    def _fit_release_solution(self, prep: Preprocessed, planned: dict[str, Any], scale: float, epsilon: float,
                              delta: float, delta_rule: str, rng: np.random.Generator) -> bool:
        """Step 6 of the module docstring: fit by the release's least-squares solution when the planning release
        resolves the spectrum and predicts it better than the DP-GD plan; returns whether it did (False: nothing
        drawn, nothing set; ``planned["release_solution"]`` records the outlook either way)."""
        from privdyn.dynamics.ssp import RESOLVED_RATIO, ssp_prediction
        from privdyn.plan import zcdp_statement
        from privdyn.privacy.labels import NeighboringRelation
        from privdyn.privacy.mechanism import GaussianRelease, GaussianReleases

        label_bound = prep.label_bound
        release, statement = planned["release"], planned["statement"]
        n, width = prep.features.shape
        second = _second_release(release, statement.training_zcdp)
        combined = _combined_stds(release, second)
        q, outlook = _release_solution_outlook(release, n, combined, planned["residual_variance"])
        dpgd_outlook = planned["prediction"]["excess_mse"]
        chosen = q <= RESOLVED_RATIO and outlook <= dpgd_outlook
        planned["release_solution"] = {"perturbation_ratio": q, "predicted_excess_mse": label_bound**2 * outlook,
                                       "dpgd_predicted_excess_mse": label_bound**2 * dpgd_outlook, "chosen": chosen}
        if not chosen:
            return False
        drawn, second_moment, moment, theta = _release_solution(prep.features * scale, prep.labels / label_bound,
                                                                release, second, rng)
        self._set_coefficients(theta, prep, label_bound * scale)
        prediction = ssp_prediction(second_moment, moment, rows=n, second_moment_std=combined["second_moment_features"],
                                    moment_std=combined["feature_label_moment"], ridge=0.0, rng=rng,
                                    residual_variance=planned["residual_variance"])
        self.prediction_ = _prediction_in_label_units(prediction, label_bound, public_model=False)
        self.training_ = {"solver": "release", "hyperparameters": None, "n": n, "width": width,
                          "feature_scale": scale, "label_scale": label_bound, "preconditioner": None,
                          "noise_std": {r.statistic: r.noise_std for r in second.releases},
                          "second_release": drawn}
        self.plan_ = {**planned["plan"], "predicted_excess_mse": self.prediction_["excess_mse"],
                      "feature_scale": scale, "label_scale": label_bound, "planning_share": planned["planning_share"]
                      ["fraction"], "solver": "release", "release_solution": planned["release_solution"]}
        planning = tuple(GaussianRelease(sensitivity=release.sensitivities[k], noise_std=release.stds[k],
                                         neighboring=NeighboringRelation.REPLACE_ONE, statistic=k)
                         for k in release.stds)
        releases = GaussianReleases(releases=planning + second.releases)
        shares = [
            {"use": "training: a second Gaussian release of S_xx and S_xy, averaged with the planning release; "
                    "coef_ is its least-squares solution (post-processing)",
             "zcdp": statement.training_zcdp, "fraction": statement.training_zcdp / statement.zcdp,
             "mechanisms": [{"statistic": r.statistic, "sensitivity": r.sensitivity, "noise_std": r.noise_std,
                             "zcdp": r.zcdp} for r in second.releases]},
            planned["planning_share"],
            prep.share()]
        total = zcdp_statement(
            total_zcdp=statement.zcdp, training_zcdp=statement.training_zcdp, delta=delta,
            unit="one row (x, y) of the training set", neighboring=NeighboringRelation.REPLACE_ONE,
            sampler="full_batch",
            released=("coef_ and intercept_ (the least-squares solution of the averaged release) and the second "
                      "release itself (training_['second_release'])"),
            accountant=("five Gaussian mechanisms (the planning release's three, the second release's two; Bun & "
                        "Steinke 2016, arXiv 1605.02065, Proposition 1.6) composed in zCDP"),
            planning=statement.planning,
            assumptions=(f"rows projected onto ||x|| <= {prep.radius:g} (intercept column included) and labels "
                         f"clipped to [-{label_bound:g}, {label_bound:g}] before the releases",
                         "the choice of the release solution depends on the planning release and public numbers "
                         "only (adaptive composition)"),
            extra={"requested_epsilon": epsilon, "delta_rule": delta_rule, "mu": releases.mu, "shares": shares},
            membership=releases.membership())
        self.privacy_ = dataclasses.replace(total, cross_checks={
            **total.cross_checks, "zcdp_of_the_releases": releases.zcdp,
            "epsilon_exact_gaussian_composition": float(releases.privacy_loss(delta).value)})
        return True

    def training_schedule(self) -> dict[str, np.ndarray | float]:
        """The per-step schedule the fit ran (read-only), computed from ``training_`` by the functions
        :func:`~privdyn.algorithms.dpgd.dpgd` itself calls, so the numbers are the run's.

        Returns:
            A dict with ``step_sizes`` (n,): the uncapped η_k = η̃(k/n)/n (each capped at 2/‖z_k‖² at run time);
            ``noise_std`` (n,): 2·C_clip·σ_k, the standard deviation of step k's noise, with σ_k from Proposition
            4.1's calibration (eq. 4.2: ρ²σ_k² = η_k² − η_{k+1}², ρ²σ_n² = η_n²); ``clip_threshold``: C_clip = c·√d';
            ``feature_scale`` and ``label_scale``: the training rows are s·P·(projected row) and the labels
            (clipped label)/B; ``preconditioner``: P, the (d', d') whitening of the planning release, or None (no
            release, or d' = 1, where P is a number folded into ``feature_scale``).
        """
        check_is_fitted(self, "training_")
        if self.training_["solver"] != "dpgd":
            raise ValueError("training_schedule is DP-GD's; this fit used the planning release's least-squares "
                             "solution (training_['solver'] == 'release'), which has no schedule. Pass "
                             "solver='dpgd' to always train by DP-GD.")
        hyper, n = self.training_["hyperparameters"], self.training_["n"]
        clip_threshold = hyper.clip_threshold(self.training_["width"])
        return {"step_sizes": hyper.step_sizes(n), "noise_std": hyper.noise_stds(n, self.training_["width"]),
                "clip_threshold": clip_threshold, "feature_scale": self.training_["feature_scale"],
                "label_scale": self.training_["label_scale"], "preconditioner": self.training_["preconditioner"]}
