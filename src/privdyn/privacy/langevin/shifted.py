"""Shifted interpolation: the exact Gaussian-DP bound for the last iterate of noisy GD on a strongly convex loss.

Bok, Su & Altschuler 2024 ("Shifted interpolation for differential privacy", ICML 2024, arXiv 2403.00278),
Theorem 4.3 / Corollary 4.4 for full-batch NoisyGD on a λ-strongly convex, β-smooth loss. Write one step of noisy GD
as θ ↦ φ(θ) + Z with φ(θ) = Π_C(θ) − η∇𝓛(Π_C(θ)) (the projection of the previous step moved inside the map, which
the release of Π_C(θ_K) post-processes) and Z ~ N(0, 2ησ² I). Then:

* φ is c-Lipschitz with c = max(|1 − ηλ|, |1 − ηβ|) (gradient step of a λ-strongly convex, β-smooth function, after
  a non-expansive projection), and c < 1 for 0 < η < 2/β;
* the maps of two replace-one neighbouring datasets differ by at most s = η·S_g/n everywhere (S_g, the total gradient
  sensitivity, bounds the difference of the summed gradients);
* both runs start from the same data-independent law.

Shifted interpolation then makes the last iterate μ-GDP (its trade-off curve is at least that of N(0, 1) against
N(μ, 1)) with::

    mu = s / (sqrt(2 eta) sigma) * sqrt( (1 + c)/(1 - c) * (1 - c^K)/(1 + c^K) ).

The bound is exact: for the one-dimensional quadratic whose map is θ ↦ cθ + s (one side) and cθ (the other), the
two last iterates are N(s(1 − c^K)/(1 − c), 2ησ²(1 − c^{2K})/(1 − c²)) and the same law centred at 0, a Gaussian
shift of exactly μ (the tests check both). It is never above composition over the K steps (the Gaussian shift of
K composed steps is √K·s/(√(2η)σ), and the factor under the root is at most K), and at long horizons its zCDP, μ²/2,
is S_g²(2 − ηλ)/(4λσ²n²), about half of Corollary 1's S_g²/(λσ²n²) (arXiv 2102.05855). A μ-GDP mechanism is
μ²/2-zCDP, and its (ε, δ) curve is the Gaussian mechanism's (Balle & Wang 2018, Theorem 8), which is tighter than
any conversion from zCDP.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.privacy.labels import Guarantee, PrivacyLoss
from privdyn.privacy.langevin.common import _arr, _check_count, _check_num_steps, _loss

__all__ = ["contraction_factor", "shifted_interpolation_gdp"]

_SRC_SI = ("Bok, Su & Altschuler 2024 (arXiv 2403.00278), shifted interpolation for NoisyGD on a strongly convex, "
           "smooth loss: mu-GDP of the last iterate, mu = (eta S_g / n) / (sqrt(2 eta) sigma) * "
           "sqrt((1 + c)(1 - c^K) / ((1 - c)(1 + c^K))), c = max(|1 - eta lambda|, |1 - eta beta|)")


def contraction_factor(*, step_size: ArrayLike, strong_convexity: ArrayLike, smoothness: ArrayLike) -> ArrayLike:
    """c = max(|1 − ηλ|, |1 − ηβ|): the Lipschitz constant of a gradient step on a λ-strongly convex, β-smooth loss."""
    eta, lam, beta = _arr(step_size), _arr(strong_convexity), _arr(smoothness)
    value = np.maximum(np.abs(1.0 - eta * lam), np.abs(1.0 - eta * beta))
    return float(value) if value.ndim == 0 else value


def shifted_interpolation_gdp(*, num_steps: ArrayLike, step_size: ArrayLike, noise_scale: ArrayLike,
                              strong_convexity: ArrayLike, smoothness: ArrayLike, sensitivity: ArrayLike,
                              n: ArrayLike) -> PrivacyLoss:
    """The Gaussian-DP parameter μ of the last iterate θ_K of noisy GD (module docstring; arXiv 2403.00278).

    Args:
        num_steps: K >= 0 (0 gives μ = 0).
        step_size: η in (0, 2/smoothness), so that the gradient step contracts.
        noise_scale: σ > 0 (the per-step noise std is √(2η)σ).
        strong_convexity, smoothness: λ <= β, both > 0.
        sensitivity: S_g > 0, the total gradient sensitivity (replace-one neighbours).
        n: the number of records, >= 1.

    Shapes: every argument broadcasts.

    Returns:
        ``PrivacyLoss(value=mu, guarantee="bound", quantity="gdp_mu")``.

    Raises:
        ValueError: a constant out of its range (named, with its value).
    """
    _check_num_steps(num_steps)
    _check.finite(step_size=step_size, noise_scale=noise_scale, strong_convexity=strong_convexity,
                  smoothness=smoothness, sensitivity=sensitivity)
    _check.positive(step_size=step_size, noise_scale=noise_scale, strong_convexity=strong_convexity,
                    smoothness=smoothness, sensitivity=sensitivity)
    _check_count(1, n=n)
    eta, lam, beta = _arr(step_size), _arr(strong_convexity), _arr(smoothness)
    if np.any(lam > beta):
        raise ValueError(f"strong_convexity must be <= smoothness; got strong_convexity={strong_convexity!r}, "
                         f"smoothness={smoothness!r}.")
    if np.any(eta * beta >= 2.0):
        raise ValueError(f"step_size must be in (0, 2/smoothness) for the gradient step to contract; got "
                         f"step_size={step_size!r} with smoothness={smoothness!r}.")
    c = _arr(contraction_factor(step_size=eta, strong_convexity=lam, smoothness=beta))
    k = _arr(num_steps)
    power = c**k
    factor = (1.0 + c) * (1.0 - power) / ((1.0 - c) * (1.0 + power))
    mu = eta * _arr(sensitivity) / _arr(n) / (np.sqrt(2.0 * eta) * _arr(noise_scale)) * np.sqrt(factor)
    return _loss(mu, Guarantee.BOUND, _SRC_SI, quantity="gdp_mu")
