"""Ye & Shokri's last-iterate (hidden-state) Renyi-DP bound for one shuffled epoch of noisy clipped SGD.

Ye & Shokri, "Differentially Private Learning Needs Hidden State (Or Much Faster Convergence)", arXiv 2203.05363 (2022):
the one-epoch "shuffle and partition" guarantee for the last iterate of noisy projected/clipped SGD on a strongly
convex, smooth loss, as evaluated by their public code (``dp_utils.first_epoch_guarantee``). The hsgd paper (Lin,
Kolaczyk, Smith, Paquette, arXiv 2510.16687) compares against it in its Figure 3(b) without giving the parametrization;
privdyn's mapping is below (see also ``docs/hsgd.md``).

Setting: one pass over n = ``num_steps`` records in a uniformly random order, batch size 1, per-example gradients
clipped to norm C, Gaussian noise of standard deviation ``noise_multiplier``·C added to each gradient, and each step
a contraction by ``contraction`` q = 1 − ηλ (λ the strong-convexity constant, η the step size). Under replace-one
neighbouring the two clipped gradients differ by at most 2C (sensitivity twice the clip). If the differing record is
used j steps before the end, the last iterates of the two runs are Gaussians whose means differ by at most
2Cη q^{j−1} and whose covariance is η²σ_m²C² Σ_{i<j} q^{2i} I, so their Renyi divergence is at most

    ε_j = 2α q^{2(j−1)} (1 − q²) / (σ_m² (1 − q^{2j})),      j = 1..n    (q = 1: ε_j = 2α / (σ_m² j)),

and the position mixture (joint convexity of exp((α−1)D_α)) gives

    ε = (1/(α−1)) log( (1/n) Σ_{j=1}^n exp((α−1) ε_j) ).

The trajectory over the iterates k (``iterates``; the hsgd paper does not say how its curve in
Figure 3(b) is indexed): after k of the n steps, the differing record has been used with probability k/n, at a
uniform position, so ε_k = (1/(α−1)) log( (n−k)/n + (1/n) Σ_{j=1}^k exp((α−1) ε_j) ); ε_n is the one-epoch value.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from privdyn import _check
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = ["ye_shokri_rdp", "ye_shokri_step_rdp", "REFERENCE"]

REFERENCE = ("Ye & Shokri 2022, Differentially Private Learning Needs Hidden State (Or Much Faster Convergence), "
             "arXiv 2203.05363: one-epoch shuffled last-iterate RDP (their code, dp_utils.first_epoch_guarantee)")
"""The paper and code this module's bound follows, as its privacy losses cite them."""

# Upward rounding of the returned values (relative): 32 units in the last place, above the evaluation error of
# log1p/expm1/fsum (a few units), so that rounding never reports less than the formula.
_ROUND_UP = 32 * np.finfo(float).eps
# Below this exponent expm1 cannot overflow: the log1p form is used; above it the logsumexp form (a large value).
_EXPM1_LIMIT = 700.0


def _validate(renyi_order: Any, noise_multiplier: Any, contraction: Any, num_steps: Any) -> tuple[float, float, float,
                                                                                                 int]:
    _check.scalar(renyi_order=renyi_order, noise_multiplier=noise_multiplier, contraction=contraction)
    _check.in_range(1.0, math.inf, closed="neither", renyi_order=renyi_order)
    _check.positive(noise_multiplier=noise_multiplier)
    _check.in_range(0.0, 1.0, contraction=contraction)
    _check.integer(minimum=1, num_steps=num_steps)
    return float(renyi_order), float(noise_multiplier), float(contraction), int(num_steps)


def ye_shokri_step_rdp(renyi_order: float, *, noise_multiplier: float, contraction: float,
                       num_steps: int) -> np.ndarray:
    """ε_j, j = 1..``num_steps``: the RDP of the last iterate when the differing record is used j steps before the end.

    ε_j = 2α q^{2(j−1)}(1 − q²)/(σ_m²(1 − q^{2j})) (module docstring), evaluated as
    2α/σ_m² · exp(2(j−1) log q) · expm1(2 log q)/expm1(2j log q), which keeps its relative accuracy for q close to 1
    (the limit 2α/(σ_m² j) at q = 1) and gives ε_1 = 2α/σ_m², ε_{j>1} = 0 at q = 0.

    Returns:
        (num_steps,) array, non-increasing in j.
    """
    alpha, sigma_m, q, n = _validate(renyi_order, noise_multiplier, contraction, num_steps)
    j = np.arange(1, n + 1, dtype=float)
    base = 2.0 * alpha / sigma_m**2
    if q == 1.0:
        return base / j
    if q == 0.0:
        out = np.zeros(n)
        out[0] = base
        return out
    log_q = math.log(q)
    ratio = np.expm1(2.0 * log_q) / np.expm1(2.0 * j * log_q)
    return base * np.exp(2.0 * (j - 1.0) * log_q) * ratio


