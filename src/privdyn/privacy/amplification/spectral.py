"""The spectral bound: the Theorem F.8 pair is a post-processing of a Poisson-subsampled Gaussian.

For the pair of Wang et al. (arXiv 2605.12648v1, Theorem F.8),

    P = sum_y s(y) N(A y, kappa^2 I_T),   Q = N(0, kappa^2 I_T),   A = |C| >= 0 (lower-triangular Toeplitz),

let ``a >= ||A||_2`` (any upper bound on the largest singular value) and ``tau = kappa / a``.

**Proposition.** With ``P' = sum_y s(y) N(y, tau^2 I_T)`` and ``Q' = N(0, tau^2 I_T)``, the Markov kernel
``K(x) = A x + W``, ``W ~ N(0, kappa^2 I - tau^2 A A^T)`` independent of ``x``, maps ``P'`` to ``P`` and ``Q'`` to
``Q``. Hence ``H_alpha(P || Q) <= H_alpha(P' || Q')`` and ``H_alpha(Q || P) <= H_alpha(Q' || P')`` for every
``alpha >= 0`` (data processing for the hockey-stick divergence), i.e. (P', Q') dominates (P, Q) in both
directions.

*Proof.* ``kappa^2 I - tau^2 A A^T`` is positive semi-definite because ``A A^T <= ||A||_2^2 I <= a^2 I`` in the
Loewner order, so ``W`` exists. Given the participation pattern ``y``, ``x ~ N(y, tau^2 I)`` gives ``A x + W ~
N(A y, tau^2 A A^T + kappa^2 I - tau^2 A A^T) = N(A y, kappa^2 I)``; mixing over ``y`` with the weights ``s(y)``
gives ``P``, and ``y = 0`` gives ``Q``. The kernel does not depend on the data, so the data-processing inequality
of f-divergences (every hockey-stick divergence is one) applies to both orders of the pair. QED.

Because ``s(y)`` is a product of Bernoulli(r) laws, ``P'`` is the product of ``T`` copies of ``(1 - r) N(0, tau^2)
+ r N(1, tau^2)`` and ``Q'`` of ``N(0, tau^2)``: ``(P', Q')`` is exactly the ``T``-fold composition of the
Poisson-subsampled Gaussian mechanism with sensitivity 1 and noise multiplier ``tau``, whose privacy loss
distribution dp-accounting computes (both directions, pessimistic discretization: an upper bound on delta(epsilon)
for every discretization; Koskela, Jälkö & Honkela 2020 and Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022 for
the connect-the-dots construction). At ``A = I`` (independent noise, lambda = 0) the bound *is* dp-accounting's PLD
of the Poisson-subsampled Gaussian, and it is continuous in the strategy's coefficients through ``a``.

**The constant a.** ``||A||_2^2`` is the spectral radius of the non-negative matrix ``G = A^T A``. For every
positive vector ``v``, ``rho(G) <= max_i (G v)_i / v_i`` (the Collatz-Wielandt bound: ``rho(G) <= ||D^-1 G D||_inf``
with ``D = diag(v)``, and the spectral radius is at most every induced norm). privdyn takes ``v`` from a dense
eigen-decomposition (T <= 512) or power iterations (longer horizons), computes ``G v`` by direct convolutions (sums
of non-negative terms, each with a relative rounding error of at most about ``2 T`` units of 2^-53) and inflates the
result by a relative ``1e-9``. How good ``v`` is decides only how tight the certificate is; it is a bound for any
``v``. It is capped by
``sum_k c_k`` (``||A||_2 <= sqrt(||A||_1 ||A||_inf)``, and both norms of a lower-triangular non-negative Toeplitz
matrix equal the sum of its first column), which is the bound used for horizons above :data:`MAX_CERTIFIED_STEPS`.

**How tight it is.** The bound treats the noise as if it were white with the smallest variance it has in any
direction. For small signals (kappa / a large) the privacy loss of both the pair and its dominating
mechanism is governed by the second moment ``E exp(<A y, A y'> / kappa^2)``, whose leading term
``r^2 1^T A^T A 1 / kappa^2`` is, for lambda-CGD over long horizons, ``T r^2 / (kappa^2 (1 - lambda)^2)`` for both:
the bound is tight to first order there. For large signals (small kappa / a) a single participation is worth
``||A e_u|| / kappa = 1 / (kappa sqrt(1 - lambda^2))`` in the pair but ``1 / (kappa (1 - lambda))`` in the bound, and
the bound is loose; the conditional composition (:mod:`.conditional`) is the better route there.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privdyn.privacy.amplification.pair import DominatingPair

__all__ = ["MAX_CERTIFIED_STEPS", "operator_norm_bound", "spectral_noise_multiplier", "spectral_pld",
           "subsampled_gaussian_pld"]

MAX_CERTIFIED_STEPS = 8192
"""Largest horizon whose ``||A||_2`` is certified by Collatz-Wielandt; above it the cap ``sum_k c_k`` is used."""

_RELATIVE_SLACK = 1e-9
_DENSE_STEPS = 512
_POWER_STEPS = 64


def _gram_product(c: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``A^T A v`` by two direct (non-FFT) convolutions: sums of non-negative terms, each to relative rounding."""
    num_steps = c.size
    av = np.convolve(c, v)[:num_steps]  # (A v)_t = sum_{u <= t} c_{t-u} v_u
    return np.correlate(av, c, mode="full")[num_steps - 1:]  # (A^T w)_u = sum_{t >= u} c_{t-u} w_t


