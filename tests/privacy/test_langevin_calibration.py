"""Tests of privdyn.privacy.langevin (Chourasia, Ye, Shokri 2021, arXiv 2102.05855): calibration: the noise scale for a
target RDP or (epsilon, delta), round trips (privdyn.privacy.langevin.calibration).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privdyn.privacy import langevin as lg
from privdyn.privacy.conversions import rdp_to_epsilon, zcdp_to_epsilon
from privdyn.privacy.labels import Guarantee

PROFILE = settings(derandomize=True, database=None, deadline=None, max_examples=200)


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