def ye_shokri_rdp(renyi_order: float, *, noise_multiplier: float, contraction: float, num_steps: int,
                  iterates: ArrayLike | None = None) -> PrivacyLoss:
    """Ye & Shokri's one-epoch last-iterate RDP of shuffled noisy clipped SGD (arXiv 2203.05363), labelled ``bound``.

    See the module docstring for the formula and its assumptions. For the clipped runs of the hsgd paper's Figure 3(b)
    (arXiv 2510.16687), ``noise_multiplier`` = σ/c (absolute noise σ, clip c), ``contraction`` = 1 − η·ridge,
    ``num_steps`` = n.

    Args:
        renyi_order: α > 1.
        noise_multiplier: σ_m > 0, the noise standard deviation relative to the clipping threshold C (the
            replace-one sensitivity of a clipped gradient is 2C).
        contraction: q ∈ [0, 1], the per-step contraction factor of the update map (1 − ηλ).
        num_steps: n ≥ 1, the number of records = steps of the epoch (batch size 1).
        iterates: None for the last iterate after the epoch (a float value), or iterates k ∈ [0, n] (array) for the
            position-mixture trajectory ε_k of the module docstring (ε_0 = 0, ε_n the one-epoch value).

    Returns:
        A :class:`PrivacyLoss` with ``guarantee="bound"``, ``neighboring="replace_one"``; ``value`` is a float or an
        array shaped like ``iterates``. Values are computed as log1p of a sum of expm1 terms (no cancellation), or
        by logsumexp when an exponent would overflow, and rounded up by 32 units in the last place, so they never
        under-report the formula.

    Formal guarantees:
        An upper bound on the Renyi divergence of order α between the last iterates under replace-one neighbours,
        under Ye & Shokri's assumptions (λ-strongly convex and smooth per-example losses, step size below the
        smoothness limit, clipped or Lipschitz gradients, uniformly random order, the intermediate iterates hidden).
        Whether clipping preserves the contraction is their assumption, not verified here.

    Raises:
        ValueError: renyi_order <= 1, noise_multiplier <= 0, contraction outside [0, 1], num_steps < 1, iterates
            outside [0, num_steps].
    """
    alpha, sigma_m, q, n = _validate(renyi_order, noise_multiplier, contraction, num_steps)
    steps = ye_shokri_step_rdp(alpha, noise_multiplier=sigma_m, contraction=q, num_steps=n)
    beta = alpha - 1.0
    if iterates is None:
        ks = np.array([n])
    else:
        ks = np.asarray(iterates)
        _check.integer(minimum=0, iterates=ks)
        ks = ks.astype(np.int64)
        if np.any(ks > n):
            raise ValueError(f"iterates must be in [0, num_steps] = [0, {n}]; got max(iterates)={int(ks.max())}.")
    flat = ks.ravel()
    out = np.zeros(flat.size)
    for i, k in enumerate(flat.tolist()):
        if k == 0:
            continue
        terms = beta * steps[:k]  # the k positions already used: j = 1..k steps before iterate k
        if terms.max() < _EXPM1_LIMIT:
            # log(1 + (1/n) Σ_j expm1(t_j)): a sum of non-negative terms, no cancellation against log n
            value = math.log1p(math.fsum(np.expm1(terms).tolist()) / n) / beta
        else:
            if k < n:
                terms = np.concatenate(([math.log(n - k)], terms))
            value = (float(logsumexp(terms)) - math.log(n)) / beta
        out[i] = max(value, 0.0) * (1.0 + _ROUND_UP)
    result: float | np.ndarray = float(out[0]) if iterates is None else out.reshape(ks.shape)
    return PrivacyLoss(value=result, guarantee=Guarantee.BOUND, quantity="rdp_epsilon",
                       neighboring=NeighboringRelation.REPLACE_ONE,
                       source=REFERENCE + "; replace-one sensitivity 2C, noise noise_multiplier*C, batch size 1, "
                              "one epoch in a uniformly random order, last iterate only")
