"""Sensitivity of a strategy under participation constraints (Choquette-Choo et al. 2023, arXiv 2211.06530) and its
prefix-sum error."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privdyn import _check
from privdyn.privacy.correlated.strategies import Strategy, _lower_toeplitz, _num_steps
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = ["sensitivity", "prefix_sum_rmse", "prefix_sum_max_error"]


# ---------------------------------------------------------------------------------------------------------------
# Sensitivity and error
# ---------------------------------------------------------------------------------------------------------------


def _participations(num_steps: int, max_participations: Any, min_separation: Any) -> tuple[int, int]:
    _check.finite(max_participations=max_participations, min_separation=min_separation)
    _check.integer(minimum=1, max_participations=max_participations, min_separation=min_separation)
    k, b = int(max_participations), int(min_separation)
    return min(k, (num_steps - 1) // b + 1), b


def gram_column_sums(c: np.ndarray, positions: np.ndarray) -> float:
    """``||C 1_positions||_2^2`` for the lower-triangular Toeplitz C with first column c (O(len(positions) T))."""
    num_steps = c.size
    cy = np.zeros(num_steps)
    for p in positions:
        cy[p:] += c[: num_steps - p]
    return float(np.dot(cy, cy))


def monotone_non_negative(c: np.ndarray) -> bool:
    """Whether the encoder's first column is non-negative and non-increasing (then consecutive participations are
    the worst case)."""
    return bool(np.all(c >= 0.0) and np.all(np.diff(c) <= 0.0))


def _side_best(values: np.ndarray, k: int, b: int) -> list[np.ndarray]:
    """Row-wise best sums of m = 0..k-1 entries of ``values`` at positions pairwise >= b apart (-inf: forbidden)."""
    width = values.shape[1]
    out = [np.zeros(values.shape[0])]
    prev = values
    for m in range(1, k):
        if m == 1:
            cand = values
        else:
            shifted = np.full_like(values, -np.inf)
            if b < width:
                shifted[:, b:] = prev[:, : width - b]  # the best m-1 entries at positions <= p - b
            cand = values + shifted
        prev = np.maximum.accumulate(cand, axis=1)
        out.append(prev[:, -1])
    return out


def _separated_bound_squared(c: np.ndarray, k: int, b: int) -> float:
    """An upper bound on max over b-separated sets S of at most k steps of ``||C 1_S||^2`` (any coefficients).

    With G = C^T C: ``sum_{u,v in S} G_uv <= sum_{u in S} R_u <= k max_u R_u``, where ``R_u`` is the largest
    ``sum_{v in S} |G_uv|`` over b-separated sets S of at most k steps that contain u. The steps of S left of u
    (at most u - b) and right of u (at least u + b) are chosen independently by dynamic programming.
    """
    num_steps = c.size
    c_mat = _lower_toeplitz(c)
    w = np.abs(c_mat.T @ c_mat)
    idx = np.arange(num_steps)
    right_allowed = idx[None, :] >= idx[:, None] + b
    right = _side_best(np.where(right_allowed, w, -np.inf), k, b)
    left_allowed = (num_steps - 1 - idx)[None, :] <= idx[:, None] - b  # column p of the reversed row is step T-1-p
    left = _side_best(np.where(left_allowed, w[:, ::-1], -np.inf), k, b)
    best = np.full(num_steps, -np.inf)
    for j in range(k):
        for m in range(k - j):
            best = np.maximum(best, left[j] + right[m])
    return float(k * np.max(np.diag(w) + best))


def sensitivity(strategy: Strategy, num_steps: int, *, max_participations: int = 1, min_separation: int = 1,
                neighboring: str | NeighboringRelation = NeighboringRelation.ZERO_OUT) -> PrivacyLoss:
    """L2 sensitivity of the encoder ``x -> C x`` for a record that joins at most k steps, at least b apart.

    ``sens = max_S ||C 1_S||_2`` over sets S of at most ``max_participations`` steps in ``0 .. num_steps - 1``
    whose consecutive elements are at least ``min_separation`` apart, for a unit clip (one record's row changes
    by at most 1 in L2: ``zero_out`` / ``add_remove``), times 2 under ``replace_one``. It rests on the standard
    reduction of adaptive rows to their norm bounds for non-negative ``C^T C`` (Choquette-Choo et al. 2023,
    arXiv 2211.06530; the kan paper's Lemma F.7).

    * One participation: the largest column norm, ``sqrt(sum_k c_k^2)`` (exact for every Toeplitz C).
    * Non-negative, non-increasing coefficients: ``C^T C`` is entrywise non-negative and moving a suffix of S
      earlier never decreases an entry, so the evenly spaced set ``{0, b, 2b, ...}`` with ``min(k,
      ceil(T / b))`` steps attains the maximum: exact (label ``exact``).
    * Otherwise: ``sqrt(k max_u R_u)`` with ``R_u`` the best b-separated row sum of ``|C^T C|`` through u, an
      upper bound (label ``bound``), O(T^2 k) time and O(T^2) memory.

    Returns:
        A :class:`PrivacyLoss` with ``quantity="sensitivity"``, the label and the relation.
    """
    if not isinstance(strategy, Strategy):
        raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")
    num_steps = _num_steps(num_steps)
    k, b = _participations(num_steps, max_participations, min_separation)
    try:
        relation = NeighboringRelation(neighboring)
    except ValueError:
        choices = ", ".join(repr(r.value) for r in NeighboringRelation)
        raise ValueError(f"neighboring must be one of {choices}; got neighboring={neighboring!r}.") from None
    factor = 2.0 if relation is NeighboringRelation.REPLACE_ONE else 1.0
    c = strategy.encoder_coefficients(num_steps)
    source = f"matrix-mechanism sensitivity of {strategy!r}, num_steps={num_steps}, k={k}, min_separation={b}"
    if k == 1 or monotone_non_negative(c):
        value = math.sqrt(gram_column_sums(c, np.arange(k) * b))
        guarantee = Guarantee.EXACT
    else:
        value = math.sqrt(_separated_bound_squared(c, k, b))
        guarantee = Guarantee.BOUND
        source += " (upper bound: coefficients not non-negative and non-increasing)"
    return PrivacyLoss(value=factor * value, guarantee=guarantee, quantity="sensitivity", neighboring=relation,
                       source=source)


def _prefix_noise_coefficients(strategy: Strategy, num_steps: int) -> np.ndarray:
    """First column of ``B = A C^{-1}`` (A the prefix-sum matrix): the cumulative sums of the noise coefficients."""
    return np.cumsum(strategy.noise_coefficients(num_steps))


def prefix_sum_rmse(strategy: Strategy, num_steps: int, *, max_participations: int = 1,
                    min_separation: int = 1) -> float:
    """Root-mean-squared error of the prefix sums at unit noise-to-sensitivity ratio.

    ``||A C^{-1}||_F * sens(C) / sqrt(T)`` (Choquette-Choo et al. 2023, arXiv 2211.06530; the error a matrix
    mechanism adds to the running sums of gradients when the noise std is the sensitivity). For Toeplitz
    factorizations ``B = A C^{-1}`` has coefficients ``b_k = sum_{j<=k} d_j`` and ``||B||_F^2 = sum_k (T - k)
    b_k^2``; e.g. DP-lambda-CGD gives ``T + (1 - lambda)^2 T (T - 1) / 2``. Where :func:`sensitivity` is only a
    bound, so is this.
    """
    _check.instance(Strategy, strategy=strategy)
    num_steps = _num_steps(num_steps)
    bcoef = _prefix_noise_coefficients(strategy, num_steps)
    frob2 = float(np.dot(num_steps - np.arange(num_steps), bcoef**2))
    sens = float(sensitivity(strategy, num_steps, max_participations=max_participations,
                             min_separation=min_separation))
    return math.sqrt(frob2 / num_steps) * sens


def prefix_sum_max_error(strategy: Strategy, num_steps: int, *, max_participations: int = 1,
                         min_separation: int = 1) -> float:
    """Largest per-step error std of the prefix sums at unit noise-to-sensitivity ratio.

    ``max_t ||(A C^{-1})_{t,:}||_2 * sens(C)``; for Toeplitz factorizations the last row is the largest,
    ``sqrt(sum_{k<T} b_k^2)``.
    """
    _check.instance(Strategy, strategy=strategy)
    num_steps = _num_steps(num_steps)
    bcoef = _prefix_noise_coefficients(strategy, num_steps)
    sens = float(sensitivity(strategy, num_steps, max_participations=max_participations,
                             min_separation=min_separation))
    return math.sqrt(float(np.dot(bcoef, bcoef))) * sens
