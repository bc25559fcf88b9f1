"""The staged search over the dpgd ODE: the optimum of every schedule family in few solves (arXiv 2505.16329).

The planner's search (``privdyn plan dpgd``), on the :class:`~privdyn.tuning.dpgd.Objective` that the figures'
tuners use too. A dpgd plan costs what its ODE solves cost (each one a full solve of Definition 4.2, tens of
milliseconds), so the search is built around the shape of the risk landscape rather than around a generic optimizer
(:func:`privdyn.tuning.minimize.minimize_final_risk`, which the figures afford, needs hundreds of solves a family).

**Coordinates.** For a learning-rate profile η̃ = η̃(0)·s(t) with s(0) = 1 and clip c, the search moves in

    V = c·∫₀¹ η̃(t) dt = c·η̃(0)·S,   S = ∫₀¹ s(t) dt  (constant 1, polynomial 1/(α+1), harmonic τ·ln(1 + 1/τ)),

in c and, for the harmonic family, in the offset τ, all in logarithms. With little clipping active
(c′ = c/√(2R + ζ²) small: μ_c ≈ c′√(2/π) and ν_c(R + ζ²/2) ≈ c²/2, Lemmas B.1-B.2) the ODE depends on (c, η̃) only
through the product c·η̃(t), and its descent clock is proportional to V: the paper's unified surrogate (5.13) has
v = c·η̃ for c = O(1) (and v = η̃ once c = Ω(1)). So the valley of the final private risk runs along c at nearly
constant V and is flat in c (at the benchmark's setting a factor 1.7 in c moves the risk by 0.1-1%, as much as a
7% change of V), and the optimal V is nearly the same for every schedule family (within about 30% at moderate
budgets; a factor 2 at a large budget and 7 at a very small one, where each search's bracketing pays). V is
searched carefully, c coarsely, and the families share what was learnt. Where c is large the valley turns diagonal
(v = η̃ in (5.13)), which a Powell direction step follows.

**Stages.** Each stage is a one-dimensional search (:func:`~privdyn.tuning.minimize.line_search`: bracket downhill
with doubling steps, then safeguarded parabolic steps) that stops when the bracket is narrower than
:data:`~privdyn.tuning.minimize.LOG_TOLERANCE` or when the valley is flat to
:data:`~privdyn.tuning.minimize.FLAT_TOLERANCE` (relative risk):

1. the first family (polynomial α = 1): V at the starting clip (V from :func:`linearized_optimum`, c from
   :data:`START_CLIP_PER_LABEL_NOISE`), c at that V, V again, then along the valley the last two searches moved in
   (Powell's direction step);
2. every other family starts at the best family's clip and V, the V moved by the difference between the two
   families' optimal V in the linearized model (:func:`linearized_risk`): a V search; the harmonic family starts at
   the best family's V and the linearized model's optimal τ: a τ search (the shape first: the optimal V moves
   little with it) and then V;
3. the best family, and every runner-up whose risk is within :data:`RECHECK_TOLERANCE` of it (unless it is the
   first family, which had its clip stage): c, V and the valley direction again (and τ, then V).

The bounds are the box c ∈ :data:`~privdyn.tuning.dpgd.CLIP_BOUNDS`, τ ∈
:data:`~privdyn.tuning.dpgd.HARMONIC_OFFSET_BOUNDS` and η̃(0) = V/(cS) ∈ [:data:`~privdyn.tuning.dpgd.LEARNING_RATE_MIN`,
2/γ] (§5.1: beyond 2/γ the step cap binds while the noise still grows). A V search keeps
c unless η̃(0) would leave its range (then c moves with V, so a search is never stopped by the clip of an earlier
stage); a c search is bounded through η̃(0) at fixed V, a τ search through S(τ).

**Starts.** The linearized model misses the optimal V by a factor up to 3 where c is large (clipping rare), but
the ratio of two families' optimal V carries over: at the tests' settings, the ODE's optimal V over the linearized
one varies by 0.80-0.94 across the five families at the benchmark's setting, 0.92-1.03 for an isotropic spectrum
with n = 10⁵, 0.70-0.96 at a very small budget and 1.6-2.8 at a large clip, where the families' optimal V spread
over a factor 1.2 to 7.5 (the starting distance of every family's V search before). Its optimal harmonic offset
is within a factor 2 of the ODE's (0.76 vs 1.26, 0.033 vs 0.025, 0.026 vs 0.013). Against the search started at
the best family's V (and τ = 1), the plan needs 40 instead of 42 solves at the benchmark's setting, 37 instead of
44 at d = 400, 52 instead of 60 for the isotropic n = 10⁵, d = 101 plan of ``DPLinearRegression``, 38 instead of 62
at a very small budget and 55 instead of 58 at a large one. The harmonic family's V is not moved: at a large clip
the moved V (with τ searched first) left it 1.6% above its optimum. How close the result is to an
exhaustive search (a grid and a tight Nelder-Mead on the exact spectrum) is measured by
``tests/plan/test_plan_search.py``: the chosen family within 1e-3 and every runner-up within 1e-2 (relative
risk), at five settings from a very small budget to a large one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from privdyn.tuning.dpgd import CLIP_BOUNDS, HARMONIC_OFFSET_BOUNDS, LEARNING_RATE_MIN, Candidate, Objective
from privdyn.tuning.minimize import LOG_TOLERANCE, _vertex, line_search

__all__ = ["Found", "search", "linearized_risk", "linearized_optimum", "RECHECK_TOLERANCE",
           "START_CLIP_PER_LABEL_NOISE"]

RECHECK_TOLERANCE = 0.01
"""Runner-ups within this relative risk of the best family are refined as carefully as the best one."""
START_CLIP_PER_LABEL_NOISE = 0.35
"""The first family's search starts at c = 0.35·ζ (the optimal c is 0.3-0.5·ζ at moderate budgets)."""


