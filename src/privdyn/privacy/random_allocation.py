"""Independent Gaussian noise under random allocation (balls-in-bins): a PLD accountant and its lower-bound twin.

**The mechanism.** An epoch has ``t`` steps; every record joins exactly one of them, chosen uniformly at random and
independently of the other records (balls-in-bins, random 1-out-of-t allocation); each step adds Gaussian noise of
std ``sigma`` (in units of one record's L2 contribution) to the sum of its records' clipped gradients; epochs use
independent allocations. Under add-remove neighbours the pair

    P = (1/t) sum_j N(e_j, sigma^2 I_t),    Q = N(0, sigma^2 I_t)

dominates one epoch (Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha & Zhang, "Balls-and-Bins
Sampling for DP-SGD", AISTATS 2025, arXiv 2412.16802: the tightly dominating pair of adaptive batch linear queries
under balls-and-bins sampling; random 1-out-of-t allocation of Feldman & Shenfeld, arXiv 2502.08202), and ``E``
epochs are dominated by the product pair (adaptive composition of dominating pairs: Zhu, Dong & Wang, "Optimal
accounting of differential privacy via characteristic function", AISTATS 2022).

**The computation.** ``Y = dP/dQ = (1/t) sum_j W_j`` with ``W_j = exp((y_j - 1/2) / sigma^2)`` i.i.d. under Q
(log-normal: ``log W ~ N(-a/2, a)``, ``a = 1/sigma^2``, ``E_Q W = 1``). Every hockey-stick divergence of the pair,
in both directions, is a convex function of ``Y`` under Q:

    H_alpha(P || Q) = E_Q (Y - alpha)_+ ,      H_alpha(Q || P) = E_Q (1 - alpha Y)_+ ,

and over epochs ``E_Q (prod_e Y_e - alpha)_+`` and ``E_Q (1 - alpha prod_e Y_e)_+`` are convex in each factor. So any
law of ``Y`` that is larger in the convex order (same mean, more spread) gives a pair that dominates the true one
for every alpha and every number of epochs (the argument of connect-the-dots, Doroshenko, Ghazi, Kamath, Kumar &
Manurangsi, PETS 2022, applied to the likelihood ratio). The law of the average of ``t`` i.i.d. ``W`` is built by
binary doubling, ``Y_{a+b} = (a Y_a + b Y_b)/(a + b)``; each intermediate law is put on a grid by mean-preserving
spreads to the two neighbouring grid points (each a convex-order increase; the exact future is convex in the
partial sum, so each step only raises every divergence). The single ``W`` is discretized by splitting each grid
cell's exact mass at its endpoints, keeping the cell's exact mean. The event that some ``log W_j`` exceeds
``x_max`` (probability ~1e-16 and below) is split off as two atoms, one where only P has mass (infinite privacy
loss) and one where only Q has mass (a post-processing of the pair maps them back), with exact masses.

The final law sits on points ``exp(k h)``, so the privacy loss ``log Y`` is on dp-accounting's grid of interval
``h``: the remove direction (P, Q) has masses ``y_k nu_k`` at loss ``k h``, the add direction (Q, P) masses
``nu_k`` at loss ``-k h``; dp-accounting composes the epochs (pessimistic truncation) and converts to epsilon.
The result is an upper bound for any grid; the grid only sets how tight it is.

**The lower bound.** :func:`epsilon_lower_bound` merges the masses of every grid cell into one point at their mean
instead (a convex-order decrease, so every divergence only falls; for the last step it is a post-processing of
the pair), drops the split-off event, rounds the final losses down to the grid (a smaller ``Y`` lowers the
remove-direction divergence ``E_Q (Y - alpha)_+``, increasing in Y) and composes with dp-accounting's optimistic
truncation: a valid lower bound on the pair's epsilon (remove direction). It certifies how tight the upper bound
is, and shows what shuffled epochs cost (:mod:`privdyn.privacy.shuffling`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from scipy import special

from privdyn import _check
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = ["AllocationGrid", "allocation_pld", "epsilon", "epsilon_lower_bound", "SOURCE"]

SOURCE = ("random allocation (balls-in-bins), Gaussian noise: the tightly dominating pair of Chua et al., AISTATS 2025 "
          "(arXiv 2412.16802) for one epoch, composed over epochs; the likelihood-ratio law built by convex-order "
          "(connect-the-dots) doubling, composed by dp-accounting's PLD")
"""The accountant's citation, as this module's privacy losses record it."""

_TAIL_Z = 9.0  # log W is split off beyond mean + 9 sd of its tilted law (mass ~1e-19 per step, exact in the atoms)


@dataclasses.dataclass(frozen=True)
class AllocationGrid:
    """How finely the likelihood-ratio law is gridded (the result is an upper bound at any setting).

    Attributes:
        value_discretization_interval: h, the loss grid of the final law and of dp-accounting's composition.
        tail_spacing: spacing in log Y of the geometric part of every intermediate grid (a multiple of h).
        bulk_points_per_sd: points per standard deviation of ``Y_r`` in the linear part around 1.
        bulk_width_sd: half-width of the linear part, in standard deviations of ``Y_r``.
    """

    value_discretization_interval: float = 1e-4
    tail_spacing: float = 2e-2
    bulk_points_per_sd: float = 20.0
    bulk_width_sd: float = 12.0

    def __post_init__(self) -> None:
        _check.record(self)
        _check.positive(value_discretization_interval=self.value_discretization_interval,
                        tail_spacing=self.tail_spacing, bulk_points_per_sd=self.bulk_points_per_sd,
                        bulk_width_sd=self.bulk_width_sd)


# ---------------------------------------------------------------------------------------------------------------
# Normal interval masses, accurate in both tails
# ---------------------------------------------------------------------------------------------------------------


def _normal_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P(lo < Z <= hi) for a standard normal, without cancellation in either tail."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, float), np.asarray(hi, float))
    upper = lo > 0.0
    return np.where(upper, special.ndtr(-lo) - special.ndtr(-hi), special.ndtr(hi) - special.ndtr(lo))


# ---------------------------------------------------------------------------------------------------------------
# Grids and the doubling
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Law:
    """A sub-probability law of Y_r: point masses ``mass`` at points ``y`` (sorted, y[0] may be 0)."""

    y: np.ndarray
    mass: np.ndarray
    terms: int


def _grid_indices(terms: int, a: float, u_lo: float, u_hi: float, grid: AllocationGrid) -> np.ndarray:
    """The grid of Y_r (as loss indices k, y = exp(k h)): geometric over [u_lo, u_hi], linear around the mean 1."""
    h = grid.value_discretization_interval
    step = max(1, round(grid.tail_spacing / h))
    k_lo, k_hi = math.floor(u_lo / h), round(u_hi / h)  # u_hi is on the grid
    geometric = np.arange(k_lo, k_hi, step, dtype=np.int64)
    sd = math.sqrt(math.expm1(a) / terms)
    width = grid.bulk_width_sd * sd
    count = int(math.ceil(2.0 * grid.bulk_width_sd * grid.bulk_points_per_sd))
    bulk = np.linspace(max(1.0 - width, math.exp(u_lo)), min(1.0 + width, math.exp(u_hi)), count + 1)
    bulk_index = np.clip(np.round(np.log(bulk) / h).astype(np.int64), k_lo, k_hi)
    return np.unique(np.concatenate([geometric, bulk_index, [k_hi]]))


def _grid_points(index: np.ndarray, h: float) -> np.ndarray:
    """The points 0 and exp(k h)."""
    return np.concatenate([[0.0], np.exp(index * h)])


def _project(values: np.ndarray, weights: np.ndarray, grid: np.ndarray, pessimistic: bool,
             out_mass: np.ndarray, out_moment: np.ndarray) -> None:
    """Add point masses (values, weights) onto the cells of ``grid`` (0 = grid[0] <= values <= grid[-1]).

    Pessimistic: each mass is split between the two ends of its cell keeping its mean (a convex-order increase).
    Optimistic: each cell's masses are merged into one point at their mean (a convex-order decrease); the cell's
    mass and first moment are accumulated.
    """
    pos = np.clip(np.searchsorted(grid, values, side="right") - 1, 0, len(grid) - 1)
    if pessimistic:
        nxt = np.minimum(pos + 1, len(grid) - 1)
        width = grid[nxt] - grid[pos]
        safe = np.where(width > 0.0, width, 1.0)
        theta = np.clip(np.where(width > 0.0, (values - grid[pos]) / safe, 0.0), 0.0, 1.0)
        out_mass += np.bincount(pos, weights=weights * (1.0 - theta), minlength=len(grid))
        out_mass += np.bincount(nxt, weights=weights * theta, minlength=len(grid))
    else:
        out_mass += np.bincount(pos, weights=weights, minlength=len(grid))
        out_moment += np.bincount(pos, weights=weights * values, minlength=len(grid))


def _finish(grid: np.ndarray, mass: np.ndarray, moment: np.ndarray, terms: int, pessimistic: bool) -> _Law:
    if pessimistic:
        return _Law(y=grid, mass=mass, terms=terms)
    keep = mass > 0.0
    y = np.where(keep, moment / np.where(keep, mass, 1.0), grid)
    return _Law(y=np.minimum(y, grid[-1]), mass=mass, terms=terms)


def _single_law(a: float, index: np.ndarray, h: float, pessimistic: bool) -> _Law:
    """The law of W = exp(X), X ~ N(-a/2, a) restricted to X <= x_max = index[-1] h, from each grid cell's exact
    mass and mean: split at the cell's ends (pessimistic) or put at its mean (optimistic)."""
    s = math.sqrt(a)
    grid = _grid_points(index, h)
    edges = np.concatenate([[-np.inf], index * h])  # cells (0, y_0], (y_0, y_1], ... in log W
    mass = _normal_mass((edges[:-1] + a / 2.0) / s, (edges[1:] + a / 2.0) / s)
    # E_Q[W 1{X in cell}] is the cell's mass under the tilted law N(a/2, a).
    moment = _normal_mass((edges[:-1] - a / 2.0) / s, (edges[1:] - a / 2.0) / s)
    out_mass, out_moment = np.zeros(len(grid)), np.zeros(len(grid))
    if pessimistic:
        lower, upper = grid[:-1], grid[1:]  # cell i (i = 0 ... N-1) is (grid[i], grid[i + 1]]
        to_upper = np.clip((moment - lower * mass) / (upper - lower), 0.0, mass)
        out_mass[1:] += to_upper
        out_mass[:-1] += mass - to_upper
    else:
        out_mass[1:] += mass  # cell (grid[i], grid[i + 1]] is kept at its mean, a point of (grid[i], grid[i + 1]]
        out_moment[1:] += moment
    return _finish(grid, out_mass, out_moment, 1, pessimistic)


