"""The kan paper's risk bounds: closed-form spot values, the explicit constant, conditions as margins, schedules."""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from privdyn.bounds import kan
from privdyn.privacy.correlated_calibration import noise_multiplier_theorem_d9, noise_multiplier_theorem_f12

mp.mp.dps = 40

SIG = kan.kan_constants(activation="sigmoid", grid_size=5)
TANH = kan.kan_constants(activation="tanh", grid_size=5)


def _explicit_c(bs1, bs2, grid):
    """The explicit C_{sigma,b} for the cubic basis on [-1, 1] (B_b = 2/3, B'_b = G/3, B''_b = G^2/2)."""
    bb, bb1, bb2 = mp.mpf(2) / 3, mp.mpf(grid) / 3, mp.mpf(grid) ** 2 / 2
    g1 = bs1 * bb * bb1
    h = bb**2 * (bs2 * bb1 + bs1**2 * bb2)
    return max(4 * g1, 4 * h, 9 * g1**2 + 6 * h), g1, h


# ---------------------------------------------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------------------------------------------


def test_activation_bounds_are_the_suprema():
    u = np.linspace(-40, 40, 4_000_001)
    s = 1 / (1 + np.exp(-u))
    sig = (np.max(np.abs(s)), np.max(s * (1 - s)), np.max(np.abs(s * (1 - s) * (1 - 2 * s))))
    t = np.tanh(u)
    tnh = (np.max(np.abs(t)), np.max(1 - t**2), np.max(np.abs(-2 * t * (1 - t**2))))
    for name, grid_max in (("sigmoid", sig), ("tanh", tnh)):
        bound = kan.activation_bounds(name)
        for b, g in zip(bound, grid_max, strict=True):  # the value bound 1 is a limit at infinity
            assert g <= b * (1 + 1e-12)
            assert g >= b * (1 - 1e-6)


@pytest.mark.parametrize("grid", [3, 5, 10])
def test_explicit_constant_closed_form(grid):
    sig = kan.kan_constants(activation="sigmoid", grid_size=grid)
    c, g1, h = _explicit_c(mp.mpf(1) / 4, 1 / (6 * mp.sqrt(3)), grid)
    assert sig.num_basis == grid + 3
    assert sig.gradient_constant == pytest.approx(float(g1), rel=1e-14)
    assert sig.hessian_constant == pytest.approx(float(h), rel=1e-14)
    assert sig.c_sigma_b == pytest.approx(float(c), rel=1e-14)
    assert sig.smoothness == pytest.approx(float(c) * (grid + 3) ** 3, rel=1e-14)
    assert sig.max_step_size == pytest.approx(1 / (12 * float(c) * (grid + 3) ** 3), rel=1e-14)
    tnh = kan.kan_constants(activation="tanh", grid_size=grid)
    c, _, _ = _explicit_c(mp.mpf(1), 4 / (3 * mp.sqrt(3)), grid)
    assert tnh.c_sigma_b == pytest.approx(float(c), rel=1e-14)


def test_gradient_bound_matches_reference_values():
    # values computed independently from eq. (5), printed to 3 digits: G=5 cubic (p=8), delta=1e-5:
    # 27.1 / 25.6 (sigmoid, m=64 / 1024), 108 / 103 (tanh)
    for consts, width, printed in ((SIG, 64, 27.1), (SIG, 1024, 25.6), (TANH, 64, 108.0), (TANH, 1024, 103.0)):
        value = kan.gradient_bound(consts, width=width, failure_prob=1e-5)
        assert value == pytest.approx(printed, abs=0.051 * (1 if printed < 100 else 10))
        p = mp.mpf(8)
        exact = (mp.mpf(consts.gradient_constant) * p
                 * (4 * mp.sqrt(p) + 2 * mp.sqrt(mp.log(2 / mp.mpf("1e-5")) / width)))
        assert value == pytest.approx(float(exact), rel=1e-14)


def test_hessian_and_output_bounds_closed_form():
    p, m, dl, n = mp.mpf(8), 100, mp.mpf("1e-3"), 500
    hess = mp.mpf(SIG.hessian_constant) * p**1.5 * (4 * mp.sqrt(p) + 2 * mp.sqrt(mp.log(2 * m / dl))) / mp.sqrt(m)
    assert kan.hessian_bound(SIG, width=m, failure_prob=1e-3) == pytest.approx(float(hess), rel=1e-14)
    out = mp.mpf(2) / 3 * mp.sqrt(2 * p * mp.log(2 * n / dl))
    assert kan.initial_output_bound(SIG, n=n, failure_prob=1e-3) == pytest.approx(float(out), rel=1e-14)
    a, b = kan.stability_constants(SIG, width=m, failure_prob=1e-3)
    c = mp.mpf(SIG.c_sigma_b)
    assert a == pytest.approx(float(2 * c * p**1.5 * (mp.sqrt(mp.log(m / dl)) + mp.sqrt(p)) / mp.sqrt(m)), rel=1e-13)
    assert b == pytest.approx(float(c * p * (mp.sqrt(p) + mp.sqrt(mp.log(1 / dl) / m))), rel=1e-13)