# ------------------------------------------------------------------------------------------------------------
# The staged search
# ------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Found:
    """A family's optimum: ``point`` = (c, η̃(0)) or (c, η̃(0), τ), its search risk and the bounds it sits on."""

    candidate: Candidate
    point: tuple[float, ...]
    search_risk: float
    at_bound: tuple[str, ...]


class _Family:
    """One family's search state in the coordinates (log V, log c, log τ) of the module docstring."""

    def __init__(self, candidate: Candidate, objective: Objective, rho: float, aspect_ratio: float) -> None:
        self.candidate, self.objective, self.rho = candidate, objective, rho
        self.max_rate = 2.0 / aspect_ratio
        self.harmonic = candidate.schedule == "harmonic"
        self.log_clock = 0.0
        self.log_clip = 0.0
        self.log_offset = 0.0
        self.risk = math.inf

    def shape(self, log_offset: float | None = None) -> float:
        return self.candidate.shape_integral(math.exp(self.log_offset if log_offset is None else log_offset)
                                             if self.harmonic else None)

    def point(self, log_clock: float, log_clip: float, log_offset: float) -> tuple[float, ...]:
        clip = math.exp(log_clip)
        offset = math.exp(log_offset)
        rate = math.exp(log_clock) / (clip * self.candidate.shape_integral(offset if self.harmonic else None))
        return (clip, rate, offset) if self.harmonic else (clip, rate)

    def risk_at(self, log_clock: float, log_clip: float, log_offset: float) -> float:
        point = self.point(log_clock, log_clip, log_offset)
        rate = point[1]
        if not LEARNING_RATE_MIN * (1 - 1e-9) <= rate <= self.max_rate * (1 + 1e-9):
            return math.inf
        return self.objective(self.candidate, point, self.rho)

    # bounds of one coordinate with the others fixed (η̃(0) = V / (c S) within [LEARNING_RATE_MIN, 2/γ])
    def _clip_for(self, log_clock: float) -> float:
        """The clip kept along a V search: the current one, moved just enough to keep η̃(0) in its range."""
        base = log_clock - math.log(self.shape())
        low = max(math.log(CLIP_BOUNDS[0]), base - math.log(self.max_rate))
        high = min(math.log(CLIP_BOUNDS[1]), base - math.log(LEARNING_RATE_MIN))
        return min(max(self.log_clip, low), high)

    def _clock_bounds(self) -> tuple[float, float]:
        base = math.log(self.shape())
        return (base + math.log(CLIP_BOUNDS[0] * LEARNING_RATE_MIN),
                base + math.log(CLIP_BOUNDS[1] * self.max_rate))

    def _clip_bounds(self) -> tuple[float, float]:
        base = self.log_clock - math.log(self.shape())
        return (max(math.log(CLIP_BOUNDS[0]), base - math.log(self.max_rate)),
                min(math.log(CLIP_BOUNDS[1]), base - math.log(LEARNING_RATE_MIN)))

    def _offset_bounds(self) -> tuple[float, float]:
        """τ with V/(c·S(τ)) <= 2/γ; S(τ) = τ ln(1 + 1/τ) increases from 0 to 1, so this is a lower bound."""
        lo, hi = (math.log(b) for b in HARMONIC_OFFSET_BOUNDS)
        need = math.exp(self.log_clock - self.log_clip) / self.max_rate
        if self.shape(lo) < need:
            a, b = lo, hi
            for _ in range(60):
                mid = 0.5 * (a + b)
                a, b = (mid, b) if self.shape(mid) < need else (a, mid)
            lo = b
        return lo, hi

    def search_clock(self, step: float) -> None:
        """V, with c held unless η̃(0) = V/(cS) would leave [LEARNING_RATE_MIN, 2/γ] (then c moves with V)."""
        lo, hi = self._clock_bounds()
        self.log_clock, self.risk = line_search(lambda z: self.risk_at(z, self._clip_for(z), self.log_offset),
                                                min(max(self.log_clock, lo), hi), step, lo, hi)
        self.log_clip = self._clip_for(self.log_clock)

    def search_clip(self, step: float) -> None:
        lo, hi = self._clip_bounds()
        self.log_clip, self.risk = line_search(lambda z: self.risk_at(self.log_clock, z, self.log_offset),
                                               min(max(self.log_clip, lo), hi), step, lo, hi)

    def search_offset(self, step: float) -> None:
        lo, hi = self._offset_bounds()
        self.log_offset, self.risk = line_search(lambda z: self.risk_at(self.log_clock, self.log_clip, z),
                                                 min(max(self.log_offset, lo), hi), step, lo, hi)

    def search_valley(self, origin: tuple[float, float]) -> None:
        """Powell's step: a line search along the displacement from ``origin`` (log V, log c) to the current point.

        Coordinate searches crawl along a diagonal valley (at large c clipping is rare and the risk depends on
        η̃(0) rather than on c·η̃(0)); the displacement of one round of them points along it.
        """
        direction = (self.log_clock - origin[0], self.log_clip - origin[1])
        length = math.hypot(*direction)
        if length <= 2.0 * LOG_TOLERANCE:
            return
        start = (self.log_clock, self.log_clip)

        def at(t: float) -> float:
            log_clip = start[1] + t * direction[1]
            if not math.log(CLIP_BOUNDS[0]) <= log_clip <= math.log(CLIP_BOUNDS[1]):
                return math.inf
            return self.risk_at(start[0] + t * direction[0], log_clip, self.log_offset)

        t, risk = line_search(at, 0.0, 0.5, -1.0, 4.0, tol=LOG_TOLERANCE / length)
        self.log_clock, self.log_clip, self.risk = start[0] + t * direction[0], start[1] + t * direction[1], risk

    def refine(self) -> None:
        """Stage 3: c, then V, then along the valley this round moved in (and τ, then V) from the current point."""
        origin = (self.log_clock, self.log_clip)
        self.search_clip(0.3)
        self.search_clock(0.1)
        self.search_valley(origin)
        if self.harmonic:
            self.search_offset(0.3)
            self.search_clock(0.05)

    def found(self) -> Found:
        point = self.point(self.log_clock, self.log_clip, self.log_offset)
        margin = 2.0 * LOG_TOLERANCE
        hits = []
        if min(abs(math.log(point[0] / b)) for b in CLIP_BOUNDS) <= margin:
            hits.append("clip")
        if min(abs(math.log(point[1] / b)) for b in (LEARNING_RATE_MIN, self.max_rate)) <= margin:
            hits.append("initial_learning_rate")
        if self.harmonic and min(abs(math.log(point[2] / b)) for b in HARMONIC_OFFSET_BOUNDS) <= margin:
            hits.append("harmonic_offset")
        return Found(self.candidate, point, self.risk, tuple(hits))


