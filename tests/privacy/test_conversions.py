"""Tests of privdyn.privacy.conversions against independent oracles.

Oracles: the printed formulas evaluated by hand (Mironov Prop. 3, Canonne-Kamath-Steinke Prop. 12, Bun-Steinke
Prop. 1.3) in mpmath; the exact (epsilon, delta) curve of the Gaussian mechanism (Balle & Wang 2018, analytic
Gaussian: dp_accounting's ``get_epsilon_gaussian`` and the delta(epsilon) formula with scipy's normal CDF), a lower
bound for any RDP or zCDP conversion of that mechanism; a dense grid of orders and an mpmath minimization (numerical
derivative, no closed-form stationarity condition) for the ``optimal`` zCDP conversion.
"""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
import scipy.stats
from dp_accounting import gaussian_mechanism
from dp_accounting.rdp import rdp_privacy_accountant
from hypothesis import given, settings
from hypothesis import strategies as st

from privdyn.privacy.conversions import (
    epsilon_to_zcdp,
    gaussian_zcdp,
    optimal_renyi_order,
    rdp_to_delta,
    rdp_to_epsilon,
    zcdp_to_epsilon,
    zcdp_to_rdp,
)
from privdyn.privacy.divergences import renyi_gaussian

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=60)

ORDERS = np.concatenate([np.linspace(1.02, 1.5, 25), np.linspace(1.5, 20, 150), np.geomspace(20, 5000, 200)])


def mp_balle(alpha, rdp, delta) -> mp.mpf:
    """Canonne, Kamath & Steinke (arXiv:2004.00010v4) Prop. 12, as printed, in 50 digits."""
    with mp.workdps(50):
        a, r, d = mp.mpf(alpha), mp.mpf(rdp), mp.mpf(delta)
        return r + mp.log((a - 1) / a) - (mp.log(d) + mp.log(a)) / (a - 1)


def exact_gaussian_delta(epsilon: float, noise_multiplier: float) -> float:
    """Balle & Wang (2018) Thm 8: delta(epsilon) of the Gaussian mechanism with sensitivity 1, std z."""
    z = noise_multiplier
    return float(
        scipy.stats.norm.cdf(-epsilon * z + 1 / (2 * z))
        - math.exp(epsilon) * scipy.stats.norm.cdf(-epsilon * z - 1 / (2 * z))
    )


def mp_optimal_epsilon(zcdp: float, delta: float) -> tuple[mp.mpf, mp.mpf]:
    """min over alpha > 1 of the Prop. 12 conversion of alpha * zcdp: mpmath root of a numerical derivative."""
    with mp.workdps(40):
        rho, d = mp.mpf(zcdp), mp.mpf(delta)

        def f(a):
            return a * rho + mp.log((a - 1) / a) - (mp.log(d) + mp.log(a)) / (a - 1)

        start = 1 + mp.sqrt(-mp.log(d) / rho)  # Mironov's optimum, to the right of the minimizer
        alpha = mp.findroot(lambda a: mp.diff(f, a), (1 + (start - 1) / 4, start), solver="anderson")
        return f(alpha), alpha


# ----------------------------------------------------------------------------------------------------
# RDP -> (epsilon, delta)
# ----------------------------------------------------------------------------------------------------


def test_mironov_matches_hand_formula():
    orders = np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    rdp = np.array([0.01, 0.05, 0.2, 0.3, 0.9, 2.0, 5.0])
    delta = 1e-6
    hand = rdp + math.log(1 / delta) / (orders - 1)
    eps, order = rdp_to_epsilon(orders, rdp, delta=delta, method="mironov")
    assert eps == pytest.approx(hand.min(), rel=1e-13)
    assert eps >= hand.min()
    assert order == orders[np.argmin(hand)]


def test_balle2020_matches_hand_formula_and_is_conservative():
    orders = np.array([1.5, 2.0, 3.0, 5.5, 10.0, 40.0])
    rdp = orders / (2 * 1.3**2)
    delta = 1e-5
    expected = [mp_balle(a, r, delta) for a, r in zip(orders, rdp, strict=True)]
    best = int(np.argmin([float(v) for v in expected]))
    eps, order = rdp_to_epsilon(orders, rdp, delta=delta)
    assert order == orders[best]
    assert eps == pytest.approx(float(expected[best]), rel=1e-13)
    assert mp.mpf(eps) >= expected[best]  # never below the exact value of the conversion


