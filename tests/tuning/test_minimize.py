"""Tests of privdyn.tuning.minimize: the minimizers of the dpgd ODE search, on objectives with known minima.

Oracles: analytic objectives with known minima (a shifted log-quadratic bowl; a flat valley like the dpgd harmonic
(beta, tau) landscape, spec seed-003 §7.2; a quadratic and monotone functions for the line search).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privdyn import tuning
from privdyn.tuning import (
    OptimumAtBoundWarning,
    TuningResult,
    line_search,
    minimize_final_risk,
    optimize_initial_learning_rate,
)

CLIP_STAR, ETA_STAR = 0.05, 13.3


class Counter:
    """An objective wrapper that counts calls."""

    def __init__(self, function):
        self.function = function
        self.calls = 0

    def __call__(self, **params):
        self.calls += 1
        return self.function(**params)


def bowl(*, clip, initial_learning_rate):
    """Shifted log-quadratic bowl (positive definite, with a cross term): minimum 2.0 at (0.05, 13.3)."""
    u = math.log(clip / CLIP_STAR)
    w = math.log(initial_learning_rate / ETA_STAR)
    return 2.0 + u * u + 0.5 * u * w + 2.0 * w * w


BOWL_BOUNDS = {"clip": (1e-3, 10.0), "initial_learning_rate": (1e-2, 200.0)}


def valley(*, harmonic_scale, harmonic_offset):
    """Flat valley along beta * tau = const (curvature 1e-3 along it): minimum 0.039 at (16.3, 0.6)."""
    u = math.log(harmonic_scale * harmonic_offset / (16.3 * 0.6))
    w = math.log(harmonic_scale / 16.3)
    return 0.039 * (1.0 + u * u + 1e-3 * w * w)


VALLEY_BOUNDS = {"harmonic_scale": (0.1, 1e3), "harmonic_offset": (1e-4, 10.0)}


@pytest.mark.parametrize("tol", [1e-4, 1e-6, 1e-8])
def test_bowl_minimum_within_stated_tolerance(tol):
    objective = Counter(bowl)
    res = minimize_final_risk(objective, bounds=BOWL_BOUNDS, tol=tol)
    assert isinstance(res, TuningResult)
    assert res.names == ("clip", "initial_learning_rate")
    # well-conditioned basin: the position to about tol in log-parameter, the value to a relative tol
    assert abs(math.log(res.optimum["clip"] / CLIP_STAR)) <= 10 * tol
    assert abs(math.log(res.optimum["initial_learning_rate"] / ETA_STAR)) <= 10 * tol
    assert (res.value - 2.0) / 2.0 <= tol
    assert res.converged and res.at_bound == ()
    # landscape: every evaluation recorded once, grid first, in natural units and inside the box
    assert objective.calls == res.num_evaluations == res.points.shape[0] == res.values.shape[0] == res.stages.size
    assert res.points.shape[1] == 2
    grid = res.stages == "grid"
    assert grid.sum() == tuning.DEFAULT_GRID_POINTS**2 and np.all(grid[: grid.sum()])
    assert set(np.unique(res.stages)) == {"grid", "local"}
    for i, (low, high) in enumerate(BOWL_BOUNDS.values()):
        assert np.all((res.points[:, i] >= low) & (res.points[:, i] <= high))
    assert res.value == np.min(res.values)
    np.testing.assert_allclose([bowl(clip=c, initial_learning_rate=e) for c, e in res.points], res.values)
    assert res.starts.shape == (tuning.DEFAULT_STARTS, 2)
    assert np.array_equal(res.column("clip"), res.points[:, 0])
    with pytest.raises(ValueError):
        res.points[0, 0] = 1.0
    with pytest.raises(TypeError):
        res.optimum["clip"] = 1.0


def test_bowl_with_l_bfgs_b_and_one_parameter():
    res = minimize_final_risk(bowl, bounds=BOWL_BOUNDS, tol=1e-8, local_method="l-bfgs-b")
    assert res.optimum["clip"] == pytest.approx(CLIP_STAR, rel=1e-4)
    assert res.optimum["initial_learning_rate"] == pytest.approx(ETA_STAR, rel=1e-4)
    one = minimize_final_risk(lambda *, initial_learning_rate: bowl(clip=CLIP_STAR,
                                                                     initial_learning_rate=initial_learning_rate),
                              bounds={"initial_learning_rate": (1e-2, 200.0)}, tol=1e-8)
    assert one.names == ("initial_learning_rate",) and one.points.shape[1] == 1
    assert one.optimum["initial_learning_rate"] == pytest.approx(ETA_STAR, rel=1e-6)


@pytest.mark.parametrize("tol", [1e-4, 1e-8])
def test_flat_valley(tol):
    res = minimize_final_risk(valley, bounds=VALLEY_BOUNDS, tol=tol)
    # the value to a relative tol; along the valley the position only to ~ sqrt(tol * |f| / curvature)
    assert res.value / 0.039 - 1.0 <= tol
    assert abs(math.log(res.optimum["harmonic_scale"] * res.optimum["harmonic_offset"] / (16.3 * 0.6))) <= 10 * tol
    along = abs(math.log(res.optimum["harmonic_scale"] / 16.3))
    assert along <= 3 * math.sqrt(tol / 1e-3)
    assert res.converged


def test_two_basins_both_refined():
    # two separated minima; the deeper one sits between grid points, the shallower one on a grid point
    def two(*, x):
        z = math.log(x)
        return min((z - math.log(0.013)) ** 2 + 0.5, (z - math.log(30.0)) ** 2 + 0.4)

    res = minimize_final_risk(two, bounds={"x": (1e-3, 1e3)}, grid_points=7, starts=2, tol=1e-8)
    assert res.optimum["x"] == pytest.approx(30.0, rel=1e-4) and res.value == pytest.approx(0.4)
    assert res.starts.shape == (2, 1)
    assert np.min(np.abs(np.log(res.starts[:, 0]) - math.log(0.013))) < 2.5  # the other basin was refined too


def test_optimum_at_bound_warns():
    with pytest.warns(OptimumAtBoundWarning, match="initial_learning_rate"):
        res = minimize_final_risk(bowl, bounds={"clip": (1e-3, 10.0), "initial_learning_rate": (1e-2, 5.0)})
    assert res.at_bound == ("initial_learning_rate",)
    assert res.optimum["initial_learning_rate"] == pytest.approx(5.0)


def test_non_finite_values_and_errors_from_the_objective():
    def partly_nan(*, x):
        return float("nan") if x > 10 else (math.log(x) - math.log(2.0)) ** 2

    res = minimize_final_risk(partly_nan, bounds={"x": (1e-2, 1e3)}, tol=1e-8)
    assert res.optimum["x"] == pytest.approx(2.0, rel=1e-4)
    assert np.any(np.isnan(res.values))  # recorded as returned
    with pytest.raises(ValueError, match="no finite value"):
        minimize_final_risk(lambda *, x: math.inf, bounds={"x": (1.0, 2.0)})

    def boom(*, x):
        raise ZeroDivisionError("from the objective")

    with pytest.raises(ZeroDivisionError):
        minimize_final_risk(boom, bounds={"x": (1.0, 2.0)})
    with pytest.raises(TypeError, match="real number"):
        minimize_final_risk(lambda *, x: "risk", bounds={"x": (1.0, 2.0)})


def test_random_starts_are_seeded():
    kw = dict(bounds=BOWL_BOUNDS, random_starts=5, starts=0)
    a = minimize_final_risk(bowl, seed=3, **kw)
    b = minimize_final_risk(bowl, seed=3, **kw)
    c = minimize_final_risk(bowl, seed=4, **kw)
    assert np.sum(a.stages == "random") == 5 and np.sum(a.stages == "local") == 0
    assert np.array_equal(a.points, b.points)
    assert not np.array_equal(a.points[a.stages == "random"], c.points[c.stages == "random"])
    assert a.starts.shape == (0, 2)


@pytest.mark.parametrize("kwargs, match", [
    (dict(bounds={}), "bounds"),
    (dict(bounds={"x": (0.0, 1.0)}), "bounds\\['x'\\] low"),
    (dict(bounds={"x": (2.0, 1.0)}), "low < high"),
    (dict(bounds={"x": (1.0, math.inf)}), "bounds\\['x'\\] high"),
    (dict(bounds={"x": 3.0}), "pair"),
    (dict(bounds={"x": (1.0, 2.0)}, grid_points=1), "grid_points"),
    (dict(bounds={"x": (1.0, 2.0)}, starts=-1), "starts"),
    (dict(bounds={"x": (1.0, 2.0)}, tol=0.0), "tol"),
    (dict(bounds={"x": (1.0, 2.0)}, local_method="bfgs"), "local_method"),
    (dict(bounds={"x": (1.0, 2.0)}, max_local_evaluations=0), "max_local_evaluations"),
    (dict(bounds={"x": (1.0, 2.0)}, seed=-1), "seed"),
    (dict(bounds={f"x{i}": (1.0, 2.0) for i in range(6)}, grid_points=10), "grid_points"),
])
def test_minimize_validation(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        minimize_final_risk(lambda **p: 1.0, **kwargs)


def test_line_search_finds_interior_and_bound_minima() -> None:
    calls = []

    def quadratic(x: float) -> float:
        calls.append(x)
        return 1.0 + (x - 1.3) ** 2

    x, value = line_search(quadratic, 0.0, 0.5, -5.0, 5.0)
    assert abs(x - 1.3) < 0.02 and value < 1.0 + 4e-4 and len(calls) <= 8
    x, _ = line_search(lambda z: math.exp(z), 0.0, 0.5, -2.0, 3.0)  # monotone: the lower bound
    assert x == -2.0
    x, _ = line_search(lambda z: (z + 1.9) ** 2, 0.0, 0.5, -2.0, 3.0)  # the minimum just inside the bound
    assert abs(x + 1.9) < 0.05
    flat = []
    x, _ = line_search(lambda z: flat.append(z) or 1.0 + 1e-6 * z, 0.0, 0.5, -5.0, 5.0)
    assert x == 0.0 and len(flat) == 3  # a flat direction: stay at the start after three evaluations


def test_optimizer_finds_a_known_minimum_and_flags_bounds():
    calls = []

    def parabola(eta):
        calls.append(eta)
        return 1.0 + (math.log(eta) - math.log(7.0)) ** 2

    best = optimize_initial_learning_rate(parabola, low=1.0, high=1000.0, grid_points=5, tolerance=1e-4)
    assert best["initial_learning_rate"] == pytest.approx(7.0, rel=1e-3)
    assert best["num_evaluations"] == len(set(calls)) and not (best["at_lower_bound"] or best["at_upper_bound"])
    edge = optimize_initial_learning_rate(lambda eta: 1.0 / eta, low=1.0, high=50.0, grid_points=4, tolerance=1e-3)
    assert edge["at_upper_bound"] and edge["initial_learning_rate"] == pytest.approx(50.0, rel=3e-3)
    with pytest.raises(ValueError, match="high"):
        optimize_initial_learning_rate(parabola, low=2.0, high=1.0, grid_points=5, tolerance=1e-3)
