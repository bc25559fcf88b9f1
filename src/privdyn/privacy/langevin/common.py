"""Shared pieces of the langevin accountant (Chourasia, Ye, Shokri 2021, arXiv 2102.05855): sources, checks of the
theorems' conditions, numerics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from privdyn import _check
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = ["CROSSOVER_X"]


_PAPER = "Chourasia, Ye, Shokri 2021 (arXiv 2102.05855)"
_LAST_ITERATE = "replace-one neighbours, only the last iterate released"
_C1_ASSUMES = (
    "assumes a strong_convexity-strongly convex, smoothness-smooth per-example loss on a closed convex set, "
    "step_size < 1/smoothness, data-independent start "
    "theta_0 ~ Pi_C(N(0, 2*noise_scale**2/strong_convexity * I)), "
    f"total gradient sensitivity S_g, {_LAST_ITERATE}"
)
_SRC_C1 = f"{_PAPER}, Corollary 1; {_C1_ASSUMES}"
_SRC_C1_INF = (
    f"{_PAPER}, Corollary 1, limit num_steps -> infinity (a bound for every num_steps); {_C1_ASSUMES}"
)
_SRC_INCREMENT = (
    f"{_PAPER}, Corollary 1, increment eps(k) - eps(k-1) of the bound "
    "(per-iteration contribution, section 3); "
    f"the increments sum to the Corollary 1 bound; {_C1_ASSUMES}"
)
_SRC_T2 = (
    f"{_PAPER}, Theorem 2 (eq. 16); assumes both coupled tracing diffusions are lsi_constant-LSI for all "
    f"0 <= t <= step_size*num_steps, total gradient sensitivity S_g, {_LAST_ITERATE}"
)
_SRC_BASE = (
    f"{_PAPER}, Theorem 1 with T = step_size*num_steps = the Figure 1 composition baseline (Appendix E): "
    "the Gaussian mechanism composed num_steps times; no convexity or smoothness assumption; "
    "total gradient sensitivity S_g, replace-one neighbours (holds even if every iterate is released)"
)
_QUADRATIC = (
    "per-example loss 0.5*||theta - x||**2 (strong_convexity = smoothness = 1), unconstrained, "
    "worst-case neighbours with ||mean(D) - mean(D')|| = sensitivity/n "
    "(sensitivity = diameter of the data domain)"
)
_SRC_EXACT = (
    f"{_PAPER}, Section 4 tightness instance, exact Gaussian Renyi divergence of theta_K "
    f"(derived from Theorem 3's construction; the paper's variance has a spurious /n**2); {_QUADRATIC}, "
    "start theta_0 ~ N(0, init_variance * I) (theta_0 = 0 for init_variance = 0)"
)
_SRC_T3 = (
    f"{_PAPER}, Theorem 3 (eq. 17), lower bound on the privacy loss of noisy GD (not a DP guarantee); "
    f"{_QUADRATIC}, start theta_0 = 0"
)
_SRC_C2 = (
    f"{_PAPER}, Corollary 2 (eq. 18) with n**2 in the denominator (the paper prints eta**2: a typo); "
    f"Theorem 2 with lsi_constant = (2 - step_size)/(2*noise_scale**2); {_QUADRATIC}, "
    f"fixed data-independent start theta_0, {_LAST_ITERATE}"
)
_SRC_TRACKED = (
    f"privdyn extension, not in the paper: {_PAPER}, Theorem 2 (eq. 16) with lsi_constant = min_k c_k "
    "from the LSI recursion 1/c_(k+1) = rho**2/c_k + 2*step_size*noise_scale**2, "
    "rho = max(|1 - step_size*strong_convexity|, |1 - step_size*smoothness|); assumes a "
    "strong_convexity-strongly convex, smoothness-smooth per-example loss on a closed convex set, a "
    f"data-independent start that is init_lsi_constant-LSI, total gradient sensitivity S_g, {_LAST_ITERATE}"
)
_SRC_GAMMA = (
    f"privdyn extension, not in the paper: {_PAPER}, Lemma 2 / PDE (15) solved with a free gamma in (0, 1) "
    "(the paper fixes gamma = 1/2), minimised over gamma for each num_steps; "
    f"the gamma -> 1 limit is the composition baseline; {_C1_ASSUMES}"
)

CROSSOVER_X: float = float(2.0 + special.lambertw(-2.0 * math.exp(-2.0), 0).real)
"""The positive root x* = 1.5936242600... of 1 - exp(-x) = x/2, in closed form x* = 2 + W_0(-2 exp(-2)).

