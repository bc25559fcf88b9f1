"""Audit rows for the user-facing estimators and the planner: what a fitted object reports against its canary runs.

Each row fits (or plans) the user-facing object once on a small public setup and reports the epsilon the object
itself reports (``privacy_["epsilon"]`` of the fitted estimator, ``plan.privacy.epsilon`` of the plan) with its
guarantee label. The runs use a reduction whose privacy-relevant numbers (step sizes, noise standard deviations,
clip, preprocessing scales) are read from the fitted object, never recomputed from the accountant's formulas; the
tests check that the reduction reproduces the object's own computation on the same noise.

* ``sklearn-dplinearregression``: :class:`privdyn.sklearn.DPLinearRegression` (one pass of clipped DP-GD, Bombari
  et al., arXiv 2505.16329, Algorithm 1, with the planner's hyper-parameters) on n one-dimensional rows without an
  intercept: the canary row sits at the public bounds (x = F, y = -B on D, y = +B on D') and every other row is
  x = 0, y = 0 (zero gradient). After the estimator's preprocessing the canary is z = s F = 1, y~ = -+1; its
  gradient at theta_0 = 0 has norm 1 > C_clip, so both are clipped and differ by 2 C_clip, the sensitivity
  Proposition 4.1 assumes. The reduction runs Algorithm 1 in d = 1 with the canary first and the fitted estimator's
  step sizes, noise standard deviations and clip (:meth:`~privdyn.sklearn.DPLinearRegression.training_schedule`);
  theta_n is then N(-+ eta_1 C_clip, sum_k noise_std_k^2), a Gaussian shift of eta_1 / sqrt(sum_k sigma_k^2) = rho
  (eq. 4.2), the level Proposition 4.1 bounds. Under the noise-optimal calibration every position of the canary in
  the pass has that shift (while the step is not capped); the first one makes the law exactly Gaussian (no noise
  enters the canary's residual).
* ``sklearn-adassp``: :class:`privdyn.sklearn.AdaSSPRegression` (Wang 2018, arXiv 1803.02596, Algorithm 2)
  releases lambda_min(X^T X) + s1 Z, the upper triangle of X^T X + s2 E and X^T y + s3 z; theta and the ridge are
  post-processing of them. In d = 2 without intercept, n = 2: D = {(F e1, B), (F e1, 0)}, D' replaces the canary
  by (F e2, -B). Then lambda_min moves by F^2 (its sensitivity), the upper triangle by sqrt(2) F^2 (its
  sensitivity) and X^T y by sqrt(2) F B (of the sensitivity 2 F B: no single replacement attains all three; the
  pair's squared whitened shift is 5/6 of the sum the accountant composes). The releases are Gaussian with the same
  covariance on D and D', so the Neyman-Pearson score is the projection on the whitened mean shift w, a
  one-dimensional Gaussian shift of ||w||; the means are the statistics of the preprocessed canary pair, the
  standard deviations those the fitted estimator records in ``privacy_["shares"]`` (the ones its fit drew with).
* ``plan-dpgd``: the plan :func:`privdyn.plan.dpgd` returns for a public model, run as Algorithm 1 on the same
  one-dimensional canary as the ``dpgd`` row (x = 1, y = -+5, the rest at x = 0) with the plan's clip, learning
  rate and rho; reported: the plan's own statement.
* ``plan-dpsgd``: the plan of :func:`privdyn.plan.dpsgd` (independent noise, Poisson sampling, add-remove) run on the
  registered DP-SGD canary row of its sampler and relation with the plan's noise multiplier and sizes (threshold
  test).
* ``plan-langevin``: the plan of :func:`privdyn.plan.langevin` for the unit quadratic in d = 1, run as the
  ``langevin-quadratic`` row (noisy GD itself) with the plan's step size, noise scale and steps (exact Gaussian law).
* ``sklearn-dplinearregression-planning-share``: :class:`privdyn.sklearn.DPLinearRegression` with
  ``planning_share``: its three Gaussian planning releases and theta_n on the label canary, one Gaussian shift of
  sqrt(||w||^2 + rho^2) (:class:`DPLinearRegressionPlanningShareCanary`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from privdyn.audit.base import GaussianLaw, Mechanism, _generators
from privdyn.privacy.labels import PrivacyLoss

if TYPE_CHECKING:
    from privdyn.audit.mechanisms import DPSGDCanary, LangevinQuadratic
    from privdyn.plan._dpgd import DPGDPlan
    from privdyn.plan._dpsgd import DPSGDPlan
    from privdyn.plan._hsgd import HSGDPlan
    from privdyn.plan._langevin import LangevinPlan
    from privdyn.sklearn import AdaSSPRegression, DPLinearRegression

__all__ = ["AdaSSPCanary", "DPLinearRegressionCanary", "DPLinearRegressionPlanningShareCanary", "PlanDPGDCanary",
           "PlanDPSGDCanary", "PlanHSGDCanary", "PlanLangevinCanary"]


def _loss(value: float, guarantee: str, neighboring: str, source: str) -> PrivacyLoss:
    return PrivacyLoss(value=float(value), guarantee=guarantee, quantity="epsilon",  # type: ignore[arg-type]
                       neighboring=neighboring, source=source)  # type: ignore[arg-type]


def _privacy_loss(privacy: Mapping[str, Any], delta: float, source: str) -> PrivacyLoss:
    """A fitted estimator's own ``privacy_`` as a PrivacyLoss (refuses an estimator fitted at another delta)."""
    if privacy["delta"] != delta:
        raise AssertionError(f"the estimator reports delta={privacy['delta']!r}, not the audited {delta!r}")
    return _loss(privacy["epsilon"], privacy["guarantee"], privacy["neighboring"], f"{source}: {privacy['accountant']}")


