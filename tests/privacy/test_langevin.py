"""Tests of privdyn.privacy.langevin (Chourasia, Ye, Shokri 2021, arXiv 2102.05855).

Reference numbers come from specs/seed-001.md (sections 6 and 10), which derives them from the paper's
formulas; the composition baseline is checked against dp-accounting's RDP accountant, an independent
implementation.
"""

from __future__ import annotations

import dataclasses
import math
from decimal import Decimal

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent, SelfComposedDpEvent
from dp_accounting import NeighboringRelation as DpNeighboringRelation
from dp_accounting.rdp import RdpAccountant
from hypothesis import given, settings
from hypothesis import strategies as st

from privdyn.privacy import langevin as lg
from privdyn.privacy.conversions import optimal_renyi_order, rdp_to_epsilon, zcdp_to_epsilon
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=200)

# Figure 1 settings (spec 6): beta = 4, S_g = 4, n = 5000, eta = 0.02, sigma = 0.02.
FIG1 = dict(step_size=0.02, noise_scale=0.02, smoothness=4.0, sensitivity=4.0, n=5000)
FIG1_BASE = dict(step_size=0.02, noise_scale=0.02, sensitivity=4.0, n=5000)

# Quadratic instance of spec 10.2: alpha = 2, S_g = 1, n = 1, sigma = 1, eta = 0.1.
QUAD = dict(step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=1)


def assert_printed(value: float, printed: str) -> None:
    """value rounds to the printed decimal (half a unit of the last printed digit)."""
    exponent = Decimal(printed).as_tuple().exponent
    tolerance = 0.5 * 10.0**exponent * (1 + 1e-9)
    assert abs(value - float(printed)) <= tolerance, (value, printed)


# ----------------------------------------------------------------------------------------------------
# Figure 1 (spec 6)


@pytest.mark.parametrize("alpha", [10, 20, 30])
@pytest.mark.parametrize("lam", [1, 2, 4])
def test_figure1_asymptotes(alpha, lam):
    expected = 0.0016 * alpha / lam
    asym = lg.dynamics_rdp_asymptote(alpha, noise_scale=0.02, strong_convexity=lam, sensitivity=4.0, n=5000)
    assert asym.value == pytest.approx(expected, rel=1e-12)
    far = lg.dynamics_rdp(alpha, num_steps=10**6, strong_convexity=lam, **FIG1)
    assert far.value == pytest.approx(expected, rel=1e-12)


COR1_TABLE = {  # K: (lambda=1, lambda=2, lambda=4) at alpha = 10
    1: ("1.5920e-4", "1.5841e-4", "1.5684e-4"),
    10: ("1.5226e-3", "1.4502e-3", "1.3187e-3"),
    50: ("6.2955e-3", "5.0570e-3", "3.4587e-3"),
    100: ("1.0114e-2", "6.9173e-3", "3.9267e-3"),
    200: ("1.3835e-2", "7.8535e-3", "3.9987e-3"),
    500: ("1.5892e-2", "7.9996e-3", "4.0000e-3"),
    1000: ("1.5999e-2", "8.0000e-3", "4.0000e-3"),
}


@pytest.mark.parametrize("num_steps", sorted(COR1_TABLE))
@pytest.mark.parametrize("alpha", [10, 20, 30])
def test_figure1_corollary1_values(num_steps, alpha):
    for lam, printed in zip((1, 2, 4), COR1_TABLE[num_steps], strict=True):
        value = lg.dynamics_rdp(alpha, num_steps=num_steps, strong_convexity=lam, **FIG1).value
        assert value == pytest.approx(float(printed) * alpha / 10, rel=5e-5)


def test_figure1_baseline_slope_and_examples():
    for alpha in (10, 20, 30):
        slope = lg.composition_rdp(alpha, num_steps=1, **FIG1_BASE).value
        assert slope == pytest.approx(8e-6 * alpha, rel=1e-12)
    values = lg.composition_rdp(10, num_steps=np.array([100, 1000, 2000]), **FIG1_BASE).value
    np.testing.assert_allclose(values, [0.008, 0.08, 0.16], rtol=1e-12)


def test_crossover_constant():
    x = lg.CROSSOVER_X
    assert x == pytest.approx(1.59362426004, abs=1e-11)
    assert -math.expm1(-x) == pytest.approx(x / 2, rel=1e-15)


def test_figure1_crossovers():
    lams = np.array([1.0, 2.0, 4.0])
    cross = lg.crossover_num_steps(step_size=0.02, strong_convexity=lams)
    np.testing.assert_allclose(cross, [159.36, 79.68, 39.84], atol=0.005)
    assert lg.crossover_num_steps(step_size=0.02, strong_convexity=1.0) == pytest.approx(
        3.18725 / 0.02, rel=1e-5
    )
    for lam, k in zip(lams, cross, strict=True):
        for alpha in (10, 20, 30):
            dyn = lg.dynamics_rdp(alpha, num_steps=k, strong_convexity=lam, **FIG1).value
            comp = lg.composition_rdp(alpha, num_steps=k, **FIG1_BASE).value
            assert dyn == pytest.approx(comp, rel=1e-12)
            before, after = math.floor(k), math.ceil(k)
            assert (
                lg.dynamics_rdp(alpha, num_steps=before, strong_convexity=lam, **FIG1).value
                > lg.composition_rdp(alpha, num_steps=before, **FIG1_BASE).value
            )
            assert (
                lg.dynamics_rdp(alpha, num_steps=after, strong_convexity=lam, **FIG1).value
                < lg.composition_rdp(alpha, num_steps=after, **FIG1_BASE).value
            )


