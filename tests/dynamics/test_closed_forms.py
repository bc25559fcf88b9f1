"""Tests of privdyn.dynamics.closed_forms (arXiv 2505.16329: E_beta of Lemma D.2, the surrogate risks (D.89), (D.54),
Lemma D.5 and (5.7)-(5.8)).

Independent oracles (STYLE H14): scipy ``solve_ivp`` (DOP853, rtol 1e-13) on the surrogate ODEs; scipy ``quad`` of
the integral formula (D.101); mpmath quadrature of the definition (D.9) of E_beta; the literal formula (D.54).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, special

from privdyn.dynamics import closed_forms

# ----------------------------------------------------------------------------------------------------------------
# E_beta (Lemma D.2)
# ----------------------------------------------------------------------------------------------------------------


def mp_expint(beta, x):
    mp.mp.dps = 40
    return mp.quad(lambda t: mp.exp(-x * t) * t ** (-beta), [1, 2, 10, mp.inf])


@pytest.mark.parametrize("beta", [-6.0, -1.0, -2 / 3, -1 / 3, 0.0, 1 / 3, 0.5, 0.9, 0.999])
@pytest.mark.parametrize("x", [1e-8, 1e-3, 0.1, 0.5, 1.0, 1.7, 3.0, 10.0, 50.0, 300.0])
def test_generalized_exponential_integral_vs_mpmath(beta, x):
    got = closed_forms.generalized_exponential_integral(beta, x)
    want = float(mp_expint(mp.mpf(beta), mp.mpf(x)))
    assert got == pytest.approx(want, rel=1e-12)


def test_generalized_exponential_integral_limits_and_shapes():
    x = np.logspace(-6, 2.5, 60)
    for beta in (-3.0, -0.5, 0.0, 0.4, 0.8):
        e = closed_forms.generalized_exponential_integral(beta, x)
        assert e.shape == x.shape
        assert np.all(e <= special.gamma(1 - beta) * x ** (beta - 1) * (1 + 1e-12))        # (D.12)
        ok = (x >= -2 * beta) if beta < 0 else np.ones_like(x, dtype=bool)
        assert np.all(e[ok] <= 2 * np.exp(-x[ok]) / x[ok] * (1 + 1e-12))                   # (D.13)
        # (D.10): x^(1-beta) E_beta(x) = Gamma(1-beta, x) = Gamma(1-beta) - x^(1-beta)/(1-beta) + O(x^(2-beta))
        limit_error = x[0] ** (1 - beta) * e[0] - special.gamma(1 - beta)
        assert limit_error == pytest.approx(-x[0] ** (1 - beta) / (1 - beta), rel=1e-4)
    assert closed_forms.generalized_exponential_integral(0.5, 0.0) == np.inf
    assert closed_forms.generalized_exponential_integral(0.0, 2.0) == pytest.approx(math.exp(-2) / 2)  # E_0 = e^-x / x
    # very negative beta: log-space evaluation, no spurious overflow (Gamma(101) alone is 9e157)
    assert closed_forms.generalized_exponential_integral(-100.0, 5.0) == pytest.approx(
        float(mp_expint(mp.mpf(-100), mp.mpf(5))), rel=1e-12)
    assert closed_forms.generalized_exponential_integral(0.2, 800.0) == 0.0  # clean underflow
    assert closed_forms.generalized_exponential_integral(np.array([0.1, 0.2]), np.array([[1.0], [2.0]])).shape == (2, 2)
    with pytest.raises(ValueError, match="beta"):
        closed_forms.generalized_exponential_integral(1.0, 1.0)
    with pytest.raises(ValueError, match="x"):
        closed_forms.generalized_exponential_integral(0.5, -1.0)


# ----------------------------------------------------------------------------------------------------------------
# Surrogate closed forms vs solve_ivp / quadrature
# ----------------------------------------------------------------------------------------------------------------

T_EVAL = np.array([0.0, 1e-4, 0.05, 0.3, 0.5, 0.77, 0.95, 0.999, 1.0])


def ivp(rhs, y0, t_eval, t_end=1.0):
    sol = integrate.solve_ivp(rhs, (0.0, t_end), [y0], method="DOP853", t_eval=t_eval, rtol=1e-13, atol=1e-16)
    assert sol.success
    return sol.y[0]


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.75, 1.0, 2.0, 3.5])
@pytest.mark.parametrize("a, b1, b2, r0", [(3.0, 0.2, 0.05, 0.5), (40.0, 1e-3, 1e-4, 0.5), (0.3, 1.0, 2.0, 0.0),
                                           (400.0, 0.02, 0.3, 1.0)])
def test_polynomial_surrogate_vs_solve_ivp(alpha, a, b1, b2, r0):
    if alpha == 0.0:
        b2 = 0.0

    def rhs(t, r):
        u = max(1.0 - t, 0.0)
        noise = b2 * u ** (2 * alpha - 1) if b2 else 0.0
        return -a * u**alpha * r + b1 * u ** (2 * alpha) + noise

    got = closed_forms.polynomial_surrogate_risk(T_EVAL, a=a, b1=b1, b2=b2, schedule_exponent=alpha, initial_risk=r0)
    want = ivp(rhs, r0, T_EVAL)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-14)
    assert got.shape == T_EVAL.shape


def d54_literal(t, *, a, b1, b2, r0):
    """(D.54) as printed, with E_beta from privdyn (valid for t < 1)."""
    E = closed_forms.generalized_exponential_integral
    u = 1.0 - t
    X, A = 2 * a * u**1.5 / 3, 2 * a / 3
    return r0 / 3 * math.exp(-2 * a * (1 - u**1.5) / 3) * (
        3 - 2 / r0 * b1 * math.exp(A) * (E(-1 / 3, A) - u**2 * E(-1 / 3, X))
        - 2 / r0 * b2 * math.exp(A) * (E(1 / 3, A) - u * E(1 / 3, X)))


def test_constant_noise_surrogate_is_d54():
    for a, b1, b2 in [(2.0, 0.3, 0.1), (15.0, 0.01, 0.002), (60.0, 1e-3, 1e-5)]:
        for t in (0.0, 0.2, 0.6, 0.9, 0.999):
            got = closed_forms.constant_noise_surrogate_risk(t, a=a, b1=b1, b2=b2, initial_risk=0.5)
            assert got == pytest.approx(d54_literal(t, a=a, b1=b1, b2=b2, r0=0.5), rel=1e-10)
            assert got == pytest.approx(closed_forms.polynomial_surrogate_risk(
                t, a=a, b1=b1, b2=b2, schedule_exponent=0.5, initial_risk=0.5), rel=1e-15)


def test_polynomial_surrogate_validation_and_large_a():
    # large a: no overflow, and R(1) -> b1 A^{-s1} Gamma(s1) / p + b2 A^{-s2} Gamma(s2) / p (stationary forcing)
    a, b1, b2, alpha = 1e5, 1e-3, 1e-4, 2.0
    r1 = closed_forms.polynomial_surrogate_risk(1.0, a=a, b1=b1, b2=b2, schedule_exponent=alpha, initial_risk=0.5)
    p = 1 + alpha
    A = a / p
    s1, s2 = 2 - 1 / p, 2 * alpha / p
    assert r1 == pytest.approx((b1 * A**-s1 * special.gamma(s1) + b2 * A**-s2 * special.gamma(s2)) / p, rel=1e-9)
    with pytest.raises(ValueError, match="b2"):
        closed_forms.polynomial_surrogate_risk(0.5, a=1.0, b1=0.1, b2=0.1, schedule_exponent=0.0, initial_risk=0.5)
    with pytest.raises(ValueError, match="t must be in"):
        closed_forms.polynomial_surrogate_risk(1.5, a=1.0, b1=0.1, b2=0.1, schedule_exponent=1.0, initial_risk=0.5)
    with pytest.raises(ValueError, match="a must be > 0"):
        closed_forms.polynomial_surrogate_risk(0.5, a=0.0, b1=0.1, b2=0.1, schedule_exponent=1.0, initial_risk=0.5)
    with pytest.raises(ValueError, match="initial_risk"):
        closed_forms.polynomial_surrogate_risk(0.5, a=1.0, b1=0.1, b2=0.1, schedule_exponent=1.0, initial_risk=-1)


def d101_quadrature(t, *, a, b1, b2, beta, tau, r0):
    """The integral formula (D.101) by scipy quad (F(t) = beta ln(1 + t/tau))."""
    F = lambda s: beta * math.log1p(s / tau)  # noqa: E731
    eta = lambda s: beta / (s + tau)  # noqa: E731
    deta = lambda s: -beta / (s + tau) ** 2  # noqa: E731
    integrand = lambda s: math.exp(a * (F(s) - F(t))) * (b1 * eta(s) ** 2 - 2 * b2 * eta(s) * deta(s))  # noqa: E731
    val, _ = integrate.quad(integrand, 0.0, t, epsabs=0, epsrel=1e-13, limit=400, points=[min(tau, t / 2)])
    return r0 * math.exp(-a * F(t)) + val


@pytest.mark.parametrize("k", [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 7.5])
@pytest.mark.parametrize("beta, tau", [(2.0, 0.5), (20.0, 0.01)])
def test_harmonic_surrogate_vs_quadrature_and_solve_ivp(k, beta, tau):
    a, b1, b2, r0 = k / beta, 0.03, 0.002, 0.5
    t_eval = np.array([0.0, 1e-3, 0.1, 0.5, 1.0, 3.0])
    got = closed_forms.harmonic_surrogate_risk(t_eval, a=a, b1=b1, b2=b2, harmonic_scale=beta, harmonic_offset=tau,
                                               initial_risk=r0)
    quad = [d101_quadrature(t, a=a, b1=b1, b2=b2, beta=beta, tau=tau, r0=r0) for t in t_eval]
    np.testing.assert_allclose(got, quad, rtol=1e-10)

    def rhs(t, r):
        eta = beta / (t + tau)
        return -a * eta * r + b1 * eta**2 + b2 * 2 * beta**2 / (t + tau) ** 3

    np.testing.assert_allclose(got, ivp(rhs, r0, t_eval, t_end=3.0), rtol=1e-9)
    if k > 2:  # the printed closed form of the proof of Theorem 2
        t = 0.7
        printed = (tau / (t + tau)) ** k * (
            r0 + b1 * beta**2 * ((t + tau) ** (k - 1) - tau ** (k - 1)) / (tau**k * (k - 1))
            + 2 * b2 * beta**2 * ((t + tau) ** (k - 2) - tau ** (k - 2)) / (tau**k * (k - 2)))
        assert closed_forms.harmonic_surrogate_risk(t, a=a, b1=b1, b2=b2, harmonic_scale=beta, harmonic_offset=tau,
                                                    initial_risk=r0) == pytest.approx(printed, rel=1e-12)


def test_harmonic_surrogate_near_removable_singularities_is_continuous():
    kw = dict(b1=0.1, b2=0.01, harmonic_scale=4.0, harmonic_offset=0.05, initial_risk=0.5)
    for k in (1.0, 2.0):
        at = closed_forms.harmonic_surrogate_risk(1.0, a=k / 4.0, **kw)
        for eps in (1e-6, 1e-9, 1e-12):
            near = closed_forms.harmonic_surrogate_risk(1.0, a=(k + eps) / 4.0, **kw)
            assert near == pytest.approx(at, rel=1e-5)
    with pytest.raises(ValueError, match="harmonic_offset"):
        closed_forms.harmonic_surrogate_risk(0.5, a=1.0, **{**kw, "harmonic_offset": 0.0})
    with pytest.raises(ValueError, match="t must be in"):
        closed_forms.harmonic_surrogate_risk(-0.1, a=1.0, **kw)


def test_output_perturbation_surrogate_vs_solve_ivp():
    for v, g, rho in [(2.0, 0.1, 1.0), (7.0, 1e-3, 0.1), (25.0, 1e-6, 1e-2)]:
        r1 = ivp(lambda t, r, v=v, g=g: -v * r + v**2 * g, 0.5, [1.0])[0]  # (5.7)
        got = closed_forms.output_perturbation_surrogate_risk(initial_risk=0.5, initial_learning_rate=v / 0.1, clip=0.1,
                                                              aspect_ratio=g, rho=rho)
        assert got == pytest.approx(r1 + v**2 * g**2 / rho**2, rel=1e-10)
    out = closed_forms.output_perturbation_surrogate_risk(initial_risk=0.5, initial_learning_rate=np.array([1.0, 2.0]),
                                                          clip=1.0, aspect_ratio=np.array([[0.1], [0.01]]), rho=1.0)
    assert out.shape == (2, 2)
    with pytest.raises(ValueError, match="clip"):
        closed_forms.output_perturbation_surrogate_risk(initial_risk=0.5, initial_learning_rate=1.0, clip=-1.0,
                                                        aspect_ratio=0.1, rho=1.0)
