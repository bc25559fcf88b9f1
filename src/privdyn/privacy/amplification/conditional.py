"""An upper bound on the privacy loss of the Theorem F.8 pair by conditional composition (MMCC).

Choquette-Choo, Ganesh, Steinke & Thakurta, "Privacy amplification for matrix mechanisms" (ICLR 2024,
arXiv 2310.15526): the rows of a matrix mechanism under i.i.d. participation are analysed one at a time, each
*conditioned on the earlier rows* (their conditional composition theorem), and each conditional row is dominated by
a scalar mixture-of-Gaussians (MoG) mechanism whose mixture weights bound the posterior probability that the record
joined each earlier step; the bound holds except on a bad event of small probability that is added to delta. The
MoG privacy loss distributions come from dp-accounting (``from_mixture_gaussian_mechanism``). This module applies
that scheme to the pair ``P = sum_y s(y) N(A y, kappa^2 I)``, ``Q = N(0, kappa^2 I)`` of Theorem F.8 (``A = |C|``
Toeplitz, non-negative, first column ``c``); ``docs/amplification.md`` proves every step below for this pair and
both directions.

Steps (0-based rows t, lags k = t - u):

1. Posterior bound. Given the earlier outputs ``theta_{<t}`` and every other participation, the log-odds that the
   record joined step ``u = t - k`` exceed its prior log-odds by at most ``L_k = (<theta_{<t}, a> - ||a||^2 / 2) /
   kappa^2`` with ``a = (c_0, ..., c_{k-1})`` the part of column u above row t (``A >= 0``). So on the event
   ``L_k <= eta_k`` the posterior participation probability is at most ``p_k = expit(logit(r) + eta_k)``, and the
   earlier participations are stochastically dominated by independent Bernoulli(p_k) (a sequential coupling).
2. Thresholds. ``eta_k`` is the larger of a Chernoff bound on the upper tail of ``L_k`` under P (``theta = A y +
   kappa Z``, y i.i.d. Bernoulli(r); its moment generating function is a product over the earlier steps) and the
   Gaussian quantile of ``L_k`` under Q, each at level ``beta / (T * window)``: by a union bound the bad event has
   probability at most ``beta`` under P (remove direction) and under Q (add direction). Lags beyond ``window`` get
   ``p_k = 1`` (no threshold, no bad event): the row's mean is shifted by at most ``sum_{k > window} c_k``.
3. Each row t is dominated by the MoG of ``S_t = sum_{k<=min(t, window)} c_k Y_k + sum_{window<k<=t} c_k`` with
   independent ``Y_0 ~ Bernoulli(r)``, ``Y_k ~ Bernoulli(p_k)``: for non-negative means the hockey-stick
   divergences in both directions increase under a stochastic increase of the mixing law (the optimal test set is
   a half-line). Rounding the ``c_k`` up to a grid and moving negligible atoms to the largest one are stochastic
   increases too. ``S_t`` increases with t, so a block of consecutive rows is dominated by its last row.
4. The rows' MoG PLDs are composed (a block's PLD self-composed) and epsilon is read at ``delta - beta``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from privdyn import _check
from privdyn.privacy.amplification.pair import DominatingPair

__all__ = ["BoundSettings", "RowMixture", "ConditionalBound", "participation_thresholds", "row_mixtures",
           "conditional_bound", "pld_of_bound"]


@dataclasses.dataclass(frozen=True)
class BoundSettings:
    """Numerical settings of the conditional-composition bound (each choice keeps it an upper bound).

    Attributes:
        bad_event_fraction: beta / delta, the share of delta spent on the bad events of step 2.
        window_tolerance: lags k with ``sum_{j > k} c_j * sqrt(T) / kappa`` below this get no threshold
            (``p_k = 1``): a window of lags ``1..window``.
        max_window: an upper limit on the window (None: T - 1).
        grid_step: the MoG means are rounded up to multiples of ``grid_step`` (a power of two keeps 1 exact).
        max_atoms: a row mixture with more atoms keeps its heaviest quarter exact and rounds the others up to a
            coarser grid.
        mass_floor: atoms of the row mixture with less mass are moved to its largest value.
        num_blocks: about how many blocks of rows (geometrically spaced up to the window) share one PLD.
        value_discretization_interval: dp-accounting's PLD discretization (pessimistic, connect-the-dots; its
            default 1e-4). Any value gives an upper bound; finer is tighter and slower.
    """

    bad_event_fraction: float = 0.1
    window_tolerance: float = 1e-3
    max_window: int | None = None
    grid_step: float = 2.0**-14
    max_atoms: int = 128
    mass_floor: float = 1e-30
    num_blocks: int = 12
    value_discretization_interval: float = 1e-4

    def __post_init__(self) -> None:
        _check.in_range(0.0, 1.0, closed="neither", bad_event_fraction=self.bad_event_fraction)
        _check.positive(window_tolerance=self.window_tolerance, grid_step=self.grid_step,
                        value_discretization_interval=self.value_discretization_interval)
        _check.in_range(0.0, 1e-6, closed="both", mass_floor=self.mass_floor)
        _check.integer(minimum=1, num_blocks=self.num_blocks)
        _check.integer(minimum=2, max_atoms=self.max_atoms)
        if self.max_window is not None:
            _check.integer(minimum=0, max_window=self.max_window)


@dataclasses.dataclass(frozen=True)
class RowMixture:
    """The MoG that dominates a block of rows: means ``sensitivities`` with ``probabilities``; ``count`` rows."""

    sensitivities: np.ndarray
    probabilities: np.ndarray
    count: int


@dataclasses.dataclass(frozen=True)
class ConditionalBound:
    """What the bound used: the window, the thresholds, the participation bounds, the blocks and beta."""

    window: int
    thresholds: np.ndarray
    participation: np.ndarray
    blocks: tuple[RowMixture, ...]
    bad_event_prob: float


def _window(pair: DominatingPair, settings: BoundSettings) -> int:
    """The smallest window w with ``sum_{k > w} c_k * sqrt(T) / kappa <= window_tolerance`` (capped)."""
    c = pair.coefficients
    tails = np.concatenate((np.cumsum(c[::-1])[::-1][1:], [0.0]))  # tails[w] = sum_{k > w} c_k
    scaled = tails * math.sqrt(pair.num_steps) / pair.noise_multiplier
    ok = np.flatnonzero(scaled <= settings.window_tolerance)
    window = int(ok[0]) if ok.size else pair.num_steps - 1
    nonzero = np.flatnonzero(c[1:])
    window = min(window, int(nonzero[-1]) + 1 if nonzero.size else 0)  # no lag beyond the last nonzero c_k
    if settings.max_window is not None:
        window = min(window, settings.max_window)
    return min(window, pair.num_steps - 1)


def _lag_gram(c: np.ndarray, window: int) -> np.ndarray:
    """``G[k-1, j-1] = sum_{m=1}^{min(k, j)} c_{k-m} c_{j-m}`` for lags k = 1..window and j = 1..T-1.

    ``G[k-1, j-1]`` is the inner product of the parts above row t of the columns ``t - k`` and ``t - j`` of the
    Toeplitz matrix ``A`` (it does not depend on t). ``G = W[:, :window]^T W`` with ``W[i, j-1] = c_{j-1-i}``.
    """
    num_steps = c.size
    i = np.arange(window)[:, None]
    j = np.arange(1, num_steps)[None, :]
    lag = j - 1 - i
    w = np.where(lag >= 0, c[np.clip(lag, 0, None)], 0.0)  # (window, T-1)
    return w[:, :window].T @ w


def _chernoff_threshold(gram_row: np.ndarray, variance: float, rate: float, kappa2: float, level: float) -> float:
    """The smallest Chernoff threshold eta with P(L >= eta) <= level, minimized over s > 0 on a grid.

    Under P: ``L = sum_j y_j G_j / kappa^2 + N(-v/2, v)`` with y_j i.i.d. Bernoulli(r), ``v = variance``; for every
    s > 0, ``P(L >= eta) <= exp(-s eta + sum_j log(1 - r + r e^{s G_j / kappa^2}) + v s (s - 1) / 2)``. Any s
    gives a valid threshold; the grid only decides how tight it is.
    """
    g = gram_row[gram_row > 0.0] / kappa2
    scale = 1.0 / max(variance, 1e-300)
    s = np.geomspace(1e-4, 1e4, 161) * min(scale, 1e8)
    log_level = math.log(level)

    def eta(s_values: np.ndarray) -> np.ndarray:
        x = np.outer(s_values, g)
        if rate < 1.0:  # log(1 - r + r e^x), exact and overflow-free
            log_mgf = np.sum(np.logaddexp(math.log1p(-rate), math.log(rate) + x), axis=1)
        else:
            log_mgf = np.sum(x, axis=1)
        return (log_mgf + variance * s_values * (s_values - 1.0) / 2.0 - log_level) / s_values

    values = eta(s)
    best = int(np.argmin(values))
    lo, hi = s[max(best - 1, 0)], s[min(best + 1, s.size - 1)]
    fine = np.geomspace(lo, hi, 41)
    return float(min(values[best], np.min(eta(fine))))


def participation_thresholds(pair: DominatingPair, window: int, bad_event_prob: float) -> tuple[np.ndarray,
                                                                                                np.ndarray]:
    """Thresholds ``eta_k`` and participation bounds ``p_k`` for lags k = 1..window (step 2 of the module doc).

    Each lag's bad event has probability at most ``bad_event_prob / (T * window)`` under P and under Q, so the
    union over every row and lag is at most ``bad_event_prob`` in each direction.
    """
    if window == 0:
        return np.zeros(0), np.zeros(0)
    c, kappa2, r = pair.coefficients, pair.noise_multiplier**2, pair.sampling_prob
    level = bad_event_prob / (pair.num_steps * window)
    gram = _lag_gram(c, window)
    from scipy.special import expit, ndtri

    z = -float(ndtri(level))  # Q-tail: L_k ~ N(-v/2, v) under Q
    thresholds = np.empty(window)
    for k in range(1, window + 1):
        variance = gram[k - 1, k - 1] / kappa2
        eta_q = -variance / 2.0 + math.sqrt(variance) * z
        eta_p = _chernoff_threshold(gram[k - 1], variance, r, kappa2, level)
        thresholds[k - 1] = max(eta_p, eta_q)
    if r >= 1.0:
        return thresholds, np.ones(window)
    logit = math.log(r) - math.log1p(-r)
    return thresholds, expit(logit + thresholds)


def _mixture(values: np.ndarray, probs: np.ndarray, shift: float, settings: BoundSettings) -> tuple[np.ndarray,
                                                                                                    np.ndarray]:
    """The law of ``shift + sum_k values_k Y_k`` (Y_k ~ Bernoulli(probs_k) independent), rounded up to the grid."""
    h = settings.grid_step
    steps = np.ceil(values / h).astype(np.int64)
    steps = steps + (steps * h < values)  # never round down, even by one unit in the last place of values / h
    dist = np.ones(1)
    for step, p in zip(steps, probs, strict=True):
        if p <= 0.0 or step == 0:
            continue
        new = np.zeros(dist.size + step)
        new[: dist.size] += (1.0 - p) * dist
        new[step:] += p * dist
        dist = new
        small = dist < settings.mass_floor
        if np.any(small) and not small[-1]:
            moved = float(dist[small].sum())
            dist[small] = 0.0
            dist[-1] += moved  # onto the largest value: a stochastic increase
        last = np.flatnonzero(dist)[-1]
        dist = dist[: last + 1]
    support: np.ndarray = np.flatnonzero(dist)
    mass: np.ndarray = dist[support]
    if support.size > settings.max_atoms:
        # The heaviest quarter of the atoms stays exact; every other atom moves up to the next multiple of a coarse
        # step (a stochastic increase by less than one coarse step).
        heavy = np.zeros(support.size, dtype=bool)
        heavy[np.argsort(mass)[::-1][: settings.max_atoms // 4]] = True
        coarse = max(1, math.ceil(support[-1] / (settings.max_atoms - settings.max_atoms // 4)))
        rounded = np.where(heavy, support, -(-support // coarse) * coarse)
        support, inverse = np.unique(rounded, return_inverse=True)
        mass = np.bincount(inverse, weights=mass)
    shift_up = math.ceil(shift / h) * h if shift > 0 else 0.0
    if shift_up < shift:
        shift_up += h
    return support * h + shift_up, mass / mass.sum()


def _block_ends(window: int, num_steps: int, num_blocks: int) -> np.ndarray:
    """Last rows of the blocks: geometric up to the window, then one block to the end."""
    top = min(window, num_steps - 1)
    ends = np.unique(np.round(np.geomspace(1, top + 1, num_blocks)).astype(np.int64) - 1) if top > 0 else np.zeros(
        1, dtype=np.int64)
    ends = ends[(ends >= 0) & (ends <= top)]
    if ends.size == 0 or ends[-1] != top:
        ends = np.append(ends, top)
    if top < num_steps - 1:
        ends = np.append(ends, num_steps - 1)
    return ends


def row_mixtures(pair: DominatingPair, settings: BoundSettings, window: int,
                 participation: np.ndarray) -> tuple[RowMixture, ...]:
    """The dominating MoG of each block of rows (step 3 of the module doc)."""
    c, r = pair.coefficients, pair.sampling_prob
    ends = _block_ends(window, pair.num_steps, settings.num_blocks)
    blocks = []
    start = 0
    for end in ends:
        t = int(end)
        lags = min(t, window)
        values = c[: lags + 1]
        probs = np.concatenate(([r], participation[:lags]))
        shift = float(np.sum(c[window + 1 : t + 1])) if t > window else 0.0
        sens, prob = _mixture(values, probs, shift, settings)
        blocks.append(RowMixture(sensitivities=sens, probabilities=prob, count=t - start + 1))
        start = t + 1
    return tuple(blocks)


def conditional_bound(pair: DominatingPair, delta: float, settings: BoundSettings) -> ConditionalBound:
    """Window, thresholds, participation bounds and row mixtures of the bound (steps 1-3)."""
    window = _window(pair, settings)
    beta = settings.bad_event_fraction * delta if window > 0 else 0.0
    thresholds, participation = participation_thresholds(pair, window, beta)
    blocks = row_mixtures(pair, settings, window, participation)
    return ConditionalBound(window=window, thresholds=thresholds, participation=participation, blocks=blocks,
                            bad_event_prob=beta)


def mixture_pld(noise_multiplier: float, sensitivities: np.ndarray, probabilities: np.ndarray,
                value_discretization_interval: float) -> Any:
    """dp-accounting's PLD of the MoG mechanism (both directions), as ``from_mixture_gaussian_mechanism`` builds it.

    dp-accounting's ``MixtureGaussianPrivacyLoss`` inverts the privacy loss by a recursive bisection that evaluates
    one point per Python call; :func:`_vectorized_mixture_loss` brackets all privacy losses on a grid at once and
    bisects the brackets together, returning as dp-accounting does the upper end of a bracket of width at most
    ``precision`` rounded down to a multiple of it (so at most one ``precision`` step from dp-accounting's value).
    The PMFs are then built by dp-accounting's own connect-the-dots routine (pessimistic).
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib
    from dp_accounting.pld import privacy_loss_mechanism as plm

    if not np.any(sensitivities > 0.0):
        raise ValueError("the row mixture has no positive mean; nothing to account.")
    cls = _vectorized_mixture_loss()
    pmfs = []
    for adjacency in (plm.AdjacencyType.REMOVE, plm.AdjacencyType.ADD):
        loss = cls(noise_multiplier, sensitivities.tolist(), probabilities.tolist(), adjacency_type=adjacency)
        pmfs.append(pld_lib._create_pld_pmf_from_monotone_privacy_loss(  # noqa: SLF001 (dp-accounting's builder)
            loss, pessimistic_estimate=True, value_discretization_interval=value_discretization_interval,
            use_connect_dots=True))
    return pld_lib.PrivacyLossDistribution(pmfs[0], pmfs[1])


@functools.cache
def _vectorized_mixture_loss() -> type:
    """A ``MixtureGaussianPrivacyLoss`` whose inverse privacy losses are computed by a vectorized bisection."""
    from dp_accounting.pld import privacy_loss_mechanism as plm
    from scipy.special import logsumexp

    class VectorizedMixtureGaussianPrivacyLoss(plm.MixtureGaussianPrivacyLoss):
        def _losses(self, x: np.ndarray) -> np.ndarray:
            const = self._precompute_privacy_loss_constants
            x_loss = np.multiply.outer(x, self.sensitivities) / self._variance
            if self.adjacency_type == plm.AdjacencyType.ADD:
                return -logsumexp(const[None, :] + x_loss, axis=1)
            return logsumexp(const[None, :] - x_loss, axis=1)

        def _inverse_privacy_losses_with_range(self, privacy_losses: np.ndarray, bounds: tuple[float, float],
                                               precision: float = 1e-6) -> np.ndarray:
            losses = np.asarray(privacy_losses, dtype=float)
            if losses.size == 0:
                return np.zeros(0)
            # Bracket every loss between two points of a grid (one vectorized evaluation), then bisect.
            grid = np.linspace(float(bounds[0]), float(bounds[1]), 4097)
            on_grid = self._losses(grid)  # non-increasing in x
            idx = np.searchsorted(-on_grid, -losses, side="left")  # first grid point with loss <= l
            idx = np.clip(idx, 0, grid.size - 1)
            hi = grid[idx]
            lo = grid[np.maximum(idx - 1, 0)]
            active = hi - lo > precision
            while np.any(active):
                idx = np.flatnonzero(active)
                mid = (lo[idx] + hi[idx]) / 2
                split = self._losses(mid)
                lower = losses[idx] < split  # the inverse lies above mid
                lo[idx[lower]] = mid[lower]
                hi[idx[~lower]] = mid[~lower]
                active[idx] = hi[idx] - lo[idx] > precision
            return np.floor(hi / precision) * precision

    return VectorizedMixtureGaussianPrivacyLoss


def pld_of_bound(bound: ConditionalBound, noise_multiplier: float, settings: BoundSettings) -> Any:
    """dp-accounting's PLD of the composed row mixtures (both directions: remove and add)."""
    total = None
    for block in bound.blocks:
        pld = mixture_pld(noise_multiplier, block.sensitivities, block.probabilities,
                          settings.value_discretization_interval)
        if block.count > 1:
            pld = pld.self_compose(block.count)
        total = pld if total is None else total.compose(pld)
    return total