@given(width=st.integers(1, 10**7), log10_dl=st.floats(-12.0, math.log10(2 ** (-1 / 3))),
       grid=st.sampled_from([3, 5, 10]), activation=st.sampled_from(["sigmoid", "tanh"]))
def test_explicit_constant_turns_eqs_3_4_into_lemmas_b6_b7(width, log10_dl, grid, activation):
    consts = kan.kan_constants(activation=activation, grid_size=grid)
    dl = 10.0**log10_dl
    assume(all(c.holds for c in kan.explicit_constant_conditions(width=width, failure_prob=dl)))
    p, c, m = consts.num_basis, consts.c_sigma_b, width
    grad = kan.gradient_bound(consts, width=m, failure_prob=dl)  # eq. (3)
    hess = kan.hessian_bound(consts, width=m, failure_prob=dl)  # eq. (4)
    rel = 1 + 1e-12
    assert grad <= rel * c * p * (math.sqrt(p) + math.sqrt(math.log(1 / dl) / m))  # Lemma B.6, gradient
    assert hess <= rel * c * p**1.5 * (math.sqrt(p) + math.sqrt(math.log(m / dl))) / math.sqrt(m)  # Lemma B.6
    assert grad**2 / 4 + hess <= rel * c * p**3  # Lemma B.7: lambda_max <= C p^3


def test_explicit_constant_conditions_flip():
    cond = kan.explicit_constant_conditions(width=10, failure_prob=2 ** (-1 / 3))[0]
    assert cond.holds and cond.margin == 0.0
    cond = kan.explicit_constant_conditions(width=10, failure_prob=np.nextafter(2 ** (-1 / 3), 1))[0]
    assert not cond.holds
    # width >= log(2 width / delta): at delta = 2 / e^2, width = 2 is the equality
    w = kan.explicit_constant_conditions(width=2, failure_prob=4 / math.e**2)[1]
    assert w.margin == pytest.approx(0.0, abs=1e-15)


# ---------------------------------------------------------------------------------------------------------------
# events (Monte Carlo, z = 5)
# ---------------------------------------------------------------------------------------------------------------


def test_coefficient_event_probability():
    rng = np.random.default_rng(11)
    draws, dl, m, p = 4000, 0.5, 6, 4
    hits = 0
    for _ in range(draws):
        conds = kan.initialization_event(rng.normal(size=(m, p)), failure_prob=dl)
        hits += all(c.holds for c in conds)
    freq = hits / draws
    se = math.sqrt(max(freq * (1 - freq), 1 / draws) / draws)
    assert freq >= 1 - dl - 5 * se  # Lemma B.5: P(E_delta) >= 1 - delta
    c = rng.normal(size=(m, p))
    total, unit = kan.initialization_event(c, failure_prob=dl)
    assert total.lhs == pytest.approx(np.linalg.norm(c))
    assert unit.lhs == pytest.approx(np.max(np.linalg.norm(c, axis=1)))
    assert (total.rhs, unit.rhs) == kan.coefficient_norm_thresholds(num_basis=p, width=m, failure_prob=dl)


def test_noise_norm_event_probability():
    rng = np.random.default_rng(12)
    dim, steps, dl, draws = 3, 5, 0.5, 4000
    z, vz = kan.noise_norm_bounds(noise_dim=dim, num_steps=steps, failure_prob=dl)
    assert z == pytest.approx(math.sqrt(3) + math.sqrt(2 * math.log(20)), rel=1e-14)
    assert vz == pytest.approx(12 + 2 * math.sqrt(12 * math.log(4)) + 2 * math.log(4), rel=1e-14)
    noise = rng.normal(size=(draws, steps, dim))
    norms = np.linalg.norm(noise, axis=2)
    ok = (norms.max(axis=1) <= z) & ((norms[:, :-1] ** 2).sum(axis=1) <= vz)  # Z_0 = 0: sum of Z_1..Z_{T-1}
    freq = ok.mean()
    se = math.sqrt(max(freq * (1 - freq), 1 / draws) / draws)
    assert freq >= 1 - dl - 5 * se  # Lemma C.5


def test_check_inputs():
    assert kan.check_inputs([[0.6, 0.8], [0.1, 0.0]]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match=r"x must lie in the unit ball.*x\[1\]"):
        kan.check_inputs([[0.1, 0.0], [0.8, 0.7]])
    with pytest.raises(ValueError, match="x must be finite"):
        kan.check_inputs([[np.nan, 0.0]])


# ---------------------------------------------------------------------------------------------------------------
# Lemma C.11
# ---------------------------------------------------------------------------------------------------------------

# the explicit constants need a huge width: nu (Rbar + eta c z)^2 <= 1/2 with nu ~ C p^{3/2} (...) / sqrt(m)
C11 = dict(d=4, width=10**11, num_steps=50, batch_size=20, step_size=2e-5, noise_multiplier=0.01,
           noise_correlation=0.6, clip=30.0, projection_radius=40.0, shifted_radius=10.0, comparator_distance=3.0,
           comparator_loss=0.02, failure_prob=0.04)


