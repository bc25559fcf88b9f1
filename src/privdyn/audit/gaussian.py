"""The exact (epsilon, delta) curve of a Gaussian shift, computed from the normal distribution alone.

For outputs N(m, s**2) on D and N(m', s**2) on D' (equal variances), the privacy loss is that of a shift
``mu = |m - m'| / s``, and the smallest delta at a given epsilon is (Balle and Wang 2018, arXiv 1805.06530,
Theorem 8)::

    delta(epsilon) = Phi(mu / 2 - epsilon / mu) - exp(epsilon) Phi(-mu / 2 - epsilon / mu).

This curve is exact: no test on the outputs can certify more, and every (epsilon, delta) on it is attained. The audit
uses it where a mechanism's output law is Gaussian, as an independent path to the divergence (it evaluates
``scipy.stats.norm`` in log space and inverts by root finding; it shares no code with privdyn's accountants).
For a d-dimensional Gaussian pair with one covariance, ``mu`` is the Mahalanobis distance of the means.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privdyn import _check

__all__ = ["gaussian_shift", "gaussian_shift_delta", "gaussian_shift_epsilon"]


def _mu(mu: Any) -> float:
    _check.scalar(mu=mu)
    _check.finite(mu=mu)
    _check.non_negative(mu=mu)
    return float(mu)


def gaussian_shift(mean: float, neighbour_mean: float, std: float) -> float:
    """``mu = |mean - neighbour_mean| / std`` for two one-dimensional Gaussians with the same ``std`` > 0."""
    _check.scalar(mean=mean, neighbour_mean=neighbour_mean, std=std)
    _check.finite(mean=mean, neighbour_mean=neighbour_mean, std=std)
    _check.positive(std=std)
    return abs(float(mean) - float(neighbour_mean)) / float(std)


def gaussian_shift_delta(mu: float, *, epsilon: float) -> float:
    """The exact delta of a Gaussian shift ``mu`` >= 0 at ``epsilon`` >= 0 (module docstring)."""
    from scipy import stats

    shift = _mu(mu)
    _check.scalar(epsilon=epsilon)
    _check.finite(epsilon=epsilon)
    _check.non_negative(epsilon=epsilon)
    if shift == 0.0:
        return 0.0
    first = stats.norm.cdf(shift / 2.0 - epsilon / shift)
    second = math.exp(epsilon + stats.norm.logcdf(-shift / 2.0 - epsilon / shift))
    return float(max(first - second, 0.0))


def gaussian_shift_epsilon(mu: float, *, delta: float) -> float:
    """The exact epsilon of a Gaussian shift ``mu`` >= 0 at ``delta`` in (0, 1): the root of ``delta(epsilon)``.

    0 when ``delta`` already covers epsilon = 0 (``delta >= 2 Phi(mu / 2) - 1``).
    """
    from scipy import optimize

    shift = _mu(mu)
    _check.delta(delta)
    if gaussian_shift_delta(shift, epsilon=0.0) <= delta:
        return 0.0
    high = 1.0
    while gaussian_shift_delta(shift, epsilon=high) > delta:
        high *= 2.0
    root = optimize.brentq(lambda e: gaussian_shift_delta(shift, epsilon=e) - delta, 0.0, high, xtol=1e-14,
                           rtol=4 * np.finfo(float).eps)
    return float(root)