def test_small_k_is_twice_composition():
    dyn = lg.dynamics_rdp(10, num_steps=1, strong_convexity=1e-3, **FIG1).value
    comp = lg.composition_rdp(10, num_steps=1, **FIG1_BASE).value
    assert dyn / comp == pytest.approx(2.0, rel=1e-4)


def test_figure1_steps_to_95_percent():
    lams = np.array([1.0, 2.0, 4.0])
    steps = lg.steps_to_fraction(0.95, step_size=0.02, strong_convexity=lams)
    np.testing.assert_allclose(steps, [299.6, 149.8, 74.9], atol=0.05)
    np.testing.assert_allclose(steps, 2 * math.log(20) / (lams * 0.02), rtol=1e-14)
    dyn = lg.dynamics_rdp(10, num_steps=steps, strong_convexity=lams, **FIG1).value
    asym = lg.dynamics_rdp_asymptote(
        10, noise_scale=0.02, strong_convexity=lams, sensitivity=4.0, n=5000
    ).value
    np.testing.assert_allclose(dyn, 0.95 * asym, rtol=1e-12)
    assert lg.steps_to_fraction(0.0, step_size=0.02, strong_convexity=1.0) == 0.0


def test_increments_sum_to_corollary1():
    k = np.arange(1, 301)
    inc = lg.dynamics_rdp_increment(20, step_index=k, strong_convexity=2.0, **FIG1)
    assert inc.quantity == "rdp_epsilon_increment"
    total = lg.dynamics_rdp(20, num_steps=k, strong_convexity=2.0, **FIG1).value
    np.testing.assert_allclose(np.cumsum(inc.value), total, rtol=1e-11)
    assert np.all(np.diff(inc.value) < 0)  # geometric decay
    np.testing.assert_allclose(inc.value[1:] / inc.value[:-1], math.exp(-2.0 * 0.02 / 2), rtol=1e-12)


def test_dynamics_zcdp_is_the_slope_of_corollary1():
    k = np.arange(0, 600, 50)
    rho = lg.dynamics_zcdp(num_steps=k, strong_convexity=2.0, **FIG1)
    assert rho.quantity == "zcdp" and rho.guarantee is Guarantee.BOUND
    for alpha in (1.5, 10.0, 30.0):
        rdp = lg.dynamics_rdp(alpha, num_steps=k, strong_convexity=2.0, **FIG1).value
        np.testing.assert_allclose(alpha * rho.value, rdp, rtol=1e-14)
    rho_inf = lg.dynamics_zcdp(strong_convexity=2.0, **FIG1).value
    asym = lg.dynamics_rdp_asymptote(
        10.0, noise_scale=0.02, strong_convexity=2.0, sensitivity=4.0, n=5000
    ).value
    assert 10.0 * rho_inf == pytest.approx(asym, rel=1e-14)
    # the optimal-order conversion is no worse than Mironov's on any grid of orders
    orders = np.linspace(1.5, 200, 400)
    grid_eps, _ = rdp_to_epsilon(orders, orders * rho_inf, delta=1e-6, method="mironov")
    assert zcdp_to_epsilon(rho_inf, delta=1e-6, method="bun_steinke") <= grid_eps
    with pytest.raises(ValueError, match="step_size must be < 1/smoothness = 0.25"):
        lg.dynamics_zcdp(strong_convexity=2.0, **{**FIG1, "step_size": 0.3})


def test_alpha_scales_asymptote_not_rate():
    k = np.arange(0, 500, 7)
    v10 = lg.dynamics_rdp(10, num_steps=k, strong_convexity=2.0, **FIG1).value
    v30 = lg.dynamics_rdp(30, num_steps=k, strong_convexity=2.0, **FIG1).value
    np.testing.assert_allclose(v30, 3 * v10, rtol=1e-13)


# ----------------------------------------------------------------------------------------------------
# the quadratic instance (spec 3.4 and 10.2)

TABLE_10_2 = {  # K: exact EX, exact with Gaussian start v0 = 2 sigma^2, LB (17), Cor. 1, Cor. 2, composition
    1: ("0.05", "0.0054945", "0.0475813", "0.0975412", "0.0953969", "0.05"),
    2: ("0.0997238", "0.0215625", "0.0906346", "0.190325", "0.182148", "0.1"),
    5: ("0.2446", "0.121261", "0.196735", "0.442398", "0.398016", "0.25"),
    10: ("0.458787", "0.363261", "0.31606", "0.786939", "0.645536", "0.5"),
    20: ("0.744044", "0.723423", "0.432332", "1.26424", "0.895191", "1"),
    50: ("0.940258", "0.940211", "0.496631", "1.83583", "1.04352", "2.5"),
    100: ("0.94995", "0.94995", "0.499977", "1.98652", "1.05255", "5"),
    1000: ("0.95", "0.95", "0.5", "2", "1.05263", "50"),
}


@pytest.mark.parametrize("num_steps", sorted(TABLE_10_2))
def test_quadratic_table(num_steps):
    ex, exg, lb, c1, c2, comp = TABLE_10_2[num_steps]
    k = num_steps
    assert_printed(lg.quadratic_exact_rdp(2, num_steps=k, **QUAD).value, ex)
    assert_printed(lg.quadratic_exact_rdp(2, num_steps=k, init_variance=2.0, **QUAD).value, exg)
    assert_printed(lg.quadratic_lower_bound_rdp(2, num_steps=k, **QUAD).value, lb)
    assert_printed(lg.dynamics_rdp(2, num_steps=k, strong_convexity=1.0, smoothness=1.0, **QUAD).value, c1)
    assert_printed(lg.quadratic_corollary2_rdp(2, num_steps=k, **QUAD).value, c2)
    assert_printed(lg.composition_rdp(2, num_steps=k, **QUAD).value, comp)


