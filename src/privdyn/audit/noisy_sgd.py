"""The hsgd row: one-pass noisy SGD on least squares against its homogenized-SGD surrogate.

The mechanism is Algorithm 1 of Lin, Kolaczyk, Smith, Paquette (arXiv 2510.16687): one pass of batch-size-one SGD on
f(x; a, b) = ((a^T x - b)^2 + ridge ||x||^2) / 2 with Gaussian noise, x_{k+1} = x_k - eta (grad f(x_k; a_k, b_k) +
noise_std Z_k), from a fixed public x_0, releasing the last iterate x_n. privdyn accounts it by the Renyi divergence
of two *linearized homogenized-SGD* laws (Lemmas C.1-C.2; :mod:`privdyn.privacy.hsgd`), labelled ``surrogate``: a
diffusion approximation, not a bound. The audit measures how far that surrogate is from the truth; a surrogate row
is never a violation (the contract covers ``exact`` and ``bound``), its gap is a finding.

**Why the exact divergence, not a threshold test.** For a fixed data order every update is affine in x with additive
Gaussian noise, so the released x_n is exactly Gaussian. The canary pair keeps the canary's feature a_l and changes
only its label, b_l on D and b_l + ``label_shift`` on D'. Then the two runs share every matrix
C_k = (1 - eta ridge) I - eta a_k a_k^T, hence one covariance V_n, and their means differ by
Delta = eta label_shift C_{n-1} ... C_{l+1} a_l: the pair is a d-dimensional Gaussian shift with Mahalanobis distance
mu = sqrt(Delta^T V_n^{-1} Delta), whose whole (epsilon, delta) curve is exact (:mod:`privdyn.audit.gaussian`). No
finite number of runs could certify that much, and a threshold test on a d-dimensional output would need a
statistic anyway: the optimal one is the projection w^T x_n, w = V_n^{-1} Delta, which is one-dimensional Gaussian
with the same shift mu. The runs (:func:`privdyn.algorithms.noisy_sgd.simulate_noisy_sgd` itself on the fixed
dataset, in order) are reduced to that score, and the audit checks that they have the law propagated here.

The surrogate's laws of the same pair also share one covariance (Lemma C.1: it depends on the replaced record's
feature only), so the surrogate is a Gaussian shift too and D_alpha = alpha mu_s^2 / 2 at every order: the relative
gap of the divergences, (mu_s / mu)^2 - 1, is one number, :meth:`NoisySGDLeastSquares.surrogate_gap`. The reported
epsilon is what privdyn would report from the surrogate: its Renyi curve on 16 orders from 1.25 to 64 converted by
:func:`privdyn.privacy.conversions.rdp_to_epsilon` (that conversion is loose, so the epsilon ratio can stay below 1
while the divergence is under-reported).

The setting is the paper's experimental scaling at small d (a Gaussian design with tr Sigma = 1/3, step size 0.05,
ridge 0.1, noise_std 1, n = 1.5 d) with d = 50 and the canary a quarter into the pass, as in the surrogate's own
comparison with the exact law; at the last iterate the gap hardly depends on the canary's position.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import numpy as np

from privdyn.audit.base import GaussianLaw, Mechanism, Runs, _generators
from privdyn.audit.law import WhitenedSample
from privdyn.privacy.labels import PrivacyLoss

__all__ = ["NoisySGDLeastSquares"]

_RENYI_ORDERS = (1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 16.0, 24.0, 32.0, 64.0)
"""The orders of the surrogate's Renyi curve (each costs one evaluation of the surrogate's divergence)."""


@dataclasses.dataclass(frozen=True)
class _ExactPair:
    """The exact laws of x_n on D and D': N(mean, covariance) and N(mean + shift, covariance)."""

    mean: np.ndarray
    shift: np.ndarray
    covariance: np.ndarray