@PROFILE
@given(
    noise_multiplier=st.floats(0.3, 20.0),
    log10_delta=st.floats(-12, -2),
)
def test_conversions_bracket_the_exact_gaussian_epsilon(noise_multiplier, log10_delta):
    delta = 10.0**log10_delta
    rdp = ORDERS / (2 * noise_multiplier**2)
    exact = gaussian_mechanism.get_epsilon_gaussian(noise_multiplier, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # optimum at a grid edge for extreme parameters
        mironov, _ = rdp_to_epsilon(ORDERS, rdp, delta=delta, method="mironov")
        balle, _ = rdp_to_epsilon(ORDERS, rdp, delta=delta)
    zcdp = gaussian_zcdp(sensitivity=1.0, noise_std=noise_multiplier)
    optimal = zcdp_to_epsilon(zcdp, delta=delta, method="optimal")
    closed = zcdp_to_epsilon(zcdp, delta=delta)
    tol = 1e-9  # get_epsilon_gaussian's root-finding tolerance is 1e-12
    assert exact - tol <= optimal <= balle * (1 + 1e-12) <= mironov * (1 + 1e-12)
    assert optimal <= closed <= mironov * (1 + 1e-12)
    # the delta direction, against the closed-form delta(epsilon) of the analytic Gaussian
    if 0 < balle < 1e6:
        d_balle, _ = rdp_to_delta(ORDERS, rdp, epsilon=balle)
        assert d_balle <= delta * (1 + 1e-9)
        assert exact_gaussian_delta(balle, noise_multiplier) <= d_balle * (1 + 1e-9) + 1e-300


@PROFILE
@given(
    rdp=st.lists(st.floats(0.0, 50.0), min_size=1, max_size=6),
    orders=st.lists(st.floats(1.0001, 300.0), min_size=6, max_size=6),
    log10_delta=st.floats(-12, -0.5),
)
def test_balle2020_never_above_mironov(rdp, orders, log10_delta):
    orders = orders[: len(rdp)]
    delta = 10.0**log10_delta
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        balle, _ = rdp_to_epsilon(orders, rdp, delta=delta)
        mironov, _ = rdp_to_epsilon(orders, rdp, delta=delta, method="mironov")
        d_balle, _ = rdp_to_delta(orders, rdp, epsilon=mironov)
    assert 0.0 <= balle <= mironov
    assert d_balle <= delta * (1 + 1e-9)


def test_orders_at_most_1_01_fall_back_to_mironov():
    """dp_accounting 0.6 skips the Balle et al. bound at orders <= 1.01 (returns inf); privdyn uses Mironov's."""
    delta, order, rdp = 1e-5, 1.005, 1.0
    skipped, _ = rdp_privacy_accountant.compute_epsilon([order], [rdp], delta)
    assert skipped == math.inf  # if dp_accounting changes this, the documented fallback must be revisited
    balle, _ = rdp_to_epsilon([order], [rdp], delta=delta)
    mironov, _ = rdp_to_epsilon([order], [rdp], delta=delta, method="mironov")
    assert balle == mironov == pytest.approx(rdp + math.log(1 / delta) / (order - 1), rel=1e-13)
    # dp_accounting's total-variation bound at small orders: delta >= sqrt(1 - exp(-r)) gives epsilon = 0
    assert rdp_to_epsilon([1.005], [1e-12], delta=1e-3)[0] == 0.0
    d_tv, _ = rdp_to_delta([1.005], [0.5], epsilon=0.0)
    assert d_tv == pytest.approx(math.sqrt(1 - math.exp(-0.5)), rel=1e-12)


def test_infinite_rdp_values():
    assert rdp_to_epsilon([2.0, 3.0], [math.inf, math.inf], delta=1e-5) == (math.inf, 2.0)
    assert rdp_to_epsilon([2.0, 3.0], [math.inf, math.inf], delta=1e-5, method="mironov") == (math.inf, 2.0)
    eps, order = rdp_to_epsilon([2.0, 3.0, 4.0], [math.inf, 0.5, math.inf], delta=1e-5)
    assert order == 3.0 and math.isfinite(eps)
    assert rdp_to_delta([2.0, 3.0], [math.inf, math.inf], epsilon=1.0) == (1.0, 2.0)


def test_scalar_inputs_and_edge_warning():
    eps, order = rdp_to_epsilon(4.0, 0.5, delta=1e-5, method="mironov")
    assert order == 4.0 and eps == pytest.approx(0.5 + math.log(1e5) / 3, rel=1e-13)
    with pytest.warns(UserWarning, match="edge of renyi_orders"):
        rdp_to_epsilon([2.0, 3.0], [0.01, 0.015], delta=1e-5)  # the optimum wants a larger order


def test_mironov_delta_matches_hand_formula():
    orders = np.array([2.0, 4.0, 8.0])
    rdp = np.array([0.1, 0.3, 0.9])
    hand = np.exp((orders - 1) * (rdp - 2.0))
    with pytest.warns(UserWarning, match="edge of renyi_orders"):  # the optimum is at the largest order
        delta, order = rdp_to_delta(orders, rdp, epsilon=2.0, method="mironov")
    assert delta == pytest.approx(hand.min(), rel=1e-13) and delta >= hand.min()
    assert order == orders[np.argmin(hand)]


# ----------------------------------------------------------------------------------------------------
# zCDP
# ----------------------------------------------------------------------------------------------------


def test_bun_steinke_closed_form_and_notation_examples():
    assert zcdp_to_epsilon(0.5, delta=1e-5) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)), rel=1e-14)
    assert zcdp_to_epsilon(0.5, delta=1e-5) == pytest.approx(5.2985, abs=5e-5)  # docs/notation.md example
    assert epsilon_to_zcdp(1.0, delta=1e-5) == pytest.approx(0.020820, abs=5e-7)
    assert zcdp_to_epsilon(0.0, delta=1e-5) == 0.0 and zcdp_to_epsilon(0.0, delta=1e-5, method="optimal") == 0.0
    assert optimal_renyi_order(0.5, delta=1e-5) == pytest.approx(1 + math.sqrt(math.log(1e5) / 0.5), rel=1e-14)
    assert optimal_renyi_order(0.0, delta=1e-5) == math.inf


