"""The one-pass clipped DP-GD rows, each run through its public entry point end to end.

Algorithm 1 of Bombari, Luo, Seroussi, Mondelli (arXiv 2505.16329): theta_k = theta_{k-1} - etabar_k gbar_k +
2 C sigma_k b_k with the noise-optimal calibration of eq. (4.2), rho^2 sigma_k^2 = eta_k^2 - eta_{k+1}^2
(eta_{n+1} = 0), released theta_n. On the canary pair of these rows (one record at x != 0 whose gradient is clipped,
every other record at x = 0, whose gradient is 0) the law of theta_n is stated by the privacy statement alone:

* the canary's step moves the mean by -etabar_k C sign(g) (its gradient at theta_{k-1} is clipped to norm C: checked
  to fail with probability below 1e-12 when noise precedes it);
* the noise adds variance 4 C^2 sum_k sigma_k^2 = 4 C^2 eta_1^2 / rho^2 (eq. 4.2 telescopes), rho the statement's
  privacy level; records at x = 0 do not contract the iterate.

So theta_n is N(-+ etabar_k C, (2 C eta_1 / rho)^2), a Gaussian shift of etabar_k / eta_1 rho (rho itself when the
canary's step is the first, or the schedule is constant). The law is computed here from the steps, the clip and rho
(:func:`stated_law`), not from privdyn's calibration or noise functions, so a bug in those shows as runs that do not
have the stated law.

Rows and their entry points:

* ``dpgd``: :func:`privdyn.algorithms.dpgd.simulate_dpgd` (the numpy simulator) on the canary pair in a fixed order,
  the canary first, d = 1, polynomial schedule;
* ``plan-dpgd``: :func:`privdyn.plan.dpgd`'s plan run as its user runs it, :func:`privdyn.algorithms.dpgd.dpgd` with
  the plan's clip, learning rate and rho, once per run;
* ``sklearn-dplinearregression``: :meth:`privdyn.sklearn.DPLinearRegression.fit`, once per run, on rows at the public
  bounds; the fit draws its own order of the pass, so the schedule is ``"constant"`` (every position of the canary
  gives the same law; eq. 4.2 then puts all the noise on the last step);
* ``sklearn-dplinearregression-planning-share``: the same fit with ``planning_share``: see
  :class:`DPLinearRegressionPlanningShareCanary`;
* ``sklearn-dplinearregression-release-solution``: the same fit where it solves by the release's least squares
  instead of DP-GD: its second Gaussian release against the stated law, see
  :class:`DPLinearRegressionReleaseSolutionCanary`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from privdyn.audit.base import EstimatorRow, GaussianLaw, Mechanism, Runs, _epsilon_of_zcdp, _generators
from privdyn.audit.law import WhitenedSample
from privdyn.privacy.labels import PrivacyLoss

if TYPE_CHECKING:
    from privdyn.plan import DPGDPlan
    from privdyn.sklearn import DPLinearRegression

__all__ = ["DPGDCanary", "DPLinearRegressionCanary", "DPLinearRegressionPlanningShareCanary",
           "DPLinearRegressionReleaseSolutionCanary", "PlanDPGDCanary", "stated_law"]

_CLIP_FAILURE = 1e-12
"""The largest probability allowed that noise before the canary's step leaves its gradient unclipped."""


RELEASE_DRAWS = 4000
"""Direct draws of the planning release beside the plans, for the variance tests' power."""