def test_quadratic_exact_closed_forms():
    eta = 0.1
    # K = 1 equals composition exactly; K -> infinity gives alpha S^2 (2 - eta) / (4 sigma^2 n^2)
    assert lg.quadratic_exact_rdp(2, num_steps=1, **QUAD).value == pytest.approx(
        lg.composition_rdp(2, num_steps=1, **QUAD).value, rel=1e-14
    )
    assert lg.quadratic_exact_rdp(2, num_steps=10**5, **QUAD).value == pytest.approx(
        2 * (2 - eta) / 4, rel=1e-14
    )
    # asymptote ratios stated in the paper: Cor. 1 / LB = 4, Cor. 2 / LB = 4/(2 - eta)
    big = 10**5
    lb = lg.quadratic_lower_bound_rdp(2, num_steps=big, **QUAD).value
    assert lg.dynamics_rdp(
        2, num_steps=big, strong_convexity=1, smoothness=1, **QUAD
    ).value / lb == pytest.approx(4.0, rel=1e-12)
    assert lg.quadratic_corollary2_rdp(2, num_steps=big, **QUAD).value / lb == pytest.approx(
        4 / (2 - eta), rel=1e-12
    )
    # spec 9.5: K = 1, eta = 0.1, Gaussian start: 0.0055 vs 0.05
    assert lg.quadratic_exact_rdp(2, num_steps=1, init_variance=2.0, **QUAD).value == pytest.approx(
        0.0055, abs=5e-5
    )
    # num_steps = 0 gives 0 for every start
    for v0 in (0.0, 0.3):
        assert lg.quadratic_exact_rdp(2, num_steps=0, init_variance=v0, **QUAD).value == 0.0


def test_quadratic_exact_against_moment_sums():
    """EX/EXg against the mean and variance summed step by step (an independent path)."""
    for eta, sigma, v0, k in [
        (0.1, 1.0, 0.0, 7),
        (0.37, 0.6, 0.5, 13),
        (0.9, 2.0, 3.0, 40),
        (0.01, 0.3, 0.0, 250),
    ]:
        decay = (1 - eta) ** np.arange(k)
        mean_gap = eta * decay.sum() * (3.0 / 7)  # sensitivity 3, n = 7
        variance = v0 * (1 - eta) ** (2 * k) + 2 * eta * sigma**2 * np.sum(decay**2)
        expected = 2.5 * mean_gap**2 / (2 * variance)
        got = lg.quadratic_exact_rdp(
            2.5, num_steps=k, step_size=eta, noise_scale=sigma, sensitivity=3.0, n=7, init_variance=v0
        ).value
        assert got == pytest.approx(expected, rel=1e-12)


eta_strategy = st.floats(min_value=1e-6, max_value=1 - 1e-6)
k_strategy = st.integers(min_value=1, max_value=10**4)


@PROFILE
@given(eta=eta_strategy, k=k_strategy, alpha=st.floats(1.01, 100), sigma=st.floats(0.05, 10))
def test_quadratic_orderings(eta, k, alpha, sigma):
    kw = dict(num_steps=k, step_size=eta, noise_scale=sigma, sensitivity=2.0, n=3)
    lb = lg.quadratic_lower_bound_rdp(alpha, **kw).value
    ex = lg.quadratic_exact_rdp(alpha, **kw).value
    c2 = lg.quadratic_corollary2_rdp(alpha, **kw).value
    c1 = lg.dynamics_rdp(alpha, strong_convexity=1.0, smoothness=1.0, **kw).value
    comp = lg.composition_rdp(alpha, **kw).value
    tol = 1 + 1e-12
    assert lb <= ex * tol
    assert ex <= c2 * tol
    assert c2 <= c1 * tol
    assert ex <= comp * tol
    # extensions stay between the exact loss and the bounds they refine
    tracked = lg.tracked_lsi_rdp(
        alpha, strong_convexity=1.0, smoothness=1.0, init_lsi_constant=np.inf, **kw
    ).value
    assert ex <= tracked * tol
    assert tracked <= c2 * tol
    best = lg.best_gamma_rdp(alpha, strong_convexity=1.0, smoothness=1.0, **kw).value
    assert ex <= best * tol
    assert best <= min(c1, comp) * tol
    exg = lg.quadratic_exact_rdp(alpha, init_variance=2 * sigma**2, **kw).value
    assert exg <= best * tol


@PROFILE
@given(eta=eta_strategy, alpha=st.floats(1.01, 100), sigma=st.floats(0.05, 10))
def test_quadratic_exact_equals_composition_at_one_step(eta, alpha, sigma):
    kw = dict(num_steps=1, step_size=eta, noise_scale=sigma, sensitivity=2.0, n=3)
    assert lg.quadratic_exact_rdp(alpha, **kw).value == pytest.approx(
        lg.composition_rdp(alpha, **kw).value, rel=1e-12
    )


# ----------------------------------------------------------------------------------------------------
# Theorem 2 special cases and the labelled extensions


def test_lsi_rdp_special_cases():
    k = np.arange(0, 400, 9)
    for lam in (1.0, 2.0, 4.0):
        c = lam / (2 * 0.02**2)
        t2 = lg.lsi_rdp(10, lsi_constant=c, num_steps=k, **FIG1_BASE).value
        c1 = lg.dynamics_rdp(10, num_steps=k, strong_convexity=lam, **FIG1).value
        np.testing.assert_allclose(t2, c1, rtol=1e-12)
    eta, sigma = 0.3, 0.7
    t2 = lg.lsi_rdp(
        3,
        lsi_constant=(2 - eta) / (2 * sigma**2),
        num_steps=k,
        step_size=eta,
        noise_scale=sigma,
        sensitivity=1.5,
        n=4,
    ).value
    c2 = lg.quadratic_corollary2_rdp(
        3, num_steps=k, step_size=eta, noise_scale=sigma, sensitivity=1.5, n=4
    ).value
    np.testing.assert_allclose(t2, c2, rtol=1e-12)