def _c11_by_hand(kw):
    p, beta = mp.mpf(8), mp.mpf(SIG.c_sigma_b) * 512
    m, d, t, b = (mp.mpf(kw[k]) for k in ("width", "d", "num_steps", "batch_size"))
    eta, kappa, lam, clip = (mp.mpf(kw[k]) for k in ("step_size", "noise_multiplier", "noise_correlation", "clip"))
    rbar, dist, loss = (mp.mpf(kw[k]) for k in ("shifted_radius", "comparator_distance", "comparator_loss"))
    dl = mp.mpf(kw["failure_prob"]) / 4
    g = mp.mpf(SIG.gradient_constant) * p * (4 * mp.sqrt(p) + 2 * mp.sqrt(mp.log(2 / dl) / m))
    c = clip * kappa / b
    dim = m * d * p
    z = mp.sqrt(dim) + mp.sqrt(2 * mp.log(2 * t / dl))
    vz = (t - 1) * dim + 2 * mp.sqrt((t - 1) * dim * mp.log(2 / dl)) + 2 * mp.log(2 / dl)
    vd = 2 * t * g**2 / b + 8 * g**2 * mp.log(1 / dl)
    lg = mp.log(6 / dl)
    big_m = (4 * mp.sqrt(2) * eta * g * rbar * mp.sqrt(t * lg / b) + 4 * (1 - lam) * eta * c * rbar * mp.sqrt(t * lg)
             + 4 * (1 - lam) * eta**2 * c * g * mp.sqrt(vz * lg / b))
    value = (8 * loss + 3 * dist**2 / (eta * t) + 3 * big_m / (eta * t) + 6 * eta * vd / t
             + 3 * ((1 - lam) ** 2 * eta + 12 * beta * lam**2 * eta**2) * c**2 * vz / t)
    lhs10 = (dist**2 + mp.mpf(8) / 3 * eta * t * loss + big_m + 2 * eta**2 * vd
             + ((1 - lam) ** 2 * eta**2 * c**2 + 12 * beta * lam**2 * eta**3 * c**2) * vz)
    nu = mp.mpf(SIG.c_sigma_b) * p**1.5 * (mp.sqrt(mp.log(m / dl)) + mp.sqrt(p)) / mp.sqrt(m)
    return dict(value=value, lhs10=lhs10, g=g, z=z, c=c, nu=nu, big_m=big_m)


def test_lemma_c11_closed_form():
    r = kan.lemma_c11_bound(SIG, **C11)
    ref = _c11_by_hand(C11)
    assert r.value == pytest.approx(float(ref["value"]), rel=1e-12)
    assert r.guarantee == "bound" and r.quantity == "optimization_risk" and r.failure_prob == pytest.approx(0.04)
    assert r.condition("self_consistency").lhs == pytest.approx(float(ref["lhs10"]), rel=1e-12)
    assert r.condition("self_consistency").margin == pytest.approx(10.0**2 - float(ref["lhs10"]), rel=1e-12)
    assert r.condition("clipping_inactive").margin == pytest.approx(30.0 - float(ref["g"]), rel=1e-12)
    reach = 10.0 + 2e-5 * float(ref["c"]) * float(ref["z"])
    assert r.condition("localization_width").lhs == pytest.approx(float(ref["nu"]) * reach**2, rel=1e-12)
    assert r.condition("projection_radius").lhs == pytest.approx(reach + 3.0, rel=1e-12)
    assert r.satisfied, [c for c in r.conditions if not c.holds]


def test_lemma_c11_margins_flip_where_the_condition_flips():
    base = kan.lemma_c11_bound(SIG, **C11)
    edge = base.condition("projection_radius").lhs
    assert kan.lemma_c11_bound(SIG, **{**C11, "projection_radius": edge}).condition("projection_radius").holds
    assert not kan.lemma_c11_bound(SIG, **{**C11, "projection_radius": np.nextafter(edge, 0)}).condition(
        "projection_radius").holds
    g = base.condition("clipping_inactive").lhs
    assert kan.lemma_c11_bound(SIG, **{**C11, "clip": g}).condition("clipping_inactive").margin == 0.0
    assert not kan.lemma_c11_bound(SIG, **{**C11, "clip": np.nextafter(g, 0)}).condition("clipping_inactive").holds
    eta_max = SIG.max_step_size
    assert kan.lemma_c11_bound(SIG, **{**C11, "step_size": eta_max}).condition("step_size").holds
    assert not kan.lemma_c11_bound(SIG, **{**C11, "step_size": np.nextafter(eta_max, 1)}).condition(
        "step_size").holds
    # condition (10) is a + b Rbar <= Rbar^2 (M is affine in Rbar): it flips at the positive root
    lhs_at = {r: float(_c11_by_hand({**C11, "shifted_radius": r})["lhs10"]) for r in (1.0, 2.0)}
    slope = lhs_at[2.0] - lhs_at[1.0]
    intercept = lhs_at[1.0] - slope
    root = (slope + math.sqrt(slope**2 + 4 * intercept)) / 2
    above = kan.lemma_c11_bound(SIG, **{**C11, "shifted_radius": root * (1 + 1e-9)})
    below = kan.lemma_c11_bound(SIG, **{**C11, "shifted_radius": root * (1 - 1e-9)})
    assert above.condition("self_consistency").holds and not below.condition("self_consistency").holds