def operator_norm_bound(coefficients: np.ndarray) -> float:
    """A certified upper bound on ``||A||_2`` for the lower-triangular Toeplitz ``A`` with first column ``c >= 0``.

    The Collatz-Wielandt certificate ``sqrt(max_i (A^T A v)_i / v_i)`` at a positive ``v`` near the leading
    eigenvector of ``A^T A`` (for ``T <= MAX_CERTIFIED_STEPS``), capped by ``sum_k c_k``; both inflated by a
    relative ``1e-9`` against rounding.
    """
    c = np.asarray(coefficients, dtype=float)
    if c.ndim != 1 or c.size == 0 or np.any(c < 0) or not np.all(np.isfinite(c)):
        raise ValueError("coefficients must be a non-empty 1-d array of finite non-negative numbers; got "
                         f"shape {c.shape}.")
    column_sum = float(np.sum(c))
    if column_sum == 0.0:
        return 0.0
    best = column_sum
    if np.count_nonzero(c) > 1 and c.size <= MAX_CERTIFIED_STEPS:
        vector = _leading_vector(c)
        vector = np.maximum(vector, 1e-12 * float(np.max(vector)))
        ratio = float(np.max(_gram_product(c, vector) / vector))
        best = min(best, math.sqrt(ratio))
    return best * (1.0 + _RELATIVE_SLACK)


def _leading_vector(c: np.ndarray) -> np.ndarray:
    """An approximation of the non-negative leading eigenvector of ``A^T A``.

    Dense eigen-decomposition up to :data:`_DENSE_STEPS` steps, else :data:`_POWER_STEPS` power iterations from the
    ones vector (with FFT convolutions; the certificate itself uses direct ones). Only the tightness of the
    certificate depends on it: any positive vector certifies a bound.
    """
    size = c.size
    if size <= _DENSE_STEPS:
        idx = np.arange(size)
        lag = idx[:, None] - idx[None, :]
        a = np.where(lag >= 0, c[np.clip(lag, 0, None)], 0.0)
        return np.abs(np.linalg.eigh(a.T @ a)[1][:, -1])
    from scipy.signal import fftconvolve

    vector = np.ones(size)
    for _ in range(_POWER_STEPS):  # FFT convolutions: only the direction matters here, not the rounding
        av = fftconvolve(c, vector)[:size]
        vector = np.abs(fftconvolve(av[::-1], c)[:size][::-1])
        vector /= float(np.max(vector))
    return vector


def spectral_noise_multiplier(pair: DominatingPair) -> float:
    """``tau = kappa / a``: the noise multiplier of the Poisson-subsampled Gaussian that dominates the pair."""
    return pair.noise_multiplier / operator_norm_bound(pair.coefficients)


def subsampled_gaussian_pld(tau: float, sampling_prob: float, num_steps: int,
                            value_discretization_interval: float) -> Any:
    """dp-accounting's PLD (remove and add, pessimistic) of ``T`` compositions of the Poisson-subsampled Gaussian
    with sensitivity 1 and noise multiplier ``tau``."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    pld = pld_lib.from_gaussian_mechanism(standard_deviation=tau, sensitivity=1.0, sampling_prob=sampling_prob,
                                          pessimistic_estimate=True,
                                          value_discretization_interval=value_discretization_interval)
    return pld.self_compose(num_steps)


def spectral_pld(pair: DominatingPair, value_discretization_interval: float) -> Any:
    """dp-accounting's PLD (remove and add) of ``T`` compositions of the Poisson-subsampled Gaussian at ``tau``."""
    return subsampled_gaussian_pld(spectral_noise_multiplier(pair), pair.sampling_prob, pair.num_steps,
                                   value_discretization_interval)


def spectral_epsilon(pair: DominatingPair, delta: float, value_discretization_interval: float) -> float:
    """The spectral bound's epsilon at ``delta`` (the larger of the remove and add directions)."""
    return float(spectral_pld(pair, value_discretization_interval).get_epsilon_for_delta(delta))