def test_lsi_tracker_matches_closed_form_and_corollaries():
    eta, sigma, lam, beta = 0.05, 0.4, 0.5, 3.0
    cs = lg.lsi_constant_tracker(
        num_steps=200,
        step_size=eta,
        noise_scale=sigma,
        strong_convexity=lam,
        smoothness=beta,
        init_lsi_constant=lam / (2 * sigma**2),
    )
    assert cs.shape == (201,)
    assert cs[0] == pytest.approx(lam / (2 * sigma**2))
    for k in (0, 1, 5, 50, 200):
        c = np.min(cs[: k + 1])
        expected = lg.lsi_rdp(
            4, lsi_constant=c, num_steps=k, step_size=eta, noise_scale=sigma, sensitivity=2.0, n=10
        ).value
        got = lg.tracked_lsi_rdp(
            4,
            num_steps=k,
            step_size=eta,
            noise_scale=sigma,
            strong_convexity=lam,
            smoothness=beta,
            sensitivity=2.0,
            n=10,
        )
        assert got.value == pytest.approx(expected, rel=1e-12, abs=0)
        assert "privdyn extension, not in the paper" in got.source
        cor1 = lg.dynamics_rdp(
            4,
            num_steps=k,
            step_size=eta,
            noise_scale=sigma,
            strong_convexity=lam,
            smoothness=beta,
            sensitivity=2.0,
            n=10,
        ).value
        assert got.value <= cor1 * (1 + 1e-12)
    # quadratic loss, deterministic start: c_K decreases to (2 - eta) / (2 sigma^2), i.e. Corollary 2
    cq = lg.lsi_constant_tracker(
        num_steps=3000,
        step_size=0.1,
        noise_scale=1.0,
        strong_convexity=1.0,
        smoothness=1.0,
        init_lsi_constant=np.inf,
    )
    assert np.isinf(cq[0]) and np.all(np.diff(cq) <= 0)
    assert cq[-1] == pytest.approx((2 - 0.1) / 2, rel=1e-12)
    far = lg.tracked_lsi_rdp(
        2, num_steps=3000, strong_convexity=1.0, smoothness=1.0, init_lsi_constant=np.inf, **QUAD
    ).value
    assert far == pytest.approx(lg.quadratic_corollary2_rdp(2, num_steps=3000, **QUAD).value, rel=1e-12)
    # broadcasting: (K + 1,) + parameter shape
    assert lg.lsi_constant_tracker(
        num_steps=4,
        step_size=[0.1, 0.2],
        noise_scale=1.0,
        strong_convexity=1.0,
        smoothness=2.0,
        init_lsi_constant=1.0,
    ).shape == (5, 2)


def test_best_gamma_against_grid():
    gammas = np.linspace(1e-4, 1 - 1e-4, 20001)
    for k in (1, 10, 100, 160, 500, 5000):
        kw = dict(num_steps=k, step_size=0.02, noise_scale=0.02, sensitivity=4.0, n=5000)
        best = lg.best_gamma_rdp(10, strong_convexity=1.0, smoothness=4.0, **kw)
        assert best.guarantee is Guarantee.BOUND and "privdyn extension, not in the paper" in best.source
        x = 1.0 * 0.02 * k
        grid = 10 * 16 / (4 * gammas * (1 - gammas) * 1.0 * 0.02**2 * 5000**2) * -np.expm1(-(1 - gammas) * x)
        comp = lg.composition_rdp(10, **kw).value
        assert best.value <= min(grid.min(), comp) * (1 + 1e-12)
        assert best.value >= min(grid.min(), comp) * (1 - 1e-6)
        if x <= 2:
            assert best.value == pytest.approx(comp, rel=1e-14)


# ----------------------------------------------------------------------------------------------------
# independent oracle: dp-accounting's Gaussian RDP composed K times


@pytest.mark.parametrize(
    ("alpha", "k", "eta", "sigma", "s", "n"),
    [
        (2.0, 1, 0.1, 1.0, 1.0, 1),
        (10.0, 100, 0.02, 0.02, 4.0, 5000),
        (32.0, 2000, 0.02, 0.02, 4.0, 5000),
        (3.5, 57, 0.3, 0.8, 2.0, 17),
    ],
)
def test_composition_matches_dp_accounting(alpha, k, eta, sigma, s, n):
    z = n * sigma * math.sqrt(2 / eta) / s
    accountant = RdpAccountant(orders=[alpha], neighboring_relation=DpNeighboringRelation.REPLACE_ONE)
    accountant.compose(SelfComposedDpEvent(GaussianDpEvent(z), k))
    assert list(accountant.orders) == [alpha]
    expected = float(accountant.rdp[0])
    got = lg.composition_rdp(alpha, num_steps=k, step_size=eta, noise_scale=sigma, sensitivity=s, n=n).value
    assert got == pytest.approx(expected, rel=1e-12)


# ----------------------------------------------------------------------------------------------------
# calibration


@PROFILE
@given(
    alpha=st.floats(1.1, 64),
    target=st.floats(1e-3, 10),
    k=st.one_of(st.none(), st.integers(1, 10**5)),
    lam=st.floats(0.01, 4),
)
def test_noise_scale_for_rdp_round_trip(alpha, target, k, lam):
    kw = dict(step_size=0.2, strong_convexity=lam, smoothness=4.0, sensitivity=2.0, n=1000)
    sigma = lg.noise_scale_for_rdp(alpha, target, num_steps=k, **kw)
    assert sigma.quantity == "noise_scale" and sigma.guarantee is Guarantee.BOUND
    if k is None:
        got = lg.dynamics_rdp_asymptote(
            alpha, noise_scale=sigma.value, strong_convexity=lam, sensitivity=2.0, n=1000
        ).value
    else:
        got = lg.dynamics_rdp(alpha, num_steps=k, noise_scale=sigma.value, **kw).value
    assert got == pytest.approx(target, rel=1e-12)