@dataclasses.dataclass(frozen=True, kw_only=True)
class NoisySGDLeastSquares(Mechanism):
    """One-pass noisy SGD on least squares, a label canary at step ``position``, the last iterate released.

    Fields: ``dim`` d, ``num_steps`` n (the pass; the dataset has n records), ``step_size`` eta, ``ridge``,
    ``noise_std`` sigma, ``label_noise`` of the design, ``label_shift`` the canary's label change, ``data_seed`` the
    seed of the (public, fixed) dataset and target.
    """

    name: ClassVar[str] = "hsgd"
    entry_point: ClassVar[str] = "privdyn.algorithms.noisy_sgd.simulate_noisy_sgd"
    description: ClassVar[str] = ("one-pass noisy SGD, least squares (Gaussian output): homogenized-SGD surrogate, "
                                  "Lemmas C.1-C.2")

    dim: int = 50
    num_steps: int = 75
    position: int = 18
    step_size: float = 0.05
    ridge: float = 0.1
    noise_std: float = 1.0
    label_noise: float = 0.1
    label_shift: float = 16.0
    data_seed: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.position < self.num_steps:
            raise ValueError(f"position must be in [0, num_steps) = [0, {self.num_steps}); got {self.position}.")

    # --- the data --------------------------------------------------------------------------------------------------

    def _eigenvalues(self) -> np.ndarray:
        return _eigenvalues(self.dim)

    def _dataset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(target, features (n, d), labels (n,)) of D in the eigenbasis of Sigma, from ``data_seed``."""
        return _dataset(self.dim, self.num_steps, self.label_noise, self.data_seed)

    def _neighbour_labels(self, labels: np.ndarray) -> np.ndarray:
        shifted = labels.copy()
        shifted[self.position] += self.label_shift
        return shifted

    # --- the accountant ------------------------------------------------------------------------------------------

    def _surrogate_divergence(self, renyi_order: float) -> PrivacyLoss:
        from privdyn.privacy import hsgd

        _, features, labels = self._dataset()
        law = _surrogate_law(self.dim, self.num_steps, self.step_size, self.ridge, self.noise_std, self.label_noise,
                             self.data_seed)
        canary = features[self.position]
        pairs = hsgd.NeighboringPairs.single(canary, labels[self.position], canary,
                                             labels[self.position] + self.label_shift)
        return hsgd.renyi_divergence(renyi_order, law, pairs, iterate=self.num_steps, position=self.position)

    def reported(self) -> PrivacyLoss:
        """The surrogate's Renyi curve on :data:`_RENYI_ORDERS`, converted to (epsilon, delta)."""
        from privdyn.privacy.conversions import rdp_to_epsilon

        orders = np.asarray(_RENYI_ORDERS)
        curve = [self._surrogate_divergence(float(order)) for order in orders]
        epsilon, order = rdp_to_epsilon(orders, [float(loss.value) for loss in curve], delta=self.delta)
        return dataclasses.replace(curve[0], value=epsilon, quantity="epsilon",
                                   source=f"{curve[0].source}; converted to (epsilon, delta) by rdp_to_epsilon "
                                          f"(order {order:g})")

    # --- the exact law -------------------------------------------------------------------------------------------

    def _exact_pair(self, noise_std: float, init_variance: float = 0.0) -> _ExactPair:
        """Propagate m_{k+1} = C_k m_k + eta b_k a_k, V_{k+1} = C_k V_k C_k^T + eta^2 sigma^2 I and the mean gap
        Delta (born at the canary's step as eta label_shift a_l, then Delta <- C_k Delta) from x_0 ~ N(0, v I)
        (v = ``init_variance``; 0: x_0 = 0)."""
        _, features, labels = self._dataset()
        eta, d = self.step_size, self.dim
        mean, shift, covariance = np.zeros(d), np.zeros(d), init_variance * np.eye(d)
        for k in range(self.num_steps):
            a = features[k]
            contraction = (1.0 - eta * self.ridge) * np.eye(d) - eta * np.outer(a, a)
            mean = contraction @ mean + eta * labels[k] * a
            shift = contraction @ shift + (eta * self.label_shift * a if k == self.position else 0.0)
            covariance = contraction @ covariance @ contraction.T + (eta * noise_std) ** 2 * np.eye(d)
        return _ExactPair(mean=mean, shift=shift, covariance=0.5 * (covariance + covariance.T))

    def _direction(self) -> np.ndarray:
        """The score's weights w = V_n^{-1} Delta for the nominal noise (the test does not know the actual one)."""
        nominal = self._exact_pair(self.noise_std)
        return np.linalg.solve(nominal.covariance, nominal.shift)

    def gaussian_law(self) -> GaussianLaw:
        """The law of w^T x_n with the actual noise: a one-dimensional Gaussian shift (module docstring)."""
        actual = self._exact_pair(self.noise_std * self.noise_factor)
        w = self._direction()
        mean = float(w @ actual.mean)
        return GaussianLaw(mean=mean, neighbour_mean=mean + float(w @ actual.shift),
                           std=float(np.sqrt(w @ actual.covariance @ w)))

    def surrogate_gap(self) -> float:
        """(surrogate D_alpha) / (exact D_alpha) - 1 on the canary pair, nominal noise (the same at every order)."""
        nominal = self._exact_pair(self.noise_std)
        exact = float(nominal.shift @ np.linalg.solve(nominal.covariance, nominal.shift))  # D_2 = 2 mu^2 / 2
        return float(self._surrogate_divergence(2.0).value) / exact - 1.0

    # --- the runs ------------------------------------------------------------------------------------------------

    def run(self, seed: int, unit_key: str, runs: int) -> Runs:
        """:meth:`scores` with their law, and two more entry points' runs (``runs // 20`` each, at least 100)
        against their stated laws: :func:`privdyn.algorithms.noisy_sgd.noisy_sgd` (one run on the dataset, per
        run) on D and D', and :func:`~privdyn.algorithms.noisy_sgd.simulate_noisy_sgd` with a secret random start
        x_0 ~ N(0, I) (``init_variance=1``) on D, whose law adds the propagated start's covariance."""
        from privdyn.algorithms.noisy_sgd import noisy_sgd, simulate_noisy_sgd

        base = super().run(seed, unit_key, runs)
        extra = max(100, runs // 20)
        target, features, labels = self._dataset()
        w = self._direction()
        law = self.gaussian_law()
        samples = list(base.law)
        for side_labels, mean, gen, side in zip((labels, self._neighbour_labels(labels)),
                                                (law.mean, law.neighbour_mean),
                                                _generators(seed, f"{unit_key}/noisy_sgd"), ("D", "D'"), strict=True):
            last = np.array([noisy_sgd(features, side_labels, x0=np.zeros(self.dim), ridge=self.ridge, rng=gen,
                                       step_size=self.step_size, noise_std=self.noise_std * self.noise_factor)
                             for _ in range(extra)])
            samples.append(WhitenedSample(f"noisy_sgd w^T x_n on {side}", (last @ w - mean) / law.std))
        start = self._exact_pair(self.noise_std * self.noise_factor, init_variance=1.0)
        sim = simulate_noisy_sgd(data=self._design(target), dataset=(features, labels), shuffle=False,
                                 x0=np.zeros(self.dim), ridge=self.ridge, num_steps=self.num_steps, num_runs=extra,
                                 seed=seed, unit_key=f"{unit_key}/random-start", step_size=self.step_size,
                                 noise_std=self.noise_std * self.noise_factor, init_variance=1.0,
                                 iterate_steps=[self.num_steps])
        assert sim.iterates is not None
        std = float(np.sqrt(w @ start.covariance @ w))
        samples.append(WhitenedSample("simulate_noisy_sgd (secret random start) w^T x_n on D",
                                      (sim.iterates[:, 0, :] @ w - float(w @ start.mean)) / std))
        return Runs(scores=base.scores, law=tuple(samples))

    def _design(self, target: np.ndarray) -> Any:
        from privdyn.data.hsgd_design import gaussian_design
        from privdyn.spectra import Spectrum

        return gaussian_design(Spectrum.from_eigenvalues(self._eigenvalues()), label_noise=self.label_noise,
                               target=target)

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        """w^T x_n of ``runs`` runs of :func:`privdyn.algorithms.noisy_sgd.simulate_noisy_sgd` on the fixed dataset
        (D, then D'), in order, from x_0 = 0."""
        from privdyn.algorithms.noisy_sgd import simulate_noisy_sgd

        target, features, labels = self._dataset()
        design = self._design(target)
        w = self._direction()
        outputs = []
        for side_labels, side in ((labels, "D"), (self._neighbour_labels(labels), "D'")):
            sim = simulate_noisy_sgd(data=design, dataset=(features, side_labels), shuffle=False,
                                     x0=np.zeros(self.dim), ridge=self.ridge, num_steps=self.num_steps,
                                     num_runs=runs, seed=seed, unit_key=f"{unit_key}/{side}",
                                     step_size=self.step_size, noise_std=self.noise_std * self.noise_factor,
                                     iterate_steps=[self.num_steps])
            assert sim.iterates is not None
            outputs.append(sim.iterates[:, 0, :] @ w)
        return outputs[0], outputs[1]


def _eigenvalues(dim: int) -> np.ndarray:
    """The design's spectrum: evenly spread in [1/2, 3/2) / (3 d), so tr Sigma ~ 1/3 (the paper's scaling)."""
    return (0.5 + np.arange(dim) / dim) / (3.0 * dim)


def _dataset(dim: int, num_steps: int, label_noise: float, data_seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(data_seed)
    target = rng.normal(size=dim)
    features = rng.normal(size=(num_steps, dim)) * np.sqrt(_eigenvalues(dim))
    labels = features @ target + label_noise * rng.normal(size=num_steps)
    return target, features, labels


@functools.lru_cache(maxsize=2)
def _surrogate_law(dim: int, num_steps: int, step_size: float, ridge: float, noise_std: float, label_noise: float,
                   data_seed: int) -> Any:
    """The surrogate's law on the SGD grid (:func:`privdyn.privacy.hsgd.sgd_grid_law`), computed once per setting."""
    from privdyn.dynamics.hsgd import HSGDProblem
    from privdyn.privacy import hsgd
    from privdyn.schedules import Constant
    from privdyn.spectra import Spectrum

    target = _dataset(dim, num_steps, label_noise, data_seed)[0]
    problem = HSGDProblem.from_coordinates(Spectrum.from_eigenvalues(_eigenvalues(dim)), target=target,
                                           x0=np.zeros(dim), learning_rate=Constant(step_size * dim), ridge=ridge,
                                           noise_std=noise_std, label_noise=label_noise)
    return hsgd.sgd_grid_law(problem, num_steps)