def test_lemma_c11_is_monotone():
    values = [kan.lemma_c11_bound(SIG, **{**C11, "num_steps": t}).value for t in (50, 100, 200)]
    assert values[0] > values[1] > values[2] > 0  # the noise term grows like V_Z / T ~ D: dominated here by 1/T
    widths = [kan.lemma_c11_bound(SIG, **{**C11, "width": m}).value for m in (10**10, 10**11, 10**12)]
    assert widths[0] < widths[1] < widths[2]
    kappas = [kan.lemma_c11_bound(SIG, **{**C11, "noise_multiplier": k}).value for k in (0.0, 0.5, 1.0)]
    assert kappas[0] < kappas[1] < kappas[2]


# ---------------------------------------------------------------------------------------------------------------
# the rates A_corr, A_van, A_non and the population bounds
# ---------------------------------------------------------------------------------------------------------------

RATE = dict(d=16, width=300, num_steps=400, step_size=0.05, batch_size=64, noise_multiplier=2.0,
            noise_correlation=0.3, ntk_margin=0.4)


def test_a_corr_closed_form():
    m, d, t, eta, b, k, lam, g = (mp.mpf(x) for x in (300, 16, 400, "0.05", 64, 2, "0.3", "0.4"))
    md = m * d
    expected = (1 / (g**2 * eta * t) + 1 / (g * mp.sqrt(b * t)) + eta * (1 / b + 1 / t)
                + (1 - lam) * k / (b * mp.sqrt(t)) * (1 / g + eta * mp.sqrt(md) / mp.sqrt(b))
                + ((1 - lam) ** 2 + lam**2 * eta) * eta * k**2 * md / b**2)
    assert kan.a_corr(**RATE) == pytest.approx(float(expected), rel=1e-14)
    assert kan.a_corr(**RATE, constant=3.0) == pytest.approx(3 * float(expected), rel=1e-14)
    # num_basis = p uses the noise dimension m d p
    with_p = kan.a_corr(**{**RATE, "d": 16 * 8})
    assert kan.a_corr(**RATE, num_basis=8) == pytest.approx(with_p, rel=1e-14)


def test_a_van_and_a_non_closed_form():
    n, m, d, t, eta, b, k, g, dl = (mp.mpf(x) for x in (5000, 300, 16, 400, "0.05", 64, 2, "0.4", "1e-3"))
    big_l, lt, ln = mp.log(1 / dl), mp.log(t), mp.log(n / dl)
    expected = ((lt**2 + ln) / (g**2 * eta * t) + big_l * (lt + mp.sqrt(ln)) / (g * mp.sqrt(b * t))
                + big_l * (lt + mp.sqrt(ln)) * k / (g * b * mp.sqrt(t)) + eta * big_l * (1 / b + big_l / t)
                + eta * m * d * big_l**2 * k**2 / b**2)
    kw = {k_: v for k_, v in RATE.items() if k_ != "noise_correlation"}
    assert kan.a_van(n=5000, failure_prob=1e-3, **kw) == pytest.approx(float(expected), rel=1e-14)
    expected_non = 1 / (g**2 * eta * t) + 1 / (g * mp.sqrt(b * t)) + eta / b
    assert kan.a_non(num_steps=400, step_size=0.05, batch_size=64, ntk_margin=0.4) == pytest.approx(
        float(expected_non), rel=1e-14)


def test_rates_monotone():
    steps = [kan.a_corr(**{**RATE, "num_steps": t}) for t in (10, 100, 1000, 10000)]
    assert all(a > b for a, b in zip(steps, steps[1:], strict=False))
    widths = [kan.a_corr(**{**RATE, "width": m}) for m in (10, 100, 1000)]
    assert all(a < b for a, b in zip(widths, widths[1:], strict=False))
    kw = {k_: v for k_, v in RATE.items() if k_ != "noise_correlation"}
    van = [kan.a_van(n=5000, failure_prob=1e-3, **{**kw, "num_steps": t}) for t in (10, 100, 1000)]
    assert all(a > b for a, b in zip(van, van[1:], strict=False))
    non = [kan.a_non(num_steps=t, step_size=0.05, batch_size=64, ntk_margin=0.4) for t in (10, 100, 1000)]
    assert all(a > b for a, b in zip(non, non[1:], strict=False))


POP = dict(d=16, width=300, num_steps=400, step_size=1e-5, batch_size=64, noise_multiplier=2.0, noise_correlation=0.3,
           ntk_margin=0.4, failure_prob=1e-3)