@PROFILE
@given(
    epsilon=st.floats(0.05, 10), log10_delta=st.floats(-12, -2), k=st.one_of(st.none(), st.integers(1, 10**5))
)
def test_noise_scale_for_dp_round_trip(epsilon, log10_delta, k):
    delta = 10.0**log10_delta
    kw = dict(step_size=0.1, strong_convexity=1.0, smoothness=2.0, sensitivity=2.0, n=500)
    log_inv = math.log(1 / delta)
    if epsilon <= 2 * log_inv:
        sigma = lg.noise_scale_for_dp(epsilon, delta, method="paper", num_steps=k, **kw).value
        alpha = 1 + 2 * log_inv / epsilon
        kk = 10**9 if k is None else k  # the bound at K = infinity is the asymptote
        rdp = lg.dynamics_rdp(alpha, num_steps=kk, noise_scale=sigma, **kw).value
        eps, order = rdp_to_epsilon([alpha], [rdp], delta=delta, method="mironov")
        assert eps <= epsilon * (1 + 1e-12)
        if k is None:
            assert eps == pytest.approx(epsilon, rel=1e-9)
    sigma_opt = lg.noise_scale_for_dp(epsilon, delta, method="optimal_order", num_steps=k, **kw).value
    kk = 10**9 if k is None else k
    rho = lg.dynamics_rdp(1 + 1.0, num_steps=kk, noise_scale=sigma_opt, **kw).value / 2.0  # rdp = alpha * rho
    assert zcdp_to_epsilon(rho, delta=delta, method="bun_steinke") <= epsilon * (1 + 1e-9)
    if k is None:
        assert zcdp_to_epsilon(rho, delta=delta, method="bun_steinke") == pytest.approx(epsilon, rel=1e-9)
    if epsilon <= 2 * log_inv:
        assert sigma_opt <= sigma * (1 + 1e-12)  # the best order never needs more noise


def test_composition_noise_scale_round_trip():
    k = np.array([1, 10, 1000])
    kw = dict(num_steps=k, step_size=0.125, sensitivity=2.0, n=10**4)
    sigma = lg.composition_noise_scale_for_rdp(10, 1.0, **kw)
    assert sigma.quantity == "noise_scale" and sigma.guarantee is Guarantee.BOUND
    np.testing.assert_allclose(lg.composition_rdp(10, noise_scale=sigma.value, **kw).value, 1.0, rtol=1e-13)
    np.testing.assert_allclose(sigma.value**2, 10 * 4 * 0.125 * k / (4 * 1e8), rtol=1e-13)
    with pytest.raises(ValueError, match="num_steps"):
        lg.composition_noise_scale_for_rdp(10, 1.0, num_steps=0, step_size=0.1, sensitivity=1.0, n=3)


def test_noise_scale_for_dp_paper_equals_theorem4_formula():
    for L, lam, n, eps, delta in [(1.0, 1.0, 10**4, 1.0, 1e-5), (0.5, 0.2, 300, 3.0, 1e-3)]:
        sigma = lg.noise_scale_for_dp(
            eps,
            delta,
            method="paper",
            step_size=lam / 2,
            strong_convexity=lam,
            smoothness=1.0,
            sensitivity=2 * L,
            n=n,
        ).value
        expected = 8 * L**2 * (eps + 2 * math.log(1 / delta)) / (lam * eps**2 * n**2)
        assert sigma**2 == pytest.approx(expected, rel=1e-14)


# ----------------------------------------------------------------------------------------------------
# Theorem 4 and Lemma 6 (spec 10.3)

T4 = dict(lipschitz=1.0, strong_convexity=1.0, smoothness=2.0, n=10**4, d=100)


def test_theorem4_rdp_form():
    p = lg.theorem4_parameters(renyi_order=10, rdp_epsilon=1.0, **T4)
    assert p.form == "rdp"
    assert p.step_size == 0.125
    assert p.noise_variance == pytest.approx(4e-7, rel=1e-14)
    assert p.noise_scale == pytest.approx(math.sqrt(4e-7), rel=1e-14)
    assert p.num_steps_real == pytest.approx(8 * math.log(1e5), rel=1e-14)
    assert_printed(p.num_steps_real, "92.103")
    assert p.num_steps == 93 and isinstance(p.num_steps, int)
    assert p.gradient_complexity == 930_000
    # Lemma 6 at the real K* is exactly 10 alpha beta d L^2 / (lambda^2 eps' n^2) = 2.0e-4
    at_kstar = lg.lemma6_excess_risk_bound(
        num_steps=p.num_steps_real,
        step_size=p.step_size,
        noise_scale=p.noise_scale,
        lipschitz=1,
        strong_convexity=1,
        smoothness=2,
        d=100,
    )
    assert at_kstar == pytest.approx(2.0e-4, rel=1e-12)
    assert_printed(p.excess_risk_bound, "2.0e-4")
    assert p.excess_risk_bound < at_kstar
    # Corollary 1 at K* = 0.99684 <= 1, and the certified guarantee is (10, 1)-RDP for every K
    cor1 = lg.dynamics_rdp(
        10,
        num_steps=p.num_steps_real,
        step_size=0.125,
        noise_scale=p.noise_scale,
        strong_convexity=1,
        smoothness=2,
        sensitivity=2,
        n=10**4,
    ).value
    assert_printed(cor1, "0.99684")
    assert p.rdp_epsilon_at_num_steps <= 1.0
    assert p.privacy.value == pytest.approx(1.0, rel=1e-14)
    assert p.privacy.guarantee is Guarantee.BOUND and p.privacy.quantity == "rdp_epsilon"
    # the RDP form does not depend on the K* formula choice
    exact = lg.theorem4_parameters(renyi_order=10, rdp_epsilon=1.0, num_steps_formula="exact", **T4)
    assert dataclasses.replace(exact, num_steps_formula="printed") == p


