"""AdaSSPRegression: sufficient-statistics perturbation with an adaptive ridge (Wang 2018, arXiv 1803.02596).

Algorithm 2 (AdaSSP) of Yu-Xiang Wang, "Revisiting differentially private linear regression: optimal and adaptive
prediction & estimation in unbounded domain" (UAI 2018, arXiv 1803.02596), on rows projected onto the public ball
of radius R and labels clipped to [−B, B] (:class:`~privdyn.sklearn._base.Preprocessed`; the intercept is a constant
column inside the ball). Three Gaussian releases, each with a third of the zCDP budget:

1. λ̃_min = max(λ_min(XᵀX) + s₁Z − s₁√(2 ln(3/p)), 0): the smallest eigenvalue, shifted down so that it is below the
   true one with probability >= 1 − p/3 (Gaussian tail bound);
2. the ridge λ = max(0, s₂√(d ln(2d²/p)) − λ̃_min), Wang's choice of λ with his noise scale replaced by s₂;
3. XᵀX + s₂E (E symmetric, its upper triangle i.i.d. N(0, 1)) and Xᵀy + s₃z;

and θ̂ = (XᵀX + s₂E + λI)⁻¹(Xᵀy + s₃z). p is ``failure_probability`` (Wang's ρ, default 0.05).

**Calibration in zCDP, replace-one neighbours** (the relation of :class:`~privdyn.sklearn.DPLinearRegression`).
Replacing a row x by x′ (‖x‖, ‖x′‖ <= R, ``|y|``, ``|y′|`` <= B) moves λ_min(XᵀX) by at most R² (Weyl's inequality), the
upper triangle of XᵀX by at most ‖xxᵀ − x′x′ᵀ‖_F <= √2·R² and Xᵀy by at most 2RB. A Gaussian mechanism of L2
sensitivity Δ and noise std s is Δ²/(2s²)-zCDP (Bun & Steinke 2016, arXiv 1605.02065, Proposition 1.6), so
s_j = Δ_j/√(2·zcdp/3), and the three compose to zcdp (Lemma 2.3 there); the total zcdp is the largest whose
(ε, δ) is at most the requested ε by both the optimal conversion and dp-accounting's
(:func:`privdyn.plan.zcdp_for_epsilon`); the noise is set by the releases' record,
:meth:`privdyn.privacy.mechanism.GaussianReleases.calibrate_zcdp`. Wang's own calibration,
s = √(ln(6/δ))·Δ/(ε/3) under add/remove neighbours, is the classical Gaussian mechanism's, which holds only for
ε/3 <= 1; the zCDP calibration holds at every ε. The guarantee is exact composition of Gaussian mechanisms
converted to (ε, δ) by an upper bound: label ``bound``. The releases compose to a Gaussian mechanism of
μ² = Σ (Δ_j/s_j)² (Dong, Roth & Su 2022, Corollary 3.3), so ``privacy_`` states the best membership test's rate by
the exact Gaussian trade-off, and its ``cross_checks`` the exact composition's ε at the same noise (smaller than
the reported zCDP ε; the noise stays calibrated in zCDP so that the published numbers do not change).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.sklearn._base import Preprocessed, PrivateLinearModel, generator_from

__all__ = ["AdaSSPRegression"]

_ACCOUNTANT = ("three Gaussian mechanisms (Bun & Steinke 2016, arXiv 1605.02065, Proposition 1.6) composed in zCDP; "
               "AdaSSP of Wang 2018 (arXiv 1803.02596, Algorithm 2)")


def _prediction(gram: np.ndarray, moment: np.ndarray, *, rows: int, second_moment_std: float, moment_std: float,
                ridge: float, rng: np.random.Generator) -> dict[str, Any]:
    """``prediction_``: the first-order excess risk of the fit over least squares (:mod:`privdyn.dynamics.ssp`),
    from the released statistics only (post-processing)."""
    from privdyn.dynamics.ssp import ssp_prediction

    prediction = ssp_prediction(gram, moment, rows=rows, second_moment_std=second_moment_std, moment_std=moment_std,
                                ridge=ridge, rng=rng)
    return {key: prediction[key] for key in ("excess_mse", "test_mse", "interval", "label", "reasons")}


class AdaSSPRegression(PrivateLinearModel):
    """Differentially private ridge regression by AdaSSP (Wang 2018, arXiv 1803.02596, Algorithm 2), zCDP-calibrated.

    Args:
        epsilon: ε > 0 of the (ε, δ)-DP guarantee of the whole fit.
        delta: δ in (0, 1); None means 1/n^1.1 for the n training rows, chosen at fit and recorded in ``privacy_``.
        feature_norm: F > 0, a public bound on ‖x‖ (rows are projected onto the ball). Required.
        label_bound: B > 0, a public bound on ``|y|`` (labels are clipped). Required.
        fit_intercept: learn an intercept, as the coefficient of a constant feature F/√d inside the ball.
        failure_probability: p in (0, 1), the probability allowed for the ridge to be too small (Wang's ρ).
        random_state: None (fresh entropy), an int (reproducible) or a numpy Generator: draws the noise.

    Attributes:
        coef_, intercept_, n_features_in_, feature_names_in_: as in scikit-learn.
        ridge_: the ridge λ used (a function of the released λ̃_min: public).
        prediction_: the fit's predicted excess test MSE, in the units of y² (:mod:`privdyn.dynamics.ssp`, from
            the released XᵀX and Xᵀy, post-processing): ``excess_mse`` (over least squares fitted on the same
            rows: the ridge's bias and the release noise, to first order), ``test_mse`` (None: AdaSSP releases no
            label second moment, so the residual variance is unknown), ``interval`` (the plug-in's spread over
            redraws of the release noise), ``label`` (``model`` when the release resolves every eigenvalue,
            noise spectral norm at most a quarter of the smallest eigenvalue plus the ridge; else ``heuristic``)
            and ``reasons``.
        privacy_: the :class:`~privdyn.privacy.PrivacyStatement` of the fit, built from its
            :class:`~privdyn.privacy.mechanism.GaussianReleases` record, read as an object or as a mapping:
            ``epsilon``, ``delta`` (and ``delta_rule``), ``zcdp``, ``neighboring`` (``replace_one``), ``guarantee``
            (``bound``), ``shares`` (each Gaussian release with its sensitivity, noise std and zCDP), ``mu`` (the
            composition's Gaussian-DP parameter) and ``membership``: the best membership test's true-positive rate
            at false-positive rates 0.001, 0.01 and 0.1, exact (the releases compose to a Gaussian mechanism).
            ``cross_checks`` hold dp-accounting's ε of the zCDP and the exact composition's ε at the same noise.

    Raises (in ``fit``, before any privacy is spent): as :class:`~privdyn.sklearn.DPLinearRegression`, and for
    failure_probability outside (0, 1).
    """

    def __init__(self, epsilon: float = 1.0, delta: float | None = None, *, feature_norm: float | None = None,
                 label_bound: float | None = None, fit_intercept: bool = True, failure_probability: float = 0.05,
                 random_state: int | np.random.Generator | np.random.RandomState | None = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.feature_norm = feature_norm
        self.label_bound = label_bound
        self.fit_intercept = fit_intercept
        self.failure_probability = failure_probability
        self.random_state = random_state

    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> AdaSSPRegression:
        """Fit privately (three Gaussian releases of sufficient statistics); returns self."""
        from privdyn.plan import zcdp_for_epsilon, zcdp_statement
        from privdyn.privacy.labels import NeighboringRelation
        from privdyn.privacy.mechanism import GaussianRelease, GaussianReleases
        from privdyn.privacy.statement import PlanningShare

        epsilon, feature_norm, label_bound = self._check_parameters()
        _check.scalar(failure_probability=self.failure_probability)
        _check.in_range(0.0, 1.0, closed="neither", failure_probability=self.failure_probability)
        p = float(self.failure_probability)
        rng = generator_from(self.random_state)
        X, y = self._check_data(X, y, sample_weight)
        n = X.shape[0]
        delta, delta_rule = self._delta(n)
        zcdp = zcdp_for_epsilon(epsilon, delta)

        prep = Preprocessed(X, y, feature_norm=feature_norm, label_bound=label_bound,
                            fit_intercept=self.fit_intercept)
        x, labels, radius = prep.features, prep.labels, prep.radius
        d = x.shape[1]
        sensitivities = {"min_eigenvalue": radius**2, "second_moment_features": math.sqrt(2.0) * radius**2,
                         "feature_label_moment": 2.0 * radius * label_bound}
        releases = GaussianReleases(releases=tuple(
            GaussianRelease(sensitivity=v, noise_std=v, neighboring=NeighboringRelation.REPLACE_ONE, statistic=k)
            for k, v in sensitivities.items())).calibrate_zcdp(zcdp)
        stds = {r.statistic: r.noise_std for r in releases.releases}

        gram = x.T @ x
        lowest = float(np.linalg.eigvalsh(gram)[0])
        s1, s2, s3 = stds["min_eigenvalue"], stds["second_moment_features"], stds["feature_label_moment"]
        lowest_private = max(lowest + s1 * float(rng.standard_normal()) - s1 * math.sqrt(2.0 * math.log(3.0 / p)),
                             0.0)
        ridge = max(0.0, s2 * math.sqrt(d * math.log(2.0 * d * d / p)) - lowest_private)
        upper = np.triu(rng.standard_normal((d, d)))
        gram_private = gram + s2 * (upper + np.triu(upper, 1).T)
        moment_private = x.T @ labels + s3 * rng.standard_normal(d)
        system = gram_private + ridge * np.eye(d)
        try:
            theta = np.linalg.solve(system, moment_private)
        except np.linalg.LinAlgError:
            theta = np.linalg.lstsq(system, moment_private, rcond=None)[0]
        self._set_coefficients(theta, prep, 1.0)
        self.ridge_ = ridge
        self.prediction_ = _prediction(gram_private, moment_private, rows=n, second_moment_std=s2, moment_std=s3,
                                       ridge=ridge, rng=rng)

        each = zcdp / len(releases.releases)
        shares: list[dict[str, Any]] = [
            {"use": f"Gaussian release of the {r.statistic.replace('_', ' ')}", "sensitivity": r.sensitivity,
             "noise_std": r.noise_std, "zcdp": each, "fraction": 1.0 / 3.0} for r in releases.releases]
        shares.append(prep.share())
        statement = zcdp_statement(
            total_zcdp=zcdp, training_zcdp=zcdp, delta=delta, unit="one row (x, y) of the training set",
            neighboring=NeighboringRelation.REPLACE_ONE, sampler="full_batch",
            released="coef_ and intercept_ (and ridge_, a function of the released minimum eigenvalue)",
            accountant=_ACCOUNTANT, planning=PlanningShare(),
            assumptions=(f"rows projected onto ||x|| <= {radius:g} (intercept column included) and labels clipped to "
                         f"[-{label_bound:g}, {label_bound:g}] before the releases",
                         "the bounds and failure_probability do not depend on the private data"),
            extra={"requested_epsilon": epsilon, "delta_rule": delta_rule, "mu": releases.mu, "shares": shares},
            membership=releases.membership())
        exact = float(releases.privacy_loss(delta).value)
        self.privacy_ = dataclasses.replace(
            statement, cross_checks={**statement.cross_checks, "epsilon_exact_gaussian_composition": exact})
        return self