def test_population_correlated_closed_form():
    r = kan.population_bound_correlated(SIG, n=5000, **POP)
    rad = (math.log(400) + math.sqrt(math.log(5000 / 1e-3))) / 0.4
    opt = kan.a_corr(**{k: v for k, v in POP.items() if k != "failure_prob"})
    expected = (1 + 1e-5 * 400 / 5000) * (opt + (math.sqrt(300) + rad) * 1e-3)
    assert r.value == pytest.approx(expected, rel=1e-13)
    assert r.terms["projection_radius"] == pytest.approx(rad, rel=1e-14)
    assert r.guarantee == "surrogate" and r.quantity == "population_risk"
    app = kan.population_bound_correlated(SIG, n=5000, form="appendix", **POP)
    expected_app = ((1 + 1e-5 * 400 * math.log(1e3) / 5000)
                    * (opt + math.log(5000 / 1e-3) * (math.sqrt(300) + rad) * 1e-3))
    assert app.value == pytest.approx(expected_app, rel=1e-13)


def test_population_independent_and_nonprivate_closed_form():
    kw = {k: v for k, v in POP.items() if k != "noise_correlation"}
    r = kan.population_bound_independent(SIG, n=5000, **kw)
    lg, ln = math.log(1e3), math.log(5000 / 1e-3)
    opt = kan.a_van(n=5000, **{k: v for k, v in kw.items()})
    expected = ((1 + 1e-5 * 400 * lg / 5000) * (opt + 1e-3 * math.sqrt(ln))
                + math.sqrt(lg) * (math.log(400) + math.sqrt(ln)) * 1e-3 / 0.4)
    assert r.value == pytest.approx(expected, rel=1e-13)
    e1 = kan.population_bound_nonprivate(SIG, n=5000, width=300, num_steps=400, step_size=1e-5, batch_size=64,
                                         ntk_margin=0.4, failure_prob=1e-3)
    opt = kan.a_non(num_steps=400, step_size=1e-5, batch_size=64, ntk_margin=0.4)
    assert e1.value == pytest.approx((1 + 1e-5 * 400 / 5000) * (opt + 1e-3) + 1e-3 / 0.4, rel=1e-13)


def test_population_bounds_monotone_in_n_m_and_epsilon():
    # at a fixed R* (the default R* grows like sqrt(log(n / delta)))
    ns = [kan.population_bound_correlated(SIG, n=n, projection_radius=20.0, **POP).value
          for n in (1000, 10_000, 100_000)]
    assert ns[0] > ns[1] > ns[2]
    ms = [kan.population_bound_correlated(SIG, n=5000, **{**POP, "width": m}).value for m in (100, 1000, 10_000)]
    assert ms[0] < ms[1] < ms[2]
    # epsilon enters through kappa: Theorem F.12 at fixed (n, B, T)
    eps_values = []
    for eps in (0.25, 0.5, 1.0):
        kappa = float(noise_multiplier_theorem_f12(0.3, n=5000, batch_size=640, num_steps=400, epsilon=eps,
                                                   delta=1e-5))
        eps_values.append(kan.population_bound_correlated(
            SIG, n=5000, **{**POP, "noise_multiplier": kappa, "batch_size": 640}).value)
    assert eps_values[0] > eps_values[1] > eps_values[2]


def test_theorem_4_1_conditions_flip():
    gam, t, b, kappa, lam = 0.4, 400, 64, 2.0, 0.3
    # eta gamma sqrt T (1/sqrt B + kappa (1-lambda)/B) + eta^2 gamma^2 (T/B + 1) <= 1: a quadratic in eta
    lin = gam * math.sqrt(t) * (1 / math.sqrt(b) + kappa * (1 - lam) / b)
    quad = gam**2 * (t / b + 1)
    root = (-lin + math.sqrt(lin**2 + 4 * quad)) / (2 * quad)

    def cond(eta, name, **extra):
        return kan.population_bound_correlated(SIG, n=5000, **{**POP, "step_size": eta, **extra}).condition(name)

    assert cond(root * (1 - 1e-9), "step_size_theorem_4_1").holds
    assert not cond(root * (1 + 1e-9), "step_size_theorem_4_1").holds
    assert cond(SIG.max_step_size, "step_size").holds and not cond(SIG.max_step_size * (1 + 1e-12), "step_size").holds
    # the two-sided width range: gamma^-4 <= m <= B^2 / (eta^2 kappa^2 gamma^2 d) min{1, 1/(T((1-lam)^2+lam^2 eta))}
    eta = 1e-5
    upper = b**2 / (eta**2 * kappa**2 * gam**2 * 16) * min(1, 1 / (t * ((1 - lam) ** 2 + lam**2 * eta)))
    assert cond(eta, "width_upper", width=math.floor(upper)).holds
    assert not cond(eta, "width_upper", width=math.floor(upper) + 1).holds
    lower = gam**-4  # 39.06...
    assert cond(eta, "width_lower", width=math.ceil(lower)).holds
    assert not cond(eta, "width_lower", width=math.floor(lower)).holds
    hidden = kan.HiddenConstants(width_lower=2.0)
    assert not cond(eta, "width_lower", width=math.ceil(lower), hidden_constants=hidden).holds


