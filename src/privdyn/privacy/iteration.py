"""Privacy amplification by iteration for one-pass DP-GD: the dpgd paper's accountant and noise calibration.

Bombari, Luo, Seroussi, Mondelli, "High-Dimensional Private Linear Regression with Optimal Rates"
(arXiv 2505.16329v2), Proposition 4.1, eq. (4.2), from Feldman, Koren & Talwar 2020 (arXiv 2005.04763),
Theorem 3.1, with batch size 1 and no projection.

Conventions (``docs/notation.md``):

* ``rho`` is the paper's privacy level: the algorithm is ρ²/2-zCDP, i.e. ``zcdp = rho**2 / 2`` in the standard
  (Bun & Steinke, dp_accounting) convention that every conversion in :mod:`privdyn.privacy.conversions` takes.
* ``step_sizes`` are the discrete η_1..η_n (uncapped: the simulator's adaptive cap min(η_k, 2/‖x_k‖²) only
  shrinks a step and never enters the accounting).
* ``noise_multipliers`` are the paper's σ_1..σ_n: step k adds Gaussian noise of standard deviation 2·C_clip·σ_k
  per coordinate, where C_clip = c√d is the clipping threshold of the per-sample gradient and the factor 2 is the
  replace-one sensitivity of a clipped gradient. σ_k is therefore relative to the *sensitivity* 2·C_clip, not to
  C_clip.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.privacy import conversions
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = [
    "noise_calibration",
    "privacy_level",
    "rho_to_zcdp",
    "rho_to_epsilon",
    "epsilon_to_rho",
    "validate_step_sizes",
]

_SOURCE = (
    "Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329v2, Proposition 4.1 (privacy amplification by iteration, "
    "Feldman, Koren & Talwar 2020, arXiv 2005.04763, Theorem 3.1). Assumes: one pass over the data in a fixed "
    "order (each sample used once), per-sample gradients clipped at C_clip, steps capped at 2/||x_k||^2 so that "
    "each gradient step is non-expansive, a data-independent start, noise of std 2*C_clip*sigma_k at step k, "
    "replace-one neighbours, and only the final iterate released."
)


def validate_step_sizes(step_sizes: Any) -> np.ndarray:
    """A schedule as a float array, checked: non-empty, 1-D, finite, >= 0 and non-increasing (ValueError otherwise).

    An increasing schedule would need negative noise variances in Proposition 4.1's calibration; the message names
    the first index where ``step_sizes`` increases.
    """
    eta = _check.real_array(step_sizes=step_sizes)
    if eta.ndim != 1 or eta.size == 0:
        raise ValueError(f"step_sizes must be a non-empty 1-D array; got shape {eta.shape}.")
    _check.non_negative(step_sizes=eta)
    rises = np.flatnonzero(eta[1:] > eta[:-1])
    if rises.size:
        i = int(rises[0])
        raise ValueError(
            f"step_sizes must be non-increasing (the noise variances of Proposition 4.1 would be negative); "
            f"step_sizes[{i + 1}]={eta[i + 1]!r} > step_sizes[{i}]={eta[i]!r} (first increase at index {i + 1})."
        )
    return eta


def _rho(rho: Any) -> float:
    _check.scalar(rho=rho)
    rho = float(rho)
    if not (rho > 0):  # also rejects nan
        raise ValueError(f"rho must be > 0 (math.inf for no privacy noise); got rho={rho!r}.")
    return rho


def noise_calibration(step_sizes: ArrayLike, *, rho: float) -> np.ndarray:
    """The noise-optimal multipliers σ_k of Proposition 4.1 (eq. 4.2 of arXiv 2505.16329v2).

    Every ratio η_k / sqrt(Σ_{j≥k} σ_j²) of Proposition 4.1 is made equal to ``rho``:

        ρ²σ_k² = η_k² − η_{k+1}²   (k < n),        ρ²σ_n² = η_n²,

    evaluated as (η_k − η_{k+1})(η_k + η_{k+1}) to avoid cancellation. Equivalently η_k = ρ·sqrt(Σ_{j≥k} σ_j²).
    Ties give σ_k = 0 (output perturbation: only σ_n ≠ 0); a schedule ending at η_n = 0 gives σ_n = 0 (its last
    sample is unused). ``rho = math.inf`` is the non-private limit (all σ_k = 0).

    Shapes: step_sizes (n,) -> (n,).

    Args:
        step_sizes: the uncapped steps η_1..η_n: finite, >= 0 and non-increasing.
        rho: the privacy level (the algorithm is ρ²/2-zCDP), > 0.

    Returns:
        σ_1..σ_n, the paper's noise multipliers: step k adds noise of standard deviation 2·C_clip·σ_k.

    Raises:
        ValueError: ``rho`` <= 0; ``step_sizes`` empty, not 1-D, negative, non-finite, or increasing (the message
            names the first index where it increases); a ``rho`` so small that a multiplier exceeds the float range.
    """
    rho = _rho(rho)
    eta = validate_step_sizes(step_sizes)
    following = np.append(eta[1:], 0.0)
    with np.errstate(over="ignore"):
        sigma = np.sqrt((eta - following) * (eta + following)) / rho
    _check.representable(sigma, "a noise multiplier", rho=rho)
    return sigma


def privacy_level(step_sizes: ArrayLike, noise_multipliers: ArrayLike) -> PrivacyLoss:
    """The privacy level ρ of one-pass DP-GD with arbitrary schedules (Proposition 4.1, arXiv 2505.16329v2).

        ρ = max_{k: η_k > 0} η_k / sqrt(Σ_{j≥k} σ_j²),

    and the final iterate is ρ²/2-zCDP. Steps with η_k = 0 do not use their sample and are excluded (the paper's
    0/0 at η_n = 0). The value is ``inf`` when some η_k > 0 has no noise at or after step k (the output is then
    not private by this bound), and 0 when every η_k = 0 (the output does not depend on the data).

    Shapes: step_sizes (n,), noise_multipliers (n,) -> a scalar ``PrivacyLoss``.

    Args:
        step_sizes: the uncapped steps η_1..η_n, finite and >= 0 (any order: the bound holds for any schedule).
        noise_multipliers: the paper's σ_1..σ_n (noise std 2·C_clip·σ_k at step k), finite and >= 0.

    Returns:
        A :class:`PrivacyLoss` with ``quantity="rho"``, label ``bound``, replace-one neighbours.

    Formal guarantees:
        An upper bound (label ``bound``) on the privacy level of the final iterate θ_n only, under the
        assumptions listed in ``source``. Releasing any intermediate iterate voids it.
    """
    eta = _check.real_array(step_sizes=step_sizes)
    sigma = _check.real_array(noise_multipliers=noise_multipliers)
    if eta.ndim != 1 or eta.size == 0:
        raise ValueError(f"step_sizes must be a non-empty 1-D array; got shape {eta.shape}.")
    if sigma.shape != eta.shape:
        raise ValueError(f"noise_multipliers must have the shape of step_sizes {eta.shape}; got {sigma.shape}.")
    _check.non_negative(step_sizes=eta, noise_multipliers=sigma)
    remaining = np.sqrt(np.cumsum((sigma**2)[::-1])[::-1])  # sqrt(Σ_{j≥k} σ_j²)
    used = eta > 0
    if not np.any(used):
        value = 0.0
    elif np.any(remaining[used] == 0):
        value = math.inf
    else:
        value = float(np.max(eta[used] / remaining[used]))
    return PrivacyLoss(value=value, guarantee=Guarantee.BOUND, quantity="rho",
                       neighboring=NeighboringRelation.REPLACE_ONE, source=_SOURCE)


def rho_to_zcdp(rho: ArrayLike) -> float | np.ndarray:
    """The standard zCDP parameter ρ²/2 of the dpgd paper's privacy level ``rho`` (its Definition 3.1).

    Shapes: scalar -> float, array -> array. Raises ``ValueError`` above about ρ = 1.9e154, where ρ²/2 exceeds the
    float range.
    """
    _check.non_negative(rho=rho)
    with np.errstate(over="ignore"):
        values = 0.5 * np.asarray(rho, dtype=float) ** 2
    _check.representable(values, "the zCDP rho**2/2", rho=rho)
    return float(values) if values.ndim == 0 else values


def rho_to_epsilon(rho: ArrayLike, *, delta: ArrayLike, method: str = "bun_steinke") -> float | np.ndarray:
    """The ε such that ρ²/2-zCDP implies (ε, δ)-DP.

    ``"bun_steinke"`` is the paper's Proposition A.3 (Bun & Steinke 2016): ε = ρ²/2 + ρ·sqrt(2 ln(1/δ));
    e.g. ρ = 1, δ = 1e-5 gives ε ≈ 5.30. ``"optimal"`` is the tighter conversion of
    :func:`privdyn.privacy.conversions.zcdp_to_epsilon`. An upper bound (label ``bound``), rounded up.

    Shapes: rho and delta broadcast together; scalars give a float.
    """
    return conversions.zcdp_to_epsilon(rho_to_zcdp(rho), delta=delta, method=method)


def epsilon_to_rho(epsilon: ArrayLike, *, delta: ArrayLike, method: str = "bun_steinke") -> float | np.ndarray:
    """The largest ρ whose ρ²/2-zCDP implies (ε, δ)-DP (inverse of :func:`rho_to_epsilon`).

    ``"bun_steinke"`` gives ρ = sqrt(2 ln(1/δ) + 2ε) − sqrt(2 ln(1/δ)) (the inverse of Proposition A.3 of Bombari et
    al., arXiv 2505.16329, Bun and Steinke's conversion), up to a downward rounding. The result is on the safe side:
    ``rho_to_epsilon(epsilon_to_rho(ε)) <= ε``.

    Shapes: epsilon and delta broadcast together; scalars give a float.
    """
    zcdp = np.asarray(conversions.epsilon_to_zcdp(epsilon, delta=delta, method=method), dtype=float)
    rho = np.sqrt(2.0 * zcdp)
    # sqrt then square may round up by an ulp: step down until rho²/2 <= zcdp holds exactly
    too_big = 0.5 * rho**2 > zcdp
    while np.any(too_big):
        rho = np.where(too_big, np.nextafter(rho, 0.0), rho)
        too_big = 0.5 * rho**2 > zcdp
    return float(rho) if rho.ndim == 0 else rho
