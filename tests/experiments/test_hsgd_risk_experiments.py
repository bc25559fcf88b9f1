"""hsgd-fig1a, hsgd-fig2a, hsgd-validation: contract, solver invariants under overrides, checks that can fail."""

import json
import math

import numpy as np
import pytest

from privdyn.dynamics import hsgd as dyn
from privdyn.experiments import registry
from privdyn.experiments.hsgd_risk import (
    Fig2a,
)
from privdyn.runs import runner
from privdyn.runs.config import ConfigError, apply_overrides
from privdyn.runs.naming import unit_key
from privdyn.runs.results import bonferroni_z

SMALL_FIG2A = {"d": 100, "n": 1000, "num_runs": 100, "runs_per_unit": 50, "num_blocks": 10}


def run(name, out_dir=None, **overrides):
    experiment, config = registry.prepare(name, quick=True, overrides=overrides)
    return runner.run_experiment(experiment, config, seed=0, quick=True, out_dir=out_dir)


def named(result, prefix):
    return [c for c in result["checks"] if c["name"].startswith(prefix)]


@pytest.fixture(scope="module")
def fig2a(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig2a")
    return run("hsgd-fig2a", out_dir=out, **SMALL_FIG2A), out / "hsgd-fig2a"


def test_fig2a_contract_and_checks(fig2a):
    result, target = fig2a
    assert (target / "figure.png").stat().st_size > 0 and (target / "series.csv").exists()
    assert json.loads((target / "result.json").read_text())["experiment"] == "hsgd-fig2a"
    sigmas = result["config"]["noise_stds"]
    for s in result["series"]:
        assert {"method", "noise_std", "d", "n", "step_size", "ridge", "x0_policy", "quantity"} <= set(s["params"])
        if s["params"]["method"] == "simulation" and s["params"]["quantity"] == "population_risk":
            assert len(s["standard_error"]) == len(s["y_low"]) == len(s["y"])
    assert len([s for s in result["series"] if s["params"]["quantity"] == "single_run"]) == 3 * len(sigmas)
    bad = [(c["name"], c["expected"], c["measured"]) for c in result["checks"] if c["passed"] is False]
    assert not bad
    for prefix in ("volterra_equals_reference_ode", "volterra_equals_moment_ode", "risk_limit_closed_form",
                   "plateau_equals_limit", "simulation_matches_volterra"):
        checks = named(result, prefix)
        assert len(checks) == len(sigmas) and all(c["kind"] == "invariant" and c["passed"] for c in checks), prefix
    mc = named(result, "simulation_matches_volterra")
    assert all(len(c["standard_error"]) > 1 and min(c["standard_error"]) > 0 and "Bonferroni" in c["note"]
               for c in mc)  # one SE per compared block
    assert named(result, "risk_increases_with_noise_std")[0]["passed"] is True
    assert named(result, "spec_constants")[0]["passed"] is None
    assert all(c["kind"] == "finding" for c in named(result, "single_run_fluctuation"))


@pytest.mark.parametrize("overrides", [
    {"noise_stds": [0.0, 0.7, 3.0], "d": 40, "n": 1200},
    {"noise_stds": [2.0], "d": 150, "n": 300, "step_size": 0.2, "ridge": 0.3, "x0_policy": "random_secret"},
    {"noise_stds": [1.5], "d": 1000, "n": 1500},
])
def test_solver_invariants_under_overrides(overrides):
    experiment = registry.get("hsgd-fig2a")
    config = apply_overrides(experiment.config(quick=True), overrides)
    for sigma in config.noise_stds:
        unit = next(u for u in experiment.units(config) if u.key == unit_key(method="volterra", noise_std=sigma))
        theory = experiment.compute_unit(config, unit, seed=3)
        steps = np.asarray(theory["steps"])
        checks = Fig2a._solver_checks(config, sigma, theory, np.asarray(theory["population_risk"]), steps)
        assert all(c.passed is not False for c in checks), [(c.name, c.expected, c.measured) for c in checks]
        plateau = next(c for c in checks if c.name.startswith("plateau_equals_limit"))
        assert plateau.passed is (True if config.horizon >= 5 * theory["limit"]["relaxation_time"] else None)
    if (config.d, config.step_size, config.ridge) == (1000, 0.05, 0.1):
        outputs = {unit_key(method="volterra", noise_std=s): {"limit": theory["limit"]} for s in config.noise_stds}
        assert Fig2a._spec_constants(config, outputs)[0].passed is True


def test_solver_invariant_fails_when_the_engine_is_wrong(monkeypatch):
    original = dyn.volterra_risk

    def wrong(*args, **kwargs):
        out = original(*args, **kwargs)
        return type(out)(**{**out.__dict__, "population_risk": out.population_risk * (1 + 1e-6)})

    monkeypatch.setattr(dyn, "volterra_risk", wrong)
    experiment = registry.get("hsgd-fig2a")
    config = apply_overrides(experiment.config(quick=True), {"noise_stds": [1.0], "d": 50, "n": 500})
    unit = experiment.units(config)[0]
    theory = experiment.compute_unit(config, unit, seed=0)
    checks = Fig2a._solver_checks(config, 1.0, theory, np.asarray(theory["population_risk"]),
                                  np.asarray(theory["steps"]))
    assert not next(c for c in checks if c.name.startswith("volterra_equals_reference_ode")).passed
    assert not next(c for c in checks if c.name.startswith("volterra_equals_moment_ode")).passed


def test_mean_check_is_a_finding_when_the_size_does_not_allow_and_detects_a_shift():
    experiment = registry.get("hsgd-fig2a")
    config = apply_overrides(experiment.config(quick=True), {"num_runs": 20, "runs_per_unit": 20})
    steps = config.record_steps()
    blocks = config.block_steps()
    pop = np.full(steps.size, 0.05)
    se = np.full(steps.size, 0.001)
    small = Fig2a._mean_check(config, 1.0, steps, blocks, pop, pop + 0.001, se, [])
    assert small.kind == "finding" and small.passed is None
    config = apply_overrides(experiment.config(quick=True), {"num_runs": 100})
    shifted = Fig2a._mean_check(config, 1.0, steps, blocks, pop, pop + 6.0 * 0.001, se, [])
    assert shifted.kind == "invariant" and shifted.passed is False
    assert Fig2a._mean_check(config, 1.0, steps, blocks, pop, pop + 2e-3, se, []).passed is True
    # so many runs that the O(step_size) discretization shift would be resolvable: a finding, not an invariant
    resolving = Fig2a._mean_check(config, 1.0, steps, blocks, pop, pop + 6e-5, se / 100, [])
    assert resolving.kind == "finding" and "discretization shift" in resolving.claim


def test_ordering_claim_fails_with_a_note():
    experiment = registry.get("hsgd-fig2a")
    config = experiment.config(quick=True)
    curve = np.linspace(0.1, 0.05, 20)
    check = Fig2a._ordering_check(config, {1.0: curve, 1.5: curve * 0.99})
    assert check.passed is False and "measured" in check.note
    assert Fig2a._ordering_check(config, {1.0: curve}).passed is None


def test_fig1a_and_validation_quick_runs(tmp_path):
    result = run("hsgd-fig1a", d=100, n=1000, num_runs=100, runs_per_unit=50)
    checks = {c["name"]: c for c in result["checks"]}
    assert checks["law_equals_reference_moment_ode"]["passed"] is True
    assert checks["mahalanobis_mean"]["kind"] == "paper_claim" and checks["mahalanobis_mean"]["standard_error"] > 0
    assert checks["mahalanobis_ks"]["passed"] is True
    qq = [s for s in result["series"] if s["params"]["quantity"] == "mahalanobis_qq"]
    assert len(qq) == 2 and len(qq[0]["y"]) == 100 and qq[0]["y"] == sorted(qq[0]["y"])

    out = run("hsgd-validation", out_dir=tmp_path, dims=[40, 80, 160, 320], num_runs=30,
              **{"privacy.d": 30, "privacy.num_positions": 3})
    assert (tmp_path / "hsgd-validation" / "figure.png").exists()
    checks = {c["name"]: c for c in out["checks"]}
    low, high = checks["gap_decays"]["measured"]
    assert checks["gap_decays"]["passed"] is (high < 0) and low < high
    assert checks["gap_exponent_is_minus_half"]["kind"] == "paper_claim"
    ratios = [c for c in out["checks"] if c["name"].startswith("surrogate_over_exact")]
    assert len(ratios) == 2 and all(c["kind"] == "finding" for c in ratios)
    divergences = [s for s in out["series"] if s["params"]["quantity"] == "renyi_divergence"]
    assert {s["params"]["guarantee"] for s in divergences} == {"exact", "surrogate"}
    assert all(len(s["y"]) == 3 for s in divergences)


@pytest.mark.parametrize(("name", "overrides", "match"), [
    ("hsgd-fig2a", {"step_size": 5.0}, "step_size"),
    ("hsgd-fig2a", {"noise_stds": [1.0, 1.0]}, "noise_stds"),
    ("hsgd-fig2a", {"noise_stds": [-1.0]}, "noise_stds"),
    ("hsgd-fig2a", {"num_single_runs": 500}, "num_single_runs"),
    ("hsgd-fig2a", {"x0_policy": "fixed"}, "x0_policy"),
    ("hsgd-fig1a", {"d": 1}, "d"),
    ("hsgd-validation", {"dims": [100]}, "dims"),
    ("hsgd-validation", {"learning_rate": 5.0}, "learning_rate"),
    ("hsgd-validation", {"privacy.renyi_orders": [1.0]}, "renyi_orders"),
])
def test_bad_config_is_rejected(name, overrides, match):
    experiment = registry.get(name)
    with pytest.raises(ConfigError, match=match):
        apply_overrides(experiment.config(quick=True), overrides)


def test_full_configs_are_the_papers_setting_and_quick_is_small():
    fig2a = registry.get("hsgd-fig2a").config()
    assert (fig2a.d, fig2a.n, fig2a.step_size, fig2a.ridge, fig2a.noise_stds) == (1000, 1500, 0.05, 0.1,
                                                                                   (1.0, 1.25, 1.5))
    assert registry.get("hsgd-fig1a").config().noise_std == 1.5
    quick = registry.get("hsgd-fig2a").config(quick=True)
    assert quick.num_runs >= 100 and quick.d >= 100
    assert bonferroni_z(1) == 5.0 and bonferroni_z(1000) > bonferroni_z(10) > 5.0
    assert math.isclose(registry.get("hsgd-validation").config(quick=True).privacy.d, 60)
