"""The exact Gaussian law of discrete noisy SGD for a fixed data order (Algorithm 1 of Lin, Kolaczyk, Smith, Paquette,
arXiv 2510.16687) and its Renyi divergence."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.privacy import divergences
from privdyn.privacy.hsgd.common import DIRECTIONS, _renyi_order
from privdyn.privacy.labels import Guarantee, PrivacyLoss

__all__ = ["ExactSGDLaw", "exact_sgd_law", "exact_sgd_renyi"]


# ----------------------------------------------------------------------------------------------------------------
# Exact discrete ground truth (not in the paper: the law of discrete SGD itself, for a fixed data order)
# ----------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class ExactSGDLaw:
    """The exact Gaussian law N(means[i], covariances[i]) of iterate ``iterates[i]`` of discrete noisy SGD."""

    iterates: np.ndarray
    means: np.ndarray
    covariances: np.ndarray
    guarantee: Guarantee = Guarantee.EXACT

    def __post_init__(self) -> None:
        _check.record(self)


def _exact_inputs(features: Any, labels: Any, step_size: Any, ridge: Any, noise_std: Any, x0: Any,
                  init_variance: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float, np.ndarray, float]:
    a = _check.real_array(features=features)
    b = _check.real_array(labels=labels)
    if a.ndim != 2 or a.shape[0] == 0:
        raise ValueError(f"features must have shape (n, d) with n >= 1; got {a.shape}.")
    n, d = a.shape
    if b.shape != (n,):
        raise ValueError(f"labels must have shape (n,) = ({n},); got {b.shape}.")
    _check.finite(features=a, labels=b)
    _check.scalar(ridge=ridge, noise_std=noise_std, init_variance=init_variance)
    _check.non_negative(ridge=ridge, init_variance=init_variance)
    _check.positive(noise_std=noise_std)
    eta = np.broadcast_to(np.asarray(step_size, dtype=float), (n,)).copy()
    _check.positive(step_size=eta)
    x = np.asarray(x0, dtype=float)
    if x.shape != (d,):
        raise ValueError(f"x0 must have shape (d,) = ({d},); got {x.shape}.")
    _check.finite(x0=x)
    return a, b, eta, float(ridge), float(noise_std), x, float(init_variance)


def _exact_step(mean: np.ndarray, cov: np.ndarray, a: np.ndarray, b: float, eta: float, ridge: float,
                noise2: float) -> tuple[np.ndarray, np.ndarray]:
    """x ↦ C x + ηba + N(0, η²σ²I), C = (1 − ηδ)I − η aaᵀ, as a rank-one update: O(d²)."""
    c = 1.0 - eta * ridge
    va = cov @ a
    new_mean = c * mean - eta * a * (a @ mean) + eta * b * a
    new_cov = c * c * cov - c * eta * (np.outer(a, va) + np.outer(va, a)) + eta**2 * (a @ va) * np.outer(a, a)
    new_cov[np.diag_indices_from(new_cov)] += eta**2 * noise2
    return new_mean, 0.5 * (new_cov + new_cov.T)


def exact_sgd_law(features: ArrayLike, labels: ArrayLike, *, step_size: ArrayLike, ridge: float, noise_std: float,
                  x0: ArrayLike,
                  iterates: ArrayLike, init_variance: float = 0.0) -> ExactSGDLaw:
    """Exact law of discrete noisy SGD (Algorithm 1, batch 1, fixed data order, Gaussian noise) on least squares.

    x_{k+1} = C_k x_k + η_k b_k a_k − η_kσZ_k with C_k = (1 − η_kδ)I − η_k a_ka_kᵀ is affine with Gaussian noise, so
    x_k ~ N(m_k, V_k): m_{k+1} = C_km_k + η_kb_ka_k, V_{k+1} = C_kV_kC_kᵀ + η_k²σ²I (Algorithm 1 is
    linear-Gaussian for a fixed order), from
    x_0 ~ N(x0, init_variance·I) (init_variance = 0: a fixed, public x_0). O(n d²). Labelled ``exact``.

    Args:
        features, labels: (n, d), (n,) the records in the order they are used (row k at step k).
        step_size: η > 0, a scalar or (n,) per step.
        ridge: δ ≥ 0. noise_std: σ > 0. x0: (d,). init_variance: ≥ 0.
        iterates: iterates k ∈ [0, n] to report.
    """
    a, b, eta, ridge, sigma, x, v0 = _exact_inputs(features, labels, step_size, ridge, noise_std, x0, init_variance)
    n, d = a.shape
    ks = np.atleast_1d(np.asarray(iterates))
    _check.integer(minimum=0, iterates=ks)
    ks = ks.astype(np.int64)
    if np.any(ks > n):
        raise ValueError(f"iterates must be <= n = {n}; got {int(ks.max())}.")
    mean, cov = x.copy(), v0 * np.eye(d)
    means, covs = np.empty((ks.size, d)), np.empty((ks.size, d, d))
    for k in range(n + 1):
        hit = np.flatnonzero(ks == k)
        means[hit], covs[hit] = mean, cov
        if k == n or k >= ks.max():
            break
        mean, cov = _exact_step(mean, cov, a[k], b[k], eta[k], ridge, sigma**2)
    return ExactSGDLaw(iterates=ks, means=means, covariances=covs)


def exact_sgd_renyi(renyi_order: float, *, features: ArrayLike, labels: ArrayLike, position: int,
                    replacement_feature: ArrayLike,
                    replacement_label: float, iterate: int, step_size: ArrayLike, ridge: float, noise_std: float,
                    x0: ArrayLike,
                    init_variance: float = 0.0, direction: str = "max") -> PrivacyLoss:
    """Exact D_α between the laws of SGD iterate k on the data and on the data with record ``position`` replaced.

    Both laws are exact Gaussians (:func:`exact_sgd_law`; the data order is fixed, not shuffled) and the divergence is
    :func:`privdyn.privacy.divergences.renyi_gaussian` (``forward``: D_α(P ‖ P'), P the original data; ``backward``;
    ``max``). The ground truth for the surrogate D_α(k; ℓ, θ) of eq. (14) with θ = ((a_ℓ, b_ℓ), (a', b')). O(k d² + d³).
    0 when ``position >= iterate`` (the record is not used before iterate k). Labelled ``exact``.
    """
    alpha = _renyi_order(renyi_order)
    _check.one_of(DIRECTIONS, direction=direction)
    a, b, eta, ridge_f, sigma, x, v0 = _exact_inputs(features, labels, step_size, ridge, noise_std, x0, init_variance)
    n, d = a.shape
    _check.integer(minimum=0, position=position, iterate=iterate)
    ell, k = int(position), int(iterate)
    if k > n:
        raise ValueError(f"iterate must be <= n = {n}; got iterate={k}.")
    if ell >= n:
        raise ValueError(f"position must be < n = {n}; got position={ell}.")
    new_a = np.asarray(replacement_feature, dtype=float)
    if new_a.shape != (d,):
        raise ValueError(f"replacement_feature must have shape (d,) = ({d},); got {new_a.shape}.")
    _check.finite(replacement_feature=new_a, replacement_label=replacement_label)
    source = "exact Gaussian law of discrete noisy SGD with a fixed data order (Algorithm 1 of arXiv 2510.16687)"
    if ell >= k:
        return PrivacyLoss(value=0.0, guarantee=Guarantee.EXACT, quantity="renyi_divergence", source=source)
    mean, cov = x.copy(), v0 * np.eye(d)
    for step in range(ell):
        mean, cov = _exact_step(mean, cov, a[step], b[step], eta[step], ridge_f, sigma**2)
    laws = []
    for feat, lab in ((a[ell], b[ell]), (new_a, float(replacement_label))):
        m_i, c_i = _exact_step(mean, cov, feat, lab, eta[ell], ridge_f, sigma**2)
        for step in range(ell + 1, k):
            m_i, c_i = _exact_step(m_i, c_i, a[step], b[step], eta[step], ridge_f, sigma**2)
        laws.append((m_i, c_i))
    values = []
    if direction in ("forward", "max"):
        values.append(divergences.renyi_gaussian(alpha, mean1=laws[0][0], cov1=laws[0][1], mean2=laws[1][0],
                                                 cov2=laws[1][1]))
    if direction in ("backward", "max"):
        values.append(divergences.renyi_gaussian(alpha, mean1=laws[1][0], cov1=laws[1][1], mean2=laws[0][0],
                                                 cov2=laws[0][1]))
    return PrivacyLoss(value=max(values), guarantee=Guarantee.EXACT, quantity="renyi_divergence", source=source)
