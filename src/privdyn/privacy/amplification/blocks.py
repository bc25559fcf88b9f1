"""The two-step block bound for lambda-CGD: the whitened pair split into independent blocks of two steps.

For the pair of Wang et al. (arXiv 2605.12648v1, Theorem F.8) with a geometric encoder ``|C| = c_0 A``,
``A_{t,u} = lambda^(t-u)`` for ``t >= u`` (lambda-CGD; ``0 <= lambda < 1``),

    P = sum_y s(y) N(c_0 A y, kappa^2 I_T),   Q = N(0, kappa^2 I_T),

write ``k = kappa / c_0``. ``A^-1`` is the bidiagonal ``I - lambda S`` (``S`` the shift down by one step), so the
data-independent bijection ``theta -> A^-1 theta / c_0`` turns the pair into ``y + W`` against ``W``, with
``W ~ N(0, k^2 Sigma)`` and

    Sigma = A^-1 A^-T = (1 - lambda)^2 I + lambda L_T + lambda (1 - lambda) e_0 e_0^T + lambda e_{T-1} e_{T-1}^T,

``L_T`` the Laplacian of the path 0 - 1 - ... - (T-1) (check the diagonal, 1 at t = 0 and 1 + lambda^2 after, and the
off-diagonal -lambda). A bijection leaves every hockey-stick divergence unchanged.

**Proposition (block domination).** Let ``L_B`` be the Laplacian of the pairs {0, 1}, {2, 3}, ... only (the path
without its edges (1, 2), (3, 4), ...) and ``Sigma_B = (1 - lambda)^2 I + lambda L_B``. Then ``Sigma - Sigma_B`` is
positive semi-definite, and with ``P_B = sum_y s(y) N(y, k^2 Sigma_B)``, ``Q_B = N(0, k^2 Sigma_B)``,
``H_alpha(P || Q) <= H_alpha(P_B || Q_B)`` and ``H_alpha(Q || P) <= H_alpha(Q_B || P_B)`` for every ``alpha >= 0``.
*Proof.* ``Sigma - Sigma_B`` is the sum of ``lambda (e_t - e_{t+1})(e_t - e_{t+1})^T`` over the dropped edges and of
the two non-negative diagonal terms, each positive semi-definite. The kernel ``x -> x + V``, ``V ~ N(0, k^2 (Sigma -
Sigma_B))`` independent of ``x`` and of the data, maps ``P_B`` to the whitened ``P`` and ``Q_B`` to the whitened
``Q``; data processing for f-divergences gives both inequalities. QED.

``Sigma_B`` is block-diagonal with blocks ``k^2 [(1 - lambda)^2 I_2 + lambda [[1, -1], [-1, 1]]]`` (a last block
``k^2 (1 - lambda)^2`` of one step when T is odd), and ``s(y)`` is a product of Bernoulli(r) laws, so ``(P_B, Q_B)``
is the composition of ``floor(T/2)`` identical two-dimensional pairs (and, for odd T, one Poisson-subsampled Gaussian
at noise multiplier ``k (1 - lambda)``). In the block's eigenbasis ``(1, 1)/sqrt 2`` and ``(1, -1)/sqrt 2`` (data
independent) the noise has the independent standard deviations ``a = k (1 - lambda)`` and ``b = k (1 +
lambda^2)^(1/2)``, and the four participation patterns of the block are the means ``(0, 0)``, ``(m_a, m_b)``, ``(m_a,
-m_b)`` and ``(2 m_a, 0)`` in units of those deviations, ``m_a = 1/(sqrt 2 a)``, ``m_b = 1/(sqrt 2 b)``.

**The block's privacy loss distribution, on the safe side.** The privacy loss ``L(z) = log dP_2/dQ_2(z) = log sum_y
s(y) exp(<m_y, z> - |m_y|^2 / 2)`` is a log-sum-exp of affine functions, hence convex. On a rectangular grid of the
plane (spacing ``grid_step`` standard deviations, covering ``TAIL`` standard deviations around every mean):

* remove direction (``z ~ P_2``): each cell carries its exact ``P_2`` mass (products of normal distribution function
  differences, taken from the nearer tail so that each is accurate to relative rounding) at the largest loss on the
  cell, the largest of its four corners (a convex function on a rectangle peaks at a vertex), rounded up to the
  discretization;
* add direction (``z ~ Q_2``, loss ``-L``): each cell carries its ``Q_2`` mass at ``-L(c) + |dL/dz_a(c)| h_a/2 +
  |dL/dz_b(c)| h_b/2`` at its centre ``c`` (``L`` lies above its tangent plane, so this bounds ``-L`` on the cell),
  rounded up;
* the mass outside the grid, bounded by the union of the four half-planes beyond it, plus a rounding allowance of
  ``1e-11``, goes to infinite loss.

Raising a loss value or moving mass to infinite loss can only raise ``delta(epsilon) = E[(1 - e^(epsilon - loss))_+]``
of every composition, so the result is an upper bound on the block pair's delta at every epsilon, hence on the
pair's (dp-accounting composes the two directions by FFT with its pessimistic truncation). Nothing is spent from
delta.

**Where it wins.** A single participation of the record is worth ``(e_u^T Sigma_B^-1 e_u)^(1/2) / k = ((1/(1 -
lambda)^2 + 1/(1 + lambda^2)) / 2)^(1/2) / k`` here, against ``1/(k (1 - lambda))`` in the spectral bound and
``1/(k (1 - lambda^2)^(1/2))`` in the pair itself, while a run of participations pays ``(1 - lambda)^2`` along ``1``
in both bounds. So it is tighter than the spectral bound where few participations decide epsilon (small sampling
rates, ``k (1 - lambda)`` below about 2), and slightly looser where many small ones do (the spectral bound certifies
``||A||_2 < 1/(1 - lambda)`` at finite T, and the grid adds its own rounding). ``method="bound"`` evaluates it where
:func:`blocks_may_win`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privdyn.privacy.amplification.pair import DominatingPair

__all__ = ["BLOCKS_BELOW_SIGNAL", "COARSE_GRID_STEP", "GRID_STEP", "blocks_epsilon", "blocks_may_win", "blocks_pld",
           "geometric_ratio", "grid_step_for"]

GRID_STEP = 0.01
"""The grid spacing of the block's loss distribution, in standard deviations of each axis (any spacing gives an upper
bound; a finer one a tighter bound, at a cost quadratic in 1/spacing)."""

COARSE_GRID_STEP = 0.02
"""The spacing at PLD discretizations coarser than 1e-4 (the calibration's 1e-3; :func:`grid_step_for`)."""

BLOCKS_BELOW_SIGNAL = 2.0
"""``method="bound"`` evaluates the block bound where ``k (1 - lambda) <`` this (a speed rule, never a validity one):
above it the spectral bound was within 3% of the Monte-Carlo estimate at every point compared and smaller than the
block bound (docs/amplification.md, Section 5)."""

TAIL = 8.0
"""The grid reaches this many standard deviations beyond every mean (the mass beyond goes to infinite loss)."""

_MAX_CELLS = 2500
"""The most cells per axis; a wider range gets a coarser spacing (still an upper bound)."""
_ROUNDING_MASS = 1e-11
"""Added to each direction's infinite mass: covers the rounding of the cell masses. Each one-dimensional cell mass is a
difference of two normal distribution function values, exact to a few units of 2^-53 in absolute terms, so the
masses of one axis err by at most about 2500 * 4 * 2^-53 < 1.2e-12 in sum, and the plane's (products, four
weighted components) by at most twice that."""
_GEOMETRIC_RTOL = 1e-12


def geometric_ratio(coefficients: np.ndarray) -> float | None:
    """lambda when ``coefficients`` (the first column of ``|C|``) are ``c_0 lambda^k`` with ``0 <= lambda < 1`` and
    ``c_0 > 0`` (to a relative 1e-12), else None."""
    c = np.asarray(coefficients, dtype=float)
    if c.ndim != 1 or c.size == 0 or not c[0] > 0:
        return None
    ratio = float(c[1] / c[0]) if c.size > 1 else 0.0
    if not 0.0 <= ratio < 1.0:
        return None
    expected = c[0] * ratio ** np.arange(c.size, dtype=float)
    return ratio if bool(np.allclose(c, expected, rtol=_GEOMETRIC_RTOL, atol=0.0)) else None


def grid_step_for(value_discretization_interval: float) -> float:
    """The grid spacing used at a PLD discretization: :data:`GRID_STEP` at 1e-4 or finer, :data:`COARSE_GRID_STEP`
    above (the calibration's 1e-3). At the coarser pair the grid and the discretization each add about 1-2.5% to
    epsilon, and an evaluation is about five times faster; any spacing gives an upper bound."""
    return GRID_STEP if value_discretization_interval <= 1e-4 else COARSE_GRID_STEP


def blocks_may_win(pair: DominatingPair) -> bool:
    """Whether ``method="bound"`` also evaluates the block bound: a geometric encoder with lambda > 0 and
    ``k (1 - lambda) <`` :data:`BLOCKS_BELOW_SIGNAL` (``k = kappa / c_0``), over at least two steps."""
    ratio = geometric_ratio(pair.coefficients)
    if ratio is None or ratio == 0.0 or pair.num_steps < 2:
        return False
    return pair.noise_multiplier / float(pair.coefficients[0]) * (1.0 - ratio) < BLOCKS_BELOW_SIGNAL


def _cell_masses(edges: np.ndarray, mean: float) -> np.ndarray:
    """N(mean, 1) mass of each interval between consecutive ``edges``, each from the nearer tail."""
    from scipy import special

    x = edges - mean
    lower = np.diff(special.ndtr(x))
    upper = -np.diff(special.ndtr(-x))
    middle = 0.5 * (x[:-1] + x[1:])
    return np.where(middle < 0.0, lower, upper)


def _outside_mass(edges_a: np.ndarray, edges_b: np.ndarray, mean: tuple[float, float]) -> float:
    """An upper bound on the N(mean, I_2) mass outside the grid: the four half-planes beyond its sides."""
    from scipy import special

    return float(special.ndtr(edges_a[0] - mean[0]) + special.ndtr(mean[0] - edges_a[-1])
                 + special.ndtr(edges_b[0] - mean[1]) + special.ndtr(mean[1] - edges_b[-1]))


def _edges(low: float, high: float, grid_step: float) -> np.ndarray:
    cells = max(1, min(_MAX_CELLS, math.ceil((high - low) / grid_step)))
    return np.linspace(low, high, cells + 1)


def _rounded(losses: np.ndarray, masses: np.ndarray, interval: float) -> dict[int, float]:
    """The masses summed by loss rounded up to the discretization (a hair above, against rounding of the loss)."""
    index = np.ceil((losses.ravel() + 1e-12 * (1.0 + np.abs(losses.ravel()))) / interval).astype(np.int64)
    keep = masses.ravel() > 0.0
    values, inverse = np.unique(index[keep], return_inverse=True)
    sums = np.bincount(inverse, weights=masses.ravel()[keep])
    return {int(v): float(s) for v, s in zip(values, sums, strict=True)}


def _block_pld(scaled_noise: float, ratio: float, sampling_prob: float, interval: float, grid_step: float) -> Any:
    """dp-accounting's PLD (both directions, on the safe side) of one two-step block (module docstring)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    a = scaled_noise * (1.0 - ratio)
    b = scaled_noise * math.sqrt(1.0 + ratio**2)
    m_a, m_b = 1.0 / (math.sqrt(2.0) * a), 1.0 / (math.sqrt(2.0) * b)
    r = sampling_prob
    means = np.array([[0.0, 0.0], [m_a, m_b], [m_a, -m_b], [2.0 * m_a, 0.0]])
    weights = np.array([(1.0 - r) ** 2, r * (1.0 - r), r * (1.0 - r), r * r])
    with np.errstate(divide="ignore"):  # r = 1: the patterns with a missed step have weight 0, log-weight -inf
        log_weights = np.log(weights)
    offsets = log_weights - 0.5 * np.sum(means**2, axis=1)
    edges_a = _edges(-TAIL, 2.0 * m_a + TAIL, grid_step)
    edges_b = _edges(-m_b - TAIL, m_b + TAIL, grid_step)

    def loss(za: np.ndarray, zb: np.ndarray, slopes: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """L on the grid za x zb, and (``slopes``) its gradient: a log-sum-exp of four affine functions."""
        exponents = [(mu[0] * za + offset)[:, None] + (mu[1] * zb)[None, :]
                     for mu, offset in zip(means, offsets, strict=True) if offset > -math.inf]
        top = np.maximum.reduce(exponents)
        for e in exponents:
            np.subtract(e, top, out=e)
            np.exp(e, out=e)
        total = np.add.reduce(exponents)
        value = top + np.log(total)
        if not slopes:
            return value, top, top
        kept = [mu for mu, offset in zip(means, offsets, strict=True) if offset > -math.inf]
        slope_a = np.add.reduce([e * mu[0] for e, mu in zip(exponents, kept, strict=True)]) / total
        slope_b = np.add.reduce([e * mu[1] for e, mu in zip(exponents, kept, strict=True)]) / total
        return value, slope_a, slope_b

    corners = loss(edges_a, edges_b, False)[0]
    highest = np.maximum(np.maximum(corners[:-1, :-1], corners[1:, :-1]), np.maximum(corners[:-1, 1:], corners[1:, 1:]))
    del corners
    centre, slope_a, slope_b = loss(0.5 * (edges_a[:-1] + edges_a[1:]), 0.5 * (edges_b[:-1] + edges_b[1:]), True)
    lowest = centre - np.abs(slope_a) * (0.5 * np.diff(edges_a))[:, None] - np.abs(slope_b) * (
        0.5 * np.diff(edges_b))[None, :]
    del centre, slope_a, slope_b
    mass_p = sum(w * np.outer(_cell_masses(edges_a, mu[0]), _cell_masses(edges_b, mu[1]))
                 for w, mu in zip(weights, means, strict=True) if w > 0.0)
    mass_q = np.outer(_cell_masses(edges_a, 0.0), _cell_masses(edges_b, 0.0))
    outside_p = sum(w * _outside_mass(edges_a, edges_b, (mu[0], mu[1]))
                    for w, mu in zip(weights, means, strict=True) if w > 0.0)
    outside_q = _outside_mass(edges_a, edges_b, (0.0, 0.0))
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        _rounded(highest, mass_p, interval), min(1.0, outside_p + _ROUNDING_MASS), interval,
        pessimistic_estimate=True, rounded_probability_mass_function_add=_rounded(-lowest, mass_q, interval),
        infinity_mass_add=min(1.0, outside_q + _ROUNDING_MASS), symmetric=False)


def blocks_pld(pair: DominatingPair, value_discretization_interval: float, grid_step: float | None = None) -> Any:
    """dp-accounting's PLD (remove and add) of the block pair ``(P_B, Q_B)`` that dominates ``pair``.

    Raises:
        ValueError: the encoder is not geometric (:func:`geometric_ratio`): the bound covers lambda-CGD only.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    ratio = geometric_ratio(pair.coefficients)
    if ratio is None:
        raise ValueError("the block bound covers lambda-CGD only (encoder coefficients c_0 lambda^k, "
                         "0 <= lambda < 1); "
                         f"got strategy {pair.strategy}.")
    scaled_noise = pair.noise_multiplier / float(pair.coefficients[0])
    grid_step = grid_step_for(value_discretization_interval) if grid_step is None else grid_step
    composed = None
    if pair.num_steps >= 2:
        composed = _block_pld(scaled_noise, ratio, pair.sampling_prob, value_discretization_interval,
                              grid_step).self_compose(pair.num_steps // 2)
    if pair.num_steps % 2:
        single = pld_lib.from_gaussian_mechanism(standard_deviation=scaled_noise * (1.0 - ratio), sensitivity=1.0,
                                                 sampling_prob=pair.sampling_prob, pessimistic_estimate=True,
                                                 value_discretization_interval=value_discretization_interval)
        composed = single if composed is None else composed.compose(single)
    return composed


def blocks_epsilon(pair: DominatingPair, delta: float, value_discretization_interval: float,
                   grid_step: float | None = None) -> float:
    """The block bound's epsilon at ``delta`` (the larger of the remove and add directions)."""
    return float(blocks_pld(pair, value_discretization_interval, grid_step).get_epsilon_for_delta(delta))
