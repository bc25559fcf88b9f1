"""The quick configs keep each Monte-Carlo check's power (privdyn.experiments.power)."""

import dataclasses
import math

import pytest

from privdyn.experiments import registry
from privdyn.experiments.power import QUICK_SE_CAPS, quick_power_check
from privdyn.experiments.runner import prepare, run_experiment


def _mc(name, se):
    return {"name": name, "kind": "invariant", "standard_error": se, "passed": True}


def test_every_cap_names_a_registered_experiment_and_is_a_finite_nonnegative_number():
    for (experiment, check), cap in QUICK_SE_CAPS.items():
        registry.get(experiment)
        assert check and math.isfinite(cap) and cap >= 0, (experiment, check, cap)


def test_power_check_passes_within_the_caps_and_names_what_breaks_them():
    experiment, name = "langevin-tightness", "simulation_renyi"
    cap = QUICK_SE_CAPS[(experiment, name)]
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


def test_a_quick_run_carries_the_power_check_and_fails_it_when_the_quick_config_loses_runs(monkeypatch):
    experiment, config = prepare("langevin-tightness", quick=True)
    (power,) = _power(run_experiment(experiment, config, quick=True))
    assert power["passed"] is True, power["note"]

    # a planted loss of power: the quick config with half the runs (SE x sqrt(2)) must fail the invariant
    weaker = dataclasses.replace(config, mc_num_runs=config.mc_num_runs // 2)
    monkeypatch.setattr(type(experiment), "config", lambda self, quick=False: weaker)
    (power,) = _power(run_experiment(experiment, weaker, quick=True))
    assert power["passed"] is False and "simulation_renyi" in power["note"]


def test_runs_with_overrides_are_not_the_quick_config_and_get_no_power_check():
    experiment, config = prepare("langevin-tightness", quick=True, overrides={"mc_num_runs": 20_000})
    assert _power(run_experiment(experiment, config, quick=True)) == []
    experiment, config = prepare("langevin-tightness", quick=False, overrides={"mc_num_runs": 20_000})
    assert _power(run_experiment(experiment, config, quick=False)) == []