# ---------------------------------------------------------------------------------------------------------------
# corollary schedules
# ---------------------------------------------------------------------------------------------------------------


def _width_is_minimal(schedule, rebuild, names):
    """At width - 1 one of the lower width conditions fails (the schedule's width is the smallest admissible)."""
    smaller = rebuild(schedule.width - 1)
    assert any(not smaller.condition(n).holds for n in names)


def test_corollary_5_6_schedule():
    n, gam = 10**10, 0.5
    s = kan.schedule_corollary_5_6(SIG, n=n, ntk_margin=gam, failure_prob=1e-12)
    assert s.batch_size == math.floor(gam * math.sqrt(n))
    assert s.step_size == pytest.approx(s.batch_size / n, rel=1e-15)
    assert s.num_steps == math.ceil(n**2 / (gam**2 * s.batch_size))
    # with every constant 1: A_non = 1/(gamma^2 eta T) + 1/(gamma sqrt(B T)) + eta/B <= 3/n (optimization rate 1/n)
    assert s.bound.terms["optimization"] <= 3 / n * (1 + 1e-12)
    assert s.rate == pytest.approx(1 / (gam**2 * n))
    assert s.noise_multiplier == 0.0 and s.noise_guarantee == "exact"
    assert s.clip == pytest.approx(kan.gradient_bound(SIG, width=s.width, failure_prob=1e-12))
    assert s.satisfied, [c for c in s.conditions if not c.holds]

    def rebuild(m):
        return kan.population_bound_nonprivate(SIG, n=n, width=m, num_steps=s.num_steps, step_size=s.step_size,
                                               batch_size=s.batch_size, ntk_margin=gam, failure_prob=1e-12)

    _width_is_minimal(s, rebuild, ("width_theorem_e1", "stability_width"))
    # at a small n the paper's constants conflict: eta = B/n exceeds 1/(12 C p^3)
    small = kan.schedule_corollary_5_6(SIG, n=10**4, ntk_margin=gam, failure_prob=1e-6)
    assert not small.condition("step_size").holds


def test_corollary_5_5_schedule():
    n, d, eps, gam, fail = 10**6, 10, 1.0, 0.5, 1e-7
    s = kan.schedule_corollary_5_5(SIG, n=n, d=d, epsilon=eps, delta=1e-6, ntk_margin=gam, failure_prob=fail)
    assert s.batch_size == round(gam * math.sqrt(n))
    assert s.num_steps == round(math.sqrt(n) / gam)
    assert s.step_size == pytest.approx(SIG.max_step_size * min(1, gam**2 * math.sqrt(n) * eps / math.sqrt(d)))
    kappa = noise_multiplier_theorem_d9(n=n, batch_size=s.batch_size, num_steps=s.num_steps, epsilon=eps, delta=1e-6)
    assert s.noise_multiplier == pytest.approx(float(kappa)) and s.noise_guarantee == "heuristic"
    assert s.rate == pytest.approx(1 / (gam * math.sqrt(n)) + math.sqrt(d) / (gam**3 * n * eps))
    assert s.satisfied, [c for c in s.conditions if not c.holds]

    def rebuild(m):
        return kan.population_bound_independent(SIG, n=n, d=d, width=m, num_steps=s.num_steps,
                                                step_size=s.step_size, batch_size=s.batch_size,
                                                noise_multiplier=s.noise_multiplier, ntk_margin=gam,
                                                failure_prob=fail)

    _width_is_minimal(s, rebuild, ("width_theorem_d14", "stability_width"))
    assert not kan.schedule_corollary_5_5(SIG, n=n, d=d, epsilon=eps, delta=1e-6, ntk_margin=gam,
                                          failure_prob=1e-5).condition("failure_prob_corollary").holds


def test_corollary_5_3_schedule():
    n, d, eps, gam, lam, fail = 10**6, 10, 1.0, 0.5, 0.5, 1e-9
    s = kan.schedule_corollary_5_3(SIG, n=n, d=d, epsilon=eps, delta=1e-6, ntk_margin=gam, noise_correlation=lam,
                                   failure_prob=fail)
    assert s.batch_size == n // 2
    assert s.num_steps == round(min(math.sqrt(n) / gam, n * eps * gam**2 / math.sqrt(d)))
    kappa = noise_multiplier_theorem_f12(lam, n=n, batch_size=s.batch_size, num_steps=s.num_steps, epsilon=eps,
                                         delta=1e-6)
    assert s.noise_multiplier == pytest.approx(float(kappa)) and s.noise_guarantee == "bound"
    assert s.step_size == SIG.max_step_size
    assert s.rate == pytest.approx(1 / (gam * math.sqrt(n)) + math.sqrt(d) / (gam**4 * n * eps))
    assert s.satisfied, [c for c in s.conditions if not c.holds]

    def rebuild(m):
        return kan.population_bound_correlated(SIG, n=n, d=d, width=m, num_steps=s.num_steps,
                                               step_size=s.step_size, batch_size=s.batch_size,
                                               noise_multiplier=s.noise_multiplier, noise_correlation=lam,
                                               ntk_margin=gam, failure_prob=fail)

    _width_is_minimal(s, rebuild, ("width_lower", "stability_width"))
    # the corollary's rate falls with n and epsilon
    rates = [kan.schedule_corollary_5_3(SIG, n=nn, d=d, epsilon=e, delta=1e-6, ntk_margin=gam,
                                        noise_correlation=lam, failure_prob=fail).rate
             for nn, e in ((10**5, 0.5), (10**6, 0.5), (10**6, 1.0))]
    assert rates[0] > rates[1] > rates[2]


