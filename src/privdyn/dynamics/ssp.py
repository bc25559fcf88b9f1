"""Sufficient-statistics perturbation: the excess risk of a ridge fit on released second moments, to first order.

An SSP fit (AdaSSP, Wang 2018, arXiv 1803.02596, Algorithm 2; or DP-GD's planning release used as an estimator)
releases S̃ = S + E and b̃ = b + e, with S = Σ_k z_k z_kᵀ and b = Σ_k y_k z_k over n rows, E symmetric with its upper
triangle (diagonal included) i.i.d. N(0, s_S²) and e i.i.d. N(0, s_b²), and returns θ̂ = (S̃ + λI)⁻¹ b̃. Against least
squares on the same rows, θ_LS = S⁻¹b, its excess test risk under the rows' second moment Σ = S/n is
E[(θ̂ − θ_LS)ᵀ Σ (θ̂ − θ_LS)]. With A = S + λI and θ_λ = A⁻¹b, expanding (A + E)⁻¹ = A⁻¹ − A⁻¹EA⁻¹ + O(‖A⁻¹E‖²):

    θ̂ − θ_LS = −λ S⁻¹ θ_λ + A⁻¹ (e − E θ_λ) + O(‖A⁻¹E‖²),

so, the noise having mean zero,

    excess = (λ²/n) θ_λᵀ S⁻¹ θ_λ  +  tr(A⁻¹ Σ A⁻¹ C),
    C = Cov(e − Eθ_λ) = s_b² I + s_S² (‖θ_λ‖² I + θ_λθ_λᵀ − diag θ_λ²)

(ridge bias, then noise; Cov((Eθ)_i, (Eθ)_j) = s_S² (δ_ij ‖θ‖² + θ_iθ_j − δ_ij θ_i²) for a symmetric E whose
distinct entries are independent). The neglected terms are of relative order q = τ/λ_min(A), τ = 2√p·s_S the
spectral norm of E (Wigner's semicircle): the expansion is a model only where the release resolves every eigenvalue
(q small); where it does not, θ̂ is dominated by noise along the unresolved directions and the first order is
optimistic.

S, b and θ_λ are unknown to anyone but the data holder: the prediction plugs in the release (S̃, with its eigenvalues
below τ raised to τ, and θ̂), which is post-processing and spends no privacy. Over the best linear predictor of the
population, least squares itself adds about ζ²p/(n − p − 1) (ζ² the residual variance; exact for a Gaussian design),
which :func:`ssp_prediction` adds when a residual estimate is given.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TypedDict

import numpy as np

from privdyn import _check

__all__ = ["SSPPrediction", "SSPRisk", "ssp_excess_risk", "ssp_prediction", "RESOLVED_RATIO"]

RESOLVED_RATIO = 0.25
"""The first-order expansion is labelled ``model`` when q = τ/λ_min(S̃⁺ + λI) is at most this (neglected terms of
relative order q); above it, ``heuristic``."""


@dataclasses.dataclass(frozen=True)
class SSPRisk:
    """The first-order excess risk of θ̂ = (S̃ + λI)⁻¹b̃ over least squares on the same rows (module docstring).

    Attributes:
        excess: ridge_bias + noise, in the units of y² (per row, under Σ = S/n).
        ridge_bias: (λ²/n) θ_λᵀ S⁻¹ θ_λ.
        noise: tr(A⁻¹ Σ A⁻¹ C).
        perturbation_ratio: q = τ/λ_min(A) (λ_min raised to τ at least): the relative size of the neglected
            terms; 1 or more when an eigenvalue is not resolved.
        coefficients: θ̂ (the plug-in θ_λ).
    """

    excess: float
    ridge_bias: float
    noise: float
    perturbation_ratio: float
    coefficients: np.ndarray


def ssp_excess_risk(second_moment: np.ndarray, moment: np.ndarray, *, rows: int, second_moment_std: float,
                    moment_std: float, ridge: float) -> SSPRisk:
    """The first-order excess risk of the SSP fit, plugging in the release (module docstring).

    Args:
        second_moment: S̃ (p, p), the released Σ z zᵀ (symmetrized here).
        moment: b̃ (p,), the released Σ y z.
        rows: n.
        second_moment_std: s_S >= 0, the std of each distinct entry of E.
        moment_std: s_b >= 0, the std of each entry of e.
        ridge: λ >= 0.
    """
    _check.integer(1, rows=rows)
    _check.scalar(second_moment_std=second_moment_std, moment_std=moment_std, ridge=ridge)
    _check.non_negative(second_moment_std=second_moment_std, moment_std=moment_std, ridge=ridge)
    s = np.asarray(second_moment, dtype=float)
    b = np.asarray(moment, dtype=float)
    p = b.shape[0] if b.ndim == 1 else -1
    if s.shape != (p, p):
        raise ValueError(f"second_moment must be (p, p) and moment (p,); got {s.shape} and {b.shape}.")
    _check.finite(second_moment=s, moment=b)
    s = 0.5 * (s + s.T)
    values, vectors = np.linalg.eigh(s)
    top = float(values.max())
    tau = 2.0 * math.sqrt(p) * second_moment_std
    # an eigenvalue below the noise's spectral norm is not resolved: raised to it (and to a rounding floor)
    floor = max(tau, 1e-12 * top)
    if not floor > 0:
        raise ValueError("second_moment must have a positive eigenvalue when second_moment_std = 0 (a noiseless "
                         "release with no signal).")
    values = np.maximum(values, floor)
    shifted = values + ridge
    along = (vectors.T @ b) / shifted  # θ_λ in the eigenbasis
    theta = vectors @ along
    weight = (values / rows) / shifted**2  # diagonal of A⁻¹ Σ A⁻¹ in the eigenbasis
    norm2 = float(along @ along)
    diagonal = (vectors**2).T @ theta**2  # (Vᵀ diag(θ²) V)_ii
    covariance = moment_std**2 + second_moment_std**2 * (norm2 + along**2 - diagonal)
    noise = float(np.sum(weight * covariance))
    ridge_bias = float(ridge**2 / rows * np.sum(along**2 / values))
    return SSPRisk(excess=ridge_bias + noise, ridge_bias=ridge_bias, noise=noise,
                   perturbation_ratio=tau / float(shifted.min()), coefficients=theta)


REDRAWS = 8
"""Redraws of the release noise behind :func:`ssp_prediction`'s interval."""


