"""The mechanism record of homogenized SGD (hsgd): one-pass noisy SGD on least squares, privacy a ``surrogate``.

Lin, Kolaczyk, Smith & Paquette (arXiv 2510.16687), Algorithm 1: batch size 1, one pass over the n records (each used
at one step, the differing record at a uniformly random position), no clipping, Gaussian noise N(0, σ²I) added to
every stochastic gradient, only the last iterate x_n released. Its Rényi number (Theorem 4.3, eq. (15);
:func:`privdyn.privacy.hsgd.rdp_epsilon` on the SGD grid, :func:`privdyn.privacy.hsgd.sgd_grid_law`) is the divergence
between linearized homogenized-SGD laws of neighbouring datasets, maximized over a data-dependent set of record pairs:
a diffusion approximation labelled ``surrogate``, **never a differential-privacy guarantee** (unclipped noisy SGD on
unbounded data has no finite worst-case sensitivity). The record therefore has no ``dp_event``: composing a surrogate
in dp-accounting would present it as a guarantee.

:class:`HSGDMechanism` holds the problem (the design's moments, step size, ridge and noise std), n, the Rényi order
and the pairs; ``privacy_loss(delta)`` converts its one-order surrogate RDP to (ε, δ) (still ``surrogate``),
``calibrate(epsilon, delta)`` and :meth:`HSGDMechanism.calibrate_rdp` find the smallest noise std on a log grid
refined by bisection (the search of the hsgd planner, :mod:`privdyn.plan`), and ``statement`` is what the planner
publishes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from privdyn import _check
from privdyn.dynamics.hsgd import HSGDProblem
from privdyn.privacy.hsgd.common import REFERENCE, NeighboringPairs, sgd_grid_law
from privdyn.privacy.hsgd.divergences import rdp_epsilon as surrogate_rdp
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss
from privdyn.privacy.mechanism import NotExpressibleError
from privdyn.privacy.statement import PlanningShare, PrivacyStatement

if TYPE_CHECKING:
    import dp_accounting

__all__ = ["HSGDMechanism", "NoiseSearch", "NOISE_GRID", "BISECTIONS"]

NOISE_GRID = tuple(np.geomspace(1e-2, 1e3, 16).tolist())
"""The searched noise stds of :meth:`HSGDMechanism.calibrate`, relative to the root-mean-square gradient norm at
x_0 (16 log-spaced factors 1e-2 … 1e3)."""
BISECTIONS = 6
"""Bisection steps (in log σ) between the last grid σ that misses the target and the first that meets it."""

_ASSUMPTIONS = ("a diffusion approximation of noisy SGD (exact as d -> infinity, the paper's Conjecture 3.1)",
                "the supremum over neighbours replaced by a maximum over pairs of one assumed sample",
                "the differing record at a uniformly random position of one pass (shuffled once)",
                "x_0 = 0 fixed and public; no clipping")


@dataclasses.dataclass(frozen=True)
class NoiseSearch:
    """The result of a noise search: the record at the smallest σ found that meets the target (None if no searched
    σ does), the smallest value seen, and the number of surrogate evaluations."""

    mechanism: HSGDMechanism | None
    smallest: float
    evaluations: int


def _search(evaluate: Callable[[float], float], target: float, grid: Sequence[float],
            bisections: int) -> tuple[float | None, float, int]:
    """The smallest σ of ``grid`` (increasing) whose value meets ``target``, refined by ``bisections`` steps in log σ
    towards the previous grid point; also the smallest value seen and the evaluations used."""
    evaluations, best = 0, math.inf
    previous = None
    for sigma in grid:
        value = evaluate(sigma)
        evaluations += 1
        best = min(best, value)
        if value <= target:
            if previous is None:
                return sigma, best, evaluations
            lo, hi = math.log(previous), math.log(sigma)
            for _ in range(bisections):
                mid = 0.5 * (lo + hi)
                value = evaluate(math.exp(mid))
                evaluations += 1
                best = min(best, value)
                lo, hi = (lo, mid) if value <= target else (mid, hi)
            return math.exp(hi), best, evaluations
        previous = sigma
    return None, best, evaluations


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class HSGDMechanism:
    """One pass of noisy SGD (batch size 1, no clipping) on least squares, the last iterate released; ``surrogate``.

    Attributes:
        problem: the :class:`~privdyn.dynamics.hsgd.HSGDProblem`: the design's spectrum and moments, the constant
            learning rate γ = η d (step size η), the ridge δ and the noise std σ (``problem.noise_std``).
        n: the records, one per step (the pass has n steps; x_n is released).
        renyi_order: α > 1, the order of the surrogate RDP.
        pairs: the :class:`~privdyn.privacy.hsgd.NeighboringPairs` the surrogate maximizes over.
        pairs_source: how the pairs were chosen (written into the statement).

    Raises (at construction):
        TypeError / ValueError: bad input (the message names the parameter).
    """

    problem: HSGDProblem
    n: int
    renyi_order: float
    pairs: NeighboringPairs
    pairs_source: str = "the given pairs"

    def __post_init__(self) -> None:
        if not isinstance(self.problem, HSGDProblem):
            raise TypeError(f"problem must be a privdyn HSGDProblem; got {type(self.problem).__name__}.")
        if not isinstance(self.pairs, NeighboringPairs):
            raise TypeError(f"pairs must be a privdyn.privacy.hsgd.NeighboringPairs; got {type(self.pairs).__name__}.")
        _check.integer(minimum=1, n=self.n)
        _check.scalar(renyi_order=self.renyi_order)
        _check.in_range(1.0, math.inf, closed="neither", renyi_order=self.renyi_order)
        object.__setattr__(self, "n", int(self.n))
        object.__setattr__(self, "renyi_order", float(self.renyi_order))

    @property
    def noise_std(self) -> float:
        """σ, the std of the noise added to every stochastic gradient."""
        return self.problem.noise_std

    def with_noise(self, noise_std: float) -> HSGDMechanism:
        """The same run with noise std ``noise_std``."""
        return dataclasses.replace(self, problem=dataclasses.replace(self.problem, noise_std=float(noise_std)))

    def rdp_epsilon(self) -> float:
        """The surrogate ε_α of x_n (Theorem 4.3, eq. (15), on the SGD grid), maximized over :attr:`pairs`; ``inf``
        where the accountant cannot evaluate it (no noise, a step size past the stable limit) or it is unbounded."""
        try:
            law = sgd_grid_law(self.problem, self.n)
            curve = surrogate_rdp(self.renyi_order, law, self.pairs, num_steps=self.n, iterates=[self.n]).value
            value = float(np.atleast_1d(curve)[0])
        except ValueError:
            return math.inf
        return value if math.isfinite(value) else math.inf

    def rdp_loss(self) -> PrivacyLoss:
        """:meth:`rdp_epsilon` as a :class:`~privdyn.privacy.labels.PrivacyLoss` (quantity ``rdp_epsilon``)."""
        return PrivacyLoss(value=self.rdp_epsilon(), guarantee=Guarantee.SURROGATE, quantity="rdp_epsilon",
                           neighboring=NeighboringRelation.REPLACE_ONE, source=self._accountant())

    def privacy_loss(self, delta: float) -> PrivacyLoss:
        """The surrogate ε_α converted to (ε, δ) at its one order (Balle et al. 2020, arXiv 1905.09982,
        Theorem 21): still a ``surrogate``, the conversion of a number that is not a guarantee."""
        from privdyn.privacy.conversions import rdp_to_epsilon

        dlt = _check.delta(delta)
        rdp = self.rdp_epsilon()
        epsilon = math.inf if math.isinf(rdp) else float(rdp_to_epsilon([self.renyi_order], [rdp], delta=dlt)[0])
        return PrivacyLoss(value=epsilon, guarantee=Guarantee.SURROGATE, quantity="epsilon",
                           neighboring=NeighboringRelation.REPLACE_ONE,
                           source=f"{self._accountant()}; RDP at order {self.renyi_order:g} -> (epsilon, delta) by "
                                  "Balle et al. 2020, Theorem 21")

    def _scale(self) -> float:
        """The root-mean-square gradient norm at x_0 of a Gaussian design, sqrt(2 P_0 tr Σ), P_0 the initial risk."""
        p = self.problem
        lam = p.spectrum.eigenvalues
        residual = p.x0_sq - 2.0 * p.x0_dot_target + p.target_sq
        initial = 0.5 * (float((lam * residual).sum()) + p.label_noise**2)
        return math.sqrt(2.0 * initial * p.spectrum.trace)

    def calibrate_rdp(self, rdp_epsilon: float, *, noise_grid: Sequence[float] | None = None,
                      bisections: int = BISECTIONS) -> NoiseSearch:
        """The smallest noise std on ``noise_grid`` (increasing; default :data:`NOISE_GRID` times the gradient scale
        at x_0), refined by ``bisections`` steps in log σ, whose :meth:`rdp_epsilon` is at most ``rdp_epsilon``.

        The surrogate's plateau does not shrink with σ (the paper's Figure 2(b)): a small enough target is met by no
        σ, and then ``mechanism`` is None and ``smallest`` the smallest value found.
        """
        _check.scalar(rdp_epsilon=rdp_epsilon)
        _check.positive(rdp_epsilon=rdp_epsilon)
        return self._calibrated(lambda m: m.rdp_epsilon(), float(rdp_epsilon), noise_grid, bisections)

    def calibrate(self, epsilon: float, delta: float, *, noise_grid: Sequence[float] | None = None,
                  bisections: int = BISECTIONS) -> HSGDMechanism:
        """The same run at the smallest searched noise std whose :meth:`privacy_loss` at ``delta`` is at most
        ``epsilon`` (the search of :meth:`calibrate_rdp`, on the converted surrogate).

        Raises:
            ValueError: no searched σ meets the target (the message gives the smallest ε found).
        """
        _check.scalar(epsilon=epsilon)
        _check.positive(epsilon=epsilon)
        dlt = _check.delta(delta)
        found = self._calibrated(lambda m: float(m.privacy_loss(dlt).value), float(epsilon), noise_grid, bisections)
        if found.mechanism is None:
            raise ValueError(f"epsilon={epsilon!r} at delta={delta!r} is below what any searched noise_std reaches: "
                             f"the smallest surrogate epsilon found is {found.smallest:.4g} (the surrogate's plateau "
                             "does not shrink with noise_std).")
        return found.mechanism

    def _calibrated(self, measure: Callable[[HSGDMechanism], float], target: float,
                    noise_grid: Sequence[float] | None, bisections: int) -> NoiseSearch:
        _check.integer(minimum=0, bisections=bisections)
        grid = [factor * self._scale() for factor in NOISE_GRID] if noise_grid is None else list(noise_grid)
        _check.positive(noise_grid=grid)
        sigma, smallest, evaluations = _search(lambda s: measure(self.with_noise(s)), target, grid, int(bisections))
        return NoiseSearch(mechanism=None if sigma is None else self.with_noise(sigma), smallest=smallest,
                           evaluations=evaluations)

    @property
    def dp_neighboring(self) -> dp_accounting.NeighboringRelation:
        """Replace-one (the relation of the surrogate's pairs)."""
        return NeighboringRelation.REPLACE_ONE.to_dp_accounting()

    def dp_event(self) -> dp_accounting.DpEvent:
        """Raises :class:`~privdyn.privacy.mechanism.NotExpressibleError` (reason ``surrogate``): the surrogate is a
        diffusion approximation on data-dependent pairs, not a bound dp-accounting can compose."""
        raise NotExpressibleError(
            "dp-accounting has no DpEvent for homogenized SGD: its Renyi number is a surrogate (a diffusion "
            "approximation of unclipped noisy SGD, maximized over data-dependent record pairs), not a differential-"
            "privacy guarantee, and unclipped noisy SGD has no finite worst-case sensitivity to express",
            reason="surrogate")

    def _accountant(self) -> str:
        return (f"{REFERENCE}, Theorem 4.3 eq. (15): Renyi divergence of linearized homogenized-SGD laws, "
                f"maximized over {self.pairs_source}")

    def statement(self, delta: float | None = None) -> PrivacyStatement:
        """What to publish: the surrogate ε_α of x_n (``extra``), label ``surrogate``; with ``delta``, also its
        (ε, δ) conversion (:meth:`privacy_loss`). No membership rates: a surrogate has no privacy-loss distribution
        to read them from."""
        epsilon, conversion = None, None
        if delta is not None:
            epsilon = float(self.privacy_loss(delta).value)
            conversion = f"RDP at order {self.renyi_order:g} -> (epsilon, delta) by Balle et al. 2020, Theorem 21"
        return PrivacyStatement(
            unit="one example (a row (a, b))", neighboring=NeighboringRelation.REPLACE_ONE, sampler="shuffle",
            released="the last iterate x_n only", guarantee=Guarantee.SURROGATE, accountant=self._accountant(),
            planning=PlanningShare(), epsilon=epsilon, delta=None if delta is None else float(delta), zcdp=None,
            training_zcdp=None, rdp_curve=None, conversion=conversion, assumptions=_ASSUMPTIONS,
            extra={"renyi_order": self.renyi_order, "rdp_epsilon": self.rdp_epsilon()},
            membership_reason=("the Renyi number is a surrogate of a diffusion approximation, not a privacy "
                               "guarantee: no bound on a membership test follows from it"))