@PROFILE
@given(zcdp=st.floats(1e-8, 1e4), log10_delta=st.floats(-15, -0.1))
def test_bun_steinke_round_trip(zcdp, log10_delta):
    delta = 10.0**log10_delta
    eps = zcdp_to_epsilon(zcdp, delta=delta)
    back = epsilon_to_zcdp(eps, delta=delta)
    assert back == pytest.approx(zcdp, rel=1e-12)
    assert zcdp_to_epsilon(back, delta=delta) <= eps  # calibration on the safe side


def test_bun_steinke_is_mironov_minimized_over_orders():
    zcdp, delta = 0.3, 1e-7
    orders = np.linspace(1.001, 200, 400_001)
    grid = np.min(orders * zcdp + math.log(1 / delta) / (orders - 1))
    eps = zcdp_to_epsilon(zcdp, delta=delta)
    assert eps <= grid * (1 + 1e-14) and eps == pytest.approx(grid, rel=1e-9)


def test_vectorization_shapes():
    assert isinstance(zcdp_to_epsilon(0.1, delta=1e-5), float)
    assert isinstance(zcdp_to_epsilon(0.1, delta=1e-5, method="optimal"), float)
    zs = np.array([0.01, 0.1, 1.0])
    out = zcdp_to_epsilon(zs, delta=1e-5)
    assert out.shape == (3,)
    np.testing.assert_allclose(out, zs + 2 * np.sqrt(zs * math.log(1e5)), rtol=1e-14)
    grid = zcdp_to_epsilon(zs[:, None], delta=np.array([1e-3, 1e-6]), method="optimal")
    assert grid.shape == (3, 2)
    assert grid[1, 1] == zcdp_to_epsilon(0.1, delta=1e-6, method="optimal")
    assert epsilon_to_zcdp(np.array([0.5, 1.0]), delta=1e-5, method="optimal").shape == (2,)
    assert optimal_renyi_order(zs, delta=1e-5, method="optimal").shape == (3,)
    assert zcdp_to_rdp(zs, np.array([[2.0], [3.0]])).shape == (2, 3)
    assert gaussian_zcdp(sensitivity=np.array([1.0, 2.0]), noise_std=2.0).shape == (2,)


