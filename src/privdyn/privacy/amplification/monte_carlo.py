"""A Monte-Carlo estimate of epsilon for the Theorem F.8 pair, as an upper confidence bound.

The hockey-stick divergences of the pair ``P = sum_y s(y) N(|C| y, kappa^2 I)``, ``Q = N(0, kappa^2 I)`` (Wang et al.,
arXiv 2605.12648v1, Theorem F.8) are expectations of the privacy loss ``L = log dP/dQ``:

    delta_remove(eps) = H_{e^eps}(P || Q) = E_P[(1 - e^{eps - L})_+],
    delta_add(eps)    = H_{e^eps}(Q || P) = E_Q[(1 - e^{eps + L})_+].

Both are estimated from ``num_samples`` draws per direction. The estimate of epsilon is the smallest epsilon on a
fine grid whose one-sided upper confidence bounds (mean + z * standard error, z for ``confidence``, Bonferroni over
the grid and the two directions) on both deltas are <= delta: an upper confidence bound (label ``estimate``). The
matching lower confidence bound (mean - z * standard error) gives an epsilon that the true one exceeds with the same
confidence; the tests compare the accountant's ``bound`` against it.

* **Short horizons** (``T <= 16``): plain sampling of P and Q, with the *exact* privacy loss (enumeration of the
  ``2^T`` participation patterns, :func:`privdyn.privacy.amplification.pair.privacy_loss_exact`), so the only error
  is sampling error.
* **Long horizons** (lambda-CGD, any T): the privacy loss comes from the forward recursion on a grid of states
  (:mod:`privdyn.privacy.amplification.forward`), and the deltas of order 1e-5 and below from importance sampling.
  The noise ``z`` of each draw (``theta = |C| y + kappa z``) is drawn from an equal mixture of 15 components
  ``N(k v, I)``: ``k = 0``, and ``k = 1, ..., 7`` along each of two directions ``v``, ``+-u`` with ``u`` the unit
  vector along ``|C| 1`` (where kappa is large the privacy loss is nearly linear in theta with a gradient along it)
  and ``+-|C| y' / sqrt(E ||C| y'||^2)`` for an independent participation draw ``y'`` (the draw's own mean for P,
  where the participations can be told apart) -- ``+`` for draws of P, ``-`` for Q, so that the shifts move the
  privacy loss by up to about seven of its standard deviations into the tail each delta needs. Each draw is weighted
  by ``phi(z) / mean_c phi(z - k_c v_c) = 1 / mean_c exp(k_c <z, v_c> - k_c^2 ||v_c||^2 / 2)`` (the balance
  heuristic; Veach & Guibas 1995): both expectations stay unbiased and every weight is at most 15. The grid's error
  is bounded by a derived allowance: the recursion's error falls like ``q^-3`` in the number ``q`` of grid points
  per unit of state, so ``|L_q - L| <= (8/7) |L_q - L_2q| + O(q^-4)``; ``q`` doubles from 8 until twice the
  largest ``|L_q - L_2q|`` over a pilot of draws of both directions is below ``grid_tolerance``, and that allowance
  ``b`` is added to the upper confidence bound of epsilon and subtracted from the lower one (moving every privacy
  loss by ``b`` moves each delta's epsilon by at most ``b``). The draws come chunk by chunk from seeds taken once
  from ``rng`` and are kept, so repeated evaluations at other kappa (the calibration) use common random numbers.
  The confidence bounds rest on the central limit theorem for the weighted means (weights at most 15); the tests
  check that they bracket dp-accounting's exact epsilon at lambda = 0 from sampling rates 0.01 to 0.5.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from privdyn import _check
from privdyn.privacy.amplification.forward import geometric_ratio, privacy_loss_forward
from privdyn.privacy.amplification.pair import MAX_ENUMERATION_STEPS, DominatingPair, privacy_loss_exact

__all__ = ["MonteCarloEstimate", "LongHorizonDraws", "monte_carlo_epsilon", "MIXTURE_SHIFTS"]

MIXTURE_SHIFTS = np.arange(8.0)
"""The noise shifts ``k`` (in noise standard deviations along ``|C| 1``) of the long-horizon importance sampler."""

_CHUNK = 256
_PILOT = 256
_MAX_GRID = 1024


@dataclasses.dataclass(frozen=True)
class MonteCarloEstimate:
    """epsilon's upper and lower confidence bounds at ``confidence`` from ``num_samples`` draws per direction.

    ``grid_points_per_unit`` and ``grid_allowance`` describe the long-horizon privacy loss (``None`` and 0 for the
    exact one): the grid's resolution and the allowance added to ``epsilon_upper`` (subtracted from
    ``epsilon_lower``) for its error.
    """

    epsilon_upper: float
    epsilon_lower: float
    confidence: float
    num_samples: int
    grid_points_per_unit: int | None = None
    grid_allowance: float = 0.0


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


@dataclasses.dataclass(frozen=True)
class LongHorizonDraws:
    """The seeds of the long-horizon importance sampler's draws (one per chunk of rows and direction).

    The draws do not depend on kappa: ``theta = |C| y + kappa z`` is rebuilt from the same ``(y, z)`` at any kappa,
    so estimates at several kappa share their random numbers. The drawn arrays are kept after their first use
    (``2 num_samples num_steps`` floats per direction), so repeated estimates do not draw them again.
    """

    num_samples: int
    seeds: tuple[int, ...]
    _cache: dict[tuple[float, ...], list[tuple[np.ndarray, np.ndarray | None, np.ndarray]]] = dataclasses.field(
        default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_rng(cls, num_samples: int, rng: np.random.Generator) -> LongHorizonDraws:
        """Seeds for ``num_samples`` draws per direction, taken from ``rng``."""
        _check.integer(minimum=1, num_samples=num_samples)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}.")
        chunks = 2 * -(-num_samples // _CHUNK)
        return cls(num_samples, tuple(int(x) for x in rng.integers(0, 2**63 - 1, size=chunks)))

    def _drawn(self, lam: float, sampling_prob: float, num_steps: int, sign: float
               ) -> list[tuple[np.ndarray, np.ndarray | None, np.ndarray]]:
        key = (lam, sampling_prob, float(num_steps), sign)
        if key in self._cache:
            return self._cache[key]
        from scipy.signal import lfilter

        offset = 0 if sign > 0 else len(self.seeds) // 2
        along_ones = lfilter([1.0], [1.0, -lam], np.ones(num_steps))
        along_ones /= np.linalg.norm(along_ones)
        cumulative = lfilter([1.0], [1.0, -lam], np.ones(num_steps))
        cumulative_squares = lfilter([1.0], [1.0, -lam * lam], np.ones(num_steps))
        scale = math.sqrt(float(np.sum(sampling_prob * (1.0 - sampling_prob) * cumulative_squares
                                       + (sampling_prob * cumulative) ** 2)))  # sqrt(E || |C| y ||^2)
        shifts = MIXTURE_SHIFTS[1:]
        out: list[tuple[np.ndarray, np.ndarray | None, np.ndarray]] = []
        for index, start in enumerate(range(0, self.num_samples, _CHUNK)):
            m = min(_CHUNK, self.num_samples - start)
            gen = np.random.default_rng(self.seeds[offset + index])
            component = gen.integers(0, 2 * shifts.size + 1, size=m)  # 0: none; then along 1, then along y
            z = gen.standard_normal((m, num_steps))
            y = (gen.random((m, num_steps)) < sampling_prob).astype(float)
            pattern = lfilter([1.0], [1.0, -lam], y, axis=1)
            along_y = sign * pattern / scale
            k = np.zeros(m)
            k[component > 0] = shifts[(component[component > 0] - 1) % shifts.size]
            by_ones = (component > 0) & (component <= shifts.size)
            by_y = component > shifts.size
            z[by_ones] += sign * np.outer(k[by_ones], along_ones)
            z[by_y] += k[by_y, None] * along_y[by_y]
            # log phi(z - k v) - log phi(z) = k <z, v> - k^2 ||v||^2 / 2, for each component
            ones_exp = sign * np.outer(z @ along_ones, shifts) - 0.5 * shifts**2
            y_exp = (np.outer(np.einsum("ij,ij->i", z, along_y), shifts)
                     - 0.5 * np.outer(np.einsum("ij,ij->i", along_y, along_y), shifts**2))
            exponents = np.concatenate([np.zeros((m, 1)), ones_exp, y_exp], axis=1)
            top = exponents.max(axis=1)
            log_weight = -(top + np.log(np.mean(np.exp(exponents - top[:, None]), axis=1)))
            out.append((z, pattern if sign > 0 else None, log_weight))
        self._cache[key] = out
        return out

    def chunks(self, pair: DominatingPair, sign: float, limit: int | None = None
               ) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(theta, log_weight)`` chunk by chunk for draws of P (``sign = +1``) or Q (``sign = -1``)."""
        lam = geometric_ratio(pair)
        assert lam is not None
        drawn = self._drawn(lam, pair.sampling_prob, pair.num_steps, sign)
        total = self.num_samples if limit is None else min(limit, self.num_samples)
        out = []
        for z, mean, log_weight in drawn[: -(-total // _CHUNK)]:
            theta = pair.noise_multiplier * z if mean is None else mean + pair.noise_multiplier * z
            out.append((theta, log_weight))
        return out


def _long_losses(pair: DominatingPair, draws: LongHorizonDraws, q: int, sign: float, limit: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    losses, weights = [], []
    for theta, log_weight in draws.chunks(pair, sign, limit):
        losses.append(privacy_loss_forward(pair, theta, q))
        weights.append(log_weight)
    return np.concatenate(losses), np.concatenate(weights)


def _grid_resolution(pair: DominatingPair, draws: LongHorizonDraws, tolerance: float) -> tuple[int, float]:
    """``(q, allowance)``: the smallest ``q = 8 * 2^i`` whose allowance ``2 max |L_q - L_2q|`` (over a pilot of the
    draws of both directions) is <= ``tolerance``; see the module docstring."""
    q = 8
    previous = [_long_losses(pair, draws, q, sign, _PILOT)[0] for sign in (1.0, -1.0)]
    while True:
        finer = [_long_losses(pair, draws, 2 * q, sign, _PILOT)[0] for sign in (1.0, -1.0)]
        allowance = 2.0 * max(float(np.max(np.abs(a - b))) for a, b in zip(previous, finer, strict=True))
        if allowance <= tolerance or 2 * q >= _MAX_GRID:
            if allowance > tolerance:
                raise ValueError(f"the state grid did not reach grid_tolerance={tolerance!r} by "
                                 f"{_MAX_GRID} points per unit (allowance {allowance:.3g}); raise grid_tolerance.")
            return q, allowance
        q, previous = 2 * q, finer


def _deltas(losses: np.ndarray, epsilons: np.ndarray, sign: float, z: float,
            log_weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower confidence bounds of ``E[w (1 - e^{eps - sign * L})_+]`` at each epsilon (``w = 1`` if no
    weights are given).

    With ``x = sign * L`` sorted in decreasing order, the sample mean and second moment at eps only involve the
    samples with ``x > eps``.
    """
    order = np.argsort(-(sign * losses))
    x = (sign * losses)[order]
    w = np.ones_like(x) if log_weights is None else np.exp(log_weights[order])
    n = x.size
    out_upper = np.empty(epsilons.size)
    out_lower = np.empty(epsilons.size)
    counts = np.searchsorted(-x, -epsilons, side="left")  # number of samples with x > eps
    for i, (eps, m) in enumerate(zip(epsilons, counts, strict=True)):
        if m == 0:
            out_upper[i] = out_lower[i] = 0.0
            continue
        terms = -np.expm1(eps - x[:m]) * w[:m]
        mean = terms.sum() / n
        second = np.dot(terms, terms) / n
        se = math.sqrt(max(second - mean**2, 0.0) * n / (n - 1) / n)
        out_upper[i] = mean + z * se
        out_lower[i] = mean - z * se
    return out_upper, out_lower


def _epsilons(grid: np.ndarray, delta: float, z: float, p: tuple[np.ndarray, np.ndarray | None],
              q: tuple[np.ndarray, np.ndarray | None]) -> tuple[float, float]:
    upper_p, lower_p = _deltas(p[0], grid, 1.0, z, p[1])
    upper_q, lower_q = _deltas(q[0], grid, -1.0, z, q[1])
    upper, lower = np.maximum(upper_p, upper_q), np.maximum(lower_p, lower_q)
    ok_upper = np.flatnonzero(upper <= delta)
    eps_upper = float(grid[ok_upper[0]]) if ok_upper.size else math.inf
    # the lower bound: the largest grid epsilon at which the lower confidence bound still exceeds delta
    above = np.flatnonzero(lower > delta)
    eps_lower = float(grid[above[-1]]) if above.size else 0.0
    return eps_upper, eps_lower


def monte_carlo_epsilon(pair: DominatingPair, *, delta: float, num_samples: int, rng: np.random.Generator,
                        confidence: float = 0.999, epsilon_grid: np.ndarray | None = None,
                        grid_tolerance: float = 2e-3, draws: LongHorizonDraws | None = None,
                        grid_points_per_unit: int | None = None) -> MonteCarloEstimate:
    """Upper and lower confidence bounds on the pair's epsilon at ``delta`` (see the module docstring).

    Args:
        pair: the Theorem F.8 pair: any encoder for ``num_steps <= 16``, a lambda-CGD one for longer horizons.
        delta: in (0, 1).
        num_samples: draws per direction (>= 100); the standard error of a delta scales like 1/sqrt of it.
        rng: the random generator (passed explicitly; the caller seeds it).
        confidence: the one-sided level of each bound, Bonferroni-corrected over the grid and both directions.
        epsilon_grid: increasing epsilons to test (default: 0 to 20 in steps of 0.01).
        grid_tolerance: long horizons: the largest allowance accepted for the state grid's error (module docstring).
        draws: long horizons: the draws' seeds (default: taken from ``rng``); pass the same ones to estimate at
            several kappa with common random numbers.
        grid_points_per_unit: long horizons: use this grid instead of choosing one (its allowance is still measured).
    """
    if not isinstance(pair, DominatingPair):
        raise TypeError(f"pair must be a DominatingPair; got {type(pair).__name__}.")
    _check.delta(delta)
    _check.in_range(0.0, 1.0, closed="neither", confidence=confidence)
    _check.integer(minimum=100, num_samples=num_samples)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}.")
    if draws is not None and not isinstance(draws, LongHorizonDraws):
        raise TypeError(f"draws must be LongHorizonDraws or None; got {type(draws).__name__}.")
    grid = np.arange(0.0, 20.0 + 1e-9, 0.01) if epsilon_grid is None else np.asarray(epsilon_grid, dtype=float)
    from scipy.special import ndtri

    z = float(ndtri(1.0 - (1.0 - confidence) / (2 * grid.size)))
    if pair.num_steps <= MAX_ENUMERATION_STEPS:
        loss_p, loss_q = _sample_losses(pair, int(num_samples), rng)
        eps_upper, eps_lower = _epsilons(grid, delta, z, (loss_p, None), (loss_q, None))
        return MonteCarloEstimate(epsilon_upper=eps_upper, epsilon_lower=eps_lower, confidence=float(confidence),
                                  num_samples=int(num_samples))
    if geometric_ratio(pair) is None:
        raise ValueError(f"the Monte-Carlo estimate at num_steps={pair.num_steps} > {MAX_ENUMERATION_STEPS} needs a "
                         f"lambda-CGD encoder (its privacy loss has a forward recursion); got {pair.strategy}.")
    _check.positive(grid_tolerance=grid_tolerance)
    draws = LongHorizonDraws.from_rng(int(num_samples), rng) if draws is None else draws
    if draws.num_samples != num_samples:
        raise ValueError(f"draws hold {draws.num_samples} samples per direction; got num_samples={num_samples}.")
    if grid_points_per_unit is None:
        q, allowance = _grid_resolution(pair, draws, float(grid_tolerance))
    else:
        _check.integer(minimum=4, grid_points_per_unit=grid_points_per_unit)
        q = int(grid_points_per_unit)
        pilot = [(_long_losses(pair, draws, q, s, _PILOT)[0], _long_losses(pair, draws, 2 * q, s, _PILOT)[0])
                 for s in (1.0, -1.0)]
        allowance = 2.0 * max(float(np.max(np.abs(a - b))) for a, b in pilot)
    from_p = _long_losses(pair, draws, q, 1.0)
    from_q = _long_losses(pair, draws, q, -1.0)
    eps_upper, eps_lower = _epsilons(grid, delta, z, from_p, from_q)
    return MonteCarloEstimate(epsilon_upper=eps_upper + allowance, epsilon_lower=max(eps_lower - allowance, 0.0),
                              confidence=float(confidence), num_samples=int(num_samples), grid_points_per_unit=q,
                              grid_allowance=allowance)