def stated_law(*, feature: float, label: float, neighbour_label: float, step_sizes: np.ndarray, position: int,
               clip_threshold: float, rho: float) -> GaussianLaw:
    """The law of theta_n on D and D' (module docstring): the canary (``feature``, ``label`` / ``neighbour_label``)
    at ``position`` (0-based) of the pass, every other record at x = 0, theta_0 = 0, d = 1.

    Raises:
        ValueError: the canary's gradient is not clipped, or noise before its step could unclip it with
            probability above 1e-12 (the pair would not attain the sensitivity 2 C).
    """
    from scipy import stats

    eta = np.asarray(step_sizes, dtype=float)
    first, own = float(eta[0]), float(eta[position])
    prior_std = 2.0 * clip_threshold * math.sqrt(max(first**2 - own**2, 0.0)) / rho
    means = []
    for y in (label, neighbour_label):
        gradient = -y * feature  # (x theta - y) x at theta = 0
        margin = abs(gradient) - clip_threshold
        if margin <= 0.0:
            raise ValueError(f"the canary's gradient {abs(gradient):g} is not above the clip {clip_threshold:g}.")
        # |(x theta - y) x| <= C needs |theta| >= margin / x^2
        unclipped = 0.0 if prior_std == 0.0 else 2.0 * float(stats.norm.sf(margin / feature**2 / prior_std))
        if unclipped > _CLIP_FAILURE:
            raise ValueError(f"noise before the canary's step unclips it with probability {unclipped:.3g} > 1e-12.")
        means.append(-min(own, 2.0 / feature**2) * math.copysign(clip_threshold, gradient))
    return GaussianLaw(mean=means[0], neighbour_mean=means[1], std=2.0 * clip_threshold * first / rho)


def _scaled(law: GaussianLaw, scale: float) -> GaussianLaw:
    return GaussianLaw(mean=law.mean * scale, neighbour_mean=law.neighbour_mean * scale, std=law.std * scale)


def _whitened(law: GaussianLaw, outputs: tuple[np.ndarray, np.ndarray]) -> tuple[WhitenedSample, ...]:
    return tuple(WhitenedSample(f"theta_n on {side}", (values - mean) / law.std)
                 for side, values, mean in zip(("D", "D'"), outputs, (law.mean, law.neighbour_mean), strict=True))