@pytest.mark.parametrize(("zcdp", "delta"), [(1e-3, 1e-5), (0.05, 1e-8), (0.5, 1e-5), (3.0, 1e-3), (200.0, 1e-10)])
def test_optimal_against_mpmath_and_dense_grid(zcdp, delta):
    eps = zcdp_to_epsilon(zcdp, delta=delta, method="optimal")
    order = optimal_renyi_order(zcdp, delta=delta, method="optimal")
    expected, alpha = mp_optimal_epsilon(zcdp, delta)
    assert mp.mpf(eps) >= expected  # never below the infimum
    assert eps == pytest.approx(float(expected), rel=1e-13, abs=1e-15)
    assert order == pytest.approx(float(alpha), rel=1e-7)
    assert order < optimal_renyi_order(zcdp, delta=delta)  # left of Mironov's optimum
    # dense grid of orders around the optimum through the rdp_to_epsilon(balle2020) path
    grid = np.linspace(1 + (order - 1) * 0.5, 1 + (order - 1) * 1.5, 20_001)
    grid = grid[grid > 1.01]
    grid_eps, _ = rdp_to_epsilon(grid, grid * zcdp, delta=delta)
    assert eps <= grid_eps * (1 + 1e-13)
    assert eps == pytest.approx(grid_eps, rel=1e-8)


def test_optimal_extreme_parameters():
    for zcdp in (1e-14, 1e-9, 1e6, 1e12):
        for delta in (1e-12, 0.3):
            eps = zcdp_to_epsilon(zcdp, delta=delta, method="optimal")
            assert 0.0 <= eps <= zcdp_to_epsilon(zcdp, delta=delta)
            assert math.isfinite(eps)
    # total-variation region: delta^2 > 1 - exp(-zcdp) gives epsilon = 0
    assert zcdp_to_epsilon(1e-12, delta=1e-5, method="optimal") == 0.0


@PROFILE
@given(epsilon=st.floats(1e-3, 60.0), log10_delta=st.floats(-14, -0.5))
def test_optimal_calibration_is_on_the_safe_side(epsilon, log10_delta):
    delta = 10.0**log10_delta
    zcdp = epsilon_to_zcdp(epsilon, delta=delta, method="optimal")
    back = zcdp_to_epsilon(zcdp, delta=delta, method="optimal")
    assert back <= epsilon
    assert back == pytest.approx(epsilon, rel=1e-9)
    assert zcdp >= epsilon_to_zcdp(epsilon, delta=delta)  # a tighter conversion allows more zcdp


def test_epsilon_zero():
    assert epsilon_to_zcdp(0.0, delta=1e-5) == 0.0
    zcdp = epsilon_to_zcdp(0.0, delta=1e-5, method="optimal")
    assert zcdp >= -math.log1p(-1e-10) * (1 - 1e-12)  # at least the total-variation region
    assert zcdp_to_epsilon(zcdp, delta=1e-5, method="optimal") == 0.0


def test_zcdp_to_rdp_and_gaussian_zcdp():
    assert zcdp_to_rdp(0.25, 3.0) == 0.75
    assert gaussian_zcdp(sensitivity=2.0, noise_std=4.0) == 0.125
    # the Gaussian mechanism's RDP is exactly alpha * zcdp (independent path: the Gaussian divergence)
    for alpha in (1.5, 2.0, 9.0):
        rdp = renyi_gaussian(alpha, mean1=[0.0, 0.0], cov1=16 * np.eye(2), mean2=[2.0, 0.0], cov2=16 * np.eye(2))
        assert rdp == pytest.approx(zcdp_to_rdp(gaussian_zcdp(sensitivity=2.0, noise_std=4.0), alpha), rel=1e-14)


