"""The dpgd planner's search: the optimum of every schedule family in few ODE solves (arXiv 2505.16329).

A dpgd plan costs what its ODE solves cost (each one a full solve of Definition 4.2, tens of milliseconds), so the
search is built around the shape of the risk landscape rather than around a generic optimizer.

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

**Stages.** Each stage is a one-dimensional search (:func:`line_search`: bracket downhill with doubling steps,
then safeguarded parabolic steps) that stops when the bracket is narrower than :data:`LOG_TOLERANCE` or when the
valley is flat to :data:`FLAT_TOLERANCE` (relative risk):

1. the first family (polynomial α = 1): V at the starting clip (V from :func:`linearized_optimum`, c from
   :data:`START_CLIP_PER_LABEL_NOISE`), c at that V, V again, then along the valley the last two searches moved in
   (Powell's direction step);
2. every other family starts at the best family's clip and V, the V moved by the difference between the two
   families' optimal V in the linearized model (:func:`linearized_risk`): a V search; the harmonic family starts at
   the best family's V and the linearized model's optimal τ: a τ search (the shape first: the optimal V moves
   little with it) and then V;
3. the best family, and every runner-up whose risk is within :data:`RECHECK_TOLERANCE` of it (unless it is the
   first family, which had its clip stage): c, V and the valley direction again (and τ, then V).

The bounds are the box c ∈ :data:`CLIP_BOUNDS`, τ ∈ :data:`HARMONIC_OFFSET_BOUNDS` and η̃(0) = V/(cS) ∈
[:data:`LEARNING_RATE_MIN`, 2/γ] (§5.1: beyond 2/γ the step cap binds while the noise still grows). A V search keeps
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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privdyn.schedules import Constant, Harmonic, LearningRate, Polynomial
from privdyn.spectra import Spectrum

__all__ = ["Candidate", "Objective", "Found", "candidates", "search", "line_search", "POLYNOMIAL_EXPONENTS",
           "CLIP_BOUNDS", "LEARNING_RATE_MIN", "HARMONIC_OFFSET_BOUNDS", "LOG_TOLERANCE", "FLAT_TOLERANCE",
           "RECHECK_TOLERANCE"]

POLYNOMIAL_EXPONENTS = (0.5, 1.0, 2.0)
"""The exponents α of the polynomial family (Assumption 2 allows {0, ½} ∪ [1, ∞); α = 0 is ``constant``)."""
CLIP_BOUNDS = (1e-3, 10.0)
"""The search box of c (C_clip = c√d)."""
LEARNING_RATE_MIN = 1e-3
"""The smallest η̃(0) searched; the largest is 2/γ."""
HARMONIC_OFFSET_BOUNDS = (1e-3, 1e3)
"""The search box of the harmonic offset τ (τ → ∞ is the constant schedule)."""
LOG_TOLERANCE = 0.02
"""A line search stops when its bracket is narrower than this in the logarithm of the parameter (2%)."""
FLAT_TOLERANCE = 2e-4
"""... or when the parabola through its bracket predicts less than this relative improvement (a flat valley)."""
RECHECK_TOLERANCE = 0.01
"""Runner-ups within this relative risk of the best family are refined as carefully as the best one."""
START_CLIP_PER_LABEL_NOISE = 0.35
"""The first family's search starts at c = 0.35·ζ (the optimal c is 0.3-0.5·ζ at moderate budgets)."""
_MAX_LINE_EVALUATIONS = 14
_LOCAL_BRACKET = 0.6
"""The widest bracket (in log units, a factor 1.8) on which a parabola's predicted improvement may stop a search."""
_GOLDEN = 0.381966


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One schedule family: ``schedule`` and the polynomial exponent (None for harmonic)."""

    schedule: str
    exponent: float | None

    @property
    def name(self) -> str:
        if self.schedule == "polynomial":
            return f"polynomial (schedule_exponent {self.exponent:g})"
        return self.schedule

    @property
    def names(self) -> tuple[str, ...]:
        base = ("clip", "initial_learning_rate")
        return base + ("harmonic_offset",) if self.schedule == "harmonic" else base

    def learning_rate(self, point: Sequence[float]) -> LearningRate:
        """The profile at ``point`` = (c, η̃(0)) or (c, η̃(0), τ)."""
        eta0 = float(point[1])
        if self.schedule == "constant":
            return Constant(eta0)
        if self.schedule == "polynomial":
            return Polynomial(eta0, float(self.exponent))  # type: ignore[arg-type]
        offset = float(point[2])
        return Harmonic(harmonic_scale=eta0 * offset, harmonic_offset=offset)

    def hyperparameters(self, point: Sequence[float]) -> dict[str, Any]:
        out: dict[str, Any] = {"schedule": self.schedule, "clip": float(point[0]),
                               "initial_learning_rate": float(point[1])}
        if self.schedule == "harmonic":
            out.update(harmonic_scale=float(point[1] * point[2]), harmonic_offset=float(point[2]))
        else:
            out["schedule_exponent"] = 0.0 if self.schedule == "constant" else float(self.exponent)  # type: ignore
        return out

    def shape_integral(self, offset: float | None = None) -> float:
        """S = ∫₀¹ η̃(t) dt / η̃(0) (``offset`` τ for the harmonic family)."""
        point = (1.0, 1.0) if offset is None else (1.0, 1.0, offset)
        return float(self.learning_rate(point).integral(1.0))


def candidates(schedules: Sequence[str]) -> list[Candidate]:
    """The families of ``schedules`` in search order (polynomial α = 1 first: its ODE is among the cheapest)."""
    out = []
    if "polynomial" in schedules:
        out += [Candidate("polynomial", a) for a in sorted(POLYNOMIAL_EXPONENTS, key=lambda a: a != 1.0)]
    if "constant" in schedules:
        out.append(Candidate("constant", 0.0))
    if "harmonic" in schedules:
        out.append(Candidate("harmonic", None))
    return out


class Objective:
    """The ODE's final private risk at (candidate, point, ρ), cached; counts the solves.

    ``extra``, when given, adds a function of the clip c (the clipping fixed point's bias under public statistics,
    :class:`privdyn.plan._dpgd_data.ClipBias`).
    """

    def __init__(self, spectrum: Spectrum, projections: np.ndarray, aspect_ratio: float, label_noise: float,
                 rtol: float, extra: Callable[[float], float] | None = None) -> None:
        self.spectrum, self.projections, self.extra = spectrum, projections, extra
        self.aspect_ratio, self.label_noise, self.rtol = aspect_ratio, label_noise, rtol
        self.cache: dict[tuple[Any, ...], float] = {}
        self.solves = 0

    def __call__(self, candidate: Candidate, point: Sequence[float], rho: float) -> float:
        from privdyn.dynamics import dpgd as engine

        key = (candidate, rho, *(round(float(p), 12) for p in point))
        if key not in self.cache:
            self.solves += 1
            try:
                value = engine.final_private_risk(
                    spectrum=self.spectrum, target_projections=self.projections, aspect_ratio=self.aspect_ratio,
                    learning_rate=candidate.learning_rate(point), clip=float(point[0]), rho=rho,
                    label_noise=self.label_noise, rtol=self.rtol)
            except engine.ODESolverError:
                value = math.inf
            if self.extra is not None and math.isfinite(value):
                value += self.extra(float(point[0]))
            self.cache[key] = value if math.isfinite(value) else math.inf
        return self.cache[key]


# ------------------------------------------------------------------------------------------------------------
# One-dimensional search
# ------------------------------------------------------------------------------------------------------------


def _vertex(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> tuple[float, float] | None:
    """Vertex (x, f) of the parabola through three points, or None if it is not convex."""
    (xa, fa), (xb, fb), (xc, fc) = a, b, c
    if not all(math.isfinite(f) for f in (fa, fb, fc)):
        return None
    p = (xb - xa) ** 2 * (fb - fc) - (xb - xc) ** 2 * (fb - fa)
    q = (xb - xa) * (fb - fc) - (xb - xc) * (fb - fa)
    if q >= 0.0:  # concave or degenerate: no interior minimum
        return None
    x = xb - 0.5 * p / q
    # the parabola's value at its vertex, from the divided differences
    d1 = (fb - fa) / (xb - xa)
    d2 = ((fc - fb) / (xc - xb) - d1) / (xc - xa)
    f = fa + d1 * (x - xa) + d2 * (x - xa) * (x - xb)
    return x, f


def line_search(f: Callable[[float], float], x0: float, step: float, lo: float, hi: float, *,
                tol: float = LOG_TOLERANCE, flat: float = FLAT_TOLERANCE) -> tuple[float, float]:
    """Minimize ``f`` on [lo, hi] from ``x0``: bracket with doubling steps, then safeguarded parabolic steps.

    While bracketing, a point replaces the incumbent (at first ``x0``) only if it is lower by more than ``flat``
    relative: along a flat direction the search stays where it started instead of drifting onto a bound. The
    refinement stops when the bracket is narrower than ``2·tol`` or flat to ``flat`` across, when the parabola
    through a bracket narrower than a factor 1.8 predicts less than ``flat`` relative improvement (on wider brackets
    a vertex that barely moves is replaced by a golden-section step), or after a fixed number of evaluations. A best
    point on a bound is returned as the bound unless the parabola through the three points nearest it has its
    vertex between the bound and the next point (then that vertex is evaluated and the search goes on). Returns
    ``(x, f(x))`` of the incumbent.
    """
    values: dict[float, float] = {}

    def at(x: float) -> float:
        x = min(max(x, lo), hi)
        if x not in values:
            values[x] = f(x)
        return x

    def lower(x: float, than: float) -> bool:
        return values[x] < values[than] - flat * abs(values[than])

    best = at(x0)
    width = step
    for x in (at(x0 - step), at(x0 + step)):
        if lower(x, best):
            best = x
    while len(values) < _MAX_LINE_EVALUATIONS:  # bracket: a higher (or equal) point on each side of the incumbent
        xs = sorted(values)
        i = xs.index(best)
        if (0 < i < len(xs) - 1) or xs[i] in (lo, hi):
            break
        width *= 2.0
        x = at(best - width if i == 0 else best + width)
        if not lower(x, best):
            break
        best = x
    while len(values) < _MAX_LINE_EVALUATIONS:
        xs = sorted(values)
        i = xs.index(best)
        if i == 0 or i == len(xs) - 1:  # on a bound: is the minimum there, or between the bound and its neighbour?
            near = xs[:3] if i == 0 else xs[-3:]
            if len(near) < 3 or abs(near[1] - near[0]) <= 2.0 * tol and abs(near[2] - near[1]) <= 2.0 * tol:
                break
            vertex = _vertex(*((x, values[x]) for x in near))
            inner = xs[1] if i == 0 else xs[-2]
            if vertex is None or not min(best, inner) < vertex[0] < max(best, inner) \
                    or abs(inner - best) <= 2.0 * tol:
                break  # the parabola through the three points nearest the bound has its minimum beyond it
            x = min(max(vertex[0], min(best, inner) + 0.5 * tol), max(best, inner) - 0.5 * tol)
            if x in values:
                break
            at(x)
            if values[x] < values[best]:
                best = x
            continue
        a, b, c = xs[i - 1], xs[i], xs[i + 1]
        settled = flat * abs(values[b])
        if c - a <= 2.0 * tol or max(values[a], values[c]) - values[b] <= settled:
            break  # resolved, or flat across the whole bracket
        vertex = _vertex((a, values[a]), (b, values[b]), (c, values[c]))
        if c - a <= _LOCAL_BRACKET:  # narrow enough for the parabola to be trusted
            if vertex is None or values[b] - vertex[1] <= settled:
                break
            x = vertex[0]
        elif vertex is not None and a < vertex[0] < c and abs(vertex[0] - b) >= 0.05 * (c - a):
            x = vertex[0]  # a wide bracket: the parabola's vertex if it moves meaningfully, else a golden step
        else:
            x = b + _GOLDEN * ((c - b) if c - b > b - a else (a - b))
        # keep new points at least tol/2 from the bracket's points, so every step shrinks the bracket
        if abs(x - b) < 0.5 * tol:
            x = b + (0.5 * tol if x >= b else -0.5 * tol)
        x = min(max(x, a + 0.5 * tol), c - 0.5 * tol)
        if x in values or not a < x < c:
            break
        at(x)
        if values[x] < values[b]:
            best = x
    return best, values[best]


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