def _canary_pair(n: int, feature: float, label: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X (n, 1), y on D, y on D'): the canary first at (feature, -+label), the other records at (0, 0)."""
    features = np.zeros((n, 1))
    features[0, 0] = feature
    labels, neighbour_labels = np.zeros(n), np.zeros(n)
    labels[0], neighbour_labels[0] = -label, label
    return features, labels, neighbour_labels


# ---------------------------------------------------------------------------------------------------------------
# the paper row: the numpy simulator
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPGDCanary(Mechanism):
    """One-pass clipped DP-GD in d = 1 with the canary first and clipping active, through
    :func:`privdyn.algorithms.dpgd.simulate_dpgd` (fixed order); polynomial schedule eta~(t) = 1 - t (eq. 5.1)."""

    name: ClassVar[str] = "dpgd"
    description: ClassVar[str] = "one-pass clipped DP-GD (clipping active), simulate_dpgd: Proposition 4.1"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpgd.simulate_dpgd"

    n: int = 20
    clip: float = 1.0
    rho: float = 1.0
    canary_label: float = 5.0

    def _hyper(self, rho: float) -> Any:
        from privdyn.algorithms.dpgd import DPGDHyperparameters
        from privdyn.schedules import Polynomial

        return DPGDHyperparameters(clip=self.clip, learning_rate=Polynomial(initial_learning_rate=1.0,
                                                                            schedule_exponent=1.0), rho=rho)

    def reported(self) -> PrivacyLoss:
        from privdyn.privacy.iteration import privacy_level, rho_to_zcdp

        hyper = self._hyper(self.rho)
        level = privacy_level(hyper.step_sizes(self.n), hyper.noise_multipliers(self.n))
        zcdp = dataclasses.replace(level, value=float(rho_to_zcdp(float(level.value))), quantity="zcdp")
        return _epsilon_of_zcdp(zcdp, self.delta)

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        from privdyn.algorithms.dpgd import simulate_dpgd
        from privdyn.data.real import ArrayDataset

        features, labels, neighbour_labels = _canary_pair(self.n, 1.0, self.canary_label)
        # halving the noise of Algorithm 1 is running its calibration at twice the privacy level
        hyper = self._hyper(self.rho / self.noise_factor)
        outputs = []
        for side_labels, side in ((labels, "D"), (neighbour_labels, "D'")):
            data = ArrayDataset(features, side_labels, features[:1], side_labels[:1], name="canary", order="fixed")
            sim = simulate_dpgd(data=data, rows=hyper, num_runs=runs, seed=seed, unit_key=f"{unit_key}/{side}",
                                n=self.n, return_final_iterates=True)
            assert sim.final_iterates is not None
            outputs.append(np.array(sim.final_iterates[0, :, 0]))
        return outputs[0], outputs[1]

    def gaussian_law(self) -> GaussianLaw:
        """:func:`stated_law` at the privacy level the runs use (rho / noise_factor)."""
        return stated_law(feature=1.0, label=-self.canary_label, neighbour_label=self.canary_label,
                          step_sizes=self._hyper(self.rho).step_sizes(self.n), position=0,
                          clip_threshold=self.clip, rho=self.rho / self.noise_factor)


# ---------------------------------------------------------------------------------------------------------------
# the plan, run as its user runs it
# ---------------------------------------------------------------------------------------------------------------


def _statement_loss(statement: Any, delta: float, family: str) -> PrivacyLoss:
    """The plan's own (epsilon, delta) statement as a PrivacyLoss (refuses a plan stated at another delta)."""
    if statement.delta != delta:
        raise AssertionError(f"the plan reports delta={statement.delta!r}, not the audited {delta!r}")
    if statement.epsilon is None:
        raise AssertionError("the plan states no epsilon; the audited plan is made with an (epsilon, delta) budget")
    return PrivacyLoss(value=float(statement.epsilon), guarantee=statement.guarantee, quantity="epsilon",
                       neighboring=statement.neighboring,
                       source=f"privdyn.plan.{family}(...).privacy: {statement.accountant}")


_PLANS: dict[Any, Any] = {}


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlanDPGDCanary(Mechanism):
    """The plan of :func:`privdyn.plan.dpgd` for a public model in d = 1, run by :func:`privdyn.algorithms.dpgd.dpgd`
    (one call per run, the plan's clip, learning rate and rho) on the ``dpgd`` row's canary (x = 1 first, y = -+5);
    reported: the plan's statement; the law is stated from the statement's rho."""

    name: ClassVar[str] = "plan-dpgd"
    description: ClassVar[str] = "privdyn.plan.dpgd's plan run by algorithms.dpgd.dpgd, canary with clipping " \
                                 "active: the plan's privacy statement"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpgd.dpgd"

    n: int = 20
    epsilon: float = 3.0
    target_norm: float = 0.7
    label_noise: float = 0.7
    canary_label: float = 5.0

    def plan(self) -> DPGDPlan:
        """The planner's output (computed once per setting in a process, whatever noise_factor)."""
        from privdyn.plan import dpgd

        key = (self.n, self.epsilon, self.delta, self.target_norm, self.label_noise)
        if key not in _PLANS:
            _PLANS[key] = dpgd(n=self.n, d=1, spectrum="identity", target_norm=self.target_norm,
                               label_noise=self.label_noise, epsilon=self.epsilon, delta=self.delta)
        return _PLANS[key]

    def runs_for(self, runs: int) -> int:
        return max(100, runs // 8)  # a call costs about 0.4 ms

    def reported(self) -> PrivacyLoss:
        return _statement_loss(self.plan().privacy, self.delta, "dpgd")

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        from privdyn.algorithms.dpgd import dpgd

        plan = self.plan()
        features, labels, neighbour_labels = _canary_pair(self.n, 1.0, self.canary_label)
        outputs = []
        for side_labels, gen in zip((labels, neighbour_labels), _generators(seed, unit_key), strict=True):
            outputs.append(np.array([dpgd(features, side_labels, clip=plan.clip, learning_rate=plan.learning_rate,
                                          rho=plan.rho / self.noise_factor, rng=gen)[0] for _ in range(runs)]))
        return outputs[0], outputs[1]

    def gaussian_law(self) -> GaussianLaw:
        """:func:`stated_law` from the plan's steps and clip and the statement's rho (over noise_factor)."""
        plan = self.plan()
        return stated_law(feature=1.0, label=-self.canary_label, neighbour_label=self.canary_label,
                          step_sizes=plan.learning_rate.step_sizes(self.n), position=0,
                          clip_threshold=plan.clip,
                          rho=math.sqrt(2.0 * float(plan.privacy.training_zcdp or 0.0)) / self.noise_factor)


# ---------------------------------------------------------------------------------------------------------------
# the estimator, fitted once per run
# ---------------------------------------------------------------------------------------------------------------


def _privacy_loss(privacy: Any, delta: float, source: str) -> PrivacyLoss:
    """A fitted estimator's own ``privacy_`` as a PrivacyLoss (refuses an estimator fitted at another delta)."""
    if privacy["delta"] != delta:
        raise AssertionError(f"the estimator reports delta={privacy['delta']!r}, not the audited {delta!r}")
    return PrivacyLoss(value=float(privacy["epsilon"]), guarantee=privacy["guarantee"], quantity="epsilon",
                       neighboring=privacy["neighboring"], source=f"{source}: {privacy['accountant']}")


def _fit_seeds(gen: np.random.Generator, runs: int) -> np.ndarray:
    """One ``random_state`` per fit, drawn from the side's stream (independent fits, reproducible from the seed)."""
    return gen.integers(0, 2**63 - 1, size=runs, dtype=np.int64)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPLinearRegressionCanary(EstimatorRow):
    """:meth:`privdyn.sklearn.DPLinearRegression.fit` on the canary pair (module docstring), once per run.

    ``DPLinearRegression(epsilon=2, delta=1e-5, feature_norm=2, label_bound=3, fit_intercept=False,
    schedule="constant")`` on n = 20 rows: the canary at the public bounds (x = 2, y = -3 on D, +3 on D'), the
    others (0, 0). After the estimator's preprocessing (its recorded ``training_`` scales) the canary is z = s F with
    label -+1. The released ``coef_`` = B s theta_n has the stated law (:func:`stated_law` with the statement's rho
    and the fitted step size and clip, scaled by B s). Reported: the fitted ``privacy_``.
    """

    name: ClassVar[str] = "sklearn-dplinearregression"
    description: ClassVar[str] = ("sklearn DPLinearRegression.fit per run (constant schedule), canary at the public "
                                  "bounds: the fitted estimator's privacy_")
    entry_point: ClassVar[str] = "privdyn.sklearn.DPLinearRegression.fit"

    n: int = 20
    epsilon: float = 2.0
    feature_norm: float = 2.0
    label_bound: float = 3.0
    schedule: str = "constant"

    def runs_for(self, runs: int) -> int:
        return max(100, runs // 16)  # a fit costs about 2 ms (its statement's conversions)

    def data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(X, y on D, y on D'): the canary is row 0 at ``|x| = feature_norm``, ``y = -+label_bound``; the rest 0."""
        return _canary_pair(self.n, self.feature_norm, self.label_bound)

    def estimator(self, random_state: int) -> DPLinearRegression:
        """The unfitted estimator of this row."""
        from privdyn.sklearn import DPLinearRegression

        return DPLinearRegression(epsilon=self.epsilon, delta=self.delta, feature_norm=self.feature_norm,
                                  label_bound=self.label_bound, fit_intercept=False, schedule=self.schedule,
                                  random_state=int(random_state))

    def fitted(self) -> DPLinearRegression:
        """One fit on D at ``fit_seed`` (what the reported epsilon and the stated law are read from)."""
        features, labels, _ = self.data()
        return self.estimator(self.fit_seed).fit(features, labels)

    def reported(self) -> PrivacyLoss:
        return _privacy_loss(self.fitted().privacy_, self.delta, "DPLinearRegression.privacy_")

    def _fit(self, random_state: int, features: np.ndarray, labels: np.ndarray) -> Any:
        return self.estimator(random_state).fit(features, labels)

    def _fits(self, seed: int, unit_key: str, runs: int) -> list[list[Any]]:
        fits = []
        for side_labels, gen in zip(self.data()[1:], _generators(seed, unit_key), strict=True):
            features = self.data()[0]
            fits.append([self._fit(int(s), features, side_labels) for s in _fit_seeds(gen, runs)])
        return fits

    def law_of(self, estimator: DPLinearRegression) -> GaussianLaw:
        """The stated law of ``coef_[0]`` for a fitted estimator: its training step sizes, clip and scales, and the
        rho of its privacy statement's training share."""
        training = estimator.training_
        if training["solver"] != "dpgd":
            raise ValueError(f"{self.name} states DP-GD's law; this fit used the release's least-squares solution "
                             "(training_['solver'] == 'release'): audit it with solver='dpgd' or a smaller budget.")
        hyper = training["hyperparameters"]
        scale = float(training["feature_scale"]) * float(training["label_scale"])
        z = self.feature_norm * float(training["feature_scale"])
        steps = hyper.learning_rate.step_sizes(int(training["n"]))
        if not np.allclose(steps, steps[0], rtol=1e-12, atol=0.0):
            raise ValueError(f"{self.name} needs a constant schedule (the fit's order is random); got steps "
                             f"{steps[0]:g} .. {steps[-1]:g}.")
        law = stated_law(feature=z, label=-1.0, neighbour_label=1.0, step_sizes=steps, position=0,
                         clip_threshold=hyper.clip_threshold(int(training["width"])),
                         rho=self._statement_rho(estimator))
        return _scaled(law, scale)

    def _statement_rho(self, estimator: Any) -> float:
        privacy = estimator.privacy_
        return math.sqrt(2.0 * float(privacy["shares"][0]["zcdp"]))

    def run(self, seed: int, unit_key: str, runs: int) -> Runs:
        fits = self._fits(seed, unit_key, runs)
        outputs = (np.array([f.coef_[0] for f in fits[0]]), np.array([f.coef_[0] for f in fits[1]]))
        residuals = []
        for side, side_fits, values in zip((0, 1), fits, outputs, strict=True):
            laws = [self.law_of(f) for f in side_fits]
            means = np.array([law.mean if side == 0 else law.neighbour_mean for law in laws])
            residuals.append((values - means) / np.array([law.std for law in laws]))
        return Runs(scores=outputs, law=tuple(WhitenedSample(f"coef_ on {side}", r)
                                              for side, r in zip(("D", "D'"), residuals, strict=True)))

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        return self.run(seed, unit_key, runs).scores

    def gaussian_law(self) -> GaussianLaw:
        """The stated law of ``coef_[0]`` (:meth:`law_of` the reference fit; the same numbers for every fit)."""
        return self.law_of(self.fitted())


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPLinearRegressionPlanningShareCanary(DPLinearRegressionCanary):
    """:meth:`privdyn.sklearn.DPLinearRegression.fit` with ``planning_share = 0.3``, once per run, on the
    ``sklearn-dplinearregression`` canary pair.

    The fit releases three Gaussian planning statistics of the preprocessed rows (S_xx, S_xy, S_yy, each a third of
    the share) and theta_n trained with the plan made from them. The pair moves S_xy by its sensitivity and leaves
    S_xx and S_yy unchanged; given the statistics, theta_n is Gaussian with the shift rho of the training share
    (constant schedule), so the whole release is one Gaussian shift of sqrt(||w||^2 + rho^2), w the whitened shift of
    the statistics (the audited epsilon: the stated law of the composition). The runs: each fit's ``coef_`` against
    its own stated conditional law (its plan's step, clip and scales; the statement's training rho), whitened; the
    planning statistics are not released on their own, so their noise is checked only through the composition.
    """

    name: ClassVar[str] = "sklearn-dplinearregression-planning-share"
    description: ClassVar[str] = ("sklearn DPLinearRegression.fit per run, planning_share = 0.3 (three Gaussian "
                                  "planning releases + DP-GD): the fitted estimator's privacy_")

    planning_share: float = 0.3

    def runs_for(self, runs: int) -> int:
        return max(100, runs // 100)  # a fit plans from its released statistics: about 50 ms

    def estimator(self, random_state: int) -> DPLinearRegression:
        from privdyn.sklearn import DPLinearRegression

        return DPLinearRegression(epsilon=self.epsilon, delta=self.delta, feature_norm=self.feature_norm,
                                  label_bound=self.label_bound, fit_intercept=False, schedule=self.schedule,
                                  planning_share=self.planning_share, random_state=int(random_state))

    def _fit(self, random_state: int, features: np.ndarray, labels: np.ndarray) -> Any:
        """A fit, or None where the fit refuses to plan from its released statistics (a ValueError raised after the
        planning releases, before training: a function of those releases)."""
        try:
            return self.estimator(random_state).fit(features, labels)
        except ValueError as error:
            if "no positive eigenvalue" not in str(error):
                raise
            return None

    def _statement_rho(self, estimator: Any) -> float:
        shares = [share for share in estimator.privacy_["shares"] if share["use"].startswith("training")]
        return math.sqrt(2.0 * float(shares[0]["zcdp"]))

    def planning_shift(self) -> float:
        """||w||: the whitened shift of the planning statistics between D and D' (S_xy moves by its sensitivity; the
        noise standard deviations as the statement records them)."""
        shares = [share for share in self.fitted().privacy_["shares"] if "mechanisms" in share]
        if len(shares) != 1:
            raise ValueError("DPLinearRegression.privacy_['shares'] must hold one planning share with its mechanisms.")
        moments = {entry["statistic"]: entry for entry in shares[0]["mechanisms"]}
        entry = moments["feature_label_moment"]
        # D and D' differ in the canary's label only: S_xy moves by x (y' - y) = its sensitivity 2 b Y here
        return math.sqrt(2.0 * float(entry["zcdp"]))  # Delta / s with s = Delta / sqrt(2 zcdp)

    def gaussian_law(self) -> GaussianLaw:
        """N(0, 1) on D and N(sqrt(||w||^2 + rho^2), 1) on D' for the Neyman-Pearson score of the whole release."""
        rho = self._statement_rho(self.fitted())
        return GaussianLaw(mean=0.0, neighbour_mean=math.sqrt(self.planning_shift() ** 2 + rho**2), std=1.0)

    def run(self, seed: int, unit_key: str, runs: int) -> Runs:
        fits = self._fits(seed, unit_key, runs)
        residuals, scores = [], []
        for side, side_fits in enumerate(fits):
            trained = [f for f in side_fits if f is not None]
            values = np.array([f.coef_[0] for f in trained])
            laws = [self.law_of(f) for f in trained]
            means = np.array([law.mean if side == 0 else law.neighbour_mean for law in laws])
            stds = np.array([law.std for law in laws])
            residuals.append((values - means) / stds)
            # the training part of the score: theta's position between the two conditional means, in its std; a fit
            # that refused to plan scores 0 (post-processing of its released statistics)
            base = np.array([law.mean for law in laws])
            sign = np.sign(np.array([law.neighbour_mean - law.mean for law in laws]))
            score = np.zeros(len(side_fits))
            score[[i for i, f in enumerate(side_fits) if f is not None]] = sign * (values - base) / stds
            scores.append(score)
        samples = [WhitenedSample(f"coef_ on {side} given its plan", r)
                   for side, r in zip(("D", "D'"), residuals, strict=True)]
        samples.extend(self._planning_statistics_samples(seed, unit_key, 80, RELEASE_DRAWS))
        return Runs(scores=(scores[0], scores[1]), law=tuple(samples))

    def _planning_statistics_samples(self, seed: int, unit_key: str, plans: int,
                                     draws: int) -> tuple[WhitenedSample, WhitenedSample]:
        """The planning releases, checked against N(S, s^2) with the statement's s = Delta / sqrt(2 zcdp) per
        statistic (read from the plan's published mechanisms), on a public dataset: n = 2000 rows at x = 1 (the
        bound), half with y = 0.9, half 0.1 (S_xx = n, S_xy = n / 2, S_yy = 0.41 n).

        End to end: :func:`privdyn.plan.dpgd` (``data=...``, ``planning_share``, ``data_checks=False``), the call the
        estimator makes, ``plans`` times (a plan from data costs about half a second); the plan's model keeps the
        release it was estimated from (``plan.model.release``). Beside it, for power: ``draws`` calls of
        :func:`privdyn.plan.release_statistics`, the function that plan calls to draw the release, at the
        plan's planning zCDP (a variance test on one statistic needs a few hundred releases to see a x 0.6 noise).
        """
        from privdyn.plan import dpgd, release_statistics

        n = 2000
        features = np.ones((n, 1))
        labels = np.where(np.arange(n) % 2 == 0, 0.9, 0.1)
        stated = np.array([n, float(features[:, 0] @ labels), float(labels @ labels)])
        released = []
        stds = np.zeros(3)
        planning_zcdp = 0.0
        gen = _generators(seed, f"{unit_key}/planning")[0]
        for plan_seed in _fit_seeds(gen, plans):
            plan = dpgd(data=(features, labels), planning_share=self.planning_share, feature_norm_bound=1.0,
                        label_bound=1.0, epsilon=self.epsilon, delta=self.delta, schedules=("constant",),
                        rng=np.random.default_rng(int(plan_seed)), data_checks=False)
            release: Any = plan.model.release
            released.append((float(release.sxx[0, 0]), float(release.sxy[0]), float(release.syy)))
            entries = {m["statistic"]: m for m in plan.planning.mechanisms}
            stds = np.array([float(entries[name]["sensitivity"]) / math.sqrt(2.0 * float(entries[name]["zcdp"]))
                             for name in ("second_moment_features", "feature_label_moment", "label_second_moment")])
            planning_zcdp = float(plan.planning.zcdp)
        end_to_end = WhitenedSample("planning statistics (S_xx, S_xy, S_yy) of privdyn.plan.dpgd",
                                    (np.array(released) - stated) / stds)
        draw_gen = _generators(seed, f"{unit_key}/release")[0]
        direct = []
        for _ in range(draws):
            r = release_statistics(features, labels, feature_norm_bound=1.0, label_bound=1.0, zcdp=planning_zcdp,
                                   rng=draw_gen)
            direct.append((float(r.sxx[0, 0]), float(r.sxy[0]), float(r.syy)))
        beside = WhitenedSample(f"planning statistics of release_statistics ({draws} draws at the plan's zCDP)",
                                (np.array(direct) - stated) / stds)
        return end_to_end, beside


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPLinearRegressionReleaseSolutionCanary(EstimatorRow):
    """:meth:`privdyn.sklearn.DPLinearRegression.fit` where it solves by the release (``training_["solver"] ==
    "release"``), once per run: the second Gaussian release of S_xx and S_xy that the fit draws
    (``training_["second_release"]``) against its stated law.

    Data: n = 400 rows at x = F = 1 (d = 1, no intercept), labels 0.2 +- 0.8 alternating (a large residual, so that
    the planning release predicts the release solution more accurate than DP-GD: over 150 seeds per side the
    predicted ratio was at most 0.75, and the fit chose the release on every one); ``schedule="constant"`` keeps the
    DP-GD plan it compares with cheap (a fit takes about 0.1 s). The canary is row 0 with y = -B on D and +B on D'
    (B = 1). After preprocessing (scale s = sqrt(d')/F = 1, labels over B) S_xx = n on both sides and S_xy moves by
    2. The second release is drawn after the choice, from the data alone, so given the fit chose it, it is
    N(S, s^2) per statistic with the statement's s = Delta / sqrt(2 zcdp) of the training share's two mechanisms;
    the threshold test's score is the whitened S_xy, N(0, 1) on D and N(2 / s_xy, 1) on D'. It audits the training
    share's S_xy release alone (the reported epsilon also holds the planning release and S_xx's release): 2.04
    against the reported 4 at seed 0.
    Fits that chose DP-GD are left out; if more than a tenth of them did, the row raises (its premise failed).
    """

    name: ClassVar[str] = "sklearn-dplinearregression-release-solution"
    description: ClassVar[str] = ("sklearn DPLinearRegression.fit per run where it solves by the release (second "
                                  "Gaussian release of S_xx, S_xy): the fitted estimator's privacy_")
    entry_point: ClassVar[str] = "privdyn.sklearn.DPLinearRegression.fit"

    n: int = 400
    epsilon: float = 4.0
    feature_norm: float = 1.0
    label_bound: float = 1.0
    planning_share: float = 0.3

    def runs_for(self, runs: int) -> int:
        return max(100, runs // 100)  # a fit plans from its planning release: about 0.1 s

    def data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(X (n, 1), y on D, y on D'): every row at x = F, labels 0.2 +- 0.8; row 0 is the canary (-+B)."""
        features = np.full((self.n, 1), self.feature_norm)
        labels = 0.2 + 0.8 * np.where(np.arange(self.n) % 2 == 0, 1.0, -1.0)
        neighbour_labels = labels.copy()
        labels[0], neighbour_labels[0] = -self.label_bound, self.label_bound
        return features, labels, neighbour_labels

    def estimator(self, random_state: int) -> DPLinearRegression:
        from privdyn.sklearn import DPLinearRegression

        return DPLinearRegression(epsilon=self.epsilon, delta=self.delta, feature_norm=self.feature_norm,
                                  label_bound=self.label_bound, fit_intercept=False, schedule="constant",
                                  planning_share=self.planning_share, random_state=int(random_state))

    def fitted(self) -> DPLinearRegression:
        """One fit on D at ``fit_seed`` (what the reported epsilon and the stated law are read from)."""
        features, labels, _ = self.data()
        fitted = self.estimator(self.fit_seed).fit(features, labels)
        if fitted.training_["solver"] != "release":
            raise ValueError(f"{self.name}: the reference fit (seed {self.fit_seed}) chose DP-GD, not the release.")
        return fitted

    def reported(self) -> PrivacyLoss:
        return _privacy_loss(self.fitted().privacy_, self.delta, "DPLinearRegression.privacy_")

    def stated_stds(self) -> np.ndarray:
        """(s_xx, s_xy) of the second release, from the statement's training share: s = Delta / sqrt(2 zcdp)."""
        entries = {m["statistic"]: m for m in self.fitted().privacy_["shares"][0]["mechanisms"]}
        return np.array([float(entries[k]["sensitivity"]) / math.sqrt(2.0 * float(entries[k]["zcdp"]))
                         for k in ("second_moment_features", "feature_label_moment")])

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """(S_xx, S_xy) of the preprocessed rows on D and on D' (rows z = x s, labels y / B)."""
        features, labels, neighbour_labels = self.data()
        training = self.fitted().training_
        z = features[:, 0] * float(training["feature_scale"])
        scale = float(training["label_scale"])
        on_d, on_neighbour = (np.array([float(z @ z), float(z @ y) / scale]) for y in (labels, neighbour_labels))
        return on_d, on_neighbour

    def run(self, seed: int, unit_key: str, runs: int) -> Runs:
        features = self.data()[0]
        stds = self.stated_stds()
        statistics = self.statistics()
        scores, residuals = [], []
        for side, (y, stated, gen) in enumerate(zip(self.data()[1:], statistics, _generators(seed, unit_key),
                                                    strict=True)):
            released = []
            for fit_seed in _fit_seeds(gen, runs):
                fitted = self.estimator(int(fit_seed)).fit(features, y)
                if fitted.training_["solver"] == "release":
                    drawn = fitted.training_["second_release"]
                    released.append((float(drawn["second_moment_features"][0, 0]),
                                     float(drawn["feature_label_moment"][0])))
            if len(released) < 0.9 * runs:
                raise ValueError(f"{self.name}: only {len(released)} of {runs} fits on side {side} solved by the "
                                 "release; the row needs the release solution chosen.")
            whitened = (np.array(released) - stated) / stds
            residuals.append(whitened)
            scores.append(whitened[:, 1] + (stated[1] - statistics[0][1]) / stds[1])  # centred on D's law
        samples = tuple(WhitenedSample(f"second release (S_xx, S_xy) on {side}", r)
                        for side, r in zip(("D", "D'"), residuals, strict=True))
        return Runs(scores=(scores[0], scores[1]), law=samples)

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        return self.run(seed, unit_key, runs).scores

    def gaussian_law(self) -> GaussianLaw:
        """The whitened S_xy of the second release: N(0, 1) on D, N(2 / s_xy, 1) on D'."""
        on_d, on_neighbour = self.statistics()
        return GaussianLaw(mean=0.0, neighbour_mean=float((on_neighbour[1] - on_d[1]) / self.stated_stds()[1]),
                           std=1.0)
