"""The quick configs keep each Monte-Carlo check's power at any seed (privdyn.runs.power)."""

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from privdyn.experiments import registry
from privdyn.runs.power import (
    CALIBRATION_SEEDS,
    QUICK_SE_CALIBRATION,
    Calibration,
    calibrate,
    derive_cap,
    quick_power_check,
    quick_se_cap,
)
from privdyn.runs.runner import run_experiment


def _mc(name, se):
    return {"name": name, "kind": "invariant", "standard_error": se, "passed": True}


def test_every_calibration_names_a_registered_experiment_and_gives_a_finite_cap():
    assert QUICK_SE_CALIBRATION
    for (experiment, check), c in QUICK_SE_CALIBRATION.items():
        registry.get(experiment)
        assert check and c.dof > 0 and (c.runs is None or 2 <= c.runs and c.dof <= c.runs - 1), (experiment, check, c)
        assert math.isfinite(c.cap) and c.cap >= c.standard_error >= 0, (experiment, check, c)
    assert not set(CALIBRATION_SEEDS) & set(range(5)), "the checked seeds 0-4 must stay out of sample"


def test_derive_cap_is_the_chi_square_quantile():
    # chi-square with 2 degrees of freedom: P(X > x) = exp(-x/2), so the cap is s * sqrt(-ln(level)) exactly
    for level in (1e-2, 1e-5):
        assert derive_cap(0.3, 2.0, level) == pytest.approx(0.3 * math.sqrt(-math.log(level)), rel=1e-10)
    assert derive_cap(0.3, math.inf) == 0.3 and derive_cap(0.0, 3.0) == 0.0
    assert derive_cap(1.0, 9.0) > derive_cap(1.0, 39.0) > derive_cap(1.0, 1e6) > 1.0  # fewer dof, more room
    with pytest.raises(ValueError, match="standard_error"):
        derive_cap(-1.0, 2.0)
    with pytest.raises(ValueError, match="dof"):
        derive_cap(1.0, 0.0)
    with pytest.raises(ValueError, match="level"):
        derive_cap(1.0, 2.0, 1.0)


def test_a_cap_calibrated_on_normal_runs_is_exceeded_at_most_at_its_level():
    # SEs of means of N = 10 normal runs: calibrated on 12 seeds, the cap at level 1e-2 is exceeded by at most about
    # 1% of fresh seeds (ν at its lower confidence bound errs on the safe side; the 12-seed estimate of s is itself
    # random: averaged over 200 calibrations), and it is not vacuous
    rng = np.random.default_rng(3)
    runs, level = 10, 1e-2
    exceed = []
    for _ in range(200):
        calibration = calibrate(rng.normal(size=(12, runs)).std(axis=1, ddof=1) / math.sqrt(runs), runs=runs)
        assert calibration.dof <= runs - 1
        cap = derive_cap(calibration.standard_error, calibration.dof, level)
        fresh = rng.normal(size=(2000, runs)).std(axis=1, ddof=1) / math.sqrt(runs)
        exceed.append(np.mean(fresh > cap))
        assert cap < 3.0 / math.sqrt(runs)  # the true SE is 1/sqrt(N)
    assert 0.0 < np.mean(exceed) < 0.015


def test_calibrate_matches_the_moments_and_rejects_bad_input():
    c = calibrate([1.0, 2.0, 3.0], runs=1000)
    squares = np.array([1.0, 4.0, 9.0])
    assert c.standard_error == pytest.approx(math.sqrt(squares.mean()))
    lower = stats.chi2.ppf(0.05, 2) / 2  # the 95% lower confidence bound on nu from 3 values
    assert c.dof == pytest.approx(2 * squares.mean() ** 2 / squares.var(ddof=1) * lower)
    assert calibrate([2.0, 2.0, 2.0], runs=5).dof == 4  # no spread: at most N - 1
    assert calibrate([2.0, 2.0, 2.0], runs=None).dof == math.inf  # an SE from a formula that did not vary
    assert isinstance(c, Calibration) and c.cap == derive_cap(c.standard_error, c.dof)
    with pytest.raises(ValueError, match="standard_errors"):
        calibrate([1.0, 2.0], runs=10)
    with pytest.raises(ValueError, match="runs"):
        calibrate([1.0, 2.0, 3.0], runs=1)


def test_power_check_passes_within_the_caps_and_names_what_breaks_them():
    experiment, name = "langevin-tightness", "simulation_renyi"
    cap = quick_se_cap(experiment, name)
    assert cap is not None and quick_se_cap(experiment, "no such check") is None
    deterministic = {"name": "closed_form", "kind": "invariant", "standard_error": None, "passed": True}
    assert quick_power_check(experiment, [deterministic]) is None  # no Monte-Carlo check: nothing to state

    ok = quick_power_check(experiment, [deterministic, _mc(name, cap)])
    assert ok is not None and ok.passed and ok.measured == pytest.approx(1.0) and ok.kind == "invariant"

    weak = quick_power_check(experiment, [_mc(name, 1.01 * cap)])
    assert weak is not None and not weak.passed and name in weak.note and "above its cap" in weak.note

    per_point = quick_power_check(experiment, [_mc(name, [0.5 * cap, 2.0 * cap])])  # a curve: its largest SE counts
    assert per_point is not None and not per_point.passed

    not_finite = quick_power_check(experiment, [_mc(name, float("nan"))])
    assert not_finite is not None and not not_finite.passed

    unstated = quick_power_check(experiment, [_mc(name, cap), _mc("a_new_monte_carlo_check", 0.0)])
    assert unstated is not None and not unstated.passed and "a_new_monte_carlo_check" in unstated.note


def _power(result):
    return [c for c in result["checks"] if c["name"] == "quick_monte_carlo_power"]


@pytest.mark.parametrize("seed", [0, 3])
def test_a_quick_run_carries_the_power_check_and_fails_it_when_the_quick_config_loses_runs(monkeypatch, seed):
    experiment, config = registry.prepare("langevin-tightness", quick=True)
    (power,) = _power(run_experiment(experiment, config, quick=True, seed=seed))
    assert power["passed"] is True, power["note"]

    # a planted loss of power: the quick config with half the runs (SE x sqrt(2)) must fail the invariant
    weaker = dataclasses.replace(config, mc_num_runs=config.mc_num_runs // 2)
    monkeypatch.setattr(type(experiment), "config", lambda self, quick=False: weaker)
    (power,) = _power(run_experiment(experiment, weaker, quick=True, seed=seed))
    assert power["passed"] is False and "simulation_renyi" in power["note"]


def test_runs_with_overrides_are_not_the_quick_config_and_get_no_power_check():
    experiment, config = registry.prepare("langevin-tightness", quick=True, overrides={"mc_num_runs": 20_000})
    assert _power(run_experiment(experiment, config, quick=True)) == []
    experiment, config = registry.prepare("langevin-tightness", quick=False, overrides={"mc_num_runs": 20_000})
    assert _power(run_experiment(experiment, config, quick=False)) == []