Corollary 1 lies below the composition baseline exactly when strong_convexity * step_size * K / 2 > x*.
"""


# ----------------------------------------------------------------------------------------------------
# validation and shaping helpers


def _arr(value: Any) -> np.ndarray:
    return np.asarray(value, dtype=float)


def _out(value: np.ndarray) -> float | np.ndarray:
    """A Python float for a 0-d result, else the array."""
    value = np.array(value, dtype=float)  # a copy: never a read-only broadcast view
    return float(value) if value.ndim == 0 else value


def _loss(value: np.ndarray, guarantee: Guarantee, source: str, quantity: str = "rdp_epsilon") -> PrivacyLoss:
    return PrivacyLoss(
        _out(value), guarantee, quantity=quantity, neighboring=NeighboringRelation.REPLACE_ONE, source=source
    )


def _show(value: Any) -> str:
    return repr(float(value))


def _check_renyi_order(**named: Any) -> None:
    _check.finite(**named)
    _check.in_range(1.0, math.inf, closed="neither", **named)


def _check_count(minimum: int, **named: Any) -> None:
    """Finite, integer-valued (an integral float is accepted) and >= minimum."""
    _check.finite(**named)
    for name, value in named.items():
        arr = _arr(value)
        bad = arr != np.round(arr)
        if np.any(bad):
            raise ValueError(f"{name} must be an integer >= {minimum}; got {name}={_show(arr[bad].flat[0])}.")
        bad = ~(arr >= minimum)
        if np.any(bad):
            raise ValueError(f"{name} must be an integer >= {minimum}; got {name}={_show(arr[bad].flat[0])}.")


def _check_num_steps(num_steps: Any, minimum: float = 0.0) -> None:
    _check.finite(num_steps=num_steps)
    arr = _arr(num_steps)
    bad = ~(arr >= minimum)
    if np.any(bad):
        raise ValueError(f"num_steps must be >= {minimum:g}; got num_steps={_show(arr[bad].flat[0])}.")


def _check_convexity(strong_convexity: Any, smoothness: Any) -> None:
    _check.positive(strong_convexity=strong_convexity, smoothness=smoothness)
    lam, beta = np.broadcast_arrays(_arr(strong_convexity), _arr(smoothness))
    bad = ~(lam <= beta)
    if np.any(bad):
        raise ValueError(
            f"strong_convexity must be <= smoothness = {_show(beta[bad].flat[0])}; "
            f"got strong_convexity={_show(lam[bad].flat[0])}."
        )


def _check_step_below_inverse_smoothness(step_size: Any, smoothness: Any) -> None:
    eta, beta = np.broadcast_arrays(_arr(step_size), _arr(smoothness))
    bad = ~(eta < 1.0 / beta)
    if np.any(bad):
        b = beta[bad].flat[0]
        raise ValueError(
            f"step_size must be < 1/smoothness = {_show(1.0 / b)}; got step_size={_show(eta[bad].flat[0])} "
            f"(smoothness={_show(b)})."
        )


def _check_cor1(
    *, step_size: Any, noise_scale: Any, strong_convexity: Any, smoothness: Any, sensitivity: Any, n: Any
) -> None:
    """The assumptions of Corollary 1 that can be checked from the constants (:class:`LangevinSetting` checks them)."""
    from privdyn.privacy.langevin.setting import LangevinSetting

    LangevinSetting(step_size=step_size, noise_scale=noise_scale, strong_convexity=strong_convexity,
                    smoothness=smoothness, sensitivity=sensitivity, n=n)


def _one_minus_exp_neg(x: np.ndarray) -> np.ndarray:
    """1 - exp(-x), accurate for small x."""
    return -np.expm1(-x)