class SSPPrediction(TypedDict):
    """:func:`ssp_prediction`'s result, in the planner's prediction format plus the risk's parts.

    Keys: ``excess_mse``, ``test_mse`` (None without a residual estimate), ``interval`` ([low, high]), ``label``
    (``model`` or ``heuristic``), ``reasons``, ``perturbation_ratio`` (q), ``ridge_bias`` and ``noise`` (the two
    terms of the first-order excess over least squares).
    """

    excess_mse: float
    test_mse: float | None
    interval: list[float]
    label: str
    reasons: list[str]
    perturbation_ratio: float
    ridge_bias: float
    noise: float


def ssp_prediction(second_moment: np.ndarray, moment: np.ndarray, *, rows: int, second_moment_std: float,
                   moment_std: float, ridge: float, rng: np.random.Generator,
                   residual_variance: float | None = None) -> SSPPrediction:
    """A prediction in the planner's format: ``excess_mse``, ``test_mse``, ``interval``, ``label``, ``reasons``.

    ``excess_mse`` is :func:`ssp_excess_risk`'s excess over least squares on the same rows plus, when
    ``residual_variance`` (ζ²) is given, least squares' own excess over the best linear predictor, ζ²p/(n − p − 1);
    ``test_mse`` is then excess plus ζ² (None without it). ``interval`` is the spread over :data:`REDRAWS` redraws
    of the release noise added to the plug-in (a parametric bootstrap: how much the plug-in itself moves), widened
    to hold the point. ``rng`` draws the redraws (post-processing: it touches no private data).
    """
    _check.generator(rng=rng)
    risk = ssp_excess_risk(second_moment, moment, rows=rows, second_moment_std=second_moment_std,
                           moment_std=moment_std, ridge=ridge)
    p = risk.coefficients.shape[0]
    statistical = 0.0
    reasons: list[str] = []
    if residual_variance is not None:
        statistical = residual_variance * p / (rows - p - 1) if rows > p + 1 else math.inf
    else:
        reasons.append("excess over least squares fitted on the same rows: least squares' own excess over the best "
                       "linear predictor (about zeta^2 p/n) is not included, nor is test_mse given, since the "
                       "release holds no label second moment to estimate the residual variance zeta^2 from")
    spread = []
    for _ in range(REDRAWS):
        upper = np.triu(rng.standard_normal((p, p))) * second_moment_std
        redrawn = ssp_excess_risk(second_moment + upper + np.triu(upper, 1).T,
                                  moment + moment_std * rng.standard_normal(p), rows=rows,
                                  second_moment_std=second_moment_std, moment_std=moment_std, ridge=ridge)
        spread.append(redrawn.excess)
    low, high = min(min(spread), risk.excess), max(max(spread), risk.excess)
    q = risk.perturbation_ratio
    if q > RESOLVED_RATIO:
        reasons.insert(0, f"first-order perturbation: the release noise's spectral norm is {q:.3g} of the smallest "
                          f"eigenvalue of the released second moment plus the ridge (model only below "
                          f"{RESOLVED_RATIO:g}); the neglected terms are of that relative order, and the prediction "
                          "is optimistic along the unresolved directions")
    excess = risk.excess + statistical
    return {"excess_mse": excess, "test_mse": None if residual_variance is None else excess + residual_variance,
            "interval": [low + statistical, high + statistical],
            "label": "model" if q <= RESOLVED_RATIO else "heuristic", "reasons": reasons,
            "perturbation_ratio": q, "ridge_bias": risk.ridge_bias, "noise": risk.noise}
