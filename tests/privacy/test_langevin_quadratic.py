"""Tests of privdyn.privacy.langevin (Chourasia, Ye, Shokri 2021, arXiv 2102.05855): the quadratic instance (spec 3.4
and 10.2): exact Rényi divergences, the lower bound (17), orderings against Corollaries 1-2 and composition
(privdyn.privacy.langevin.quadratic).

Reference numbers come from specs/seed-001.md, which derives them from the paper's formulas.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privdyn.privacy import langevin as lg

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=200)


# Quadratic instance of spec 10.2: alpha = 2, S_g = 1, n = 1, sigma = 1, eta = 0.1.
QUAD = dict(step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=1)


def assert_printed(value: float, printed: str) -> None:
    """value rounds to the printed decimal (half a unit of the last printed digit)."""
    exponent = Decimal(printed).as_tuple().exponent
    tolerance = 0.5 * 10.0**exponent * (1 + 1e-9)
    assert abs(value - float(printed)) <= tolerance, (value, printed)


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
