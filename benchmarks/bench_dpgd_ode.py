"""dpgd: the exponential ODE solver against scipy's stiff solvers with the analytic structured Jacobian.

The risk ODE of Definition 4.2 (eq. 4.7) of arXiv 2505.16329 on grouped eigenvalues, and its scalar form for Sigma = I
(eq. 4.11). Both sides return the final private risk R(1) + 2c^2 eta(1)^2 gamma^2 / rho^2 (Proposition 4.4).

Settings: d = 10^4 distinct eigenvalues of the power law phi = 0.5 (``Spectrum.power_law(10_000,
power_law_exponent=0.5)``), psi = 0 (``isotropic_target``), aspect ratio gamma = 1e-3, clip = rho = label_noise = 1,
and the learning rates

* ``stiff``: harmonic beta/(t + tau), beta = 1000, tau = 0.01 (eta capped at 2/gamma until t ~ 0.49; decay rates up
  to 2 lambda_max (2/gamma) mu ~ 10^4);
* ``mild``: harmonic beta = 1, tau = 0.01 (never capped); ``mild-constant``: constant 1; ``mild-polynomial``:
  polynomial eta(0) (1 - t)^(1/2), eta(0) = 1;
* ``isotropic``: the scalar ODE (4.11) with R(0) = 1/2 and the polynomial alpha = 1/2 rate, eta(0) = 1.

The references are what a capable scipy user runs on this system (the right-hand side written out plainly below):

* ``bdf`` / ``radau``: ``solve_ivp(method="BDF" / "Radau")`` with the exact Jacobian in sparse form. The Jacobian of
  the m-state system is diagonal plus rank one (every rate depends on R = w.S), which is dense as a matrix; the
  standard way to hand it to a sparse LU is to carry R as one more state (dR/dt = w.dS/dt), which makes the Jacobian
  an arrowhead: the diagonal, the column dF/dR and the row dR'/dS, 3m + 1 nonzeros, factorized by SuperLU without
  fill-in. Each Newton matrix then costs O(m), as privdyn's exponential steps do.
* ``lsoda``: ``solve_ivp(method="LSODA")``. LSODA only takes dense (or banded) Jacobians, so it runs with its default
  finite-difference one. It is fair in the mild regimes, where it stays in its non-stiff Adams mode; in the stiff
  regime its dense 10^4 x 10^4 Jacobian makes one solve take minutes (the naive path a user hits first, 444x slower
  in an earlier measurement), so it is not timed there.

Accuracy is matched, not assumed: in setup a tight solution (Radau with the structured Jacobian at rtol 1e-10; its
error at rtol 1e-8 is already ~1e-12 relative) is computed, and each side runs at the loosest relative tolerance of
1e-2, 1e-3, ..., 1e-11 whose final private risk is within 1e-6 relative of it, as is the next tighter one's (so that a
loose tolerance cannot qualify by a lucky cancellation of errors); the absolute tolerance follows, 1e-3 rtol
max|S(0)|, as in privdyn's own LSODA path. ``agree`` checks both sides against the tight value again; the
result's note records the chosen tolerances. Tight values and tolerances are computed once per regime and solver.

Both sides run with BLAS pinned to one thread (as privdyn runs every experiment unit): scipy's Radau and BDF do many
small matrix products and norms whose multi-threaded BLAS calls, on a loaded machine, cost 50x their work.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse
from scipy.integrate import solve_ivp
from scipy.special import erf, erfc
from threadpoolctl import ThreadpoolController

from privdyn.benchmarking import Benchmark, Scaling
from privdyn.dynamics import dpgd
from privdyn.schedules import Constant, Harmonic, LearningRate, Polynomial
from privdyn.spectra import Spectrum, isotropic_target

D, ASPECT_RATIO, HARMONIC_OFFSET, CLIP, RHO, LABEL_NOISE = 10_000, 1e-3, 0.01, 1.0, 1.0, 1.0
ISOTROPIC_INITIAL_RISK = 0.5
AGREEMENT_RTOL = 1e-6
RTOL_GRID = tuple(10.0**-k for k in range(2, 12))
TIGHT_RTOL = 1e-10
SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)

REGIMES: dict[str, tuple[LearningRate, bool]] = {  # learning rate, isotropic (scalar ODE)
    "stiff": (Harmonic(harmonic_scale=1000.0, harmonic_offset=HARMONIC_OFFSET), False),
    "mild": (Harmonic(harmonic_scale=1.0, harmonic_offset=HARMONIC_OFFSET), False),
    "mild-constant": (Constant(1.0), False),
    "mild-polynomial": (Polynomial(1.0, 0.5), False),
    "isotropic": (Polynomial(1.0, 0.5), True),
}


class Ode(NamedTuple):
    """dS/dt = -2 lam q(t, R) S + mult (lam a(t, R) + b(t)), R = lam.S / d (grouped eq. 4.7; m = 1, w = 1: eq. 4.11)."""

    lam: np.ndarray
    mult: np.ndarray
    weights: np.ndarray
    initial: np.ndarray
    learning_rate: LearningRate


class Problem(NamedTuple):
    ode: Ode
    spectrum: Spectrum | None
    target_projections: np.ndarray | None
    tight: float
    candidate_rtol: float
    reference_rtol: float


class Outcome(NamedTuple):
    final_private_risk: float
    tight: float  # passed through from setup, so that ``agree`` sees it


@functools.cache
def _ode(regime: str) -> tuple[Ode, Spectrum | None, np.ndarray | None]:
    learning_rate, isotropic = REGIMES[regime]
    if isotropic:
        one = np.ones(1)
        return Ode(one, one, one, ISOTROPIC_INITIAL_RISK * one, learning_rate), None, None
    spectrum = Spectrum.power_law(D, power_law_exponent=0.5)
    target = isotropic_target(spectrum)
    lam = np.asarray(spectrum.eigenvalues, dtype=float)
    ode = Ode(lam, np.asarray(spectrum.multiplicities, dtype=float), lam / spectrum.dim,
              spectrum.dim * np.asarray(target, dtype=float) / 2.0, learning_rate)
    return ode, spectrum, target


def _drive(ode: Ode, t: float, R: float) -> tuple[float, float, float, float, float]:
    """q = eta_bar mu(R), a = eta_bar^2 nu(R)(R + zeta^2/2) gamma, b = 2 c^2 sigma^2 gamma^2, dq/dR, da/dR."""
    r = max(R, 0.0)
    cp = CLIP / np.sqrt(2.0 * r + LABEL_NOISE**2)
    gauss = SQRT_2_OVER_PI * np.exp(-cp**2 / 2.0)
    mu = erf(cp / np.sqrt(2.0))
    tail = erfc(cp / np.sqrt(2.0))
    nu = cp**2 * tail + mu - cp * gauss
    eta_bar = min(float(ode.learning_rate.value(t)), 2.0 / ASPECT_RATIO)
    b = 2.0 * CLIP**2 * ASPECT_RATIO**2 / RHO**2 * max(-float(ode.learning_rate.squared_derivative(t)), 0.0)
    p = r + LABEL_NOISE**2 / 2.0
    dcp = -cp**3 / CLIP**2 if R > 0.0 else 0.0  # d c'/dR; R is clamped at 0
    dmu, dnu = gauss * dcp, 2.0 * cp * tail * dcp  # d mu/dR, d nu/dR
    dp = 1.0 if R > 0.0 else 0.0
    return (eta_bar * mu, eta_bar**2 * nu * p * ASPECT_RATIO, b, eta_bar * dmu,
            eta_bar**2 * (dnu * p + nu * dp) * ASPECT_RATIO)


def _plain_rhs(ode: Ode) -> Callable[[float, np.ndarray], np.ndarray]:
    def rhs(t: float, S: np.ndarray) -> np.ndarray:
        q, a, b, _, _ = _drive(ode, t, float(ode.weights @ S))
        return -2.0 * ode.lam * q * S + ode.mult * (ode.lam * a + b)

    return rhs


def _arrowhead(ode: Ode) -> tuple[Callable[..., np.ndarray], Callable[..., sparse.csc_matrix]]:
    """The system with R carried as state m + 1, and its exact Jacobian as a sparse arrowhead matrix."""
    m = ode.lam.size
    last = np.full(m, m)
    rows = np.concatenate([np.arange(m), np.arange(m), last, [m]])  # diagonal, column dF/dR, row dR'/dS, corner
    cols = np.concatenate([np.arange(m), last, np.arange(m), [m]])
    pattern = sparse.csc_matrix((np.ones(rows.size), (rows, cols)), shape=(m + 1, m + 1))
    pattern.sort_indices()
    order = sparse.csc_matrix((np.arange(1.0, rows.size + 1), (rows, cols)), shape=(m + 1, m + 1))
    order.sort_indices()
    slots = np.argsort(order.data.astype(int) - 1)  # slots[k]: where entry k of (rows, cols) sits in .data

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        S = y[:m]
        q, a, b, _, _ = _drive(ode, t, float(y[m]))
        f = -2.0 * ode.lam * q * S + ode.mult * (ode.lam * a + b)
        return np.append(f, ode.weights @ f)

    def jac(t: float, y: np.ndarray) -> sparse.csc_matrix:
        S = y[:m]
        q, _, _, dq, da = _drive(ode, t, float(y[m]))
        diagonal = -2.0 * ode.lam * q
        column = -2.0 * ode.lam * dq * S + ode.mult * ode.lam * da
        values = np.concatenate([diagonal, column, ode.weights * diagonal, [ode.weights @ column]])
        out = pattern.copy()
        out.data[slots] = values
        return out

    return rhs, jac


def _final_jump(ode: Ode) -> float:
    return 2.0 * CLIP**2 * float(ode.learning_rate.value(1.0)) ** 2 * ASPECT_RATIO**2 / RHO**2


def _scipy_solve(ode: Ode, method: str, rtol: float) -> float:
    atol = 1e-3 * rtol * float(np.max(np.abs(ode.initial)))
    if method == "LSODA":
        sol = solve_ivp(_plain_rhs(ode), (0.0, 1.0), ode.initial, method="LSODA", rtol=rtol, atol=atol)
        final_risk = float(ode.weights @ sol.y[:, -1])
    else:
        rhs, jac = _arrowhead(ode)
        y0 = np.append(ode.initial, ode.weights @ ode.initial)
        sol = solve_ivp(rhs, (0.0, 1.0), y0, method=method, jac=jac, rtol=rtol, atol=atol)
        final_risk = float(ode.weights @ sol.y[:-1, -1])  # R from the states, not the carried copy
    if sol.status != 0:
        raise RuntimeError(f"{method} failed: {sol.message}")
    return final_risk + _final_jump(ode)


def _privdyn_solve(ode: Ode, spectrum: Spectrum | None, target: np.ndarray | None, rtol: float) -> float:
    learning_rate = ode.learning_rate
    common = dict(aspect_ratio=ASPECT_RATIO, learning_rate=learning_rate, clip=CLIP, rho=RHO, label_noise=LABEL_NOISE,
                  rtol=rtol)
    if spectrum is None:
        trajectory = dpgd.isotropic_risk_ode(initial_risk=float(ode.initial[0]), times=(1.0,), **common)
        return trajectory.final_private_risk
    return dpgd.final_private_risk(spectrum=spectrum, target_projections=target, **common)


def _loosest(solve: Callable[[float], float], tight: float) -> float:
    """The loosest rtol of RTOL_GRID whose answer, and the answer at the next tighter rtol, are within AGREEMENT_RTOL of
    the tight one (two in a row, so that a loose tolerance cannot qualify by a lucky cancellation of errors)."""

    def accurate(rtol: float) -> bool:
        try:
            return abs(solve(rtol) / tight - 1.0) <= AGREEMENT_RTOL
        except RuntimeError:
            return False

    for looser, tighter in zip(RTOL_GRID, RTOL_GRID[1:], strict=False):
        if accurate(looser) and accurate(tighter):
            return looser
    raise AssertionError(f"no rtol in {RTOL_GRID} reaches {AGREEMENT_RTOL:g} relative accuracy")


@functools.cache
def _tight(regime: str) -> float:
    return _scipy_solve(_ode(regime)[0], "Radau", TIGHT_RTOL)


@functools.cache
def _matched_rtol(regime: str, method: str) -> float:
    """The loosest rtol for ``method`` ("privdyn" or a scipy method) at AGREEMENT_RTOL accuracy in ``regime``."""
    ode, spectrum, target = _ode(regime)
    if method == "privdyn":
        return _loosest(lambda rtol: _privdyn_solve(ode, spectrum, target, rtol), _tight(regime))
    return _loosest(lambda rtol: _scipy_solve(ode, method, rtol), _tight(regime))


@functools.cache
def _threadpools() -> ThreadpoolController:
    """The process's thread pools, inspected once: ``threadpool_limits`` re-scans the loaded libraries on every call
    (about 2 ms, 20 ms on a loaded machine), a constant that would be timed on both sides."""
    return ThreadpoolController()


def _one_blas_thread(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapped(*args: Any) -> Any:
        with _threadpools().limit(limits=1, user_api="blas"):
            return fn(*args)

    return wrapped


def _setup(regime: str, method: str) -> Callable[[], Problem]:
    @_one_blas_thread
    def setup() -> Problem:
        ode, spectrum, target = _ode(regime)
        return Problem(ode, spectrum, target, _tight(regime), _matched_rtol(regime, "privdyn"),
                       _matched_rtol(regime, method))

    return setup


@_one_blas_thread
def _candidate(problem: Problem) -> Outcome:
    return Outcome(_privdyn_solve(problem.ode, problem.spectrum, problem.target_projections, problem.candidate_rtol),
                   problem.tight)


def _reference(method: str) -> Callable[[Problem], Outcome]:
    @_one_blas_thread
    def reference(problem: Problem) -> Outcome:
        return Outcome(_scipy_solve(problem.ode, method, problem.reference_rtol), problem.tight)

    return reference


def _note(problem: Problem) -> str:
    return f"candidate rtol {problem.candidate_rtol:g}, reference rtol {problem.reference_rtol:g}"


def _agree(candidate: Outcome, reference: Outcome) -> None:
    for name, outcome in (("candidate", candidate), ("reference", reference)):
        error = abs(outcome.final_private_risk / outcome.tight - 1.0)
        if not error <= AGREEMENT_RTOL:
            raise AssertionError(f"{name}: final private risk {outcome.final_private_risk!r} differs from the "
                                 f"tight Radau value {outcome.tight!r} by {error:.2e} relative "
                                 f"(> {AGREEMENT_RTOL:g}).")


_METHODS = {"bdf": "BDF", "radau": "Radau", "lsoda": "LSODA"}
_REFERENCE_NAMES = {
    "bdf": "scipy BDF, exact Jacobian as a sparse arrowhead (R carried as a state)",
    "radau": "scipy Radau, exact Jacobian as a sparse arrowhead (R carried as a state)",
    "lsoda": "scipy LSODA (its finite-difference Jacobian; non-stiff Adams mode here)",
}


def _description(regime: str) -> str:
    learning_rate, isotropic = REGIMES[regime]
    system = ("scalar risk ODE (4.11), Sigma = I" if isotropic
              else f"risk ODE (4.7), power law phi=0.5 with {D} eigenvalues")
    return (f"{system}, gamma={ASPECT_RATIO:g}, {learning_rate}; each side at the loosest rtol of 1e-2..1e-11 "
            f"within {AGREEMENT_RTOL:g} of Radau at rtol {TIGHT_RTOL:g}")


BENCHMARKS = tuple(
    Benchmark(
        name=f"dpgd-ode-{regime}-{key}",
        description=_description(regime),
        candidate_name="dpgd exponential integrator (final_private_risk / isotropic_risk_ode)",
        reference_name=_REFERENCE_NAMES[key],
        setup=_setup(regime, _METHODS[key]),
        candidate=_candidate,
        reference=_reference(_METHODS[key]),
        agree=_agree,
        target_ratio=3.0,
        repeats=5,
        note=_note,
    )
    for regime in REGIMES for key in _METHODS if not (regime == "stiff" and key == "lsoda")
)



# -- scaling (``privdyn bench --scaling``) ------------------------------------------------------------------------


def _scaling_setup(num_eigenvalues: int) -> tuple[Spectrum, np.ndarray]:
    spectrum = Spectrum.power_law(num_eigenvalues, power_law_exponent=0.5)
    return spectrum, isotropic_target(spectrum)


@_one_blas_thread
def _scaling_run(inputs: tuple[Spectrum, np.ndarray]) -> float:
    spectrum, target = inputs
    return dpgd.final_private_risk(spectrum=spectrum, target_projections=target, aspect_ratio=ASPECT_RATIO,
                                   learning_rate=REGIMES["stiff"][0], clip=CLIP, rho=RHO, label_noise=LABEL_NOISE)


SCALING = (
    Scaling(
        name="dpgd-ode-scaling",
        description=(f"dpgd.final_private_risk (exponential integrator, default rtol 1e-8) on the stiff setting "
                     f"(power law phi=0.5, gamma={ASPECT_RATIO:g}, harmonic beta=1000, tau={HARMONIC_OFFSET}) with m "
                     "distinct eigenvalues"),
        size_name="eigenvalues m",
        sizes=(100, 1_000, 10_000, 100_000),
        setup=_scaling_setup,
        run=_scaling_run,
    ),
)