# ---------------------------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "word"),
    [
        (lambda: kan.kan_constants(activation="relu", grid_size=5), "activation"),
        (lambda: kan.kan_constants(grid_size=0), "grid_size"),
        (lambda: kan.kan_constants(grid_size=5, spline_order=2), "spline_order"),
        (lambda: kan.kan_constants(grid_size=5, interval=(-0.5, 1.0)), "interval"),
        (lambda: kan.gradient_bound(SIG, width=0, failure_prob=0.1), "width"),
        (lambda: kan.gradient_bound(SIG, width=10, failure_prob=1.0), "failure_prob"),
        (lambda: kan.gradient_bound(SIG, width=10, failure_prob=0.0), "failure_prob"),
        (lambda: kan.a_corr(**{**RATE, "step_size": float("nan")}), "step_size"),
        (lambda: kan.a_corr(**{**RATE, "ntk_margin": 1.5}), "ntk_margin"),
        (lambda: kan.a_corr(**{**RATE, "noise_correlation": 1.0}), "noise_correlation"),
        (lambda: kan.a_corr(**{**RATE, "width": 0}), "width"),
        (lambda: kan.population_bound_correlated(SIG, n=50, **POP), "batch_size"),
        (lambda: kan.population_bound_correlated(SIG, n=5000, **{**POP, "noise_correlation": 0.0}),
         "noise_correlation"),
        (lambda: kan.population_bound_correlated(SIG, n=5000, form="short", **POP), "form"),
        (lambda: kan.lemma_c11_bound(SIG, **{**C11, "failure_prob": float("inf")}), "failure_prob"),
        (lambda: kan.lemma_c11_bound(SIG, **{**C11, "shifted_radius": -1.0}), "shifted_radius"),
        (lambda: kan.schedule_corollary_5_3(SIG, n=10**6, d=10, epsilon=2.0, delta=1e-6, ntk_margin=0.5,
                                            noise_correlation=0.5, failure_prob=1e-9), "epsilon"),
        (lambda: kan.HiddenConstants(risk=0.0), "risk"),
        (lambda: kan.initialization_event(np.ones(3), failure_prob=0.1), "second_layer"),
    ],
)
def test_bad_input_names_the_parameter(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_wrong_types():
    with pytest.raises(TypeError, match="constants"):
        kan.gradient_bound(object(), width=10, failure_prob=0.1)
    with pytest.raises(TypeError, match="width"):
        kan.gradient_bound(SIG, width=10.5, failure_prob=0.1)
    with pytest.raises(TypeError, match="hidden_constants"):
        kan.population_bound_correlated(SIG, n=5000, hidden_constants={"risk": 1.0}, **POP)


# ---------------------------------------------------------------------------------------------------------------
# comparator and loss range (explicit forms of Lemmas C.12 and C.17)
# ---------------------------------------------------------------------------------------------------------------


def test_comparator_and_loss_range_closed_form():
    p, n, m, gam, tau, dl = mp.mpf(8), 200, 4096, mp.mpf("0.3"), mp.mpf(5), mp.mpf("1e-3")
    out = mp.mpf(2) / 3 * mp.sqrt(2 * p * mp.log(4 * n / dl))
    hess = (mp.mpf(SIG.hessian_constant) * p**1.5 * (4 * mp.sqrt(p) + 2 * mp.sqrt(mp.log(2 * m / (dl / 2))))
            / mp.sqrt(m))
    z = tau * gam - out - tau**2 / 2 * hess
    expected = mp.log(1 + mp.exp(-z))
    got = kan.comparator_loss_bound(SIG, n=n, width=m, ntk_margin=0.3, comparator_distance=5.0, failure_prob=1e-3)
    assert got == pytest.approx(float(expected), rel=1e-13)
    r_star, df = mp.mpf(7), mp.mpf("1e-2")
    b = mp.mpf(SIG.c_sigma_b) * p * (mp.sqrt(p) + mp.sqrt(mp.log(1 / dl) / m))
    f_max = mp.mpf(2) / 3 * mp.sqrt(2 * p * mp.log(4 * n / df)) + b * r_star
    f_got, u_got = kan.loss_range_bounds(SIG, n=n, width=m, projection_radius=7.0, failure_prob=1e-3,
                                         output_failure_prob=1e-2)
    assert f_got == pytest.approx(float(f_max), rel=1e-13)
    assert u_got == pytest.approx(float(mp.log(1 + mp.exp(f_max))), rel=1e-13)
    assert u_got <= math.log(2) + f_got


# ---------------------------------------------------------------------------------------------------------------
# the bounds on the KAN model itself
# ---------------------------------------------------------------------------------------------------------------


def test_bounds_hold_on_the_kan_model():
    from privdyn.bounds.ntk_margin import gram_from_rank_one_factors, ntk_margin
    from privdyn.models.kan import KAN

    rng = np.random.default_rng(21)
    d, m, n, dl = 4, 32, 40, 0.01
    separable = 0
    for activation, consts in (("sigmoid", SIG), ("tanh", TANH)):
        model = KAN.initialize(d=d, width=m, rng=rng, grid_size=5, activation=activation)
        assert model.num_basis == consts.num_basis
        np.testing.assert_allclose(model.activation.bounds, kan.activation_bounds(activation), rtol=1e-12)
        w0 = model.initial_parameters(rng)
        x = rng.normal(size=(n, d))
        x *= rng.uniform(0.2, 1.0, size=(n, 1)) / np.linalg.norm(x, axis=1, keepdims=True)
        kan.check_inputs(x)
        y = np.where(x[:, 0] + 0.3 * x[:, 1] >= 0, 1.0, -1.0)
        # the events on the initialization (fixed seed: they hold here; each fails with probability <= dl / 2)
        assert all(c.holds for c in kan.initialization_event(model.second_layer, failure_prob=dl / 2))
        out = np.abs(model.forward(w0, x))
        assert np.max(out) <= kan.initial_output_bound(consts, n=n, failure_prob=dl / 2)
        # G_delta and the Hessian bound hold uniformly over W on E_delta (eqs. (3)-(5))
        for w in (w0, 5.0 * rng.normal(size=w0.shape)):
            a, h = model.output_gradient_factors(w, x)
            norms = np.linalg.norm(a, axis=1) * np.linalg.norm(h, axis=1)
            assert np.max(norms) <= kan.gradient_bound(consts, width=m, failure_prob=dl / 2)
            q = model.hessian_block_scalars(w, x)
            hess = np.max(np.abs(q), axis=1) * np.linalg.norm(h, axis=1) ** 2
            assert np.max(hess) <= kan.hessian_bound(consts, width=m, failure_prob=dl / 2)
        # the NTK margin from the model's Gram matrix, and the comparator bound of Lemma C.12
        a, h = model.output_gradient_factors(w0, x)
        gram = model.per_example_gradient_gram(w0, x, y)
        np.testing.assert_allclose(gram, gram_from_rank_one_factors(a, h) * np.outer(y, y), rtol=1e-12,
                                   atol=1e-15)
        r = ntk_margin(gram)
        assert r.converged
        if r.value == 0.0:
            continue
        separable += 1
        direction = ((r.weights * y)[:, None] * a).T @ h
        u = direction / np.linalg.norm(direction)
        margins = y * np.einsum("im,mk,ik->i", a, u, h)
        assert np.min(margins) >= r.value - 1e-12
        for tau in (0.5, 2.0, 8.0):
            loss = model.loss(w0 + tau * u, x, y)
            assert loss <= kan.comparator_loss_bound(consts, n=n, width=m, ntk_margin=min(r.value, 1.0),
                                                     comparator_distance=tau, failure_prob=dl)
    assert separable >= 1


def test_optimization_bounds_carry_the_theorems_conditions():
    kw = {k: v for k, v in POP.items() if k != "failure_prob"}
    opt = kan.optimization_bound_correlated(SIG, failure_prob=1e-3, **kw)
    assert opt.value == pytest.approx(kan.a_corr(**kw), rel=1e-15) and opt.quantity == "optimization_risk"
    assert [c.name for c in opt.conditions] == ["step_size", "step_size_theorem_4_1", "width_lower", "width_upper",
                                                "explicit_constant_failure_prob", "explicit_constant_width"]
    pop = kan.population_bound_correlated(SIG, n=5000, **POP)
    assert {c.name for c in pop.conditions} == {c.name for c in opt.conditions} | {"stability_width"}
    kw_van = {k: v for k, v in POP.items() if k != "noise_correlation"}
    van = kan.optimization_bound_independent(SIG, n=5000, **kw_van)
    assert van.value == pytest.approx(kan.a_van(n=5000, **kw_van), rel=1e-15)
    assert van.condition("width_theorem_d14").rhs == 300
    non = kan.optimization_bound_nonprivate(SIG, n=5000, width=300, num_steps=400, step_size=1e-5, batch_size=64,
                                            ntk_margin=0.4, failure_prob=1e-3, clip=30.0)
    assert non.value == pytest.approx(kan.a_non(num_steps=400, step_size=1e-5, batch_size=64, ntk_margin=0.4))
    assert non.condition("clipping_inactive").margin == pytest.approx(
        30.0 - kan.gradient_bound(SIG, width=300, failure_prob=1e-3))
    with pytest.raises(KeyError, match="no condition"):
        non.condition("width_upper")
