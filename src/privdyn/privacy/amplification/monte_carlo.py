"""A Monte-Carlo estimate of epsilon for the Theorem F.8 pair, as an upper confidence bound.

The hockey-stick divergences of the pair ``P = sum_y s(y) N(|C| y, kappa^2 I)``, ``Q = N(0, kappa^2 I)`` (Wang et al.,
arXiv 2605.12648v1, Theorem F.8) are expectations of the privacy loss ``L = log dP/dQ``:

    delta_remove(eps) = H_{e^eps}(P || Q) = E_P[(1 - e^{eps - L})_+],
    delta_add(eps)    = H_{e^eps}(Q || P) = E_Q[(1 - e^{eps + L})_+].

Both are estimated from ``num_samples`` draws of P and of Q with the *exact* privacy loss (enumeration of the ``2^T``
participation patterns, :func:`privdyn.privacy.amplification.pair.privacy_loss_exact`), so the only error is
sampling error. The estimate of epsilon is the smallest epsilon on a fine grid whose one-sided upper confidence
bounds (mean + z * standard error, z for ``confidence``, Bonferroni over the grid and the two directions) on both
deltas are <= delta: an upper confidence bound (label ``estimate``). The matching lower confidence bound (mean -
z * standard error) gives an epsilon that the true one exceeds with the same confidence; the tests compare the
accountant's ``bound`` against it.

The exact privacy loss limits this estimate to short horizons (``T <= 16``): at longer horizons the pair's
likelihood is a sum over ``2^T`` participation patterns with no finite-state recursion for lambda-CGD.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from privdyn import _check
from privdyn.privacy.amplification.pair import DominatingPair, privacy_loss_exact

__all__ = ["MonteCarloEstimate", "monte_carlo_epsilon"]


@dataclasses.dataclass(frozen=True)
class MonteCarloEstimate:
    """epsilon's upper and lower confidence bounds at ``confidence`` from ``num_samples`` draws per direction."""

    epsilon_upper: float
    epsilon_lower: float
    confidence: float
    num_samples: int


def _sample_losses(pair: DominatingPair, num_samples: int, rng: np.random.Generator, chunk: int = 4096
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Privacy losses ``L(theta)`` for theta ~ P and theta ~ Q (exact, by enumeration)."""
    a = pair.encoder_matrix()
    kappa = pair.noise_multiplier
    from_p, from_q = [], []
    for start in range(0, num_samples, chunk):
        m = min(chunk, num_samples - start)
        y = (rng.random((m, pair.num_steps)) < pair.sampling_prob).astype(float)
        theta_p = y @ a.T + kappa * rng.standard_normal((m, pair.num_steps))
        theta_q = kappa * rng.standard_normal((m, pair.num_steps))
        from_p.append(privacy_loss_exact(pair, theta_p))
        from_q.append(privacy_loss_exact(pair, theta_q))
    return np.concatenate(from_p), np.concatenate(from_q)


def _deltas(losses: np.ndarray, epsilons: np.ndarray, sign: float, z: float) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower confidence bounds of ``E[(1 - e^{eps - sign * L})_+]`` at each epsilon.

    With ``x = sign * L`` sorted in decreasing order, the sample mean and second moment at eps only involve the
    samples with ``x > eps``: ``sum (1 - e^eps e^{-x})`` and ``sum (1 - e^eps e^{-x})^2``, read from cumulative sums
    of ``1``, ``e^{-x}`` and ``e^{-2x}`` (computed relative to ``e^{-eps}`` to avoid overflow).
    """
    x = np.sort(sign * losses)[::-1]
    n = x.size
    out_upper = np.empty(epsilons.size)
    out_lower = np.empty(epsilons.size)
    counts = np.searchsorted(-x, -epsilons, side="left")  # number of samples with x > eps
    for i, (eps, m) in enumerate(zip(epsilons, counts, strict=True)):
        if m == 0:
            out_upper[i] = out_lower[i] = 0.0
            continue
        terms = -np.expm1(eps - x[:m])  # in (0, 1]
        mean = terms.sum() / n
        second = np.dot(terms, terms) / n
        se = math.sqrt(max(second - mean**2, 0.0) * n / (n - 1) / n)
        out_upper[i] = mean + z * se
        out_lower[i] = mean - z * se
    return out_upper, out_lower


def monte_carlo_epsilon(pair: DominatingPair, *, delta: float, num_samples: int, rng: np.random.Generator,
                        confidence: float = 0.999, epsilon_grid: np.ndarray | None = None) -> MonteCarloEstimate:
    """Upper and lower confidence bounds on the pair's epsilon at ``delta`` (see the module docstring).

    Args:
        pair: the Theorem F.8 pair (``num_steps <= 16``).
        delta: in (0, 1).
        num_samples: draws per direction (>= 100); the standard error of a delta scales like 1/sqrt of it.
        rng: the random generator (passed explicitly; the caller seeds it).
        confidence: the one-sided level of each bound, Bonferroni-corrected over the grid and both directions.
        epsilon_grid: increasing epsilons to test (default: 0 to 20 in steps of 0.01).
    """
    _check.in_range(0.0, 1.0, closed="neither", delta=delta, confidence=confidence)
    _check.integer(minimum=100, num_samples=num_samples)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}.")
    grid = np.arange(0.0, 20.0 + 1e-9, 0.01) if epsilon_grid is None else np.asarray(epsilon_grid, dtype=float)
    from scipy.special import ndtri

    z = float(ndtri(1.0 - (1.0 - confidence) / (2 * grid.size)))
    loss_p, loss_q = _sample_losses(pair, int(num_samples), rng)
    upper_p, lower_p = _deltas(loss_p, grid, 1.0, z)
    upper_q, lower_q = _deltas(loss_q, grid, -1.0, z)
    upper, lower = np.maximum(upper_p, upper_q), np.maximum(lower_p, lower_q)
    ok_upper = np.flatnonzero(upper <= delta)
    eps_upper = float(grid[ok_upper[0]]) if ok_upper.size else math.inf
    # the lower bound: the largest grid epsilon at which the lower confidence bound still exceeds delta
    above = np.flatnonzero(lower > delta)
    eps_lower = float(grid[above[-1]]) if above.size else 0.0
    return MonteCarloEstimate(epsilon_upper=eps_upper, epsilon_lower=eps_lower, confidence=float(confidence),
                              num_samples=int(num_samples))