_LINEARIZED_TIMES = 0.5 * (1.0 - np.cos(np.pi * np.linspace(0.0, 1.0, 401)))
"""Quadrature nodes of the linearized model on [0, 1], dense near both ends (where η̃ and its derivative vary)."""
_LINEARIZED_CLOCKS = np.linspace(math.log(1e-3), math.log(1e3), 121)
_LINEARIZED_OFFSETS = np.linspace(math.log(HARMONIC_OFFSET_BOUNDS[0]), math.log(HARMONIC_OFFSET_BOUNDS[1]), 25)


def _parabolic_argmin(x: np.ndarray, y: np.ndarray) -> float:
    """The minimizer of ``y`` on the uniform grid ``x``, refined by the parabola through it and its neighbours."""
    i = int(np.argmin(y))
    if 0 < i < len(x) - 1 and np.all(np.isfinite(y[i - 1:i + 2])):
        vertex = _vertex((x[i - 1], y[i - 1]), (x[i], y[i]), (x[i + 1], y[i + 1]))
        if vertex is not None:
            return float(vertex[0])
    return float(x[i])


def linearized_risk(objective: Objective, rho: float, candidate: Candidate, clocks: np.ndarray,
                    offset: float | None = None) -> np.ndarray:
    """The final private risk of the linearized isotropic model at the total clocks V = ``clocks`` (any c).

    With the small-clipping linearization of Lemmas B.1-B.2 (μ_c ≈ c√(2/π)/ζ_e, ν_c(R + ζ²/2) ≈ c²/2), R frozen in
    ζ_e = √(R₀ + ζ²) with R₀ = (1/d)Σλ_i D_i(0) the true initial risk, and an isotropic spectrum, the ODE of
    Definition 4.2 depends on (c, η̃) only through v(t) = c·η̃(t) = V·w(t) (w = η̃/∫η̃) and is linear:

        dR/dt = −k v R + (γ/2) v² − (2γ²/ρ²) d(v²)/dt,   k = 2√(2/π)/ζ_e,

    so R(1) = R₀e^{−kV} + V²∫₀¹ e^{−kV(1 − W(u))} [(γ/2) w² − (2γ²/ρ²) (w²)′] du, W(u) = ∫₀ᵘ w, plus
    Proposition 4.4's final jump 2γ²V²w(1)²/ρ². A model for starting points, not an answer: where clipping is
    rare (large c) it misses the optimal V by up to a factor 3, but the ratio of two families' optimal V, and the
    harmonic offset, carry over far better (measured in the module docstring).
    """
    initial = 0.5 * float(np.dot(objective.spectrum.eigenvalues, objective.projections))
    rate = 2.0 * math.sqrt(2.0 / math.pi) / math.sqrt(initial + objective.label_noise**2)
    gamma = objective.aspect_ratio
    profile = candidate.learning_rate((1.0, 1.0) if offset is None else (1.0, 1.0, offset))
    total = float(profile.integral(1.0))
    u = _LINEARIZED_TIMES
    w = np.asarray(profile.value(u), dtype=float) / total
    dw2 = np.asarray(profile.squared_derivative(u), dtype=float) / total**2
    elapsed = np.asarray(profile.integral(u), dtype=float) / total
    v = np.asarray(clocks, dtype=float)[:, None]
    integrand = np.exp(-rate * v * (1.0 - elapsed)) * (0.5 * gamma * w**2 - 2.0 * gamma**2 / rho**2 * dw2)
    integral = 0.5 * ((integrand[:, 1:] + integrand[:, :-1]) @ np.diff(u))
    v = v[:, 0]
    result: np.ndarray = (initial * np.exp(-rate * v) + v**2 * integral + 2.0 * gamma**2 * v**2 * w[-1] ** 2 / rho**2)
    return result


