"""Tests of privdyn.privacy.divergences against independent oracles.

Oracles: mpmath quadrature of the defining integral (1-D in multiple precision, 2-D in mpmath's float
context), the naive closed form evaluated by mpmath at 50-80 digits (for tiny divergences and orders near 1, where
the cancellation is absorbed by the precision), the equal-covariance closed form, the dense path for the low-rank
path, and block-structured problems whose divergence is a sum of independent pieces for d = 10^5.
"""

from __future__ import annotations

import math
import time

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from privdyn.privacy import divergences as dv
from privdyn.privacy.divergences import (
    DiagonalPlusLowRank,
    kl_gaussian,
    kl_gaussian_lowrank,
    renyi_gaussian,
    renyi_gaussian_lowrank,
    renyi_gaussian_symmetric_sup,
)

PROFILE = settings(derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------------------------------
# Oracles
# ----------------------------------------------------------------------------------------------------


def quad_renyi_1d(alpha: float, m1: float, v1: float, m2: float, v2: float, dps: int = 30) -> float:
    """log(integral p^alpha q^(1-alpha)) / (alpha - 1) by mpmath quadrature (variances v1, v2)."""
    with mp.workdps(dps):
        a = mp.mpf(alpha)

        def integrand(x):
            lp = -((x - m1) ** 2) / (2 * mp.mpf(v1)) - mp.log(2 * mp.pi * v1) / 2
            lq = -((x - m2) ** 2) / (2 * mp.mpf(v2)) - mp.log(2 * mp.pi * v2) / 2
            return mp.exp(a * lp + (1 - a) * lq)

        integral = mp.quad(integrand, [-mp.inf, min(m1, m2) - 5, m1, m2, max(m1, m2) + 5, mp.inf])
        return float(mp.log(integral) / (a - 1))


def quad_kl_1d(m1: float, v1: float, m2: float, v2: float) -> float:
    with mp.workdps(30):

        def integrand(x):
            lp = -((x - m1) ** 2) / (2 * mp.mpf(v1)) - mp.log(2 * mp.pi * v1) / 2
            lq = -((x - m2) ** 2) / (2 * mp.mpf(v2)) - mp.log(2 * mp.pi * v2) / 2
            return mp.exp(lp) * (lp - lq)

        return float(mp.quad(integrand, [-mp.inf, m1 - 5, m1, m1 + 5, mp.inf]))


def _log_density_2d(mean: np.ndarray, cov: np.ndarray):
    det = cov[0, 0] * cov[1, 1] - cov[0, 1] ** 2
    i00, i01, i11 = cov[1, 1] / det, -cov[0, 1] / det, cov[0, 0] / det
    const = -math.log(2 * math.pi) - 0.5 * math.log(det)

    def log_density(x: float, y: float) -> float:
        a, b = x - mean[0], y - mean[1]
        return -0.5 * (i00 * a * a + 2 * i01 * a * b + i11 * b * b) + const

    return log_density


def quad_renyi_2d(alpha: float, m1, c1, m2, c2) -> float:
    """2-D quadrature of the defining integral (mpmath tanh-sinh in its float context, ~1e-15)."""
    lp, lq = _log_density_2d(m1, c1), _log_density_2d(m2, c2)
    pts = [-14, -3, 0, 3, 14]
    integral = mp.fp.quad(lambda x, y: math.exp(alpha * lp(x, y) + (1 - alpha) * lq(x, y)), pts, pts)
    return math.log(integral) / (alpha - 1)


def mp_renyi_closed_form(alpha, m1, c1, m2, c2, dps: int = 60) -> mp.mpf:
    """The textbook formula, naively, in multiple precision (inputs converted exactly from float64)."""
    with mp.workdps(dps):
        a = mp.mpf(alpha)
        s1, s2 = mp.matrix(np.asarray(c1).tolist()), mp.matrix(np.asarray(c2).tolist())
        delta = mp.matrix([mp.mpf(x) - mp.mpf(y) for x, y in zip(np.ravel(m1), np.ravel(m2), strict=True)])
        mix = a * s2 + (1 - a) * s1
        quad = (delta.T * mp.lu_solve(mix, delta))[0]
        logdet = mp.log(mp.det(mix)) - (1 - a) * mp.log(mp.det(s1)) - a * mp.log(mp.det(s2))
        return a / 2 * quad - logdet / (2 * (a - 1))


def mp_kl_closed_form(m1, c1, m2, c2, dps: int = 60) -> mp.mpf:
    with mp.workdps(dps):
        s1, s2 = mp.matrix(np.asarray(c1).tolist()), mp.matrix(np.asarray(c2).tolist())
        delta = mp.matrix([mp.mpf(x) - mp.mpf(y) for x, y in zip(np.ravel(m1), np.ravel(m2), strict=True)])
        s2inv = mp.inverse(s2)
        trace = sum((s2inv * s1)[i, i] for i in range(s1.rows))
        quad = (delta.T * s2inv * delta)[0]
        return (trace - s1.rows + quad + mp.log(mp.det(s2)) - mp.log(mp.det(s1))) / 2


def random_spd(rng: np.random.Generator, d: int, spread: float = 1.0) -> np.ndarray:
    a = rng.normal(size=(d, d))
    return a @ a.T / d + spread * np.eye(d)


# ----------------------------------------------------------------------------------------------------
# Dense Renyi divergence
# ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.7, 7.25])
@pytest.mark.parametrize(("m1", "v1", "m2", "v2"), [(0.3, 1.2, -0.4, 0.9), (0.0, 1.0, 0.5, 1.69), (1.0, 0.5, 0.0, 0.7)])
def test_renyi_1d_matches_quadrature(alpha, m1, v1, m2, v2):
    mix = alpha * v2 + (1 - alpha) * v1
    if mix <= 0:
        assert renyi_gaussian(alpha, mean1=[m1], cov1=[[v1]], mean2=[m2], cov2=[[v2]]) == math.inf
        return
    got = renyi_gaussian(alpha, mean1=[m1], cov1=[[v1]], mean2=[m2], cov2=[[v2]])
    assert got == pytest.approx(quad_renyi_1d(alpha, m1, v1, m2, v2), rel=1e-12)


@pytest.mark.parametrize("alpha", [1.5, 3.25])
def test_renyi_2d_matches_quadrature(alpha):
    m1, m2 = np.array([0.3, -0.2]), np.array([-0.1, 0.4])
    c1 = np.array([[1.0, 0.3], [0.3, 0.8]])
    c2 = np.array([[1.4, -0.2], [-0.2, 1.1]])
    got = renyi_gaussian(alpha, mean1=m1, cov1=c1, mean2=m2, cov2=c2)
    assert got == pytest.approx(quad_renyi_2d(alpha, m1, c1, m2, c2), rel=1e-11)


def test_mixture_is_alpha_cov2_plus_one_minus_alpha_cov1():
    """Spec seed-000 section 4.3 example: (mean, std) = (0, 1) vs (0.5, 1.3) at alpha = 2."""
    forward = renyi_gaussian(2.0, mean1=[0.0], cov1=[[1.0]], mean2=[0.5], cov2=[[1.69]])
    backward = renyi_gaussian(2.0, mean1=[0.5], cov1=[[1.69]], mean2=[0.0], cov2=[[1.0]])
    assert forward == pytest.approx(quad_renyi_1d(2.0, 0.0, 1.0, 0.5, 1.69), rel=1e-12)
    assert forward == pytest.approx(0.1962, abs=5e-5)  # the spec prints 4 decimals
    assert backward == pytest.approx(1.1297, abs=5e-5)  # what the paper's printed formula gives
    assert backward == pytest.approx(quad_renyi_1d(2.0, 0.5, 1.69, 0.0, 1.0), rel=1e-12)


def test_paper_formula_is_the_swapped_order():
    """The hsgd paper's Lemma C.2 (M = a S1 + (1-a) S2, det S1^a det S2^(1-a)) equals D(Q || P)."""
    rng = np.random.default_rng(3)
    c1, c2 = random_spd(rng, 3), random_spd(rng, 3, 1.5)
    m1, m2 = rng.normal(size=3), rng.normal(size=3)
    a = 1.8
    with mp.workdps(40):
        s1, s2 = mp.matrix(c1.tolist()), mp.matrix(c2.tolist())
        delta = mp.matrix((m1 - m2).tolist())
        big_m = a * s1 + (1 - a) * s2
        paper = a / 2 * (delta.T * mp.lu_solve(big_m, delta))[0] + mp.log(
            mp.det(s1) ** a * mp.det(s2) ** (1 - a) / mp.det(big_m)
        ) / (2 * (a - 1))
    swapped = renyi_gaussian(a, mean1=m2, cov1=c2, mean2=m1, cov2=c1)
    forward = renyi_gaussian(a, mean1=m1, cov1=c1, mean2=m2, cov2=c2)
    assert swapped == pytest.approx(float(paper), rel=1e-12)
    assert abs(forward - swapped) > 1e-3 * forward


def test_equal_covariances_closed_form():
    rng = np.random.default_rng(0)
    cov = random_spd(rng, 5)
    m1, m2 = rng.normal(size=5), rng.normal(size=5)
    gap = m1 - m2
    for alpha in (1.01, 2.0, 17.5):
        expected = alpha * gap @ np.linalg.solve(cov, gap) / 2
        assert renyi_gaussian(alpha, mean1=m1, cov1=cov, mean2=m2, cov2=cov) == pytest.approx(expected, rel=1e-12)


def test_non_positive_definite_mixture_gives_inf():
    # 1-D: the mixture alpha v2 + (1 - alpha) v1 <= 0 iff v1 > v2 and alpha >= v1 / (v1 - v2) (= 2 here).
    args = dict(mean1=[0.0], cov1=[[2.0]], mean2=[0.1], cov2=[[1.0]])
    assert renyi_gaussian(2.0, **args) == math.inf
    assert renyi_gaussian(5.0, **args) == math.inf
    below = renyi_gaussian(1.9, **args)
    assert math.isfinite(below)
    assert below == pytest.approx(quad_renyi_1d(1.9, 0.0, 2.0, 0.1, 1.0), rel=1e-10)
    # the other order is finite at every alpha
    assert math.isfinite(renyi_gaussian(50.0, mean1=[0.1], cov1=[[1.0]], mean2=[0.0], cov2=[[2.0]]))
    # 2-D: one direction with variance ratio 3 -> inf from alpha = 3/2 on
    c1, c2 = np.diag([1.0, 3.0]), np.eye(2)
    assert math.isfinite(renyi_gaussian(1.49, mean1=[0, 0], cov1=c1, mean2=[0, 0], cov2=c2))
    assert renyi_gaussian(1.5, mean1=[0, 0], cov1=c1, mean2=[0, 0], cov2=c2) == math.inf


def test_tiny_divergence_keeps_relative_accuracy():
    rng = np.random.default_rng(1)
    c1 = random_spd(rng, 6)
    c2 = c1 * (1 + 1e-10)
    m1 = np.zeros(6)
    for alpha in (1.5, 4.0):
        got = renyi_gaussian(alpha, mean1=m1, cov1=c1, mean2=m1, cov2=c2)
        expected = mp_renyi_closed_form(alpha, m1, c1, m1, c2)
        assert 0 < got < 1e-18
        assert got == pytest.approx(float(expected), rel=1e-8)
    got_kl = kl_gaussian(mean1=m1, cov1=c1, mean2=m1, cov2=c2)
    assert got_kl == pytest.approx(float(mp_kl_closed_form(m1, c1, m1, c2)), rel=1e-8)


def test_order_close_to_one_keeps_relative_accuracy():
    rng = np.random.default_rng(2)
    c1, c2 = random_spd(rng, 4), random_spd(rng, 4, 1.3)
    m1, m2 = rng.normal(size=4), rng.normal(size=4)
    for alpha in (1 + 1e-9, 1 + 1e-5, 1.001):
        got = renyi_gaussian(alpha, mean1=m1, cov1=c1, mean2=m2, cov2=c2)
        assert got == pytest.approx(float(mp_renyi_closed_form(alpha, m1, c1, m2, c2, dps=80)), rel=1e-10)


def test_random_dense_against_multiprecision_formula():
    rng = np.random.default_rng(4)
    for d in (1, 3, 7):
        c1, c2 = random_spd(rng, d), random_spd(rng, d, 2.0)
        m1, m2 = rng.normal(size=d), rng.normal(size=d)
        for alpha in (1.3, 2.0, 6.5):
            got = renyi_gaussian(alpha, mean1=m1, cov1=c1, mean2=m2, cov2=c2)
            if np.linalg.eigvalsh(alpha * c2 + (1 - alpha) * c1)[0] <= 0:
                assert got == math.inf
                continue
            expected = mp_renyi_closed_form(alpha, m1, c1, m2, c2, dps=30)
            assert got == pytest.approx(float(expected), rel=1e-11)


# ----------------------------------------------------------------------------------------------------
# Kullback-Leibler
# ----------------------------------------------------------------------------------------------------


def test_kl_1d_matches_quadrature():
    for m1, v1, m2, v2 in [(0.3, 1.2, -0.4, 0.9), (0.0, 1.0, 0.5, 1.69), (2.0, 0.1, 0.0, 3.0)]:
        got = kl_gaussian(mean1=[m1], cov1=[[v1]], mean2=[m2], cov2=[[v2]])
        assert got == pytest.approx(quad_kl_1d(m1, v1, m2, v2), rel=1e-12)


def test_kl_is_the_order_one_limit():
    rng = np.random.default_rng(5)
    c1, c2 = random_spd(rng, 4), random_spd(rng, 4, 0.7)
    m1, m2 = rng.normal(size=4), rng.normal(size=4)
    kl = kl_gaussian(mean1=m1, cov1=c1, mean2=m2, cov2=c2)
    assert kl == pytest.approx(float(mp_kl_closed_form(m1, c1, m2, c2)), rel=1e-12)
    previous = math.inf
    for gap in (1e-2, 1e-4, 1e-6, 1e-8):
        renyi = renyi_gaussian(1 + gap, mean1=m1, cov1=c1, mean2=m2, cov2=c2)
        assert renyi > kl  # D_alpha increases with alpha
        assert renyi - kl < previous
        previous = renyi - kl
        assert renyi == pytest.approx(kl, rel=20 * gap)


# ----------------------------------------------------------------------------------------------------
# Diagonal plus low rank
# ----------------------------------------------------------------------------------------------------


def test_diagonal_plus_low_rank_basics():
    rng = np.random.default_rng(6)
    d, r = 9, 3
    mat = DiagonalPlusLowRank(
        diagonal=rng.uniform(0.5, 2.0, d),
        factor=rng.normal(size=(d, r)),
        coefficients=np.array([0.7, 0.0, -0.05]),
    )
    dense = mat.dense()
    assert dense.shape == (d, d)
    assert mat.dim == d and mat.rank == r
    assert mat.logdet() == pytest.approx(np.linalg.slogdet(dense)[1], rel=1e-13)
    v = rng.normal(size=d)
    np.testing.assert_allclose(mat.solve(v), np.linalg.solve(dense, v), rtol=1e-12, atol=1e-14)
    block = rng.normal(size=(d, 2))
    np.testing.assert_allclose(mat.solve(block), np.linalg.solve(dense, block), rtol=1e-12, atol=1e-14)
    assert not mat.diagonal.flags.writeable and not mat.factor.flags.writeable
    with pytest.raises(ValueError):
        mat.diagonal[0] = 1.0
    with pytest.raises(dataclasses_frozen_error()):
        mat.diagonal = np.ones(d)  # type: ignore[misc]


def dataclasses_frozen_error():
    import dataclasses

    return dataclasses.FrozenInstanceError


def test_from_symmetric_core_matches_dense():
    rng = np.random.default_rng(7)
    d = 6
    diag = rng.uniform(1.0, 2.0, d)
    u = rng.normal(size=(d, 2)) * 0.3
    core = np.array([[0.4, -0.3], [-0.3, 0.0]])  # the shape of hsgd's S_i = [[h^2 a'Va, -ch], [-ch, 0]]
    mat = DiagonalPlusLowRank.from_symmetric_core(diagonal=diag, factor=u, core=core)
    np.testing.assert_allclose(mat.dense(), np.diag(diag) + u @ core @ u.T, rtol=1e-13, atol=1e-15)


def test_positive_definiteness_is_checked():
    # diag(1) + u u^T c with ||u||^2 = 4: the eigenvalue along u is 1 + 4c, PD iff c > -1/4
    u = np.array([[1.0], [1.0], [1.0], [1.0]])
    DiagonalPlusLowRank(diagonal=np.ones(4), factor=u, coefficients=np.array([-0.2499]))
    with pytest.raises(ValueError, match="positive definite"):
        DiagonalPlusLowRank(diagonal=np.ones(4), factor=u, coefficients=np.array([-0.2501]))


def _lowrank_case(rng, d, r1, r2, common, scale=0.6, negative=0.2):
    diag1 = rng.uniform(0.5, 2.0, d)
    diag2 = diag1 if common else diag1 * rng.uniform(0.7, 1.4, d)
    u1 = rng.normal(size=(d, r1)) * scale
    u2 = rng.normal(size=(d, r2)) * scale
    c1 = rng.uniform(-negative, 1.0, r1)
    c2 = rng.uniform(-negative, 1.0, r2)
    return diag1, u1, c1, diag2, u2, c2


@PROFILE
@given(
    seed=st.integers(0, 2**31 - 1),
    d=st.integers(1, 8),
    r1=st.integers(0, 3),
    r2=st.integers(0, 3),
    common=st.booleans(),
    alpha=st.floats(1.05, 8.0),
)
def test_lowrank_matches_dense(seed, d, r1, r2, common, alpha):
    rng = np.random.default_rng(seed)
    diag1, u1, c1, diag2, u2, c2 = _lowrank_case(rng, d, r1, r2, common)
    dense1 = np.diag(diag1) + (u1 * c1) @ u1.T
    dense2 = np.diag(diag2) + (u2 * c2) @ u2.T
    assume(np.linalg.eigvalsh(dense1)[0] > 1e-3 and np.linalg.eigvalsh(dense2)[0] > 1e-3)
    mixture_eigs = np.linalg.eigvalsh(alpha * dense2 + (1 - alpha) * dense1)
    # Stay away from the boundary of positive definiteness, where the value is ill-conditioned.
    assume(abs(mixture_eigs[0]) > 1e-3 * max(1.0, abs(mixture_eigs[-1])))
    cov1 = DiagonalPlusLowRank(diagonal=diag1, factor=u1, coefficients=c1)
    cov2 = DiagonalPlusLowRank(diagonal=diag2, factor=u2, coefficients=c2)
    m1, m2 = rng.normal(size=d), rng.normal(size=d) * 0.5
    expected = renyi_gaussian(alpha, mean1=m1, cov1=dense1, mean2=m2, cov2=dense2)
    got = renyi_gaussian_lowrank(alpha, mean1=m1, cov1=cov1, mean2=m2, cov2=cov2)
    if math.isinf(expected):
        assert got == math.inf
    else:
        assert got == pytest.approx(expected, rel=1e-10, abs=1e-13)
    kl = kl_gaussian_lowrank(mean1=m1, cov1=cov1, mean2=m2, cov2=cov2)
    assert kl == pytest.approx(kl_gaussian(mean1=m1, cov1=dense1, mean2=m2, cov2=dense2), rel=1e-10, abs=1e-13)
    sup = renyi_gaussian_symmetric_sup(alpha, mean1=m1, cov1=cov1, mean2=m2, cov2=cov2)
    sup_dense = renyi_gaussian_symmetric_sup(alpha, mean1=m1, cov1=dense1, mean2=m2, cov2=dense2)
    if math.isinf(sup_dense):
        assert sup == math.inf
    else:
        assert sup == pytest.approx(sup_dense, rel=1e-10, abs=1e-13)


def test_lowrank_mixture_with_non_positive_diagonal_entries():
    """alpha D2 + (1 - alpha) D1 <= 0 on a coordinate, compensated by cov2's low-rank part along it."""
    d = 5
    diag1 = np.ones(d)
    diag2 = np.full(d, 1.0)
    diag2[0] = 0.4  # mixture diagonal 1 + alpha (0.4 - 1) <= 0 for alpha >= 5/3
    e0 = np.zeros((d, 1))
    e0[0, 0] = 1.0
    cov1 = DiagonalPlusLowRank(diagonal=diag1, factor=np.zeros((d, 0)), coefficients=np.zeros(0))
    cov2 = DiagonalPlusLowRank(diagonal=diag2, factor=e0 + 0.1, coefficients=np.array([0.9]))
    m1, m2 = np.linspace(-1, 1, d), np.zeros(d)
    for alpha in (1.5, 2.0, 3.0):
        expected = renyi_gaussian(alpha, mean1=m1, cov1=cov1.dense(), mean2=m2, cov2=cov2.dense())
        got = renyi_gaussian_lowrank(alpha, mean1=m1, cov1=cov1, mean2=m2, cov2=cov2)
        assert math.isfinite(expected)
        assert got == pytest.approx(expected, rel=1e-10)
    # two bad coordinates but rank 1: necessarily not positive definite
    diag2[1] = 0.4
    cov2 = DiagonalPlusLowRank(diagonal=diag2, factor=e0 + 0.1, coefficients=np.array([0.9]))
    assert renyi_gaussian_lowrank(3.0, mean1=m1, cov1=cov1, mean2=m2, cov2=cov2) == math.inf
    assert renyi_gaussian(3.0, mean1=m1, cov1=cov1.dense(), mean2=m2, cov2=cov2.dense()) == math.inf


def test_lowrank_combined_capacitance_decides_positive_definiteness():
    """Both laws are PD, yet their mixture is not beyond alpha = 2: decided by the combined capacitance."""
    d = 4
    u = np.array([[1.0], [0.0], [0.0], [0.0]])
    cov1 = DiagonalPlusLowRank(diagonal=np.ones(d), factor=u, coefficients=np.array([3.0]))  # variance 4
    cov2 = DiagonalPlusLowRank(diagonal=np.ones(d), factor=u, coefficients=np.array([1.0]))  # variance 2
    zero = np.zeros(d)
    # along u: alpha 2 + (1 - alpha) 4 = 4 - 2 alpha <= 0 for alpha >= 2
    assert math.isfinite(renyi_gaussian_lowrank(1.9, mean1=zero, cov1=cov1, mean2=zero, cov2=cov2))
    assert renyi_gaussian_lowrank(2.0, mean1=zero, cov1=cov1, mean2=zero, cov2=cov2) == math.inf
    assert renyi_gaussian_lowrank(2.5, mean1=zero, cov1=cov1, mean2=zero, cov2=cov2) == math.inf


def test_lowrank_tiny_divergence_common_diagonal():
    rng = np.random.default_rng(8)
    d = 50
    diag = rng.uniform(0.5, 2.0, d)
    u = rng.normal(size=(d, 2))
    c = np.array([0.5, 0.2])
    cov1 = DiagonalPlusLowRank(diagonal=diag, factor=u, coefficients=c)
    cov2 = DiagonalPlusLowRank(diagonal=diag, factor=u, coefficients=c * (1 + 1e-9))
    zero = np.zeros(d)
    got = renyi_gaussian_lowrank(2.0, mean1=zero, cov1=cov1, mean2=zero, cov2=cov2)
    expected = mp_renyi_closed_form(2.0, zero, cov1.dense(), zero, cov2.dense(), dps=50)
    assert 0 < got < 1e-16
    assert got == pytest.approx(float(expected), rel=1e-6)


def test_lowrank_large_dimension_block_oracle():
    """d = 10^5: factors and mean gap live on the first k coordinates, so the divergence is the dense one
    there plus the 1-D divergences of the remaining diagonal coordinates."""
    rng = np.random.default_rng(9)
    d, k, alpha = 100_000, 12, 2.5
    diag1 = rng.uniform(0.5, 2.0, d)
    diag2 = diag1 * rng.uniform(0.9, 1.1, d)
    u1 = np.zeros((d, 4))
    u2 = np.zeros((d, 4))
    u1[:k] = rng.normal(size=(k, 4)) * 0.5
    u2[:k] = rng.normal(size=(k, 4)) * 0.5
    c1, c2 = rng.uniform(0, 1, 4), rng.uniform(0, 1, 4)
    m1 = np.zeros(d)
    m1[:k] = rng.normal(size=k)
    m2 = np.zeros(d)
    block1 = np.diag(diag1[:k]) + (u1[:k] * c1) @ u1[:k].T
    v1, v2 = diag1[k:], diag2[k:]
    rest_mix = alpha * v2 + (1 - alpha) * v1
    rest = -np.sum(np.log(rest_mix) - (1 - alpha) * np.log(v1) - alpha * np.log(v2)) / (2 * (alpha - 1))
    cov1 = DiagonalPlusLowRank(diagonal=diag1, factor=u1, coefficients=c1)
    for same_diagonal in (False, True):
        cov2_diag = diag1 if same_diagonal else diag2
        cov2 = DiagonalPlusLowRank(diagonal=cov2_diag, factor=u2, coefficients=c2)
        block2 = np.diag(cov2_diag[:k]) + (u2[:k] * c2) @ u2[:k].T
        tail = 0.0 if same_diagonal else rest
        expected = renyi_gaussian(alpha, mean1=m1[:k], cov1=block1, mean2=m2[:k], cov2=block2) + tail
        got = renyi_gaussian_lowrank(alpha, mean1=m1, cov1=cov1, mean2=m2, cov2=cov2)
        assert got == pytest.approx(expected, rel=1e-9)


def test_lowrank_large_dimension_is_fast():
    rng = np.random.default_rng(10)
    d, r = 100_000, 8
    diag = rng.uniform(0.5, 2.0, d)
    start = time.perf_counter()
    cov1 = DiagonalPlusLowRank(diagonal=diag, factor=rng.normal(size=(d, r)) / 600, coefficients=rng.uniform(0, 1, r))
    cov2 = DiagonalPlusLowRank(diagonal=diag, factor=rng.normal(size=(d, r)) / 600, coefficients=rng.uniform(0, 1, r))
    m1, m2 = rng.normal(size=d) * 1e-3, np.zeros(d)
    sup = renyi_gaussian_symmetric_sup(2.0, mean1=m1, cov1=cov1, mean2=m2, cov2=cov2)
    forward = renyi_gaussian_lowrank(2.0, mean1=m1, cov1=cov1, mean2=m2, cov2=cov2)
    backward = renyi_gaussian_lowrank(2.0, mean1=m2, cov1=cov2, mean2=m1, cov2=cov1)
    elapsed = time.perf_counter() - start
    assert math.isfinite(sup)
    assert sup == pytest.approx(max(forward, backward), rel=1e-12)
    assert elapsed < 5.0  # a few hundredths of a second per call; generous for loaded CI machines


def test_symmetric_sup_dense():
    rng = np.random.default_rng(11)
    c1, c2 = random_spd(rng, 3), random_spd(rng, 3, 0.5)
    m1, m2 = rng.normal(size=3), rng.normal(size=3)
    forward = renyi_gaussian(2.0, mean1=m1, cov1=c1, mean2=m2, cov2=c2)
    backward = renyi_gaussian(2.0, mean1=m2, cov1=c2, mean2=m1, cov2=c1)
    assert renyi_gaussian_symmetric_sup(2.0, mean1=m1, cov1=c1, mean2=m2, cov2=c2) == max(forward, backward)
    assert forward != backward


# ----------------------------------------------------------------------------------------------------
# Log-space kernels
# ----------------------------------------------------------------------------------------------------


GRID = np.concatenate(
    [
        -np.logspace(-300, np.log10(0.999), 40),
        [-0.1000001, -0.1, -0.0999999, 0.0999999, 0.1, 0.1000001],
        np.logspace(-300, 6, 60),
    ]
)


@pytest.mark.parametrize(
    ("kernel", "reference"),
    [
        (dv._log1p_minus_identity, lambda x: mp.log1p(x) - x),
        (dv._log1p_minus_ratio, lambda x: mp.log1p(x) - x / (1 + x)),
    ],
)
def test_log_kernels_against_mpmath(kernel, reference):
    got = kernel(GRID)
    with mp.workdps(700):
        expected = np.array([float(reference(mp.mpf(float(x)))) for x in GRID])
    nonzero = expected != 0
    np.testing.assert_allclose(got[nonzero], expected[nonzero], rtol=5e-15)
    assert np.all(got[~nonzero] == 0)


# ----------------------------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------------------------


ONE = dict(mean1=[0.0], cov1=[[1.0]], mean2=[0.0], cov2=[[1.0]])


@pytest.mark.parametrize("bad", [1.0, 0.5, -2.0, math.nan, math.inf])
def test_invalid_renyi_order(bad):
    with pytest.raises(ValueError, match=r"renyi_order must be in \(1.0, inf\); got renyi_order="):
        renyi_gaussian(bad, **ONE)


def test_non_scalar_renyi_order():
    with pytest.raises(TypeError, match="renyi_order must be a real scalar"):
        renyi_gaussian(np.array([2.0, 3.0]), **ONE)
    with pytest.raises(TypeError, match="renyi_order"):
        renyi_gaussian(True, **ONE)


def test_invalid_dense_inputs():
    with pytest.raises(ValueError, match=r"mean2 must have shape \(1,\) like mean1; got mean2 of shape \(2,\)"):
        renyi_gaussian(2.0, mean1=[0.0], cov1=[[1.0]], mean2=[0.0, 1.0], cov2=[[1.0]])
    with pytest.raises(ValueError, match=r"cov2 must have shape \(2, 2\)"):
        renyi_gaussian(2.0, mean1=[0.0, 0.0], cov1=np.eye(2), mean2=[0.0, 1.0], cov2=np.eye(3))
    with pytest.raises(ValueError, match="cov1 must be symmetric"):
        kl_gaussian(mean1=[0.0, 0.0], cov1=[[1.0, 0.5], [0.0, 1.0]], mean2=[0.0, 0.0], cov2=np.eye(2))
    with pytest.raises(ValueError, match="cov2 must be positive definite; got cov2 with smallest eigenvalue -1"):
        renyi_gaussian(2.0, mean1=[0.0, 0.0], cov1=np.eye(2), mean2=[0.0, 0.0], cov2=np.diag([1.0, -1.0]))
    with pytest.raises(ValueError, match="mean1 must be finite; got mean1=nan"):
        renyi_gaussian(2.0, mean1=[math.nan], cov1=[[1.0]], mean2=[0.0], cov2=[[1.0]])
    with pytest.raises(
        ValueError, match=r"mean1 must be a 1-D array of shape \(d,\), d >= 1; got an array of shape \(\)"
    ):
        renyi_gaussian(2.0, mean1=0.0, cov1=[[1.0]], mean2=[0.0], cov2=[[1.0]])


def test_invalid_lowrank_inputs():
    ok = DiagonalPlusLowRank(diagonal=np.ones(3), factor=np.zeros((3, 1)), coefficients=np.zeros(1))
    with pytest.raises(ValueError, match="diagonal must be > 0; got diagonal=0.0"):
        DiagonalPlusLowRank(diagonal=np.array([1.0, 0.0, 1.0]), factor=np.zeros((3, 1)), coefficients=np.zeros(1))
    with pytest.raises(ValueError, match=r"factor must have shape \(3, r\)"):
        DiagonalPlusLowRank(diagonal=np.ones(3), factor=np.zeros((2, 1)), coefficients=np.zeros(1))
    with pytest.raises(ValueError, match=r"coefficients must have shape \(1,\)"):
        DiagonalPlusLowRank(diagonal=np.ones(3), factor=np.zeros((3, 1)), coefficients=np.zeros(2))
    with pytest.raises(TypeError, match="cov1 must be a DiagonalPlusLowRank"):
        renyi_gaussian_lowrank(2.0, mean1=np.zeros(3), cov1=np.eye(3), mean2=np.zeros(3), cov2=ok)
    with pytest.raises(TypeError, match="cov2 is a DiagonalPlusLowRank"):
        renyi_gaussian(2.0, mean1=np.zeros(3), cov1=np.eye(3), mean2=np.zeros(3), cov2=ok)
    with pytest.raises(TypeError, match="both be dense arrays or both be DiagonalPlusLowRank"):
        renyi_gaussian_symmetric_sup(2.0, mean1=np.zeros(3), cov1=np.eye(3), mean2=np.zeros(3), cov2=ok)
    with pytest.raises(ValueError, match=r"mean2 must have shape \(3,\) like cov1"):
        kl_gaussian_lowrank(mean1=np.zeros(3), cov1=ok, mean2=np.zeros(4), cov2=ok)
    with pytest.raises(ValueError, match=r"renyi_order must be in \(1.0, inf\)"):
        renyi_gaussian_lowrank(0.9, mean1=np.zeros(3), cov1=ok, mean2=np.zeros(3), cov2=ok)
    with pytest.raises(ValueError, match=r"v must have shape \(3,\)"):
        ok.solve(np.ones(4))