def _statement_loss(statement: Any, delta: float, family: str) -> PrivacyLoss:
    """The plan's own (epsilon, delta) statement as a PrivacyLoss (refuses a plan stated at another delta)."""
    if statement.delta != delta:
        raise AssertionError(f"the plan reports delta={statement.delta!r}, not the audited {delta!r}")
    if statement.epsilon is None:
        raise AssertionError("the plan states no epsilon; the audited plan is made with an (epsilon, delta) budget")
    return _loss(statement.epsilon, statement.guarantee, statement.neighboring,
                 f"privdyn.plan.{family}(...).privacy: {statement.accountant}")


# ---------------------------------------------------------------------------------------------------------------
# one-pass clipped DP-GD: the estimator and the plan
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DPGDReduction:
    """Algorithm 1 in d = 1 on a canary pair, with the schedule of a fitted object.

    Attributes:
        features: (n,) the rows as the algorithm sees them, in the order of the pass.
        labels, neighbour_labels: (n,) the labels on D and on D' (they differ at the canary only).
        step_sizes: (n,) the uncapped eta_k the object ran with.
        noise_std: (n,) the standard deviation of step k's noise (2 C_clip sigma_k) the object ran with.
        clip_threshold: C_clip.
    """

    features: np.ndarray
    labels: np.ndarray
    neighbour_labels: np.ndarray
    step_sizes: np.ndarray
    noise_std: np.ndarray
    clip_threshold: float

    def run(self, labels: np.ndarray, noise: np.ndarray, noise_factor: float = 1.0) -> np.ndarray:
        """theta_n for standard normal ``noise`` of shape (runs, n), the noise scaled by ``noise_factor``."""
        from privdyn.audit.mechanisms import _dpgd_one_dimensional  # imported here: mechanisms registers this module

        return _dpgd_one_dimensional(self.features, labels, self.step_sizes, self.noise_std * noise_factor,
                                     self.clip_threshold, noise)

    def gaussian_law(self, noise_factor: float) -> GaussianLaw:
        """Propagate Algorithm 1's update (mean and variance of theta_k): theta_k = theta_{k-1} - etabar_k gbar_k +
        noise_std_k b_k. Only a row with x_k != 0 moves the mean, and it must come first, while the iterate is still
        deterministic (then its clipped gradient is a number, and the law stays Gaussian)."""
        means = []
        for labels in (self.labels, self.neighbour_labels):
            mean, variance = 0.0, 0.0
            for k in range(self.features.size):
                x = float(self.features[k])
                if x != 0.0:
                    if variance != 0.0:
                        raise ValueError("the canary reduction needs every row with x != 0 before any noise; got a "
                                         f"non-zero feature at step {k} after noise was added.")
                    gradient = (x * mean - float(labels[k])) * x
                    norm = abs(gradient)
                    clipped = gradient * (self.clip_threshold / norm) if norm > self.clip_threshold else gradient
                    mean -= min(float(self.step_sizes[k]), 2.0 / x**2) * clipped
                variance += (float(self.noise_std[k]) * noise_factor) ** 2
            means.append(mean)
        return GaussianLaw(mean=means[0], neighbour_mean=means[1], std=math.sqrt(variance))

    def clipping_is_active(self) -> bool:
        """Whether both canary gradients at theta_0 = 0 exceed C_clip (then they differ by exactly 2 C_clip)."""
        x = float(self.features[0])
        return min(abs(float(self.labels[0]) * x), abs(float(self.neighbour_labels[0]) * x)) > self.clip_threshold


@dataclasses.dataclass(frozen=True, kw_only=True)
class _DPGDRow(Mechanism):
    """A row whose runs are :class:`DPGDReduction` (subclasses give :meth:`reduction` and :meth:`reported`)."""

    def reduction(self) -> DPGDReduction:
        raise NotImplementedError

    def _checked_reduction(self) -> DPGDReduction:
        reduction = self.reduction()
        if not reduction.clipping_is_active():
            raise ValueError(f"{self.name}: the canary's gradients are not clipped (C_clip = "
                             f"{reduction.clip_threshold:g}), so the pair does not attain the sensitivity 2 C_clip; "
                             "choose a setting with clip below the canary's gradient norm.")
        return reduction

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        reduction = self._checked_reduction()
        outputs = []
        for labels, gen in zip((reduction.labels, reduction.neighbour_labels), _generators(seed, unit_key),
                               strict=True):
            outputs.append(reduction.run(labels, gen.standard_normal((runs, reduction.features.size)),
                                         self.noise_factor))
        return outputs[0], outputs[1]

    def gaussian_law(self) -> GaussianLaw:
        """The law of theta_n on D and D' (:meth:`DPGDReduction.gaussian_law`), with the noise the runs use."""
        return self._checked_reduction().gaussian_law(self.noise_factor)


