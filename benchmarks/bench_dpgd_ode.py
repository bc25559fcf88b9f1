"""dpgd: the exponential ODE solver against scipy's LSODA on the same risk ODE (Definition 4.2 of arXiv 2505.16329).

Setting (pinned by the issue): d = 10^4 distinct eigenvalues of the power law phi = 0.5
(``Spectrum.power_law(10_000, power_law_exponent=0.5)``, tr = d), psi = 0 (``isotropic_target``), aspect ratio
gamma = 1e-3, harmonic schedule beta/(t + tau) with tau = 0.01, clip = rho = label_noise = 1. Two benchmarks:
beta = 1000 (eta capped at 2/gamma until t ~ 0.49; decay rates up to 2 lambda_max (2/gamma) mu ~ 10^4, stiff: target
10x) and beta = 1 (never capped, mildly stiff: target 1x, no slower).

Both sides return the final private risk R(1) + 2c^2 eta(1)^2 gamma^2 / rho^2 (Proposition 4.4):

* candidate: ``privdyn.dynamics.dpgd.final_private_risk`` (method="exponential", its default rtol = 1e-8);
* reference: ``scipy.integrate.solve_ivp(method="LSODA", rtol=1e-8, atol=1e-12)`` with its default (finite-difference)
  Jacobian, on the right-hand side written out plainly below.

``agree`` checks both against a tight LSODA solution (rtol = 1e-10, atol = 1e-14) computed once in setup, to 1e-6
relative. At beta = 1000 LSODA is slow (minutes per solve: its dense 10^4 x 10^4 Jacobian), so that benchmark
times a single repetition.
"""

from typing import NamedTuple

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import erf, erfc

from privdyn.benchmarking import Benchmark
from privdyn.dynamics import dpgd
from privdyn.schedules import Harmonic
from privdyn.spectra import Spectrum, isotropic_target

D, ASPECT_RATIO, HARMONIC_OFFSET, CLIP, RHO, LABEL_NOISE = 10_000, 1e-3, 0.01, 1.0, 1.0, 1.0
AGREEMENT_RTOL = 1e-6


class Problem(NamedTuple):
    spectrum: Spectrum
    target_projections: np.ndarray
    harmonic_scale: float
    tight: float  # the final private risk by LSODA at rtol = 1e-10


class Outcome(NamedTuple):
    final_private_risk: float
    tight: float  # passed through from setup, so that ``agree`` sees it


def _reference_final_private_risk(spectrum, target_projections, harmonic_scale, *, rtol, atol):
    """The ODE (4.7) on grouped eigenvalues, written plainly, solved by LSODA with its default Jacobian."""
    lam = np.asarray(spectrum.eigenvalues, dtype=float)
    mult = np.asarray(spectrum.multiplicities, dtype=float)
    d = spectrum.dim
    beta, tau, gamma, c, rho, zeta = harmonic_scale, HARMONIC_OFFSET, ASPECT_RATIO, CLIP, RHO, LABEL_NOISE

    def rhs(t, S):
        R = max(np.dot(lam, S) / d, 0.0)
        cp = c / np.sqrt(2.0 * R + zeta**2)
        mu = erf(cp / np.sqrt(2.0))
        nu = cp**2 * erfc(cp / np.sqrt(2.0)) + erf(cp / np.sqrt(2.0)) - np.sqrt(2.0 / np.pi) * cp * np.exp(-cp**2 / 2)
        eta_bar = min(beta / (t + tau), 2.0 / gamma)
        sigma2 = 2.0 * beta**2 / (t + tau) ** 3 / rho**2  # rho^2 sigma^2 = -d(eta^2)/dt
        return -2.0 * lam * eta_bar * mu * S + mult * (lam * eta_bar**2 * nu * (R + zeta**2 / 2) * gamma
                                                       + 2.0 * c**2 * sigma2 * gamma**2)

    S0 = d * np.asarray(target_projections, dtype=float) / 2.0
    sol = solve_ivp(rhs, (0.0, 1.0), S0, method="LSODA", rtol=rtol, atol=atol)
    if sol.status != 0:
        raise RuntimeError(f"LSODA failed: {sol.message}")
    final_risk = float(np.dot(lam, sol.y[:, -1]) / d)
    return final_risk + 2.0 * c**2 * (beta / (1.0 + tau)) ** 2 * gamma**2 / rho**2


def _setup(harmonic_scale):
    def setup():
        spectrum = Spectrum.power_law(D, power_law_exponent=0.5)
        target = isotropic_target(spectrum)
        tight = _reference_final_private_risk(spectrum, target, harmonic_scale, rtol=1e-10, atol=1e-14)
        return Problem(spectrum, target, harmonic_scale, tight)
    return setup


def _candidate(problem):
    value = dpgd.final_private_risk(spectrum=problem.spectrum, target_projections=problem.target_projections,
                                    aspect_ratio=ASPECT_RATIO,
                                    learning_rate=Harmonic(harmonic_scale=problem.harmonic_scale,
                                                           harmonic_offset=HARMONIC_OFFSET),
                                    clip=CLIP, rho=RHO, label_noise=LABEL_NOISE)
    return Outcome(value, problem.tight)


def _reference(problem):
    value = _reference_final_private_risk(problem.spectrum, problem.target_projections, problem.harmonic_scale,
                                          rtol=1e-8, atol=1e-12)
    return Outcome(value, problem.tight)


def _agree(candidate, reference):
    for name, outcome in (("candidate", candidate), ("reference", reference)):
        error = abs(outcome.final_private_risk / outcome.tight - 1.0)
        if not error <= AGREEMENT_RTOL:
            raise AssertionError(f"{name}: final private risk {outcome.final_private_risk!r} differs from the "
                                 f"rtol 1e-10 LSODA value {outcome.tight!r} by {error:.2e} relative "
                                 f"(> {AGREEMENT_RTOL:g}).")


BENCHMARKS = (
    Benchmark(
        name="dpgd-ode-harmonic-stiff",
        description="risk ODE, power law phi=0.5 with 10^4 eigenvalues, gamma=1e-3, harmonic beta=1000, tau=0.01",
        candidate_name="dpgd.final_private_risk (exponential, rtol 1e-8)",
        reference_name="scipy LSODA (rtol 1e-8, atol 1e-12, default Jacobian)",
        setup=_setup(1000.0),
        candidate=_candidate,
        reference=_reference,
        agree=_agree,
        target_ratio=10.0,
        repeats=5,
    ),
    Benchmark(
        name="dpgd-ode-harmonic-mild",
        description="risk ODE, power law phi=0.5 with 10^4 eigenvalues, gamma=1e-3, harmonic beta=1, tau=0.01",
        candidate_name="dpgd.final_private_risk (exponential, rtol 1e-8)",
        reference_name="scipy LSODA (rtol 1e-8, atol 1e-12, default Jacobian)",
        setup=_setup(1.0),
        candidate=_candidate,
        reference=_reference,
        agree=_agree,
        target_ratio=1.0,
        repeats=7,
    ),
)