def test_theorem4_dp_form():
    p = lg.theorem4_parameters(epsilon=1.0, delta=1e-5, **T4)
    assert p.form == "dp"
    assert_printed(p.renyi_order, "24.02585")
    assert p.rdp_epsilon == 0.5
    assert p.noise_variance == pytest.approx(1.922068e-6, rel=5e-7)
    assert p.noise_variance == pytest.approx(8 * (1 + 2 * math.log(1e5)) / 1e8, rel=1e-14)
    assert_printed(p.num_steps_real, "79.886")
    assert p.num_steps == 80
    assert p.privacy.quantity == "epsilon"
    assert p.privacy.value == pytest.approx(1.0, abs=1e-12)  # Mironov: eps/2 + ln(1/delta)/(alpha - 1) = eps
    exact = lg.theorem4_parameters(epsilon=1.0, delta=1e-5, num_steps_formula="exact", **T4)
    assert_printed(exact.num_steps_real, "79.546")
    assert exact.noise_variance == p.noise_variance
    # the same noise with the optimal-order conversion (spec 10.3): eps_DP = 0.99978 at alpha* = 24.52
    rho = 4 / (1.0 * p.noise_variance * 1e8)
    assert_printed(zcdp_to_epsilon(rho, delta=1e-5, method="bun_steinke"), "0.99978")
    assert_printed(optimal_renyi_order(rho, delta=1e-5, method="bun_steinke"), "24.52")
    # and the optimal-order calibration: sigma^2 = 1.921235e-6
    sigma = lg.noise_scale_for_dp(
        1.0,
        1e-5,
        method="optimal_order",
        step_size=0.125,
        strong_convexity=1,
        smoothness=2,
        sensitivity=2,
        n=10**4,
    ).value
    assert sigma**2 == pytest.approx(1.921235e-6, rel=5e-7)


def test_composition_calibrated_utility_analogue():
    """spec 10.3: composition-calibrated noisy GD has best Lemma-6 bound 5.005e-4 (at K = 92)."""
    ks = np.arange(1, 400)
    per_unit = lg.composition_rdp(
        10, num_steps=ks, step_size=0.125, noise_scale=1.0, sensitivity=2.0, n=10**4
    ).value
    sigma = np.sqrt(per_unit / 1.0)  # composition at noise_scale sigma is per_unit / sigma^2; target eps' = 1
    risk = lg.lemma6_excess_risk_bound(
        num_steps=ks, step_size=0.125, noise_scale=sigma, lipschitz=1, strong_convexity=1, smoothness=2, d=100
    )
    assert int(ks[np.argmin(risk)]) == 92
    assert_printed(float(risk.min()), "5.005e-4")


def test_theorem4_vectorized():
    p = lg.theorem4_parameters(renyi_order=np.array([10.0, 20.0]), rdp_epsilon=1.0, **T4)
    assert p.num_steps.shape == (2,) and p.noise_variance.shape == (2,)
    assert p.num_steps[0] == 93
    np.testing.assert_allclose(p.noise_variance, [4e-7, 8e-7], rtol=1e-14)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(), "exactly one of the pairs"),
        (dict(renyi_order=10, rdp_epsilon=1, epsilon=1, delta=1e-5), "exactly one of the pairs"),
        (dict(renyi_order=10), "rdp_epsilon"),
        (dict(delta=1e-5), "epsilon"),
        (dict(epsilon=30.0, delta=1e-5), "epsilon must be <= 2\\*ln\\(1/delta\\)"),
        (dict(renyi_order=10, rdp_epsilon=1e-7), "K\\* is not positive"),
        (dict(renyi_order=1.0, rdp_epsilon=1.0), "renyi_order"),
        (dict(epsilon=1.0, delta=1.5), "delta"),
        (dict(renyi_order=10, rdp_epsilon=1, num_steps_formula="other"), "num_steps_formula"),
    ],
)
def test_theorem4_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lg.theorem4_parameters(**T4, **kwargs)


def test_theorem4_bad_constants():
    with pytest.raises(ValueError, match="strong_convexity"):
        lg.theorem4_parameters(
            lipschitz=1, strong_convexity=3, smoothness=2, n=10, d=1, renyi_order=2, rdp_epsilon=1
        )
    with pytest.raises(ValueError, match="d must be an integer"):
        lg.theorem4_parameters(
            lipschitz=1, strong_convexity=1, smoothness=2, n=10, d=0, renyi_order=2, rdp_epsilon=1
        )


def test_lemma6_validation():
    kw = dict(num_steps=10, noise_scale=0.1, lipschitz=1, strong_convexity=1, smoothness=2, d=3)
    assert lg.lemma6_excess_risk_bound(step_size=0.125, **kw) > 0
    with pytest.raises(
        ValueError, match=r"step_size must be <= strong_convexity/\(2\*smoothness\*\*2\) = 0.125"
    ):
        lg.lemma6_excess_risk_bound(step_size=0.2, **kw)


# ----------------------------------------------------------------------------------------------------
# labels, shapes, validation


