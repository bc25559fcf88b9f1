"""Tests of privdyn.privacy.langevin (Chourasia, Ye, Shokri 2021, arXiv 2102.05855): Theorem 2's special cases
(``lsi_rdp``) and the labelled extensions (LSI trackers, the best gamma; privdyn.privacy.langevin.extensions).
"""

from __future__ import annotations

import numpy as np
import pytest

from privdyn.privacy import langevin as lg
from privdyn.privacy.labels import Guarantee

# Figure 1 settings (spec 6): beta = 4, S_g = 4, n = 5000, eta = 0.02, sigma = 0.02.
FIG1 = dict(step_size=0.02, noise_scale=0.02, smoothness=4.0, sensitivity=4.0, n=5000)
FIG1_BASE = dict(step_size=0.02, noise_scale=0.02, sensitivity=4.0, n=5000)

# Quadratic instance of spec 10.2: alpha = 2, S_g = 1, n = 1, sigma = 1, eta = 0.1.
QUAD = dict(step_size=0.1, noise_scale=1.0, sensitivity=1.0, n=1)


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
