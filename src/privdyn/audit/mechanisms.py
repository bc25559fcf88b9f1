"""The mechanisms privdyn audits: each run on a worst-case pair of neighbouring datasets (a canary).

Every mechanism runs a public entry point of privdyn (``Mechanism.entry_point``) on a canary pair chosen so that the
privacy loss of the release is the privacy loss the accountant bounds (the pair attains the sensitivity the
accountant assumes). A mechanism knows four things:

* :meth:`Mechanism.reported`: the epsilon privdyn reports for it, with its guarantee label;
* :meth:`Mechanism.scores`: ``runs`` outputs on D and on D' reduced to one score each (a large score points to D');
* :meth:`Mechanism.run`: the scores and the release's law samples, checked against the stated law
  (:mod:`privdyn.audit.law`);
* :meth:`Mechanism.gaussian_law`: where the score's law is Gaussian, its means on D and D' and its standard
  deviation, stated from the mechanism's definition and its statement (not from privdyn's noise code), else None.

``noise_factor`` multiplies the noise the mechanism *runs* with while the reported epsilon keeps the nominal noise,
where the entry point has a public knob for it (a paper row's noise scale, a plan's rho): ``noise_factor=0.5``
plants the bug "an accountant whose noise is halved", which an audit must flag. Rows that run an estimator's fit have
no such knob; :mod:`privdyn.audit.mutants` plants bugs in the code itself.

Worst-case pairs:

* ``langevin-quadratic`` / ``langevin-logistic``: noisy GD (Chourasia, Ye, Shokri 2021, arXiv 2102.05855,
  Algorithm 1; accounted by Corollary 1) on n one-dimensional records, all at the same point except the canary,
  which sits at the other end of the data domain; the gradient difference is the sensitivity.
* ``dpgd``: one-pass clipped DP-GD (Bombari et al., arXiv 2505.16329, Algorithm 1; Proposition 4.1) through
  :func:`privdyn.algorithms.dpgd.simulate_dpgd`: :mod:`privdyn.audit.dpgd_rows`.
* ``hsgd``: one-pass noisy SGD on least squares (Lin et al., arXiv 2510.16687, Algorithm 1) with a label canary,
  against the homogenized-SGD surrogate: :mod:`privdyn.audit.noisy_sgd`.
* ``dpsgd-*``: DP-SGD with correlated noise (Wang et al., arXiv 2605.12648, Algorithm 1) where every record but the
  canary has gradient 0 and the canary's clipped gradient is +clip. Released iterates are equivalent to the noisy
  sums; divided by clip they are ``y_t = b_t + noise_multiplier * xi_t`` with b_t the canary's participation in
  step t and xi = C^{-1} Z the strategy's correlated noise (zero-out and add-remove: b_t is 0 on D' ... 1 on D;
  replace-one: the replacement's gradient is -clip, so D' sees -b_t). Under fixed-size sampling a given record
  joins each step with probability B/n, independently across steps, exactly as under Poisson sampling with rate
  B/n: the reduction of both samplers is the same, only the accountant (relation, sampler) differs. The noise comes
  from the simulator's own noise engine (:meth:`privdyn.privacy.correlated.Strategy.stream`), and beside these
  vectorized runs :class:`privdyn.algorithms.dpsgd.DPSGD` itself runs on the canary for the law check.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from privdyn.audit.base import GaussianLaw, Mechanism, Runs, _epsilon_of_zcdp, _generators
from privdyn.audit.dpgd_rows import (
    DPGDCanary,
    DPLinearRegressionCanary,
    DPLinearRegressionPlanningShareCanary,
    DPLinearRegressionReleaseSolutionCanary,
    PlanDPGDCanary,
)
from privdyn.audit.estimators import AdaSSPCanary, PlanDPSGDCanary, PlanHSGDCanary, PlanLangevinCanary
from privdyn.audit.law import WhitenedSample
from privdyn.audit.logistic import DPLogisticRegressionCanary
from privdyn.audit.noisy_sgd import NoisySGDLeastSquares
from privdyn.audit.torch_optimizer import (
    TorchDPSGDPoisson,
    TorchDPSGDRandomAllocation,
    TorchLambdaCGDFixedSize,
    TorchLambdaCGDPoisson,
)
from privdyn.privacy.labels import NeighboringRelation, PrivacyLoss

if TYPE_CHECKING:
    from privdyn.privacy.mechanism import DPSGDMechanism

__all__ = [
    "DPGDCanary",
    "DPSGDCanary",
    "DPSGDBLTPoisson",
    "DPSGDBandedCyclicPoisson",
    "DPSGDCorrelatedFixedSize",
    "DPSGDCorrelatedPoisson",
    "DPSGDCorrelatedRandomAllocation",
    "DPSGDFixedSize",
    "DPSGDPoisson",
    "DPSGDRandomAllocation",
    "LangevinLogistic",
    "LangevinQuadratic",
    "LangevinQuadraticShiftedInterpolation",
    "MECHANISMS",
    "mechanism",
]


# ---------------------------------------------------------------------------------------------------------------
# noisy GD (langevin)
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class LangevinQuadratic(Mechanism):
    """Noisy GD on 0.5 (theta - x)^2 with records in [0, sensitivity]: D all at 0, D' with one record at
    ``sensitivity``; the Gaussian start of Corollary 1. The output law is exactly Gaussian."""

    name: ClassVar[str] = "langevin-quadratic"
    description: ClassVar[str] = "noisy GD, quadratic loss (Gaussian output): Corollary 1"
    entry_point: ClassVar[str] = "privdyn.algorithms.noisy_gd.noisy_gd"

    n: int = 10
    num_steps: int = 50
    step_size: float = 0.1
    noise_scale: float = 0.2
    sensitivity: float = 1.0

    def _data(self) -> tuple[np.ndarray, np.ndarray]:
        data = np.zeros((self.n, 1))
        neighbour = data.copy()
        neighbour[0, 0] = self.sensitivity
        return data, neighbour

    def reported(self) -> PrivacyLoss:
        from privdyn.privacy.langevin import dynamics_zcdp

        zcdp = dynamics_zcdp(num_steps=self.num_steps, step_size=self.step_size, noise_scale=self.noise_scale,
                             strong_convexity=1.0, smoothness=1.0, sensitivity=self.sensitivity, n=self.n)
        return _epsilon_of_zcdp(zcdp, self.delta)

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        """theta_K of ``runs`` runs of :func:`~privdyn.algorithms.noisy_gd.noisy_gd` per dataset, in three parts, one
        per kind of noise source noisy_gd accepts: one Generator for all runs, one Generator per run
        (:func:`privdyn.rng.run_generators`) and a :class:`privdyn.rng.CounterStream`."""
        from privdyn.algorithms.noisy_gd import QuadraticLoss, noisy_gd
        from privdyn.rng import counter_stream, run_generators

        outputs = []
        sizes = (runs - 2 * (runs // 3), runs // 3, runs // 3)
        for data, gen, side in zip(self._data(), _generators(seed, unit_key), ("D", "D'"), strict=True):
            sources: tuple[Any, ...] = (gen, run_generators(seed, f"{unit_key}/{side}/per-run", sizes[1]),
                                        counter_stream(seed, f"{unit_key}/{side}/counter"))
            parts = [noisy_gd(QuadraticLoss(), data, num_steps=self.num_steps, step_size=self.step_size,
                              noise_scale=self.noise_scale * self.noise_factor, rng=source, num_runs=size,
                              strong_convexity=1.0)[:, 0]
                     for source, size in zip(sources, sizes, strict=True) if size > 0]
            outputs.append(np.concatenate(parts))
        return outputs[0], outputs[1]

    def gaussian_law(self) -> GaussianLaw:
        """Propagate theta_{k+1} = (1 - eta) theta_k + eta mean(D) + sqrt(2 eta) sigma Z_k from N(0, 2 sigma^2)."""
        sigma = self.noise_scale * self.noise_factor
        means = []
        for data in self._data():
            mean, variance = 0.0, 2.0 * sigma**2
            centre = float(data.mean())
            for _ in range(self.num_steps):
                mean = (1.0 - self.step_size) * mean + self.step_size * centre
                variance = (1.0 - self.step_size) ** 2 * variance + 2.0 * self.step_size * sigma**2
            means.append(mean)
        return GaussianLaw(mean=means[0], neighbour_mean=means[1], std=math.sqrt(variance))


@dataclasses.dataclass(frozen=True, kw_only=True)
class LangevinQuadraticShiftedInterpolation(LangevinQuadratic):
    """The ``langevin-quadratic`` runs, reported by :class:`privdyn.privacy.NoisyGDMechanism` (the accountant of
    :class:`privdyn.sklearn.DPLogisticRegression`): shifted interpolation's μ-GDP (arXiv 2403.00278) at λ = β = 1.
    The quadratic is that bound's worst case (its map θ ↦ (1 − η)θ + η·mean(D) is linear, and its gradients differ by
    exactly the sensitivity), so the row is tight up to the start's variance, which the bound ignores: an
    under-report would show as a violation."""

    name: ClassVar[str] = "langevin-quadratic-shifted-interpolation"
    description: ClassVar[str] = ("noisy GD, quadratic loss (Gaussian output): NoisyGDMechanism, shifted "
                                  "interpolation (DPLogisticRegression's accountant)")

    def reported(self) -> PrivacyLoss:
        from privdyn.privacy.mechanism import NoisyGDMechanism

        record = NoisyGDMechanism(n=self.n, num_steps=self.num_steps, step_size=self.step_size,
                                  noise_scale=self.noise_scale, strong_convexity=1.0, smoothness=1.0,
                                  sensitivity=self.sensitivity)
        if record.bound != "shifted_interpolation":
            raise AssertionError(f"the record's bound is {record.bound!r}, not shifted interpolation")
        return record.privacy_loss(self.delta)


@dataclasses.dataclass(frozen=True, kw_only=True)
class LangevinLogistic(Mechanism):
    """Noisy GD on the ridge-regularized logistic loss with ``|x| <= 1``, y = +-1: D' flips the canary's label.

    The logistic gradients of two records differ by at most ``2 max|x|`` (the ridge terms cancel), the sensitivity
    given to Corollary 1. The output law is not Gaussian: the audit is a threshold test on theta_K.
    """

    name: ClassVar[str] = "langevin-logistic"
    description: ClassVar[str] = "noisy GD, logistic loss (non-Gaussian output): Corollary 1"
    entry_point: ClassVar[str] = "privdyn.algorithms.noisy_gd.noisy_gd"

    n: int = 10
    num_steps: int = 50
    step_size: float = 1.0
    noise_scale: float = 0.6
    ridge: float = 0.5

    def _data(self) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        x = np.zeros((self.n, 1))
        x[0, 0] = 1.0
        y = np.ones(self.n)
        flipped = y.copy()
        flipped[0] = -1.0
        return (x, flipped), (x, y)

    def reported(self) -> PrivacyLoss:
        from privdyn.privacy.langevin import dynamics_zcdp

        zcdp = dynamics_zcdp(num_steps=self.num_steps, step_size=self.step_size, noise_scale=self.noise_scale,
                             strong_convexity=self.ridge, smoothness=0.25 + self.ridge, sensitivity=2.0, n=self.n)
        return _epsilon_of_zcdp(zcdp, self.delta)

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        from privdyn.algorithms.noisy_gd import LogisticLoss, noisy_gd

        loss = LogisticLoss(ridge=self.ridge)
        outputs = []
        for data, gen in zip(self._data(), _generators(seed, unit_key), strict=True):
            theta = noisy_gd(loss, data, num_steps=self.num_steps, step_size=self.step_size,
                             noise_scale=self.noise_scale * self.noise_factor, rng=gen, num_runs=runs,
                             strong_convexity=self.ridge)
            outputs.append(theta[:, 0])
        return outputs[0], outputs[1]


# ---------------------------------------------------------------------------------------------------------------
# DP-SGD with correlated noise (kan)
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDCanary(Mechanism):
    """DP-SGD with correlated noise on the canary reduction (module docstring); subclasses fix the sampler, the
    relation and the strategy (lambda-CGD with ``noise_correlation`` unless :meth:`_strategy` is overridden).

    The score whitens the release, w = C y = sign b + kappa Z (C the strategy's encoder), and sums over steps the
    log-likelihood ratio of "the canary joined step s" against "it joined none":
    sum_s log((1 - q) + q exp((<w, c_s> - ||c_s||^2 / 2) / kappa^2)), c_s the s-th column of C and kappa the nominal
    noise multiplier (for replace-one, the difference of that sum at w and -w). With independent noise (C = I) it is
    the Neyman-Pearson statistic of the Poisson mixture; with correlated noise it ignores the overlap of the columns
    and is a valid, weaker statistic (any score gives a valid lower bound).
    """

    sampler: ClassVar[str]
    neighboring: ClassVar[str]

    noise_correlation: float = 0.0
    noise_multiplier: float = 1.0
    n: int = 100
    batch_size: int = 10
    num_steps: int = 20

    def _strategy(self) -> Any:
        from privdyn.privacy.correlated import LambdaCGD

        return LambdaCGD(self.noise_correlation)

    def record(self) -> DPSGDMechanism:
        """The audited run's :class:`~privdyn.privacy.mechanism.DPSGDMechanism` record."""
        from privdyn.privacy.mechanism import DPSGDMechanism

        return DPSGDMechanism(strategy=self._strategy(), noise_multiplier=self.noise_multiplier, n=self.n,
                              batch_size=self.batch_size, num_steps=self.num_steps, sampler=self.sampler,
                              neighboring=NeighboringRelation(self.neighboring))

    def reported(self) -> PrivacyLoss:
        return self.record().privacy_loss(self.delta)

    end_to_end_steps: int = 8000
    """Steps per dataset of :class:`privdyn.algorithms.dpsgd.DPSGD` itself, for the law check (:meth:`run`): that
    many over ``num_steps`` runs (at least 100)."""

    def _signs(self) -> tuple[float, float]:
        return 1.0, (-1.0 if self.neighboring == "replace_one" else 0.0)

    def _stream_noise(self, strategy: Any, seed: int, key: str, runs: int, kappa: float) -> np.ndarray:
        """kappa xi of ``runs`` runs, shape (runs, T), from the noise engine
        (:meth:`Strategy.stream <privdyn.privacy.correlated.Strategy.stream>` over a vector of one coordinate per
        run): the first half of the runs buffered, the second half regenerating past normals where the strategy
        supports it (the stream's two paths)."""
        from privdyn.rng import step_normals

        half = runs // 2 if strategy.supports_regeneration else runs
        parts = []
        for size, regenerate, part in ((half, False, "buffered"), (runs - half, True, "regenerated")):
            if size == 0:
                continue
            stream = strategy.stream((size,), step_normals(seed, f"{key}/{part}"), num_steps=self.num_steps,
                                     scale=kappa, regenerate=regenerate)
            parts.append(np.stack([stream.next().copy() for _ in range(self.num_steps)], axis=1))
        return np.concatenate(parts)

    def _vectorized(self, seed: int, unit_key: str, runs: int) -> tuple[tuple[np.ndarray, np.ndarray],
                                                                          list[WhitenedSample]]:
        """The release y_t = sign b_t + kappa xi_t of ``runs`` runs per dataset (noise from :meth:`_stream_noise`,
        the canary's participation b_t drawn with the sampler's per-step probability B/n): the scores, and the
        releases given b whitened by the stated law, C (y - sign b) / kappa ~ N(0, I_T), kappa nominal."""
        q = self.batch_size / self.n
        strategy = self._strategy()
        encoder = strategy.encoder_matrix(self.num_steps)
        kappa = self.noise_multiplier * self.noise_factor
        outputs, samples = [], []
        for sign, gen, side in zip(self._signs(), _generators(seed, unit_key), ("D", "D'"), strict=True):
            participation = gen.random((runs, self.num_steps)) < q
            noise = self._stream_noise(strategy, seed, f"{unit_key}/{side}", runs, kappa)
            released = sign * participation + noise
            outputs.append(self._score(released @ encoder.T, encoder, q))
            samples.append(WhitenedSample(f"noise engine releases on {side}",
                                          noise @ encoder.T / self.noise_multiplier))
        # the statistic is large on D (with the canary); the audit's scores are large on D'
        return (-outputs[0], -outputs[1]), samples

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        """The scores of :meth:`_vectorized`."""
        return self._vectorized(seed, unit_key, runs)[0]

    other_strategies: ClassVar[bool] = False
    """Whether the row's law check also runs the strategy families no accountant row covers (a three-band inverse,
    the square root, a Toeplitz encoder) through the noise engine (``runs`` runs, both of its paths) and DPSGD
    (100 runs), each against its own stated law."""

    def run(self, seed: int, unit_key: str, runs: int) -> Runs:
        """:meth:`_vectorized` (scores and law), and ``end_to_end_steps / num_steps`` runs per dataset of
        :class:`~privdyn.algorithms.dpsgd.DPSGD` on the canary (one weight, per-example loss x w; the canary's
        feature ``10 clip``, the others 0; past normals regenerated where the strategy supports it), whose releases
        y_t = (W_{t-1} - W_t) B / (eta clip) given the canary's participation (the step clipped one gradient) are
        whitened by the stated law: C (y - sign b) / kappa ~ N(0, I_T), kappa nominal."""
        scores, samples = self._vectorized(seed, unit_key, runs)
        strategy = self._strategy()
        end_to_end = max(100, self.end_to_end_steps // self.num_steps)
        for sign, side in zip(self._signs(), ("D", "D'"), strict=True):
            residuals = self._dpsgd_residuals(seed, f"{unit_key}/end-to-end/{side}", strategy,
                                              strategy.supports_regeneration, sign, end_to_end)
            samples.append(WhitenedSample(f"DPSGD releases on {side}", residuals @ strategy.encoder_matrix(
                self.num_steps).T / self.noise_multiplier))
        if self.other_strategies:
            from privdyn.privacy.correlated import BandedInverse, SquareRoot, Toeplitz

            kappa = self.noise_multiplier * self.noise_factor
            for other in (BandedInverse((1.0, -0.5, 0.2)), SquareRoot(), Toeplitz((1.0, 0.5, 0.25))):
                encoder = other.encoder_matrix(self.num_steps)
                noise = self._stream_noise(other, seed, f"{unit_key}/{other!r}", runs, kappa)
                samples.append(WhitenedSample(f"noise engine with {other!r}", noise @ encoder.T
                                              / self.noise_multiplier))
                residuals = self._dpsgd_residuals(seed, f"{unit_key}/end-to-end/{other!r}", other,
                                                  other.supports_regeneration, 1.0, 100)
                samples.append(WhitenedSample(f"DPSGD releases with {other!r} on D", residuals @ encoder.T
                                              / self.noise_multiplier))
        return Runs(scores=scores, law=tuple(samples))

    def _dpsgd_residuals(self, seed: int, key: str, strategy: Any, regenerate: bool, sign: float,
                         runs: int) -> np.ndarray:
        """y - sign b, shape (runs, T), of ``runs`` runs of DPSGD on the canary with ``strategy``."""
        from privdyn.algorithms.dpsgd import DPSGD
        from privdyn.rng import generator, step_normals

        step_size, clip = 0.5, 1.0
        features = np.zeros((self.n, 1))
        features[0, 0] = sign * 10.0 * clip
        residuals = np.empty((runs, self.num_steps))
        for r in range(runs):
            private = DPSGD(_CanaryModel(), np.zeros((1, 1)), features, np.ones(self.n), step_size=step_size,
                            batch_size=self.batch_size, clip=clip,
                            noise_multiplier=self.noise_multiplier * self.noise_factor, strategy=strategy,
                            sampler=self.sampler, sampling_rng=generator(seed, key, run_index=r, purpose="sampling"),
                            noise_rng=step_normals(seed, key, run=r), num_steps=self.num_steps,
                            regenerate=regenerate)
            previous = 0.0
            for t in range(self.num_steps):
                current = float(private.step()[0, 0])
                joined = private.last_num_clipped if sign != 0.0 else 0
                residuals[r, t] = (previous - current) * self.batch_size / (step_size * clip) - sign * joined
                previous = current
        return residuals

    def _score(self, whitened: np.ndarray, encoder: np.ndarray, q: float) -> np.ndarray:
        variance = self.noise_multiplier**2  # nominal: the test does not know the actual noise
        half_norms = 0.5 * np.sum(encoder**2, axis=0)

        def log_ratio(values: np.ndarray) -> np.ndarray:
            evidence = (values @ encoder - half_norms) / variance
            return np.logaddexp(math.log1p(-q), math.log(q) + evidence).sum(axis=1)

        if self.neighboring == "replace_one":
            return log_ratio(whitened) - log_ratio(-whitened)
        return log_ratio(whitened)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDPoisson(DPSGDCanary):
    """DP-SGD, independent noise (lambda = 0), Poisson sampling, add-remove neighbours."""

    name: ClassVar[str] = "dpsgd-poisson"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpsgd.DPSGD.step"
    description: ClassVar[str] = "DP-SGD, lambda = 0, Poisson sampling, add-remove: dp-accounting PLD"
    sampler: ClassVar[str] = "poisson"
    neighboring: ClassVar[str] = "add_remove"


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDRandomAllocation(DPSGDCanary):
    """DP-SGD, independent noise, random allocation (balls-in-bins: the canary joins exactly one uniformly drawn step
    of each epoch of t = ceil(n / B) steps), add-remove neighbours: the random-allocation PLD
    (:mod:`privdyn.privacy.random_allocation`). The score is the Neyman-Pearson statistic of the pair, summed over
    epochs: log((1/t) sum_j exp((y_j - 1/2) / kappa^2) + (t - s)/t) over the s released steps of each epoch."""

    name: ClassVar[str] = "dpsgd-random-allocation"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpsgd.DPSGD.step"
    description: ClassVar[str] = "DP-SGD, lambda = 0, random allocation (balls-in-bins), add-remove: allocation PLD"
    sampler: ClassVar[str] = "random_allocation"
    neighboring: ClassVar[str] = "add_remove"

    def _steps_per_epoch(self) -> int:
        return -(-self.n // self.batch_size)

    def _vectorized(self, seed: int, unit_key: str, runs: int) -> tuple[tuple[np.ndarray, np.ndarray],
                                                                          list[WhitenedSample]]:
        """The release y_t = b_t + kappa Z_t on D (b: one uniform step per epoch) and kappa Z_t on D'."""
        t = self._steps_per_epoch()
        epochs = -(-self.num_steps // t)
        kappa = self.noise_multiplier * self.noise_factor
        strategy = self._strategy()
        outputs, samples = [], []
        for sign, gen, side in zip(self._signs(), _generators(seed, unit_key), ("D", "D'"), strict=True):
            participation = np.zeros((runs, epochs * t))
            slots = gen.integers(0, t, size=(runs, epochs)) + t * np.arange(epochs)
            np.put_along_axis(participation, slots, 1.0, axis=1)
            noise = self._stream_noise(strategy, seed, f"{unit_key}/{side}", runs, kappa)
            released = sign * participation[:, :self.num_steps] + noise
            outputs.append(self._allocation_score(released, t))
            samples.append(WhitenedSample(f"noise engine releases on {side}", noise / self.noise_multiplier))
        return (-outputs[0], -outputs[1]), samples

    def _allocation_score(self, released: np.ndarray, t: int) -> np.ndarray:
        from scipy.special import logsumexp

        variance = self.noise_multiplier**2  # nominal: the test does not know the actual noise
        total = np.zeros(released.shape[0])
        for start in range(0, self.num_steps, t):
            block = (released[:, start:start + t] - 0.5) / variance
            unreleased = t - block.shape[1]
            terms = block if unreleased == 0 else np.concatenate(
                [block, np.full((block.shape[0], 1), math.log(unreleased))], axis=1)
            total += logsumexp(terms, axis=1) - math.log(t)
        return total


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDBandedCyclicPoisson(DPSGDCanary):
    """DP-SGD, a two-band Toeplitz encoder, cyclic Poisson sampling (the records in b = 2 fixed parts, part t mod b
    active at step t, rate q = B b / n inside it), add-remove neighbours: Theorem 4 of Choquette-Choo et al. 2023
    (:mod:`privdyn.privacy.cyclic_poisson`). The canary's participation comes from the shipped sampler
    (:func:`privdyn.algorithms.dpsgd.sample_batches`, one sampler and one partition per run; the canary is record
    0). The score is the Neyman-Pearson statistic of the release with the canary's part unknown:
    log((1/b) sum_j prod_{s = j mod b} ((1 - q) + q exp((<w, c_s> - ||c_s||^2 / 2) / kappa^2))), w = C y (the columns
    of one part have disjoint supports, so the product is exact)."""

    name: ClassVar[str] = "dpsgd-banded-cyclic-poisson"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpsgd.DPSGD.step"
    description: ClassVar[str] = "DP-SGD, 2-band Toeplitz encoder, cyclic Poisson, add-remove: Theorem 4 (PLD)"
    sampler: ClassVar[str] = "cyclic_poisson"
    neighboring: ClassVar[str] = "add_remove"

    n: int = 30
    batch_size: int = 5
    noise_multiplier: float = 1.5
    encoder_coefficients: tuple[float, ...] = (1.0, 0.5)

    def _strategy(self) -> Any:
        from privdyn.privacy.correlated import Toeplitz

        return Toeplitz(self.encoder_coefficients)

    def _vectorized(self, seed: int, unit_key: str, runs: int) -> tuple[tuple[np.ndarray, np.ndarray],
                                                                          list[WhitenedSample]]:
        """The release y_t = b_t + kappa xi_t on D (b: the canary's participation in the shipped sampler's batches)
        and kappa xi_t on D'."""
        from privdyn.algorithms.dpsgd import sample_batches
        from privdyn.privacy.cyclic_poisson import num_partitions

        strategy = self._strategy()
        parts = num_partitions(strategy)
        q = self.batch_size * parts / self.n
        encoder = strategy.encoder_matrix(self.num_steps)
        kappa = self.noise_multiplier * self.noise_factor
        outputs, samples = [], []
        for sign, gen, side in zip(self._signs(), _generators(seed, unit_key), ("D", "D'"), strict=True):
            participation = np.zeros((runs, self.num_steps))
            if sign != 0.0:
                for r in range(runs):
                    batches = sample_batches(self.sampler, n=self.n, batch_size=self.batch_size, rng=gen,
                                             num_partitions=parts)
                    for t in range(self.num_steps):
                        batch = next(batches)
                        participation[r, t] = batch.size > 0 and batch[0] == 0  # sorted indices: the canary first
            noise = self._stream_noise(strategy, seed, f"{unit_key}/{side}", runs, kappa)
            released = sign * participation + noise
            outputs.append(self._cyclic_score(released @ encoder.T, encoder, q, parts))
            samples.append(WhitenedSample(f"noise engine releases on {side}",
                                          noise @ encoder.T / self.noise_multiplier))
        return (-outputs[0], -outputs[1]), samples

    def _cyclic_score(self, whitened: np.ndarray, encoder: np.ndarray, q: float, parts: int) -> np.ndarray:
        from scipy.special import logsumexp

        variance = self.noise_multiplier**2  # nominal: the test does not know the actual noise
        evidence = (whitened @ encoder - 0.5 * np.sum(encoder**2, axis=0)) / variance
        per_step = np.logaddexp(math.log1p(-q), math.log(q) + evidence) if q < 1.0 else evidence
        by_part = np.stack([per_step[:, j::parts].sum(axis=1) for j in range(parts)], axis=1)
        return logsumexp(by_part, axis=1) - math.log(parts)


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDCorrelatedRandomAllocation(DPSGDCanary):
    """DP-SGD, lambda-CGD noise (lambda = 0.5), random allocation (two steps per epoch, six epochs), add-remove
    neighbours: the one-step-per-epoch sensitivity bound (:mod:`privdyn.privacy.correlated_allocation`).

    The canary's participation comes from the shipped sampler itself,
    :func:`~privdyn.algorithms.dpsgd.sample_batches` with ``sampler="random_allocation"`` (one endless stream per
    dataset, ``num_steps`` batches per run: whole epochs, so runs are independent), the noise from the shipped noise
    engine. The score is the Neyman-Pearson statistic of the exact pair on the whitened release w = C y: the log of
    the mean over all t^E one-step-per-epoch sets S of exp((<w, C 1_S> - ||C 1_S||^2 / 2) / kappa^2)."""

    name: ClassVar[str] = "dpsgd-cgd-random-allocation"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpsgd.DPSGD.step"
    description: ClassVar[str] = ("DP-SGD, lambda-CGD (lambda = 0.5), random allocation, add-remove: "
                                  "one-step-per-epoch sensitivity bound")
    sampler: ClassVar[str] = "random_allocation"
    neighboring: ClassVar[str] = "add_remove"

    noise_correlation: float = 0.5
    noise_multiplier: float = 3.5
    n: int = 20
    batch_size: int = 10
    num_steps: int = 12

    def _vectorized(self, seed: int, unit_key: str, runs: int) -> tuple[tuple[np.ndarray, np.ndarray],
                                                                          list[WhitenedSample]]:
        """The release y_t = b_t + kappa xi_t on D (b: the canary's steps in the shipped sampler's batches) and
        kappa xi_t on D'."""
        from privdyn.algorithms.dpsgd import sample_batches

        t = -(-self.n // self.batch_size)
        if self.num_steps % t:
            raise ValueError(f"num_steps must be a multiple of the {t} steps per epoch for independent runs; got "
                             f"num_steps={self.num_steps}.")
        epochs = self.num_steps // t
        if t ** epochs > 4096:
            raise ValueError(f"the score enumerates all t^E = {t}^{epochs} one-step-per-epoch sets: at most 4096; got "
                             f"n={self.n}, batch_size={self.batch_size}, num_steps={self.num_steps}.")
        kappa = self.noise_multiplier * self.noise_factor
        strategy = self._strategy()
        encoder = strategy.encoder_matrix(self.num_steps)
        sets = np.array(list(np.ndindex(*(t,) * epochs))) + t * np.arange(epochs)  # every one-step-per-epoch set
        indicators = np.zeros((len(sets), self.num_steps))
        np.put_along_axis(indicators, sets, 1.0, axis=1)
        means = indicators @ encoder.T  # row S: C 1_S
        outputs, samples = [], []
        for sign, gen, side in zip(self._signs(), _generators(seed, unit_key), ("D", "D'"), strict=True):
            stream = sample_batches(self.sampler, n=self.n, batch_size=self.batch_size, rng=gen)
            batches = [next(stream) for _ in range(runs * self.num_steps)]
            step_of = np.repeat(np.arange(len(batches)), [len(batch) for batch in batches])
            joined = np.zeros(runs * self.num_steps)
            joined[step_of[np.concatenate(batches) == 0]] = 1.0  # the canary is record 0
            participation = joined.reshape(runs, self.num_steps)
            noise = self._stream_noise(strategy, seed, f"{unit_key}/{side}", runs, kappa)
            released = sign * participation + noise
            outputs.append(self._set_score(released @ encoder.T, means))
            samples.append(WhitenedSample(f"noise engine releases on {side}", noise @ encoder.T
                                          / self.noise_multiplier))
        return (-outputs[0], -outputs[1]), samples

    def _set_score(self, whitened: np.ndarray, means: np.ndarray) -> np.ndarray:
        from scipy.special import logsumexp

        variance = self.noise_multiplier**2  # nominal: the test does not know the actual noise
        half_norms = 0.5 * np.sum(means**2, axis=1)
        return logsumexp((whitened @ means.T - half_norms) / variance, axis=1) - math.log(len(means))


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDFixedSize(DPSGDCanary):
    """DP-SGD, independent noise (lambda = 0), fixed-size batches, replace-one neighbours."""

    name: ClassVar[str] = "dpsgd-fixed-size"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpsgd.DPSGD.step"
    other_strategies: ClassVar[bool] = True
    description: ClassVar[str] = "DP-SGD, lambda = 0, fixed-size batches, replace-one: dp-accounting RDP"
    sampler: ClassVar[str] = "fixed_size"
    neighboring: ClassVar[str] = "replace_one"

    noise_multiplier: float = 2.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDCorrelatedFixedSize(DPSGDCanary):
    """DP-SGD, lambda-CGD noise (lambda > 0), fixed-size batches, zero-out neighbours: the smaller of the amplified
    bound and Theorem F.12; the setting is one where F.12 holds (epsilon <= 1 and r T >= 3 ln(2 / delta)), so both
    accountants compete."""

    name: ClassVar[str] = "dpsgd-cgd-fixed-size"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpsgd.DPSGD.step"
    description: ClassVar[str] = ("DP-SGD, lambda-CGD (lambda = 0.5), fixed-size batches, zero-out: amplified bound or "
                                  "Theorem F.12, the smaller")
    sampler: ClassVar[str] = "fixed_size"
    neighboring: ClassVar[str] = "zero_out"

    noise_correlation: float = 0.5
    noise_multiplier: float = 90.0
    batch_size: int = 50
    num_steps: int = 80


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDCorrelatedPoisson(DPSGDCanary):
    """DP-SGD, lambda-CGD noise (lambda = 0.5), Poisson sampling, zero-out neighbours: the amplified bound (Theorem
    F.8's pair by conditional composition of mixture-of-Gaussians PLDs)."""

    name: ClassVar[str] = "dpsgd-cgd-poisson"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpsgd.DPSGD.step"
    description: ClassVar[str] = "DP-SGD, lambda-CGD (lambda = 0.5), Poisson sampling, zero-out: amplified bound"
    sampler: ClassVar[str] = "poisson"
    neighboring: ClassVar[str] = "zero_out"
    slow_accountant: ClassVar[bool] = True

    noise_correlation: float = 0.5
    noise_multiplier: float = 3.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class DPSGDBLTPoisson(DPSGDCanary):
    """DP-SGD, two-buffer BLT noise, Poisson sampling, zero-out neighbours: the amplified bound."""

    name: ClassVar[str] = "dpsgd-blt-poisson"
    entry_point: ClassVar[str] = "privdyn.algorithms.dpsgd.DPSGD.step"
    description: ClassVar[str] = "DP-SGD, BLT (two buffers), Poisson sampling, zero-out: amplified bound"
    sampler: ClassVar[str] = "poisson"
    neighboring: ClassVar[str] = "zero_out"
    slow_accountant: ClassVar[bool] = True

    noise_multiplier: float = 3.0
    buffer_decays: tuple[float, ...] = (0.9, 0.5)
    output_scales: tuple[float, ...] = (0.3, 0.2)

    def _strategy(self) -> Any:
        from privdyn.privacy.correlated import BufferedToeplitz

        return BufferedToeplitz(self.buffer_decays, self.output_scales)


class _CanaryModel:
    """The DP-SGD canary's model for :class:`~privdyn.algorithms.dpsgd.DPSGD`: one weight w, per-example loss x w,
    so the per-example gradient is the record's feature x (factors A = x, H = 1)."""

    parameter_shape = (1, 1)

    def validate_inputs(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, dtype=float).reshape(-1, 1)

    def loss(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(x[:, 0] * params[0, 0])) if x.size else 0.0

    def loss_and_gradient_factors(self, params: np.ndarray, x: np.ndarray,
                                  y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return x[:, 0] * params[0, 0], x.copy(), np.ones((x.shape[0], 1))


MECHANISMS: dict[str, type[Mechanism]] = {
    cls.name: cls for cls in (LangevinQuadratic, LangevinQuadraticShiftedInterpolation, LangevinLogistic,
                              DPGDCanary, NoisySGDLeastSquares, DPSGDPoisson, DPSGDRandomAllocation, DPSGDFixedSize,
                              DPSGDCorrelatedFixedSize, DPSGDCorrelatedPoisson, DPSGDBLTPoisson,
                              DPSGDBandedCyclicPoisson, DPSGDCorrelatedRandomAllocation, DPLinearRegressionCanary,
                              AdaSSPCanary, PlanDPGDCanary, PlanDPSGDCanary, PlanLangevinCanary,
                              DPLinearRegressionPlanningShareCanary, DPLinearRegressionReleaseSolutionCanary,
                              PlanHSGDCanary, TorchLambdaCGDFixedSize, DPLogisticRegressionCanary,
                              TorchLambdaCGDPoisson, TorchDPSGDPoisson, TorchDPSGDRandomAllocation)
}
"""Every audited mechanism by name, in the order of the table."""


def mechanism(name: str, **changes: float) -> Mechanism:
    """The mechanism called ``name`` (a key of :data:`MECHANISMS`) with optional field changes."""
    try:
        cls = MECHANISMS[name]
    except KeyError:
        raise ValueError(f"unknown mechanism {name!r}; valid names: {', '.join(MECHANISMS)}.") from None
    return cls(**changes)
