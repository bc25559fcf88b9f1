"""The Theorem F.8 pair's privacy loss at long horizons for lambda-CGD: a forward recursion on a grid of states.

For lambda-CGD (Wang et al., arXiv 2605.12648v1, Definition 3.1) the first column of ``|C|`` is geometric,
``c_k = lambda^k``, so the pair's mean ``(|C| y)_t`` is the running state ``s_t = lambda s_{t-1} + y_t`` (``s_0 = 0``)
and the privacy loss of Theorem F.8's pair is the log-likelihood of a hidden Markov model:

    dP/dQ(theta) = E_y prod_t exp((s_t theta_t - s_t^2 / 2) / kappa^2),   y_t iid Bernoulli(r).

Its forward recursion ``alpha_t(s') = e_t(s') sum_y p(y) alpha_{t-1}((s' - y) / lambda)`` (``e_t`` the factor above)
is exact but carries up to ``2^t`` distinct states. Here ``alpha`` lives on the grid ``s = j / q`` (``q`` points per
unit of state): the shift by ``y = 1`` moves a grid point to a grid point, and the contraction ``s -> lambda s``
lands between grid points, where the mass is split over the three nearest ones with the quadratic Lagrange weights
``(f^2 - f)/2, 1 - f^2, (f^2 + f)/2`` (``f`` the offset from the middle one). The split keeps the mass, its mean and
its second moment; by duality it is quadratic interpolation, in the state, of the smooth backward value
``E[prod_{u > t} e_u | s_t = s]``, and the error of the log-likelihood falls like ``q^-3`` (measured against the
enumeration of all ``2^T`` patterns in the tests, and estimated for each Monte-Carlo estimate by comparing ``q``
with ``2q``: :func:`privdyn.privacy.amplification.monte_carlo.monte_carlo_epsilon`). The cost is
``O(T q / (1 - lambda))`` per output.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

from privdyn import _check

if TYPE_CHECKING:
    from collections.abc import Callable

    from privdyn.privacy.amplification.pair import DominatingPair

__all__ = ["geometric_ratio", "privacy_loss_forward", "MAX_GRID_POINTS"]

MAX_GRID_POINTS = 1_000_000
"""Largest state grid (``q / (1 - lambda)`` points) :func:`privacy_loss_forward` accepts."""


def geometric_ratio(pair: DominatingPair) -> float | None:
    """``lambda`` if the pair's ``|C|`` has first column ``1, lambda, lambda^2, ...`` (lambda-CGD), else ``None``."""
    from privdyn.privacy.amplification.pair import DominatingPair

    if not isinstance(pair, DominatingPair):
        raise TypeError(f"pair must be a DominatingPair; got {type(pair).__name__}.")
    c = pair.coefficients
    if c.size == 0 or c[0] != 1.0:
        return None
    ratio = float(c[1]) if c.size > 1 else 0.0
    if not 0.0 <= ratio < 1.0:
        return None
    expected = ratio ** np.arange(c.size)
    return ratio if np.allclose(c, expected, rtol=1e-12, atol=1e-300) else None


def _forward(theta: np.ndarray, lam: float, kappa: float, r: float, q: int, out: np.ndarray) -> None:
    """The recursion of the module docstring for each row of ``theta``; writes ``log dP/dQ`` into ``out``."""
    m, num_steps = theta.shape
    size = int(math.ceil((q + 2.0) / (1.0 - lam))) + 2  # states stay below (q + 1.5) / (1 - lambda) grid points
    inv_var = 1.0 / (kappa * kappa)
    alpha = np.zeros(size)
    new = np.zeros(size)
    for i in range(m):
        alpha[:] = 0.0
        alpha[0] = 1.0
        hi = 0
        total = 0.0
        for t in range(num_steps):
            top = int(lam * hi) + 2 + q
            for j in range(top + 1):
                new[j] = 0.0
            for j in range(hi + 1):
                w = alpha[j]
                if w == 0.0:
                    continue
                x = lam * j
                k = int(x + 0.5)  # the nearest grid point; f in [-1/2, 1/2]
                f = x - k
                if k == 0:  # x < 1/2: the three points 0, 1, 2 (f in [0, 1/2) measured from point 1 is f - 1)
                    k = 1
                    f = x - 1.0
                wm = w * 0.5 * (f * f - f)
                w0 = w * (1.0 - f * f)
                wp = w * 0.5 * (f * f + f)
                new[k - 1] += (1.0 - r) * wm
                new[k] += (1.0 - r) * w0
                new[k + 1] += (1.0 - r) * wp
                new[k - 1 + q] += r * wm
                new[k + q] += r * w0
                new[k + 1 + q] += r * wp
            # e_t(j / q) by recurrence: e(0) = 1, e(j+1)/e(j) = exp(((theta - (2j + 1) / (2q)) / q) / kappa^2)
            th = theta[i, t]
            factor = 1.0
            step = math.exp((th / q - 0.5 / (q * q)) * inv_var)
            decay = math.exp(-inv_var / (q * q))
            mass = 0.0
            new_hi = 0
            for j in range(top + 1):
                v = new[j] * factor
                new[j] = v
                mass += v
                if v != 0.0:
                    new_hi = j
                factor *= step
                step *= decay
            total += math.log(mass)
            inv = 1.0 / mass
            hi = 0
            for j in range(new_hi + 1):
                v = new[j] * inv
                if abs(v) < 1e-300:
                    v = 0.0
                else:
                    hi = j
                alpha[j] = v
            for j in range(new_hi + 1, size):
                alpha[j] = 0.0
        out[i] = total


@functools.cache
def _compiled() -> Callable[..., None]:
    """:func:`_forward` compiled by numba (imported and compiled on first use; cached on disk)."""
    import numba

    return numba.njit(cache=True, nogil=True)(_forward)


def privacy_loss_forward(pair: DominatingPair, outputs: np.ndarray, grid_points_per_unit: int) -> np.ndarray:
    """``log dP/dQ`` at each row of ``outputs`` (shape (m, T)) for a lambda-CGD pair, by the grid recursion.

    Args:
        pair: a :class:`~privdyn.privacy.amplification.pair.DominatingPair` whose ``|C|`` is geometric (lambda-CGD,
            including independent noise, lambda = 0); other encoders raise ``ValueError``.
        outputs: the released vectors theta, one per row (T columns).
        grid_points_per_unit: q >= 4, grid points per unit of state (the error falls like q^-3).
    """
    lam = geometric_ratio(pair)
    if lam is None:
        raise ValueError(f"the forward recursion needs a lambda-CGD encoder (first column 1, lambda, lambda^2, ...); "
                         f"got {pair.strategy}.")
    _check.integer(minimum=4, grid_points_per_unit=grid_points_per_unit)
    q = int(grid_points_per_unit)
    if q / (1.0 - lam) > MAX_GRID_POINTS:
        raise ValueError(f"grid_points_per_unit={q} with lambda={lam} needs {q / (1.0 - lam):.3g} grid points; "
                         f"at most {MAX_GRID_POINTS} are allowed.")
    theta = np.ascontiguousarray(np.atleast_2d(_check.real_array(outputs=outputs)))
    if theta.shape[1] != pair.num_steps:
        raise ValueError(f"outputs must have num_steps={pair.num_steps} columns; got shape {theta.shape}.")
    out = np.empty(theta.shape[0])
    _compiled()(theta, lam, pair.noise_multiplier, pair.sampling_prob, q, out)
    return out