def test_labels_and_sources():
    kw = dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)
    cases = [
        (lg.dynamics_rdp(2, strong_convexity=1, smoothness=2, **kw), Guarantee.BOUND, "Corollary 1"),
        (lg.composition_rdp(2, **kw), Guarantee.BOUND, "Theorem 1"),
        (lg.lsi_rdp(2, lsi_constant=0.5, **kw), Guarantee.BOUND, "Theorem 2"),
        (lg.quadratic_exact_rdp(2, **kw), Guarantee.EXACT, "tightness"),
        (lg.quadratic_lower_bound_rdp(2, **kw), Guarantee.LOWER_BOUND, "Theorem 3"),
        (lg.quadratic_corollary2_rdp(2, **kw), Guarantee.BOUND, "Corollary 2"),
        (lg.tracked_lsi_rdp(2, strong_convexity=1, smoothness=2, **kw), Guarantee.BOUND, "privdyn extension"),
        (lg.best_gamma_rdp(2, strong_convexity=1, smoothness=2, **kw), Guarantee.BOUND, "privdyn extension"),
    ]
    for loss, guarantee, words in cases:
        assert isinstance(loss, PrivacyLoss)
        assert loss.guarantee is guarantee
        assert loss.neighboring is NeighboringRelation.REPLACE_ONE
        assert loss.quantity == "rdp_epsilon"
        assert "Chourasia, Ye, Shokri 2021 (arXiv 2102.05855)" in loss.source and words in loss.source
        assert isinstance(loss.value, float)
    assert "assumes" in cases[0][0].source
    assert not Guarantee.LOWER_BOUND.is_guarantee


def test_broadcasting():
    alpha = np.array([2.0, 10.0, 30.0])[:, None]
    k = np.arange(0, 50, 10)[None, :]
    out = lg.dynamics_rdp(alpha, num_steps=k, strong_convexity=1.0, **FIG1).value
    assert out.shape == (3, 5)
    for i in range(3):
        for j in range(5):
            one = lg.dynamics_rdp(
                float(alpha[i, 0]), num_steps=int(k[0, j]), strong_convexity=1.0, **FIG1
            ).value
            assert isinstance(one, float) and out[i, j] == one
    assert lg.composition_rdp(alpha, num_steps=k, **FIG1_BASE).value.shape == (3, 5)
    assert lg.quadratic_exact_rdp(
        2.0,
        num_steps=k,
        step_size=np.array([[0.1], [0.5]]),
        noise_scale=1.0,
        sensitivity=1.0,
        n=1,
        init_variance=np.array([0.0, 0.0, 1.0, 1.0, 2.0]),
    ).value.shape == (2, 5)
    assert lg.best_gamma_rdp(alpha, num_steps=k, strong_convexity=1.0, **FIG1).value.shape == (3, 5)
    assert lg.tracked_lsi_rdp(alpha, num_steps=k, strong_convexity=1.0, **FIG1).value.shape == (3, 5)
    assert isinstance(lg.crossover_num_steps(step_size=0.02, strong_convexity=1), float)
    # integral floats are accepted for counts
    assert (
        lg.dynamics_rdp(
            2,
            num_steps=5.0,
            strong_convexity=1.0,
            step_size=0.02,
            noise_scale=0.02,
            smoothness=4,
            sensitivity=4,
            n=5000.0,
        ).value
        > 0
    )


def test_num_steps_zero_gives_zero():
    kw = dict(num_steps=0, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)
    assert lg.dynamics_rdp(2, strong_convexity=1, smoothness=2, **kw).value == 0.0
    assert lg.composition_rdp(2, **kw).value == 0.0
    assert lg.lsi_rdp(2, lsi_constant=1.0, **kw).value == 0.0
    assert lg.quadratic_lower_bound_rdp(2, **kw).value == 0.0
    assert lg.quadratic_corollary2_rdp(2, **kw).value == 0.0
    assert (
        lg.tracked_lsi_rdp(2, strong_convexity=1, smoothness=2, init_lsi_constant=np.inf, **kw).value == 0.0
    )
    assert lg.best_gamma_rdp(2, strong_convexity=1, smoothness=2, **kw).value == 0.0


GOOD = dict(
    renyi_order=10.0,
    num_steps=100,
    step_size=0.02,
    noise_scale=0.02,
    strong_convexity=1.0,
    smoothness=4.0,
    sensitivity=4.0,
    n=5000,
)

BAD_INPUTS = [  # (parameter, bad value, message fragment)
    ("step_size", 0.25, "step_size must be < 1/smoothness = 0.25"),
    ("step_size", 1.0, "step_size must be < 1/smoothness = 0.25"),
    ("step_size", 0.0, "step_size"),
    ("strong_convexity", 5.0, "strong_convexity must be <= smoothness = 4.0"),
    ("strong_convexity", 0.0, "strong_convexity"),
    ("renyi_order", 1.0, "renyi_order"),
    ("renyi_order", 0.5, "renyi_order"),
    ("noise_scale", 0.0, "noise_scale"),
    ("noise_scale", -1.0, "noise_scale"),
    ("n", 0, "n must be"),
    ("n", 2.5, "n must be an integer"),
    ("num_steps", -1, "num_steps"),
    ("sensitivity", 0.0, "sensitivity"),
    ("sensitivity", -2.0, "sensitivity"),
    ("smoothness", 0.0, "smoothness"),
]
NON_FINITE = [(name, bad) for name in GOOD for bad in (math.nan, math.inf)]


def _call_with(fn, params, **override):
    kwargs = {key: value for key, value in {**GOOD, **override}.items() if key in params}
    first = kwargs.pop("renyi_order")
    return fn(first, **kwargs)


C1_FUNCTIONS = {
    "dynamics_rdp": (lg.dynamics_rdp, set(GOOD)),
    "best_gamma_rdp": (lg.best_gamma_rdp, set(GOOD)),
}


@pytest.mark.parametrize("fn_name", sorted(C1_FUNCTIONS))
@pytest.mark.parametrize(("name", "bad", "match"), BAD_INPUTS)
def test_corollary1_validation(fn_name, name, bad, match):
    fn, params = C1_FUNCTIONS[fn_name]
    with pytest.raises(ValueError, match=match.replace("(", r"\(").replace(")", r"\)")):
        _call_with(fn, params, **{name: bad})