def linearized_optimum(objective: Objective, rho: float, candidate: Candidate) -> tuple[float, float]:
    """(log V, log τ) minimizing :func:`linearized_risk` on a log grid (log τ = 0 except for the harmonic family)."""
    clocks = np.exp(_LINEARIZED_CLOCKS)
    if candidate.schedule != "harmonic":
        return _parabolic_argmin(_LINEARIZED_CLOCKS, linearized_risk(objective, rho, candidate, clocks)), 0.0
    table = np.array([linearized_risk(objective, rho, candidate, clocks, math.exp(z)) for z in _LINEARIZED_OFFSETS])
    log_offset = _parabolic_argmin(_LINEARIZED_OFFSETS, np.min(table, axis=1))
    best = linearized_risk(objective, rho, candidate, clocks, math.exp(log_offset))
    return _parabolic_argmin(_LINEARIZED_CLOCKS, best), log_offset


def search(objective: Objective, families: Sequence[Candidate], rho: float, aspect_ratio: float,
           start: Sequence[float] | None = None) -> list[Found]:
    """The staged search of the module docstring; ``start`` = (c, η̃(0)[, τ]) of a known optimum of ``families[0]``.

    With ``start`` (the Pareto front re-optimizing a plan's family at another budget), the first family starts
    there and its stage 1 takes smaller steps.
    """
    states = [_Family(c, objective, rho, aspect_ratio) for c in families]
    first = states[0]
    linearized = [linearized_optimum(objective, rho, c) for c in families] if start is None else []
    if start is None:
        first.log_clip = math.log(START_CLIP_PER_LABEL_NOISE * objective.label_noise)
        first.log_clock, first.log_offset = linearized[0]
        steps = (0.5, 0.5, 0.1)
    else:
        first.log_clip = math.log(start[0])
        if first.harmonic:
            first.log_offset = math.log(start[2])
        first.log_clock = math.log(start[0] * start[1] * first.shape())
        steps = (0.25, 0.3, 0.1)
    first.search_clock(steps[0])
    origin = (first.log_clock, first.log_clip)
    first.search_clip(steps[1])
    first.search_clock(steps[2])
    first.search_valley(origin)
    if first.harmonic:
        first.search_offset(0.7)
        first.search_clock(0.1)
    best = first
    for i, state in enumerate(states[1:], start=1):
        # the best family's V, moved by the linearized model's difference between the two families (and its τ)
        state.log_clip, state.log_clock = best.log_clip, best.log_clock
        if linearized:
            if state.harmonic:
                state.log_offset = linearized[i][1]
            else:
                state.log_clock += linearized[i][0] - linearized[states.index(best)][0]
        if state.harmonic:  # the shape first, at the best family's V (the optimal V moves little with the shape)
            state.search_offset(0.5)
            state.search_clock(0.1)
        else:
            state.search_clock(0.2)
        if state.risk < best.risk:
            best = state
    for state in states[1:]:  # the first family has had its clip stage already
        if state.risk <= best.risk * (1.0 + RECHECK_TOLERANCE):
            state.refine()
    return [state.found() for state in states]