def _combine(left: _Law, right: _Law, index: np.ndarray, h: float, pessimistic: bool) -> _Law:
    """The law of (a Y_a + b Y_b)/(a + b) for independent Y_a, Y_b, put on the grid ``index``."""
    a, b = left.terms, right.terms
    keep_a, keep_b = left.mass > 0.0, right.mass > 0.0
    ya, wa, yb, wb = left.y[keep_a], left.mass[keep_a], right.y[keep_b], right.mass[keep_b]
    total = a + b
    grid = _grid_points(index, h)
    out_mass, out_moment = np.zeros(len(grid)), np.zeros(len(grid))
    rows = max(1, 4_000_000 // max(len(yb), 1))  # row blocks keep the pairwise arrays small
    for start in range(0, len(ya), rows):
        values = (a * ya[start:start + rows, None] + b * yb[None, :]) / total
        weights = wa[start:start + rows, None] * wb[None, :]
        _project(values.ravel(), weights.ravel(), grid, pessimistic, out_mass, out_moment)
    return _finish(grid, out_mass, out_moment, total, pessimistic)


def _law_of_average(steps: int, sigma: float, grid: AllocationGrid, pessimistic: bool) -> tuple[_Law, float, float]:
    """The law of Y_t on its grid, with the split-off event's Q- and P-masses (exact)."""
    a = 1.0 / sigma ** 2
    s = math.sqrt(a)
    h = grid.value_discretization_interval
    x_max = math.ceil((a / 2.0 + _TAIL_Z * s) / h) * h  # on the grid: the last grid point, index round(x_max / h)
    u_lo = -a / 2.0 - _TAIL_Z * s
    # Escape masses of one step: q0 = Q(X > x_max), p0 = E_Q[W 1{X > x_max}] = P_tilt(X > x_max).
    q0 = float(special.ndtr(-(x_max + a / 2.0) / s))
    p0 = float(special.ndtr(-(x_max - a / 2.0) / s))
    q_escape = -math.expm1(steps * math.log1p(-q0))
    p_escape = -math.expm1(math.log1p(-p0) + (steps - 1) * math.log1p(-q0))
    power = _single_law(a, _grid_indices(1, a, u_lo, x_max, grid), h, pessimistic)
    result: _Law | None = None
    remaining = steps
    while True:
        if remaining & 1:
            if result is None:
                result = power
            else:
                terms = result.terms + power.terms
                result = _combine(result, power, _grid_indices(terms, a, u_lo, x_max, grid), h, pessimistic)
        remaining >>= 1
        if not remaining:
            break
        terms = 2 * power.terms
        power = _combine(power, power, _grid_indices(terms, a, u_lo, x_max, grid), h, pessimistic)
    assert result is not None
    return result, q_escape, p_escape


# ---------------------------------------------------------------------------------------------------------------
# The PLD
# ---------------------------------------------------------------------------------------------------------------


def _check_inputs(sigma: float, steps_per_epoch: int, num_epochs: int) -> None:
    _check.scalar(sigma=sigma)
    _check.finite(sigma=sigma)
    _check.positive(sigma=sigma)
    _check.finite(steps_per_epoch=steps_per_epoch, num_epochs=num_epochs)
    _check.integer(minimum=1, steps_per_epoch=steps_per_epoch, num_epochs=num_epochs)


def allocation_pld(sigma: float, *, steps_per_epoch: int, num_epochs: int, grid: AllocationGrid | None = None,
                   pessimistic: bool = True, participation: float = 1.0) -> Any:
    """dp-accounting's ``PrivacyLossDistribution`` of ``num_epochs`` epochs of random 1-out-of-t allocation.

    Args:
        sigma: the noise std in units of one record's L2 contribution (> 0).
        steps_per_epoch: t >= 1 (t = 1 is the Gaussian mechanism).
        num_epochs: E >= 1, each with an independent allocation.
        grid: the discretization (:class:`AllocationGrid`); any grid gives an upper bound.
        pessimistic: True: a PLD that dominates the pair in both directions (the accountant). False: a PLD
            dominated by the remove direction (P, Q) of the pair (for lower bounds only; it has no add direction).
        participation: rho in (0, 1], lower bounds only: the record joins the epoch's t steps with probability
            rho and no step otherwise, i.e. P = (1 - rho) Q + rho P_t, whose likelihood ratio is 1 - rho + rho Y.

    Returns:
        a ``dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution``.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_module

    _check_inputs(sigma, steps_per_epoch, num_epochs)
    grid = grid or AllocationGrid()
    h = grid.value_discretization_interval
    _check.scalar(participation=participation)
    _check.in_range(0.0, 1.0, closed="right", participation=participation)
    if pessimistic and participation != 1.0:
        raise ValueError(f"participation must be 1 for the upper bound (pessimistic=True); got "
                         f"participation={participation!r}.")
    law, q_escape, p_escape = _law_of_average(int(steps_per_epoch), float(sigma), grid, pessimistic)
    if participation != 1.0:
        law = dataclasses.replace(law, y=1.0 - participation + participation * law.y)
    positive = (law.y > 0.0) & (law.mass > 0.0)
    zero_mass = float(law.mass[law.y == 0.0].sum())
    if pessimistic:  # the points are exp(k h): the losses are on dp-accounting's grid
        index = np.round(np.log(law.y[positive]) / h).astype(np.int64)
    else:  # the points are cell means: round the loss down (a smaller Y lowers E_Q (Y - alpha)_+)
        index = np.floor(np.log(law.y[positive]) / h).astype(np.int64)
    index, inverse = np.unique(index, return_inverse=True)
    mass = np.bincount(inverse, weights=law.mass[positive], minlength=len(index))
    remove = dict(zip(index.tolist(), (np.exp(index * h) * mass).tolist(), strict=True))
    if pessimistic:
        add = dict(zip((-index).tolist(), mass.tolist(), strict=True))
        one = pld_module.PrivacyLossDistribution.create_from_rounded_probability(
            remove, p_escape, h, pessimistic_estimate=True, rounded_probability_mass_function_add=add,
            infinity_mass_add=q_escape + zero_mass, symmetric=False)
    else:
        one = pld_module.PrivacyLossDistribution.create_from_rounded_probability(
            remove, 0.0, h, pessimistic_estimate=False)
    if num_epochs == 1:
        return one
    # dp-accounting's truncation bound evaluates moment-generating functions of this wide PMF at large orders and
    # overflows to inf there (then skips those orders): harmless, silenced.
    with np.errstate(over="ignore"):
        return one.self_compose(int(num_epochs))


def epsilon(sigma: float, *, steps_per_epoch: int, num_epochs: int, delta: float,
            neighboring: str | NeighboringRelation = NeighboringRelation.ADD_REMOVE,
            grid: AllocationGrid | None = None) -> PrivacyLoss:
    """An upper bound on epsilon of ``num_epochs`` epochs of random 1-out-of-``steps_per_epoch`` allocation with
    Gaussian noise of std ``sigma`` (units of one record's contribution), add-remove (or zero-out) neighbours.

    Returns:
        ``PrivacyLoss(value=epsilon, guarantee="bound", quantity="epsilon", sampler="random_allocation")``.
    """
    _check.delta(delta)
    relation = NeighboringRelation(neighboring)
    if relation == NeighboringRelation.REPLACE_ONE:
        raise ValueError("neighboring must be 'add_remove' or 'zero_out' for the random-allocation pair; got "
                         "neighboring='replace_one'.")
    value = allocation_pld(sigma, steps_per_epoch=steps_per_epoch, num_epochs=num_epochs,
                           grid=grid).get_epsilon_for_delta(float(delta))
    return PrivacyLoss(value=float(value), guarantee=Guarantee.BOUND, quantity="epsilon", neighboring=relation,
                       sampler="random_allocation",
                       source=f"{SOURCE}; t={int(steps_per_epoch)} steps per epoch, {int(num_epochs)} epochs")


def epsilon_lower_bound(sigma: float, *, steps_per_epoch: int, num_epochs: int, delta: float,
                        participation: float = 1.0, grid: AllocationGrid | None = None) -> float:
    """A lower bound on the epsilon of the random-allocation pair (its remove direction, contracted in the convex
    order at every step): any mechanism whose epsilon is at least the pair's (e.g. shuffled epochs on a chosen pair
    of datasets, :mod:`privdyn.privacy.shuffling`) has epsilon at least this value. ``participation`` as in
    :func:`allocation_pld`."""
    _check.delta(delta)
    pld = allocation_pld(sigma, steps_per_epoch=steps_per_epoch, num_epochs=num_epochs, grid=grid,
                         pessimistic=False, participation=participation)
    return float(pld.get_epsilon_for_delta(float(delta)))
