"""Audit rows for AdaSSP and the planner's other plans: what a fitted object or a plan reports against its canary runs.

Each row reports the epsilon the object itself reports (``privacy_["epsilon"]`` of the fitted estimator,
``plan.privacy.epsilon`` of the plan) with its guarantee label, and runs the mechanism through its public entry
point. (The one-pass DP-GD rows, DPLinearRegression's among them, are in :mod:`privdyn.audit.dpgd_rows`.)

* ``sklearn-adassp``: :meth:`privdyn.sklearn.AdaSSPRegression.fit` (Wang 2018, arXiv 1803.02596, Algorithm 2), once
  per run. It releases lambda_min(X^T X) + s1 Z, the upper triangle of X^T X + s2 E and X^T y + s3 z; theta and the
  ridge are post-processing of them. In d = 2 without intercept, n = 2: D = {(F e1, B), (F e1, 0)}, D' replaces the
  canary by (F e2, -B). Then lambda_min moves by F^2 (its sensitivity), the upper triangle by sqrt(2) F^2 (its
  sensitivity) and X^T y by sqrt(2) F B (of the sensitivity 2 F B: no single replacement attains all three; the
  pair's squared whitened shift is 5/6 of the sum the accountant composes). The releases are Gaussian with the same
  covariance on D and D', so the audited epsilon is that of a Gaussian shift of ||w||, w the whitened mean shift,
  with the noise the statement states (s = Delta / sqrt(2 zcdp) per release). Each fit's (``coef_``, ``ridge_``) is
  replayed by :func:`adassp_reference` with the stated noise from the same normals (the law check).
* ``plan-dpsgd``: the plan of :func:`privdyn.plan.dpsgd` (independent noise, Poisson sampling, add-remove) run on the
  registered DP-SGD row of its sampler and relation with the plan's noise multiplier and sizes (threshold test; the
  row's :class:`~privdyn.algorithms.dpsgd.DPSGD` runs checked against the stated law).
* ``plan-langevin``: the plan of :func:`privdyn.plan.langevin` for the unit quadratic in d = 1, run as the
  ``langevin-quadratic`` row (:func:`~privdyn.algorithms.noisy_gd.noisy_gd` itself) with the plan's step size,
  noise scale and steps (exact Gaussian law).
* ``plan-hsgd``: the plan of :func:`privdyn.plan.hsgd` run by
  :func:`~privdyn.algorithms.noisy_sgd.simulate_noisy_sgd`, shuffled once (a surrogate: a finding).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from privdyn.audit.base import EstimatorRow, GaussianLaw, Mechanism, Runs, _generators
from privdyn.audit.law import Replay
from privdyn.privacy.labels import PrivacyLoss

if TYPE_CHECKING:
    from privdyn.audit.mechanisms import DPSGDCanary, LangevinQuadratic
    from privdyn.plan import DPSGDPlan, HSGDPlan, LangevinPlan
    from privdyn.privacy.statement import PrivacyStatement
    from privdyn.sklearn import AdaSSPRegression

__all__ = ["AdaSSPCanary", "PlanDPSGDCanary", "PlanHSGDCanary", "PlanLangevinCanary", "adassp_reference"]


def _loss(value: float, guarantee: str, neighboring: str, source: str) -> PrivacyLoss:
    return PrivacyLoss(value=float(value), guarantee=guarantee, quantity="epsilon",  # type: ignore[arg-type]
                       neighboring=neighboring, source=source)  # type: ignore[arg-type]


def _privacy_loss(privacy: PrivacyStatement, delta: float, source: str) -> PrivacyLoss:
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
# AdaSSP: three Gaussian releases of sufficient statistics
# ---------------------------------------------------------------------------------------------------------------

_ADASSP_RELEASES = ("min eigenvalue", "second moment features", "feature label moment")
"""The three Gaussian releases, as named in ``AdaSSPRegression.privacy_["shares"]``, in the order of the score."""


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


def adassp_reference(features: np.ndarray, labels: np.ndarray, stds: tuple[float, float, float],
                     failure_probability: float, gen: np.random.Generator) -> tuple[np.ndarray, float]:
    """AdaSSP (Wang 2018, arXiv 1803.02596, Algorithm 2) as the estimator's docstring states it, on rows already in
    the ball and labels already in the bound, with noise standard deviations ``stds`` = (s1, s2, s3); the normals
    drawn from ``gen`` in the estimator's order (Z, then the (d, d) matrix whose upper triangle is E, then z).
    Returns (theta, ridge)."""
    s1, s2, s3 = stds
    d = features.shape[1]
    p = failure_probability
    gram = features.T @ features
    lowest = max(float(np.linalg.eigvalsh(gram)[0]) + s1 * float(gen.standard_normal())
                 - s1 * math.sqrt(2.0 * math.log(3.0 / p)), 0.0)
    ridge = max(0.0, s2 * math.sqrt(d * math.log(2.0 * d * d / p)) - lowest)
    upper = np.triu(gen.standard_normal((d, d)))
    noisy_gram = gram + s2 * (upper + np.triu(upper, 1).T)
    moment = features.T @ labels + s3 * gen.standard_normal(d)
    return np.linalg.solve(noisy_gram + ridge * np.eye(d), moment), ridge


@dataclasses.dataclass(frozen=True, kw_only=True)
class AdaSSPCanary(EstimatorRow):
    """:meth:`privdyn.sklearn.AdaSSPRegression.fit` on the canary pair (module docstring), once per run.

    The audited epsilon is the exact one of the three Gaussian releases on the pair (stated law: the statistics of
    the pair and the noise standard deviations of the statement's shares, s_j = Delta_j / sqrt(2 zcdp_j), Bun and
    Steinke 2016, Proposition 1.6). The fits' releases (``coef_``, ``ridge_``) are replayed: each fit draws from its
    own generator, and the reference :func:`adassp_reference` with the stated noise, fed a copy of that generator,
    must give the same numbers. A fit costs tens of milliseconds (its budget conversion), so the row runs
    ``runs // 100`` fits per dataset (at least 100); the threshold test's score is ``-(coef_[0] + coef_[1])``.
    """

    name: ClassVar[str] = "sklearn-adassp"
    description: ClassVar[str] = ("sklearn AdaSSPRegression.fit per run (three Gaussian releases), canary at the norm "
                                  "bounds: the fitted estimator's privacy_")
    entry_point: ClassVar[str] = "privdyn.sklearn.AdaSSPRegression.fit"

    epsilon: float = 2.0
    feature_norm: float = 2.0
    label_bound: float = 1.5
    failure_probability: float = 0.05

    def runs_for(self, runs: int) -> int:
        return max(100, runs // 100)

    def data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(X, y, X', y'): D = {(F e1, B), (F e1, 0)}, D' replaces the first row by (F e2, -B)."""
        features = np.array([[self.feature_norm, 0.0], [self.feature_norm, 0.0]])
        neighbour = np.array([[0.0, self.feature_norm], [self.feature_norm, 0.0]])
        return features, np.array([self.label_bound, 0.0]), neighbour, np.array([-self.label_bound, 0.0])

    def estimator(self, random_state: int | np.random.Generator) -> AdaSSPRegression:
        from privdyn.sklearn import AdaSSPRegression

        return AdaSSPRegression(epsilon=self.epsilon, delta=self.delta, feature_norm=self.feature_norm,
                                label_bound=self.label_bound, fit_intercept=False,
                                failure_probability=self.failure_probability, random_state=random_state)

    def fitted(self) -> AdaSSPRegression:
        """One fit on D at ``fit_seed`` (what the reported epsilon and the stated noise are read from)."""
        features, labels, _, _ = self.data()
        return self.estimator(self.fit_seed).fit(features, labels)

    def reported(self) -> PrivacyLoss:
        return _privacy_loss(self.fitted().privacy_, self.delta, "AdaSSPRegression.privacy_")

    def noise_stds(self) -> tuple[float, float, float]:
        """(s1, s2, s3) stated by the fitted ``privacy_["shares"]``: each Gaussian release's sensitivity and zCDP
        give s = Delta / sqrt(2 zcdp) (not the recorded noise_std, which the fit computes the same way)."""
        stds = {}
        for share in self.fitted().privacy_["shares"]:
            for release in _ADASSP_RELEASES:
                if share["use"] == f"Gaussian release of the {release}":
                    stds[release] = float(share["sensitivity"]) / math.sqrt(2.0 * float(share["zcdp"]))
        missing = [release for release in _ADASSP_RELEASES if release not in stds]
        if missing:
            raise ValueError(f"AdaSSPRegression.privacy_['shares'] must list the releases {_ADASSP_RELEASES}; "
                             f"missing {missing}.")
        return stds[_ADASSP_RELEASES[0]], stds[_ADASSP_RELEASES[1]], stds[_ADASSP_RELEASES[2]]

    def statistics(self) -> tuple[Statistics, Statistics]:
        """The noise-free statistics of D and D' (their rows are in the ball and their labels in the bound, so the
        estimator's preprocessing leaves them unchanged)."""
        features, labels, neighbour, neighbour_labels = self.data()
        out = []
        for x, y in ((features, labels), (neighbour, neighbour_labels)):
            if np.any(np.linalg.norm(x, axis=1) > self.feature_norm) or np.any(np.abs(y) > self.label_bound):
                raise ValueError("the canary pair must lie inside the public bounds.")
            gram = x.T @ x
            out.append(Statistics(min_eigenvalue=float(np.linalg.eigvalsh(gram)[0]), gram=gram, moment=x.T @ y))
        return out[0], out[1]

    def scales(self) -> np.ndarray:
        """The noise standard deviation of each entry of :meth:`Statistics.vector` (the stated noise)."""
        s1, s2, s3 = self.noise_stds()
        d = self.data()[0].shape[1]
        return np.concatenate([[s1], np.full(d * (d + 1) // 2, s2), np.full(d, s3)])

    def run(self, seed: int, unit_key: str, runs: int) -> Runs:
        features, labels, neighbour, neighbour_labels = self.data()
        stds = self.noise_stds()
        scores, samples = [], []
        for (x, y), gen, side in zip(((features, labels), (neighbour, neighbour_labels)),
                                     _generators(seed, unit_key), ("D", "D'"), strict=True):
            released, reference = [], []
            for fit_seed in gen.integers(0, 2**63 - 1, size=runs, dtype=np.int64):
                fitted = self.estimator(np.random.default_rng(int(fit_seed))).fit(x, y)
                released.append(np.append(fitted.coef_, fitted.ridge_))
                theta, ridge = adassp_reference(x, y, stds, self.failure_probability,
                                                np.random.default_rng(int(fit_seed)))
                reference.append(np.append(theta, ridge))
            values = np.array(released)
            scores.append(-(values[:, 0] + values[:, 1]))
            samples.append(Replay(f"(coef_, ridge_) on {side}", values, np.array(reference)))
        return Runs(scores=(scores[0], scores[1]), law=tuple(samples))

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        return self.run(seed, unit_key, runs).scores

    def gaussian_law(self) -> GaussianLaw:
        """The three releases whitened by the stated noise and projected on their unit whitened mean shift w / ||w||:
        N(0, 1) on D, N(||w||, 1) on D' (independent Gaussians with one covariance on D and D')."""
        means = [side.vector() for side in self.statistics()]
        shift = (means[1] - means[0]) / self.scales()
        return GaussianLaw(mean=0.0, neighbour_mean=float(np.linalg.norm(shift)), std=1.0)


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
    entry_point: ClassVar[str] = "privdyn.algorithms.dpsgd.DPSGD.step"
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
        """The planner's :class:`~privdyn.plan.DPSGDPlan` (computed once per setting, whatever noise_factor)."""
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

    def run(self, seed: int, unit_key: str, runs: int) -> Runs:
        """The registered row's runs (its scores and its DPSGD end-to-end law check) at the plan's numbers."""
        return self.reduction().run(seed, unit_key, runs)


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
    entry_point: ClassVar[str] = "privdyn.algorithms.noisy_gd.noisy_gd"
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
    entry_point: ClassVar[str] = "privdyn.algorithms.noisy_sgd.simulate_noisy_sgd"
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

        from privdyn.privacy.hsgd import NeighboringPairs

        plan = self.plan()
        pairs = plan.setting.pairs
        first = NeighboringPairs(features=pairs.features[:1], labels=pairs.labels[:1],
                                 other_features=pairs.other_features[:1], other_labels=pairs.other_labels[:1])
        surrogate = plan.surrogate_rdp(first)
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