# ----------------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, math.nan])
def test_invalid_delta(bad):
    pattern = r"delta must be (in \(0.0, 1.0\)|finite); got delta="
    with pytest.raises(ValueError, match=pattern):
        rdp_to_epsilon([2.0], [0.1], delta=bad)
    with pytest.raises(ValueError, match=pattern):
        zcdp_to_epsilon(0.1, delta=bad)
    with pytest.raises(ValueError, match=pattern):
        epsilon_to_zcdp(1.0, delta=bad, method="optimal")
    with pytest.raises(ValueError, match=pattern):
        optimal_renyi_order(0.1, delta=bad)


def test_invalid_curves():
    with pytest.raises(
        ValueError, match=r"rdp_epsilons must have the same length as renyi_orders \(2\); got rdp_epsilons of length 3"
    ):
        rdp_to_epsilon([2.0, 3.0], [0.1, 0.2, 0.3], delta=1e-5)
    with pytest.raises(ValueError, match=r"renyi_orders must be in \(1.0, inf\); got renyi_orders=1.0"):
        rdp_to_epsilon([1.0, 3.0], [0.1, 0.2], delta=1e-5)
    with pytest.raises(ValueError, match=r"rdp_epsilons must be in \[0.0, inf\]; got rdp_epsilons=-0.1"):
        rdp_to_delta([2.0, 3.0], [-0.1, 0.2], epsilon=1.0)
    with pytest.raises(ValueError, match="rdp_epsilons must be in .*; got rdp_epsilons=nan"):
        rdp_to_epsilon([2.0], [math.nan], delta=1e-5)
    with pytest.raises(ValueError, match="renyi_orders must contain at least one order"):
        rdp_to_epsilon([], [], delta=1e-5)
    with pytest.raises(ValueError, match="renyi_orders must be a scalar or a 1-D array"):
        rdp_to_epsilon([[2.0]], [[0.1]], delta=1e-5)
    with pytest.raises(ValueError, match="method must be one of 'balle2020', 'mironov'; got method='exact'"):
        rdp_to_epsilon([2.0], [0.1], delta=1e-5, method="exact")
    with pytest.raises(ValueError, match="epsilon must be >= 0; got epsilon=-1.0"):
        rdp_to_delta([2.0], [0.1], epsilon=-1.0)
    with pytest.raises(TypeError, match="epsilon must be a real scalar"):
        rdp_to_delta([2.0], [0.1], epsilon=[1.0, 2.0])


def test_invalid_zcdp_arguments():
    with pytest.raises(ValueError, match="zcdp must be >= 0; got zcdp=-0.5"):
        zcdp_to_epsilon(-0.5, delta=1e-5)
    with pytest.raises(ValueError, match="zcdp must be finite; got zcdp=inf"):
        zcdp_to_epsilon(math.inf, delta=1e-5, method="optimal")
    with pytest.raises(ValueError, match="epsilon must be >= 0; got epsilon=-1.0"):
        epsilon_to_zcdp(-1.0, delta=1e-5)
    with pytest.raises(ValueError, match="method must be one of 'bun_steinke', 'optimal'; got method='mironov'"):
        zcdp_to_epsilon(0.1, delta=1e-5, method="mironov")
    with pytest.raises(ValueError, match=r"renyi_order must be in \(1.0, inf\); got renyi_order=0.5"):
        zcdp_to_rdp(0.1, 0.5)
    with pytest.raises(ValueError, match="noise_std must be > 0; got noise_std=0.0"):
        gaussian_zcdp(sensitivity=1.0, noise_std=0.0)
    with pytest.raises(ValueError, match="sensitivity must be >= 0; got sensitivity=-1.0"):
        gaussian_zcdp(sensitivity=-1.0, noise_std=1.0)
    with pytest.raises(ValueError, match="must broadcast to one shape"):
        zcdp_to_epsilon(np.ones(3), delta=np.full(2, 1e-5))