@pytest.mark.parametrize(("name", "bad"), NON_FINITE)
def test_non_finite_rejected(name, bad):
    with pytest.raises(ValueError, match=name):
        _call_with(lg.dynamics_rdp, set(GOOD), **{name: bad})


def test_validation_array_message_names_first_bad_element():
    with pytest.raises(ValueError, match=r"step_size must be < 1/smoothness = 0.5; got step_size=0.6"):
        lg.dynamics_rdp(
            2,
            num_steps=1,
            step_size=np.array([0.1, 0.6]),
            noise_scale=1,
            strong_convexity=1,
            smoothness=np.array([4.0, 2.0]),
            sensitivity=1,
            n=1,
        )


OTHER_FUNCTIONS = [
    (lg.composition_rdp, dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.lsi_rdp, dict(lsi_constant=0.5, num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.quadratic_exact_rdp, dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.quadratic_lower_bound_rdp, dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.quadratic_corollary2_rdp, dict(num_steps=10, step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=5)),
    (lg.dynamics_rdp_asymptote, dict(noise_scale=1.0, strong_convexity=1.0, sensitivity=1.0, n=5)),
    (
        lg.dynamics_rdp_increment,
        dict(
            step_index=3,
            step_size=0.1,
            noise_scale=1.0,
            strong_convexity=1.0,
            smoothness=2.0,
            sensitivity=1.0,
            n=5,
        ),
    ),
    (
        lg.tracked_lsi_rdp,
        dict(
            num_steps=10,
            step_size=0.1,
            noise_scale=1.0,
            strong_convexity=1.0,
            smoothness=2.0,
            sensitivity=1.0,
            n=5,
        ),
    ),
]


@pytest.mark.parametrize(("fn", "kwargs"), OTHER_FUNCTIONS, ids=lambda v: getattr(v, "__name__", ""))
def test_common_validation(fn, kwargs):
    assert fn(2.0, **kwargs).value >= 0
    with pytest.raises(ValueError, match="renyi_order"):
        fn(1.0, **kwargs)
    for name, bad in [
        ("noise_scale", 0.0),
        ("sensitivity", -1.0),
        ("n", 0),
        ("num_steps", -1),
        ("step_size", 0.0),
        ("lsi_constant", 0.0),
        ("step_index", 0),
        ("noise_scale", math.nan),
    ]:
        if name in kwargs:
            with pytest.raises(ValueError, match=name):
                fn(2.0, **{**kwargs, name: bad})


@pytest.mark.parametrize(
    "fn", [lg.quadratic_exact_rdp, lg.quadratic_lower_bound_rdp, lg.quadratic_corollary2_rdp]
)
def test_quadratic_step_size_range(fn):
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"step_size must be in \(0.0, 1.0\)"):
            fn(2.0, num_steps=3, step_size=bad, noise_scale=1.0, sensitivity=1.0, n=1)
    with pytest.raises(ValueError, match="init_variance"):
        lg.quadratic_exact_rdp(
            2.0, num_steps=3, step_size=0.5, noise_scale=1.0, sensitivity=1.0, n=1, init_variance=-1.0
        )


def test_calibration_validation():
    kw = dict(step_size=0.1, strong_convexity=1.0, smoothness=2.0, sensitivity=1.0, n=100)
    with pytest.raises(ValueError, match="rdp_epsilon"):
        lg.noise_scale_for_rdp(2.0, 0.0, **kw)
    with pytest.raises(ValueError, match="num_steps"):
        lg.noise_scale_for_rdp(2.0, 1.0, num_steps=0, **kw)
    with pytest.raises(ValueError, match="step_size must be < 1/smoothness = 0.5"):
        lg.noise_scale_for_rdp(2.0, 1.0, **{**kw, "step_size": 0.5})
    with pytest.raises(ValueError, match=r"epsilon must be <= 2\*ln\(1/delta\)"):
        lg.noise_scale_for_dp(50.0, 1e-5, method="paper", **kw)
    assert lg.noise_scale_for_dp(50.0, 1e-5, method="optimal_order", **kw).value > 0
    with pytest.raises(ValueError, match="delta"):
        lg.noise_scale_for_dp(1.0, 0.0, **kw)
    with pytest.raises(ValueError, match="delta"):
        lg.noise_scale_for_dp(1.0, 1.0, method="optimal_order", **kw)
    with pytest.raises(ValueError, match="epsilon"):
        lg.noise_scale_for_dp(-1.0, 1e-5, **kw)
    with pytest.raises(ValueError, match="method"):
        lg.noise_scale_for_dp(1.0, 1e-5, method="balle", **kw)


def test_time_scale_validation():
    with pytest.raises(ValueError, match="step_size"):
        lg.crossover_num_steps(step_size=0.0, strong_convexity=1.0)
    with pytest.raises(ValueError, match="strong_convexity"):
        lg.crossover_num_steps(step_size=0.1, strong_convexity=-1.0)
    with pytest.raises(ValueError, match="fraction"):
        lg.steps_to_fraction(1.0, step_size=0.1, strong_convexity=1.0)
    with pytest.raises(ValueError, match="init_lsi_constant"):
        lg.lsi_constant_tracker(
            num_steps=3, step_size=0.1, noise_scale=1, strong_convexity=1, smoothness=1, init_lsi_constant=0.0
        )
    with pytest.raises(ValueError, match="num_steps"):
        lg.lsi_constant_tracker(
            num_steps=-1,
            step_size=0.1,
            noise_scale=1,
            strong_convexity=1,
            smoothness=1,
            init_lsi_constant=1.0,
        )
