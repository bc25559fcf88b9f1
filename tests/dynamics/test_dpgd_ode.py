"""Tests of privdyn.dynamics.dpgd: clipping factors, the risk ODE (arXiv 2505.16329, Def. 4.2), bounds, the SDE.

Independent oracles (STYLE H14):
* clipping factors: mpmath at 30 digits of the printed formula of Lemma B.1; the spec's table (seed-003 §1.5);
  the properties of Lemma B.2.
* the ODE: scipy ``solve_ivp(method="LSODA", rtol=1e-10)`` on a right-hand side written out plainly here (not the
  engine's), integrated straight to t = 1; the spec's Figure 1 "ODE reference" table (seed-003 §5); the final jump
  2c²η̃(1)²γ²/ρ² of Proposition 4.4 by hand; the scalar ODE (4.11) against the grouped one.
* the homogenized SDE: its Monte-Carlo mean against the ODE, z = 5 (STYLE H16).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special

from privdyn.dynamics import dpgd
from privdyn.schedules import Constant, Custom, Harmonic, OutsideTheoryWarning, Polynomial
from privdyn.spectra import Spectrum, isotropic_target, power_law_target

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=30)

FIG1 = dict(aspect_ratio=0.1, rho=1.0, label_noise=0.3, clip=1.0)  # Figure 1: eta(0) = 3, ||theta*|| = 1


# ----------------------------------------------------------------------------------------------------------------
# The independent reference: the ODE (4.7) written plainly, LSODA at rtol 1e-10
# ----------------------------------------------------------------------------------------------------------------


def reference_risk(spectrum, target, *, aspect_ratio, learning_rate, clip, rho, label_noise, times, rtol=1e-10):
    """R(t) at ``times`` from LSODA on the grouped ODE, written from Definition 4.2 and Lemma B.1 directly."""
    lam = np.asarray(spectrum.eigenvalues, dtype=float)
    mult = np.asarray(spectrum.multiplicities, dtype=float)
    d = spectrum.dim
    gamma, c, rho_, zeta = aspect_ratio, clip, rho, label_noise

    def rhs(t, S):
        R = max(float(np.dot(lam, S)) / d, 0.0)
        cp = c / math.sqrt(2 * R + zeta**2)
        mu = math.erf(cp / math.sqrt(2))
        nu = cp**2 * math.erfc(cp / math.sqrt(2)) + math.erf(cp / math.sqrt(2)) \
            - math.sqrt(2 / math.pi) * cp * math.exp(-cp**2 / 2)
        eta_bar = min(float(learning_rate.value(t)), 2 / gamma)
        sigma2 = max(-float(learning_rate.squared_derivative(t)), 0.0) / rho_**2
        return -2 * lam * eta_bar * mu * S + mult * (lam * eta_bar**2 * nu * (R + zeta**2 / 2) * gamma
                                                     + 2 * c**2 * sigma2 * gamma**2)

    S0 = d * np.asarray(target, dtype=float) / 2
    sol = integrate.solve_ivp(rhs, (0.0, float(times[-1])), S0, method="LSODA", rtol=rtol,
                              atol=1e-14 * max(S0.max(), 1.0), t_eval=times)
    assert sol.status == 0, sol.message
    return lam @ sol.y / d


def relative_error(a, b):
    return np.max(np.abs(np.asarray(a) / np.asarray(b) - 1.0))


# ----------------------------------------------------------------------------------------------------------------
# Clipping factors (Lemma B.1, B.2)
# ----------------------------------------------------------------------------------------------------------------

SPEC_TABLE = [  # c', mu, nu, mu/c', nu/c'^2, nu/c' (seed-003 §1.5, 6 decimals)
    (0.1, 0.079656, 0.009469, 0.796557, 0.946861, 0.094686),
    (0.5, 0.382925, 0.185128, 0.765850, 0.740513, 0.370257),
    (1.0, 0.682689, 0.516059, 0.682689, 0.516059, 0.516059),
    (2.0, 0.954500, 0.920537, 0.477250, 0.230134, 0.460268),
    (3.0, 0.997300, 0.995007, 0.332433, 0.110556, 0.331669),
    (5.0, 0.999999, 0.999999, 0.200000, 0.040000, 0.200000),
]


@pytest.mark.parametrize("row", SPEC_TABLE)
def test_clipping_factors_spec_table(row):
    cp, *expected = row
    mu, nu = dpgd.clipping_factors(cp)
    measured = (mu, nu, mu / cp, nu / cp**2, nu / cp)
    for m, e in zip(measured, expected, strict=True):
        assert abs(m - e) <= 5e-7, (cp, m, e)  # half a unit of the 6th printed decimal


def mp_factors(cp):
    with mp.workdps(30):
        x = mp.mpf(cp)
        erf = mp.erf(x / mp.sqrt(2))
        nu = x**2 * mp.erfc(x / mp.sqrt(2)) + erf - mp.sqrt(2 / mp.pi) * x * mp.exp(-x**2 / 2)
        return erf, nu


def test_clipping_factors_against_mpmath():
    grid = np.concatenate([np.geomspace(1e-8, 40.0, 120), [0.5 - 1e-12, 0.5, 1.0, 38.0]])
    mu, nu = dpgd.clipping_factors(grid)
    for cp, m, n in zip(grid, mu, nu, strict=True):
        mu_ref, nu_ref = mp_factors(cp)
        assert abs(m / float(mu_ref) - 1) <= 1e-13, cp
        assert abs(n / float(nu_ref) - 1) <= 1e-12, cp


def test_clipping_factors_small_argument_keeps_relative_precision():
    # nu = c'^2 - (2/3) sqrt(2/pi) c'^3 + ...: the printed form cancels to nothing here
    cp = 1e-8
    _, nu = dpgd.clipping_factors(cp)
    assert abs(nu / (cp**2 - (2 / 3) * math.sqrt(2 / math.pi) * cp**3) - 1) <= 1e-14


def test_clipping_factors_shapes_and_limits():
    mu, nu = dpgd.clipping_factors(1.0)
    assert np.ndim(mu) == 0 and np.ndim(nu) == 0
    assert nu == pytest.approx(1 - math.sqrt(2 / (math.pi * math.e)), rel=1e-15)
    for shape in [(3,), (2, 3)]:
        mu, nu = dpgd.clipping_factors(np.full(shape, 0.7))
        assert mu.shape == shape and nu.shape == shape
    mu, nu = dpgd.clipping_factors([0.0, math.inf])
    assert list(mu) == [0.0, 1.0] and list(nu) == [0.0, 1.0]


@pytest.mark.parametrize("bad", [-1e-3, math.nan, [0.5, -1.0]])
def test_clipping_factors_reject_bad_input(bad):
    with pytest.raises(ValueError, match="c_prime must be in"):
        dpgd.clipping_factors(bad)


def test_lemma_b2_monotonicity():
    cp = np.geomspace(1e-6, 30, 2000)
    mu, nu = dpgd.clipping_factors(cp)
    assert np.all(np.diff(mu) >= 0) and np.all(np.diff(nu) >= 0)
    assert np.all(np.diff(mu / cp) <= 0) and np.all(np.diff(nu / cp**2) <= 0)
    assert (mu / cp)[0] == pytest.approx(math.sqrt(2 / math.pi), rel=1e-6)
    assert (nu / cp**2)[0] == pytest.approx(1.0, rel=1e-5)
    assert np.all((nu / cp**2)[cp <= 1] > 0.5) and np.all(nu[cp > 1] > 0.5)
    inside = cp <= 8  # beyond, 1 - mu < 1e-15 rounds to 1
    assert np.all(mu > 0) and np.all(mu[inside] < 1) and np.all(nu > 0) and np.all(nu[inside] < 1)


@given(clip=st.floats(0.01, 10), label_noise=st.floats(0.05, 3))
@PROFILE
def test_lemma_b2_monotonicity_in_risk(clip, label_noise):
    R = np.geomspace(1e-6, 1e3, 400)
    mu, nu = dpgd.clipping_factors(clip / np.sqrt(2 * R + label_noise**2))
    assert np.all(np.diff(mu) <= 0)  # mu_c(R) decreases
    assert np.all(np.diff(nu * (R + label_noise**2 / 2)) >= 0)  # nu_c(R)(R + zeta^2/2) increases


# ----------------------------------------------------------------------------------------------------------------
# The default solver against LSODA (rtol 1e-10) on random spectra and the paper's schedules
# ----------------------------------------------------------------------------------------------------------------


@st.composite
def spectra(draw):
    m = draw(st.integers(1, 8))
    values = sorted(set(draw(st.lists(st.floats(0.01, 5.0), min_size=m, max_size=m))))
    counts = draw(st.lists(st.integers(1, 40), min_size=len(values), max_size=len(values)))
    spectrum = Spectrum.from_eigenvalues(np.repeat(values, counts)).normalized()
    weights = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=spectrum.num_groups,
                                     max_size=spectrum.num_groups))) + 1e-3
    target = draw(st.floats(0.2, 2.0)) * weights / weights.sum()
    return spectrum, target


@st.composite
def schedules(draw, aspect_ratio):
    if draw(st.booleans()):
        alpha = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]))
        eta0 = 10 ** draw(st.floats(-1.0, math.log10(4.0 / aspect_ratio)))
        return Polynomial(initial_learning_rate=eta0, schedule_exponent=alpha)
    return Harmonic(harmonic_scale=10 ** draw(st.floats(-1.0, 3.0)), harmonic_offset=10 ** draw(st.floats(-3.0, 0.0)))


@st.composite
def problems(draw):
    spectrum, target = draw(spectra())
    aspect_ratio = 10 ** draw(st.floats(-3.0, 0.0))
    return dict(spectrum=spectrum, target_projections=target, aspect_ratio=aspect_ratio,
                learning_rate=draw(schedules(aspect_ratio)), clip=10 ** draw(st.floats(-1.0, 0.5)),
                rho=10 ** draw(st.floats(-0.5, 0.5)), label_noise=10 ** draw(st.floats(-1.0, 0.3)))


TIMES = np.linspace(0.0, 1.0, 11)


@given(problem=problems())
@settings(PROFILE, max_examples=60)
def test_default_solver_matches_lsoda(problem):
    trajectory = dpgd.solve_risk_ode(**problem, times=TIMES)
    spectrum, target = problem["spectrum"], problem["target_projections"]
    others = {k: v for k, v in problem.items() if k not in ("spectrum", "target_projections")}
    reference = reference_risk(spectrum, target, times=TIMES, **others)
    assert relative_error(trajectory.risk, reference) <= 1e-6
    assert trajectory.final_risk == trajectory.risk[-1]


@pytest.mark.parametrize("learning_rate", [
    Harmonic(harmonic_scale=1000.0, harmonic_offset=0.01),  # capped at 2/gamma until t ~ 0.49: a kink
    Harmonic(harmonic_scale=1.0, harmonic_offset=0.001),
    Polynomial(initial_learning_rate=1500.0, schedule_exponent=0.5),
    Polynomial(initial_learning_rate=800.0, schedule_exponent=3.5),
], ids=["harmonic-1000", "harmonic-tau-1e-3", "alpha-half", "alpha-3.5"])
def test_paper_schedules_on_a_power_law(learning_rate):
    spectrum = Spectrum.power_law(300, power_law_exponent=0.5)
    target = power_law_target(spectrum, target_exponent=0.25)
    kw = dict(aspect_ratio=1e-3, learning_rate=learning_rate, clip=1.0, rho=1.0, label_noise=1.0)
    times = np.array([0.0, 0.001, 0.01, 0.1, 0.3, 0.49, 0.5, 0.9, 0.999, 1.0])
    trajectory = dpgd.solve_risk_ode(spectrum=spectrum, target_projections=target, times=times, **kw)
    assert relative_error(trajectory.risk, reference_risk(spectrum, target, times=times, **kw)) <= 1e-6


def test_error_follows_the_tolerance():
    """H14 (d), (e): the error against the reference shrinks with rtol and stays within a few units of it."""
    spectrum = Spectrum.uniform(50)
    kw = dict(FIG1, learning_rate=Harmonic(harmonic_scale=2.0, harmonic_offset=0.05))
    reference = reference_risk(spectrum, isotropic_target(spectrum), times=TIMES, rtol=1e-12, **kw)
    errors = []
    for rtol in (1e-5, 1e-7, 1e-9):
        trajectory = dpgd.solve_risk_ode(spectrum=spectrum, target_projections=isotropic_target(spectrum),
                                         times=TIMES, rtol=rtol, **kw)
        errors.append(relative_error(trajectory.risk, reference))
        assert errors[-1] <= 10 * rtol, (rtol, errors[-1])
    assert errors[0] > errors[1] > errors[2]


def test_lsoda_method_agrees_and_reports_no_steps():
    spectrum = Spectrum.uniform(40)
    kw = dict(spectrum=spectrum, target_projections=isotropic_target(spectrum), times=TIMES, **FIG1,
              learning_rate=Polynomial(initial_learning_rate=3.0, schedule_exponent=1.0))
    fast = dpgd.solve_risk_ode(**kw)
    slow = dpgd.solve_risk_ode(**kw, method="lsoda", rtol=1e-10, atol=1e-14)
    assert relative_error(fast.risk, slow.risk) <= 1e-6
    assert slow.method == "lsoda" and slow.num_steps is None and slow.num_rhs_evaluations > 0
    assert fast.method == "exponential" and fast.num_steps > 0 and fast.num_rhs_evaluations >= fast.num_steps


# ----------------------------------------------------------------------------------------------------------------
# The paper's numbers: Figure 1 (spec §5) and Proposition 4.4
# ----------------------------------------------------------------------------------------------------------------

FIGURE1 = [  # panel, spectrum, alpha, R(0.25), R(0.5), R(0.75), R(1), final private risk
    ("iso, alpha=0", "identity", 0.0, 0.1878, 0.0624, 0.0233, 0.0122, 0.1922),
    ("unif, alpha=0", "uniform", 0.0, 0.1504, 0.0547, 0.0281, 0.0186, 0.1986),
    ("iso, alpha=1/2", "identity", 0.5, 0.2310, 0.1246, 0.0914, 0.0972, 0.0972),
    ("unif, alpha=1/2", "uniform", 0.5, 0.1882, 0.1032, 0.0826, 0.0915, 0.0915),
]


@pytest.mark.parametrize("panel", FIGURE1, ids=[p[0] for p in FIGURE1])
def test_figure1_ode_reference(panel):
    _, kind, alpha, *expected = panel
    d = 2000
    spectrum = Spectrum.identity(d) if kind == "identity" else Spectrum.uniform(d)  # lambda_i = 2(i - 1/2)/d
    trajectory = dpgd.solve_risk_ode(spectrum=spectrum, target_projections=isotropic_target(spectrum), **FIG1,
                                     learning_rate=Polynomial(initial_learning_rate=3.0, schedule_exponent=alpha),
                                     times=[0.25, 0.5, 0.75, 1.0])
    measured = [*trajectory.risk, trajectory.final_private_risk]
    for m, e in zip(measured, expected, strict=True):
        assert abs(m - e) <= 5e-5, (measured, expected)  # half a unit of the 4th printed decimal
    assert trajectory.final_jump == pytest.approx(0.18 if alpha == 0 else 0.0, abs=1e-15)


def test_final_jump_formulas():
    kw = dict(aspect_ratio=0.01, clip=0.7, rho=0.3)
    harmonic = Harmonic(harmonic_scale=5.0, harmonic_offset=0.2)
    assert dpgd.final_jump(learning_rate=harmonic, **kw) == pytest.approx(
        2 * 0.7**2 * (5.0 / 1.2) ** 2 * 0.01**2 / 0.3**2, rel=1e-14)
    assert dpgd.final_jump(learning_rate=Constant(initial_learning_rate=3.0), **kw) == pytest.approx(
        2 * 0.7**2 * 9 * 1e-4 / 0.09, rel=1e-14)
    assert dpgd.final_jump(learning_rate=Polynomial(initial_learning_rate=3.0, schedule_exponent=2.0), **kw) == 0.0


def test_final_private_risk_convenience():
    spectrum = Spectrum.uniform(30)
    kw = dict(spectrum=spectrum, target_projections=isotropic_target(spectrum), **FIG1,
              learning_rate=Harmonic(harmonic_scale=2.0, harmonic_offset=0.3))
    trajectory = dpgd.solve_risk_ode(**kw)
    assert dpgd.final_private_risk(**kw) == pytest.approx(trajectory.final_private_risk, rel=1e-7)
    assert trajectory.final_private_risk == trajectory.final_risk + trajectory.final_jump


# ----------------------------------------------------------------------------------------------------------------
# The scalar ODEs: (4.11) and the sandwich (4.12)
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("learning_rate", [Polynomial(initial_learning_rate=3.0, schedule_exponent=0.0),
                                           Polynomial(initial_learning_rate=3.0, schedule_exponent=0.5),
                                           Harmonic(harmonic_scale=0.5, harmonic_offset=0.02)])
def test_isotropic_ode_equals_grouped_identity(learning_rate):
    for d in (1, 1000):
        spectrum = Spectrum.identity(d)
        grouped = dpgd.solve_risk_ode(spectrum=spectrum, target_projections=isotropic_target(spectrum), **FIG1,
                                      learning_rate=learning_rate, times=TIMES, rtol=1e-10)
        scalar = dpgd.isotropic_risk_ode(initial_risk=0.5, **FIG1, learning_rate=learning_rate, times=TIMES,
                                         rtol=1e-10)
        assert relative_error(scalar.risk, grouped.risk) <= 1e-8
        assert scalar.final_states.shape == (1,) and scalar.final_states[0] == scalar.final_risk
        lsoda = dpgd.isotropic_risk_ode(initial_risk=0.5, **FIG1, learning_rate=learning_rate, times=TIMES,
                                        method="lsoda", rtol=1e-10, atol=1e-15)
        assert relative_error(scalar.risk, lsoda.risk) <= 1e-7


@given(problem=problems())
@settings(PROFILE, max_examples=30)
def test_sandwich_bounds_order(problem):
    cap = 2.0 / problem["aspect_ratio"]
    learning_rate = problem["learning_rate"]
    eta0 = float(learning_rate.value(0.0))
    if eta0 > cap:  # eq. (4.12) assumes no cap: rescale the schedule below it
        learning_rate = (Polynomial(initial_learning_rate=0.9 * cap, schedule_exponent=learning_rate.schedule_exponent)
                         if isinstance(learning_rate, Polynomial) else
                         Harmonic(harmonic_scale=0.9 * cap * learning_rate.harmonic_offset,
                                  harmonic_offset=learning_rate.harmonic_offset))
    problem = dict(problem, learning_rate=learning_rate)
    lower, upper = dpgd.sandwich_bounds(**problem, times=TIMES)
    risk = dpgd.solve_risk_ode(**problem, times=TIMES).risk
    slack = 1e-7 * risk
    assert np.all(lower.risk <= risk + slack) and np.all(risk <= upper.risk + slack)
    assert lower.risk[0] == risk[0] == upper.risk[0]


def test_sandwich_bounds_are_exact_for_the_identity():
    spectrum = Spectrum.identity(10)
    kw = dict(spectrum=spectrum, target_projections=isotropic_target(spectrum), **FIG1, times=TIMES,
              learning_rate=Polynomial(initial_learning_rate=3.0, schedule_exponent=1.0))
    lower, upper = dpgd.sandwich_bounds(**kw)
    risk = dpgd.solve_risk_ode(**kw).risk
    assert relative_error(lower.risk, risk) <= 1e-7 and relative_error(upper.risk, risk) <= 1e-7


def test_sandwich_bounds_reject_a_binding_cap():
    spectrum = Spectrum.uniform(10)
    with pytest.raises(ValueError, match=r"learning_rate must stay <= 2/aspect_ratio = 20.*value\(0\)=30"):
        dpgd.sandwich_bounds(spectrum=spectrum, target_projections=isotropic_target(spectrum), **FIG1,
                             learning_rate=Polynomial(initial_learning_rate=30.0, schedule_exponent=0.0))


# ----------------------------------------------------------------------------------------------------------------
# Edge cases of the time horizon
# ----------------------------------------------------------------------------------------------------------------


def test_custom_schedule_that_stops_early():
    """eta reaches 0 at t = 0.6 and stays there: R is constant afterwards (no descent, no noise)."""
    def function(t):
        return 2.0 * np.clip(1.0 - np.asarray(t) / 0.6, 0.0, None) ** 2

    def squared_derivative(t):
        u = np.clip(1.0 - np.asarray(t) / 0.6, 0.0, None)
        return -4.0 * 4.0 * u**3 / 0.6  # d/dt (2u^2)^2 = 4 d(u^4)/dt = -16 u^3 / 0.6

    learning_rate = Custom(function, squared_derivative)
    spectrum = Spectrum.uniform(20)
    times = np.array([0.0, 0.3, 0.59, 0.6, 0.8, 1.0])
    trajectory = dpgd.solve_risk_ode(spectrum=spectrum, target_projections=isotropic_target(spectrum), **FIG1,
                                     learning_rate=learning_rate, times=times)
    reference = reference_risk(spectrum, isotropic_target(spectrum), times=times, learning_rate=learning_rate,
                               **FIG1)
    assert relative_error(trajectory.risk, reference) <= 1e-6
    assert trajectory.risk[-1] == trajectory.risk[-2] == trajectory.risk[-3] and trajectory.final_jump == 0.0


def test_schedule_exponent_below_one_half_runs():
    """alpha = 0.3 (outside Assumption 2): sigma^2 blows up at t = 1 but is integrable; R(1) is still the limit."""
    with pytest.warns(OutsideTheoryWarning):
        learning_rate = Polynomial(initial_learning_rate=3.0, schedule_exponent=0.3)
    spectrum = Spectrum.uniform(20)
    times = np.array([0.5, 0.99, 1.0 - 1e-6])
    trajectory = dpgd.solve_risk_ode(spectrum=spectrum, target_projections=isotropic_target(spectrum), **FIG1,
                                     learning_rate=learning_rate, times=[*times, 1.0])
    reference = reference_risk(spectrum, isotropic_target(spectrum), times=times, learning_rate=learning_rate,
                               **FIG1)
    assert relative_error(trajectory.risk[:-1], reference) <= 1e-6
    assert trajectory.final_risk >= trajectory.risk[-2]  # the last bit of noise still arrives
    assert trajectory.final_risk - trajectory.risk[-2] <= 1e-3


def test_trajectory_is_frozen_with_read_only_arrays():
    spectrum = Spectrum.uniform(5)
    trajectory = dpgd.solve_risk_ode(spectrum=spectrum, target_projections=isotropic_target(spectrum), **FIG1,
                                     learning_rate=Constant(initial_learning_rate=1.0))
    assert trajectory.times.shape == trajectory.risk.shape == (101,)
    assert trajectory.final_states.shape == (5,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        trajectory.final_risk = 0.0
    with pytest.raises(ValueError):
        trajectory.risk[0] = 1.0
    assert trajectory.risk[0] == pytest.approx(0.5 * np.sum(spectrum.eigenvalues * isotropic_target(spectrum)))


# ----------------------------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------------------------

SMALL = Spectrum.uniform(4)
VALID = dict(spectrum=SMALL, target_projections=isotropic_target(SMALL), aspect_ratio=0.1, clip=1.0, rho=1.0,
             label_noise=0.3, learning_rate=Constant(initial_learning_rate=1.0))


@pytest.mark.parametrize(("name", "value", "message"), [
    ("clip", 0.0, "clip must be > 0; got clip=0.0"),
    ("clip", -1.0, "clip must be > 0"),
    ("rho", 0.0, "rho must be > 0; got rho=0.0"),
    ("rho", -2.0, "rho must be > 0"),
    ("aspect_ratio", 0.0, "aspect_ratio must be > 0"),
    ("aspect_ratio", -0.1, "aspect_ratio must be > 0"),
    ("label_noise", -0.1, "label_noise must be >= 0; got label_noise=-0.1"),
    ("clip", math.nan, "clip must be finite"),
    ("times", [0.5, 0.2], "times must be strictly increasing"),
    ("times", [0.0, 1.5], r"times must be in \[0.0, 1.0\]"),
    ("method", "rk45", "method must be one of 'exponential', 'lsoda'"),
    ("rtol", 0.0, "rtol must be in"),
    ("target_projections", [0.1, 0.2], r"target_projections must have shape \(m,\) = \(4,\)"),
    ("target_projections", [0.1, -0.2, 0.1, 0.1], "target_projections must be >= 0"),
])
def test_invalid_arguments_name_the_parameter(name, value, message):
    for function in (dpgd.solve_risk_ode, dpgd.final_private_risk):
        with pytest.raises(ValueError, match=message):
            function(**dict(VALID, **{name: value}))


def test_invalid_types():
    with pytest.raises(TypeError, match="learning_rate must be a privdyn.schedules.LearningRate"):
        dpgd.solve_risk_ode(**dict(VALID, learning_rate=lambda t: 1.0))
    with pytest.raises(TypeError, match="spectrum must be a privdyn.spectra.Spectrum"):
        dpgd.solve_risk_ode(**dict(VALID, spectrum=np.ones(4)))
    with pytest.raises(TypeError, match="clip must be a real scalar"):
        dpgd.solve_risk_ode(**dict(VALID, clip=np.ones(2)))


def test_zero_label_noise_runs_with_a_warning():
    with pytest.warns(OutsideTheoryWarning, match=r"label_noise=0 .*Assumption 1 needs label_noise \(zeta\) > 0"):
        trajectory = dpgd.solve_risk_ode(**dict(VALID, label_noise=0.0, times=TIMES))
    assert np.all(np.isfinite(trajectory.risk)) and np.all(np.diff(trajectory.risk) < 0)


def test_unnormalized_spectrum_warns():
    spectrum = Spectrum.from_eigenvalues([1.0, 3.0])  # trace 4 != d = 2
    with pytest.warns(OutsideTheoryWarning, match="tr\\(Sigma\\) = d"):
        dpgd.solve_risk_ode(**dict(VALID, spectrum=spectrum, target_projections=[0.5, 0.5]))


def test_no_warning_in_the_normal_case():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dpgd.solve_risk_ode(**VALID)


def test_reference_rhs_matches_the_closed_form_factors():
    """Guard for the oracle above: its inline mu, nu equal clipping_factors."""
    for cp in (0.3, 1.0, 4.0):
        nu = cp**2 * special.erfc(cp / math.sqrt(2)) + special.erf(cp / math.sqrt(2)) \
            - math.sqrt(2 / math.pi) * cp * math.exp(-cp**2 / 2)
        assert dpgd.clipping_factors(cp)[1] == pytest.approx(nu, rel=1e-14)


@pytest.mark.parametrize("learning_rate", [Constant(1.3), Harmonic(harmonic_scale=1000.0, harmonic_offset=0.01),
                                           Polynomial(1.0, 0.5), Polynomial(2.0, 0.0), Polynomial(3.0, 1.0),
                                           Polynomial(3.0, 2.5)])
def test_solver_schedule_equals_the_schedule_methods(learning_rate):
    """The solver evaluates the closed-form schedules without their input checks: the values must be identical."""
    from privdyn.dynamics.dpgd.system import _schedule

    t = np.concatenate([[0.0, 0.5, 1.0 - 1e-16, 1.0], np.random.default_rng(1).uniform(0.0, 1.0, 50)])
    eta, slope = _schedule(learning_rate, t)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(eta, learning_rate.value(t))
        np.testing.assert_array_equal(slope, learning_rate.squared_derivative(t))