@functools.lru_cache(maxsize=8)
def _fitted_regression(setting: DPLinearRegressionCanary) -> Any:
    """The estimator fitted once per setting on D (the schedule uses only public numbers: the same on D')."""
    from privdyn.sklearn import DPLinearRegression

    features, labels, _ = setting.data()
    estimator = DPLinearRegression(epsilon=setting.epsilon, delta=setting.delta, feature_norm=setting.feature_norm,
                                   label_bound=setting.label_bound, fit_intercept=False,
                                   random_state=setting.fit_seed)
    return estimator.fit(features, labels)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPLinearRegressionCanary(_DPGDRow):
    """:class:`privdyn.sklearn.DPLinearRegression` on its canary pair (module docstring); the runs use the fitted
    estimator's schedule and preprocessing scales, the reported epsilon is its ``privacy_``."""

    name: ClassVar[str] = "sklearn-dplinearregression"
    description: ClassVar[str] = ("sklearn DPLinearRegression (planned one-pass DP-GD), canary at the public bounds: "
                                  "the fitted estimator's privacy_")

    n: int = 20
    epsilon: float = 2.0
    feature_norm: float = 2.0
    label_bound: float = 3.0
    fit_seed: int = 0

    def data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(X, y on D, y on D'): the canary is row 0 at ``|x| = feature_norm``, ``y = -+label_bound``; the rest 0."""
        features = np.zeros((self.n, 1))
        features[0, 0] = self.feature_norm
        labels, neighbour_labels = np.zeros(self.n), np.zeros(self.n)
        labels[0], neighbour_labels[0] = -self.label_bound, self.label_bound
        return features, labels, neighbour_labels

    def fitted(self) -> DPLinearRegression:
        """The fitted :class:`~privdyn.sklearn.DPLinearRegression` (fitted once per setting, whatever noise_factor)."""
        return _fitted_regression(dataclasses.replace(self, noise_factor=1.0))

    def reported(self) -> PrivacyLoss:
        privacy = self.fitted().privacy_
        shares = ", ".join(f"{share['use'].split(':')[0]} {share['fraction']:.3g}" for share in privacy["shares"])
        return _privacy_loss(privacy, self.delta, f"DPLinearRegression.privacy_ (total over its shares: {shares})")

    def reduction(self) -> DPGDReduction:
        """The canary pair after the estimator's own preprocessing, with the fitted schedule, canary first."""
        from privdyn.sklearn._base import Preprocessed

        estimator = self.fitted()
        schedule = estimator.training_schedule()
        features, labels, neighbour_labels = self.data()
        sides = [Preprocessed(features, side, feature_norm=self.feature_norm, label_bound=self.label_bound,
                              fit_intercept=False) for side in (labels, neighbour_labels)]
        return DPGDReduction(features=sides[0].features[:, 0] * schedule["feature_scale"],
                             labels=sides[0].labels / schedule["label_scale"],
                             neighbour_labels=sides[1].labels / schedule["label_scale"],
                             step_sizes=np.asarray(schedule["step_sizes"], dtype=float),
                             noise_std=np.asarray(schedule["noise_std"], dtype=float),
                             clip_threshold=float(schedule["clip_threshold"]))


@functools.lru_cache(maxsize=8)
def _plan(setting: PlanDPGDCanary) -> Any:
    from privdyn.plan import dpgd

    return dpgd(n=setting.n, d=1, spectrum="identity", target_norm=setting.target_norm,
                label_noise=setting.label_noise, epsilon=setting.epsilon, delta=setting.delta)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlanDPGDCanary(_DPGDRow):
    """The plan of :func:`privdyn.plan.dpgd` for a public model in d = 1, run as Algorithm 1 on the ``dpgd`` row's
    canary (x = 1 first with ``|y| = canary_label`` over the clip, the rest at x = 0); reported: the plan's
    statement."""

    name: ClassVar[str] = "plan-dpgd"
    description: ClassVar[str] = "privdyn.plan.dpgd's plan (one-pass DP-GD), canary with clipping active: the plan's " \
                                 "privacy statement"

    n: int = 20
    epsilon: float = 3.0
    target_norm: float = 0.7
    label_noise: float = 0.7
    canary_label: float = 5.0

    def plan(self) -> DPGDPlan:
        """The planner's output (computed once per setting, whatever noise_factor)."""
        return _plan(dataclasses.replace(self, noise_factor=1.0))

    def reported(self) -> PrivacyLoss:
        return _statement_loss(self.plan().privacy, self.delta, "dpgd")

    def reduction(self) -> DPGDReduction:
        """The canary pair with the plan's hyper-parameters, through Algorithm 1's own schedule functions."""
        from privdyn.algorithms.dpgd import DPGDHyperparameters, _noise_std

        plan = self.plan()
        hyper = DPGDHyperparameters(clip=plan.clip, learning_rate=plan.learning_rate, rho=plan.rho)
        clip_threshold = hyper.clip_threshold(1)
        features = np.zeros(self.n)
        features[0] = 1.0
        labels, neighbour_labels = np.zeros(self.n), np.zeros(self.n)
        labels[0], neighbour_labels[0] = -self.canary_label, self.canary_label
        return DPGDReduction(features=features, labels=labels, neighbour_labels=neighbour_labels,
                             step_sizes=hyper.step_sizes(self.n),
                             noise_std=_noise_std(clip_threshold, hyper.noise_multipliers(self.n)),
                             clip_threshold=clip_threshold)


# ---------------------------------------------------------------------------------------------------------------
# AdaSSP: three Gaussian releases of sufficient statistics
# ---------------------------------------------------------------------------------------------------------------

_ADASSP_RELEASES = ("min eigenvalue", "second moment features", "feature label moment")
"""The three Gaussian releases, as named in ``AdaSSPRegression.privacy_["shares"]``, in the order of the score."""


@functools.lru_cache(maxsize=8)
def _fitted_adassp(setting: AdaSSPCanary) -> Any:
    from privdyn.sklearn import AdaSSPRegression

    features, labels, _, _ = setting.data()
    estimator = AdaSSPRegression(epsilon=setting.epsilon, delta=setting.delta, feature_norm=setting.feature_norm,
                                 label_bound=setting.label_bound, fit_intercept=False,
                                 failure_probability=setting.failure_probability, random_state=setting.fit_seed)
    return estimator.fit(features, labels)


@dataclasses.dataclass(frozen=True)
class Statistics:
    """What AdaSSP releases before post-processing, noise-free: lambda_min(X^T X), X^T X, X^T y."""

    min_eigenvalue: float
    gram: np.ndarray
    moment: np.ndarray

    def vector(self) -> np.ndarray:
        """(lambda_min, the upper triangle of X^T X row by row, X^T y): one entry per released Gaussian."""
        upper = np.triu_indices(self.gram.shape[0])
        return np.concatenate([[self.min_eigenvalue], self.gram[upper], self.moment])


@dataclasses.dataclass(frozen=True, kw_only=True)
class AdaSSPCanary(Mechanism):
    """:class:`privdyn.sklearn.AdaSSPRegression`'s released statistics on the canary pair (module docstring); the
    score is the projection of the whitened release on the whitened mean shift; reported: the fitted ``privacy_``."""

    name: ClassVar[str] = "sklearn-adassp"
    description: ClassVar[str] = ("sklearn AdaSSPRegression (three Gaussian releases), canary at the norm bounds: the "
                                  "fitted estimator's privacy_")

    epsilon: float = 2.0
    feature_norm: float = 2.0
    label_bound: float = 1.5
    failure_probability: float = 0.05
    fit_seed: int = 0

    def data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(X, y, X', y'): D = {(F e1, B), (F e1, 0)}, D' replaces the first row by (F e2, -B)."""
        features = np.array([[self.feature_norm, 0.0], [self.feature_norm, 0.0]])
        neighbour = np.array([[0.0, self.feature_norm], [self.feature_norm, 0.0]])
        return features, np.array([self.label_bound, 0.0]), neighbour, np.array([-self.label_bound, 0.0])

    def fitted(self) -> AdaSSPRegression:
        """The fitted :class:`~privdyn.sklearn.AdaSSPRegression` (once per setting, whatever noise_factor)."""
        return _fitted_adassp(dataclasses.replace(self, noise_factor=1.0))

    def reported(self) -> PrivacyLoss:
        return _privacy_loss(self.fitted().privacy_, self.delta, "AdaSSPRegression.privacy_")

    def noise_stds(self) -> tuple[float, float, float]:
        """The three releases' noise standard deviations (s1, s2, s3) as the fitted estimator records them."""
        stds = {}
        for share in self.fitted().privacy_["shares"]:
            for release in _ADASSP_RELEASES:
                if share["use"] == f"Gaussian release of the {release}":
                    stds[release] = float(share["noise_std"])
        missing = [release for release in _ADASSP_RELEASES if release not in stds]
        if missing:
            raise ValueError(f"AdaSSPRegression.privacy_['shares'] must list the releases {_ADASSP_RELEASES}; "
                             f"missing {missing}.")
        return stds[_ADASSP_RELEASES[0]], stds[_ADASSP_RELEASES[1]], stds[_ADASSP_RELEASES[2]]

    def statistics(self) -> tuple[Statistics, Statistics]:
        """The noise-free statistics of the preprocessed D and D' (the estimator's own preprocessing)."""
        from privdyn.sklearn._base import Preprocessed

        features, labels, neighbour, neighbour_labels = self.data()
        out = []
        for x, y in ((features, labels), (neighbour, neighbour_labels)):
            prep = Preprocessed(x, y, feature_norm=self.feature_norm, label_bound=self.label_bound,
                                fit_intercept=False)
            gram = prep.features.T @ prep.features
            out.append(Statistics(min_eigenvalue=float(np.linalg.eigvalsh(gram)[0]), gram=gram,
                                  moment=prep.features.T @ prep.labels))
        return out[0], out[1]

    def scales(self) -> np.ndarray:
        """The noise standard deviation of each entry of :meth:`Statistics.vector` (nominal noise)."""
        s1, s2, s3 = self.noise_stds()
        d = self.data()[0].shape[1]
        return np.concatenate([[s1], np.full(d * (d + 1) // 2, s2), np.full(d, s3)])

    def _whitened_shift(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        means = [side.vector() for side in self.statistics()]
        scales = self.scales()
        return means[0], scales, (means[1] - means[0]) / scales

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        """The release drawn with the actual noise (noise_factor x the estimator's), whitened by the nominal noise
        and projected on the unit whitened mean shift w / ||w||: N(0, f^2) on D, N(||w||, f^2) on D'."""
        base, scales, shift = self._whitened_shift()
        direction = shift / np.linalg.norm(shift)
        outputs = []
        for mean, gen in zip((base, base + shift * scales), _generators(seed, unit_key), strict=True):
            release = mean + self.noise_factor * scales * gen.standard_normal((runs, base.size))
            outputs.append(((release - base) / scales) @ direction)
        return outputs[0], outputs[1]

    def gaussian_law(self) -> GaussianLaw:
        """Independent Gaussians with the same scales on D and D': the score's shift is ||w||, its std the factor."""
        _, _, shift = self._whitened_shift()
        return GaussianLaw(mean=0.0, neighbour_mean=float(np.linalg.norm(shift)), std=self.noise_factor)


# ---------------------------------------------------------------------------------------------------------------
# the planner's other plans: their hyper-parameters on the existing canary reductions
# ---------------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _dpsgd_plan(setting: PlanDPSGDCanary) -> Any:
    from privdyn.plan import dpsgd

    return dpsgd(n=setting.n, batch_size=setting.batch_size, num_steps=setting.num_steps, epsilon=setting.epsilon,
                 delta=setting.delta, sampler=setting.sampler, neighboring=setting.neighboring,
                 strategies=[setting.strategy])


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlanDPSGDCanary(Mechanism):
    """The plan of :func:`privdyn.plan.dpsgd` run on the DP-SGD canary reduction of
    :mod:`privdyn.audit.mechanisms` (:class:`~privdyn.audit.mechanisms.DPSGDCanary`: every record but the canary
    has gradient 0, the canary's clipped gradient is +clip), with the plan's noise multiplier, sizes, sampler,
    neighbouring relation and strategy; reported: the plan's statement.

    The reduction is the registered DP-SGD row with the plan's sampler and relation (its threshold test and
    likelihood-ratio score), its fields replaced by the plan's numbers (:meth:`reduction`).
    """

    name: ClassVar[str] = "plan-dpsgd"
    description: ClassVar[str] = ("privdyn.plan.dpsgd's plan (DP-SGD, independent noise, Poisson, add-remove) on the "
                                  "DP-SGD canary: the plan's privacy statement")

    n: int = 100
    batch_size: int = 10
    num_steps: int = 20
    epsilon: float = 1.0
    sampler: str = "poisson"
    neighboring: str = "add_remove"
    strategy: str = "independent"

    def plan(self) -> DPSGDPlan:
        """The planner's :class:`~privdyn.plan._dpsgd.DPSGDPlan` (computed once per setting, whatever noise_factor)."""
        return _dpsgd_plan(dataclasses.replace(self, noise_factor=1.0))

    def reported(self) -> PrivacyLoss:
        return _statement_loss(self.plan().privacy, self.delta, "dpsgd")

    def reduction(self) -> DPSGDCanary:
        """The registered DP-SGD canary row of the plan's sampler and relation with the plan's numbers: noise
        multiplier, n, batch size, steps and lambda (read from the plan), and this row's delta and noise_factor."""
        from privdyn.audit.mechanisms import MECHANISMS, DPSGDCanary  # noqa: F811 (run time; circular at import)
        from privdyn.privacy.correlated import Independent, LambdaCGD

        plan = self.plan()
        hyper = plan.hyperparameters
        if not isinstance(plan.strategy, LambdaCGD | Independent):
            raise ValueError(f"{self.name}: the canary reduction runs lambda-CGD or independent noise; the plan "
                             f"chose {hyper['strategy']!r}.")
        for cls in MECHANISMS.values():
            if (issubclass(cls, DPSGDCanary) and cls._strategy is DPSGDCanary._strategy
                    and cls.sampler == hyper["sampler"] and cls.neighboring == hyper["neighboring"]):
                sizes = plan.sizes
                return cls(noise_multiplier=float(hyper["noise_multiplier"]),
                           noise_correlation=float(hyper["noise_correlation"]), n=sizes.n,
                           batch_size=sizes.batch_size, num_steps=sizes.num_steps, delta=self.delta,
                           noise_factor=self.noise_factor)
        raise ValueError(f"{self.name}: no DP-SGD canary row runs sampler={hyper['sampler']!r} with "
                         f"neighboring={hyper['neighboring']!r}.")

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        return self.reduction().scores(seed, unit_key, runs)


@functools.lru_cache(maxsize=8)
def _langevin_plan(setting: PlanLangevinCanary) -> Any:
    from privdyn.plan import langevin

    return langevin(n=setting.n, d=1, strong_convexity=1.0, smoothness=1.0, lipschitz=setting.lipschitz,
                    sensitivity=setting.sensitivity, epsilon=setting.epsilon, delta=setting.delta)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlanLangevinCanary(Mechanism):
    """The plan of :func:`privdyn.plan.langevin` for the loss of the ``langevin-quadratic`` row, 0.5 (theta - x)^2
    in d = 1 (lambda = beta = 1, records in [0, sensitivity]), run as that row (noisy GD, Algorithm 1 of
    arXiv 2102.05855, through :func:`privdyn.algorithms.noisy_gd.noisy_gd`; D all at 0, D' with the canary at
    ``sensitivity``) with the plan's step size, noise scale and number of steps; reported: the plan's statement
    (Corollary 1). The output law is exactly Gaussian (propagated by the row's :meth:`gaussian_law`)."""

    name: ClassVar[str] = "plan-langevin"
    description: ClassVar[str] = ("privdyn.plan.langevin's plan (noisy GD, quadratic loss, Gaussian output): the "
                                  "plan's privacy statement")

    n: int = 10
    epsilon: float = 2.0
    lipschitz: float = 5.0
    sensitivity: float = 1.0

    def plan(self) -> LangevinPlan:
        """The planner's output (computed once per setting, whatever noise_factor)."""
        return _langevin_plan(dataclasses.replace(self, noise_factor=1.0))

    def reported(self) -> PrivacyLoss:
        return _statement_loss(self.plan().privacy, self.delta, "langevin")

    def reduction(self) -> LangevinQuadratic:
        """The ``langevin-quadratic`` row with the plan's step size, noise scale, steps and sensitivity (read from
        ``plan.hyperparameters``), this row's n, delta and noise_factor."""
        from privdyn.audit.mechanisms import LangevinQuadratic  # noqa: F811 (run time; circular at import)

        plan = self.plan()
        constants = plan.constants
        if constants.strong_convexity != 1.0 or constants.smoothness != 1.0 or constants.d != 1:
            raise AssertionError("the plan must be for the unit quadratic in d = 1 (lambda = beta = 1)")
        hyper = plan.hyperparameters
        return LangevinQuadratic(n=constants.n, num_steps=int(hyper["num_steps"]), step_size=float(hyper["step_size"]),
                                 noise_scale=float(hyper["noise_scale"]), sensitivity=float(hyper["sensitivity"]),
                                 delta=self.delta, noise_factor=self.noise_factor)

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        return self.reduction().scores(seed, unit_key, runs)

    def gaussian_law(self) -> GaussianLaw:
        """The law of theta_K on D and D' (propagated by :meth:`LangevinQuadratic.gaussian_law`), actual noise."""
        return self.reduction().gaussian_law()


# ---------------------------------------------------------------------------------------------------------------
# DPLinearRegression with a planning share: Gaussian releases of second moments, composed with training
# ---------------------------------------------------------------------------------------------------------------

_PLANNING_STATISTICS = ("second_moment_features", "feature_label_moment", "label_second_moment")
"""The planning share's Gaussian releases, as named in ``privacy_["shares"]``, in the order of the score."""


@functools.lru_cache(maxsize=8)
def _fitted_with_share(setting: DPLinearRegressionPlanningShareCanary) -> Any:
    from privdyn.sklearn import DPLinearRegression

    features, labels, _ = setting.data()
    estimator = DPLinearRegression(epsilon=setting.epsilon, delta=setting.delta, feature_norm=setting.feature_norm,
                                   label_bound=setting.label_bound, fit_intercept=False, schedule=setting.schedule,
                                   planning_share=setting.planning_share, random_state=setting.fit_seed)
    return estimator.fit(features, labels)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPLinearRegressionPlanningShareCanary(DPLinearRegressionCanary):
    """:class:`privdyn.sklearn.DPLinearRegression` with ``planning_share``: the three Gaussian releases of the
    planning share (S_xx, S_xy, S_yy of the preprocessed rows, :mod:`privdyn.plan._data`) and the trained theta_n,
    on the ``sklearn-dplinearregression`` canary pair; reported: the fitted ``privacy_`` (training + planning).

    The pair (canary at x = F, y = -+B, the rest 0, d = 1) moves S_xy by its sensitivity 2 b Y and leaves S_xx and
    S_yy unchanged. Given the released statistics (hence the plan), theta_n is Gaussian with the same variance on
    D and D' and a shift of rho / std equal to the training share's rho whatever the plan (Proposition 4.1 is tight
    on this pair while the canary's gradient is clipped and its step not capped), so the privacy loss of the
    release (statistics, theta_n) is that of one Gaussian shift of sqrt(||w||^2 + rho^2), w the whitened shift of
    the statistics. The score is the Neyman-Pearson projection of both whitened parts on that shift: N(0, f^2) on
    D, N(sqrt(||w||^2 + rho^2), f^2) on D' (f the noise_factor). The runs draw the statistics with the noise
    standard deviations the fit records in ``privacy_["shares"]`` and theta_n with the fitted schedule (the plan
    of one draw of the statistics; by the above, the shift is the same for every draw)."""

    name: ClassVar[str] = "sklearn-dplinearregression-planning-share"
    description: ClassVar[str] = ("sklearn DPLinearRegression, planning_share = 0.3 (three Gaussian planning "
                                  "releases + DP-GD): the fitted estimator's privacy_")

    planning_share: float = 0.3
    schedule: str = "polynomial"

    def fitted(self) -> DPLinearRegression:
        """The fitted estimator with ``planning_share`` (fitted once per setting, whatever noise_factor)."""
        return _fitted_with_share(dataclasses.replace(self, noise_factor=1.0))

    def planning_noise_stds(self) -> np.ndarray:
        """The planning releases' noise standard deviations (S_xx, S_xy, S_yy) as the fitted estimator records."""
        shares = [share for share in self.fitted().privacy_["shares"] if "mechanisms" in share]
        if len(shares) != 1:
            raise ValueError("DPLinearRegression.privacy_['shares'] must hold one planning share with its mechanisms.")
        stds = {entry["statistic"]: float(entry["noise_std"]) for entry in shares[0]["mechanisms"]}
        missing = [name for name in _PLANNING_STATISTICS if name not in stds]
        if missing:
            raise ValueError(f"the planning share must list {_PLANNING_STATISTICS}; missing {missing}.")
        return np.array([stds[name] for name in _PLANNING_STATISTICS])

    def planning_statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """(S_xx, S_xy, S_yy) of the rows the planning share sees on D and on D': the estimator's preprocessing
        (:class:`~privdyn.sklearn._base.Preprocessed`), rows times sqrt(d') / R and labels over B (d' = 1)."""
        from privdyn.sklearn._base import Preprocessed

        features, labels, neighbour_labels = self.data()
        out = []
        for side in (labels, neighbour_labels):
            prep = Preprocessed(features, side, feature_norm=self.feature_norm, label_bound=self.label_bound,
                                fit_intercept=False)
            x = prep.features[:, 0] * math.sqrt(prep.features.shape[1]) / prep.radius
            y = prep.labels / self.label_bound
            out.append(np.array([x @ x, x @ y, y @ y]))
        return out[0], out[1]

    def _shifts(self) -> tuple[np.ndarray, float, GaussianLaw]:
        """(whitened shift of the statistics, training shift rho, the training law at the nominal noise)."""
        base, neighbour = self.planning_statistics()
        law = self._checked_reduction().gaussian_law(1.0)
        return (neighbour - base) / self.planning_noise_stds(), abs(law.neighbour_mean - law.mean) / law.std, law

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        """The statistics and theta_n drawn with the actual noise, whitened by the nominal noise and projected on
        the unit vector of the joint shift (class docstring)."""
        shift, rho, law = self._shifts()
        total = math.sqrt(float(shift @ shift) + rho**2)
        stds = self.planning_noise_stds()
        sign = math.copysign(1.0, law.neighbour_mean - law.mean)
        reduction = self._checked_reduction()
        sides = zip(self.planning_statistics(), (reduction.labels, reduction.neighbour_labels),
                    _generators(seed, unit_key), strict=True)
        outputs = []
        for statistics, labels, gen in sides:
            released = statistics + self.noise_factor * stds * gen.standard_normal((runs, stds.size))
            whitened = (released - self.planning_statistics()[0]) / stds
            theta = reduction.run(labels, gen.standard_normal((runs, reduction.features.size)), self.noise_factor)
            trained = sign * (theta - law.mean) / law.std
            outputs.append((whitened @ shift + rho * trained) / total)
        return outputs[0], outputs[1]

    def gaussian_law(self) -> GaussianLaw:
        """N(0, f^2) on D and N(sqrt(||w||^2 + rho^2), f^2) on D' (class docstring)."""
        shift, rho, _ = self._shifts()
        return GaussianLaw(mean=0.0, neighbour_mean=math.sqrt(float(shift @ shift) + rho**2), std=self.noise_factor)


# ---------------------------------------------------------------------------------------------------------------
# the hsgd plan: noisy SGD, shuffled once, on the plan's own assumed sample and its top pair
# ---------------------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _hsgd_plan(setting: PlanHSGDCanary) -> Any:
    from privdyn.plan import hsgd

    return hsgd(n=setting.n, d=setting.dim, label_noise=setting.label_noise, ridge=setting.ridge,
                renyi_order=setting.renyi_order, rdp_epsilon=setting.rdp_epsilon, num_pairs=setting.num_pairs,
                seed=setting.plan_seed)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlanHSGDCanary(Mechanism):
    """The plan of :func:`privdyn.plan.hsgd` run as the mechanism it plans: one pass of noisy SGD on least squares
    (Algorithm 1 of arXiv 2510.16687, no clipping, x_0 = 0), shuffled once, the last iterate released, through
    :func:`privdyn.algorithms.noisy_sgd.simulate_noisy_sgd` with the plan's step size, noise std and ridge.

    D is the plan's own assumed sample (its design sampled at its seed, the sample its pairs were selected from) and
    D' replaces record i of the plan's first pair by record j. The order is a fresh uniform permutation per run, so
    the output is a mixture of Gaussians: the audit is a threshold test on the score w^T x_n, w = b_j a_j - b_i a_i
    (the gradient gap at x_0, the direction of the mean shift to first order in the step size). Reported: the plan's
    surrogate Renyi epsilon at its one order, converted to (epsilon, delta) by
    :func:`privdyn.privacy.conversions.rdp_to_epsilon`; label ``surrogate`` (never a violation: a finding).
    """

    name: ClassVar[str] = "plan-hsgd"
    description: ClassVar[str] = ("privdyn.plan.hsgd's plan (noisy SGD shuffled once, its own sample and top pair): "
                                  "the plan's surrogate RDP, converted")

    n: int = 15
    dim: int = 10
    label_noise: float = 0.5
    ridge: float = 0.1
    renyi_order: float = 8.0
    rdp_epsilon: float = 0.5
    num_pairs: int = 3
    plan_seed: int = 0

    def plan(self) -> HSGDPlan:
        """The planner's output (computed once per setting, whatever noise_factor)."""
        return _hsgd_plan(dataclasses.replace(self, noise_factor=1.0))

    def reported(self) -> PrivacyLoss:
        from privdyn.privacy.conversions import rdp_to_epsilon

        statement = self.plan().privacy
        order, value = float(statement.extra["renyi_order"]), float(statement.extra["rdp_epsilon"])
        epsilon, _ = rdp_to_epsilon([order], [value], delta=self.delta)
        return _loss(epsilon, statement.guarantee, statement.neighboring,
                     f"privdyn.plan.hsgd(...).privacy: rdp_epsilon {value:.6g} at order {order:g} ("
                     f"{statement.accountant}); converted to (epsilon, delta) by rdp_to_epsilon")

    def datasets(self) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], np.ndarray]:
        """((features, labels) of D, of D', the score's weights w): the plan's sample and its first pair."""
        plan = self.plan()
        sample_seed = cast(int, plan.inputs["seed"])  # the seed the plan drew its sample (and pairs) from
        features, labels = plan.setting.design.sample(plan.setting.n, np.random.default_rng(sample_seed))
        pairs = plan.setting.pairs
        if pairs.indices is None:
            raise ValueError("the plan's pairs carry no dataset indices; they were not selected from its sample.")
        i, j = (int(v) for v in pairs.indices[0])
        if not (np.array_equal(features[i], pairs.features[0]) and np.array_equal(features[j], pairs.other_features[0])
                and labels[i] == pairs.labels[0] and labels[j] == pairs.other_labels[0]):
            raise AssertionError("the plan's first pair is not records (i, j) of the plan's sample.")
        neighbour_features, neighbour_labels = features.copy(), labels.copy()
        neighbour_features[i], neighbour_labels[i] = features[j], labels[j]
        weights = labels[j] * features[j] - labels[i] * features[i]
        return (features, labels), (neighbour_features, neighbour_labels), weights

    def exact_position_divergences(self) -> np.ndarray:
        """(n,) max over both orders of the exact Renyi divergence (plan's order) of x_n on D and D' with the
        differing record at step l and the other records in the sample's order: SGD's update is affine with
        Gaussian noise, so both laws are Gaussian; propagated as m <- C_k m + eta b_k a_k,
        V <- C_k V C_k^T + eta^2 sigma^2 I, C_k = (1 - eta ridge) I - eta a_k a_k^T, from x_0 = 0."""
        from privdyn.privacy.divergences import renyi_gaussian

        plan = self.plan()
        hyper = plan.hyperparameters
        eta, ridge, sigma = float(hyper["step_size"]), float(hyper["ridge"]), float(hyper["noise_std"])
        order = float(plan.privacy.extra["renyi_order"])
        (features, labels), (other, other_labels), _ = self.datasets()
        i = int(plan.setting.pairs.indices[0, 0])
        rest = [k for k in range(features.shape[0]) if k != i]
        out = np.zeros(features.shape[0])
        for position in range(features.shape[0]):
            laws = []
            for x, y in ((features, labels), (other, other_labels)):
                steps = rest[:position] + [i] + rest[position:]
                mean, cov = np.zeros(self.dim), np.zeros((self.dim, self.dim))
                for k in steps:
                    contraction = (1.0 - eta * ridge) * np.eye(self.dim) - eta * np.outer(x[k], x[k])
                    mean = contraction @ mean + eta * y[k] * x[k]
                    cov = contraction @ cov @ contraction.T + (eta * sigma) ** 2 * np.eye(self.dim)
                laws.append((mean, 0.5 * (cov + cov.T)))
            (m1, v1), (m2, v2) = laws
            out[position] = max(renyi_gaussian(order, mean1=m1, cov1=v1, mean2=m2, cov2=v2),
                                renyi_gaussian(order, mean1=m2, cov1=v2, mean2=m1, cov2=v1))
        return out

    def surrogate_gap(self) -> float:
        """(surrogate RDP) / (exact counterpart) - 1 on the audited pair at the plan's order: the surrogate is the
        plan's own accountant (Theorem 4.3, eq. (15)) restricted to the pair; the counterpart is the same
        uniform-position mixture (Lemma C.3, (1/(alpha-1)) [logsumexp_l (alpha-1) D_l - log n]) of the exact
        per-position divergences (:meth:`exact_position_divergences`) for the sample's order of the other records."""
        from scipy.special import logsumexp

        from privdyn.plan._hsgd import _surrogate
        from privdyn.privacy.hsgd import NeighboringPairs

        plan = self.plan()
        pairs = plan.setting.pairs
        first = NeighboringPairs(features=pairs.features[:1], labels=pairs.labels[:1],
                                 other_features=pairs.other_features[:1], other_labels=pairs.other_labels[:1])
        hyper = plan.hyperparameters
        surrogate = _surrogate(dataclasses.replace(plan.setting, pairs=first), float(hyper["step_size"]),
                               float(hyper["noise_std"]))
        alpha = float(plan.privacy.extra["renyi_order"])
        divergences = self.exact_position_divergences()
        if not np.all(np.isfinite(divergences)):
            return -1.0
        exact = max(0.0, (float(logsumexp((alpha - 1.0) * divergences)) - math.log(divergences.size)) / (alpha - 1.0))
        return surrogate / exact - 1.0

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd

        plan = self.plan()
        hyper = plan.hyperparameters
        first, second, weights = self.datasets()
        outputs = []
        for dataset, side in ((first, "D"), (second, "D'")):
            sim = simulate_noisy_sgd(data=plan.setting.design, dataset=dataset, shuffle=True,
                                     x0=np.zeros(self.dim), ridge=float(hyper["ridge"]), num_steps=plan.setting.n,
                                     num_runs=runs, seed=seed, unit_key=f"{unit_key}/{side}",
                                     step_size=float(hyper["step_size"]),
                                     noise_std=float(hyper["noise_std"]) * self.noise_factor,
                                     iterate_steps=[plan.setting.n])
            assert sim.iterates is not None
            outputs.append(sim.iterates[:, 0, :] @ weights)
        return outputs[0], outputs[1]


ESTIMATOR_MECHANISMS: tuple[type[Mechanism], ...] = (DPLinearRegressionCanary, AdaSSPCanary, PlanDPGDCanary,
                                                     PlanDPSGDCanary, PlanLangevinCanary,
                                                     DPLinearRegressionPlanningShareCanary, PlanHSGDCanary)
"""The rows of this module, in the order of the table."""
