"""dpgd-fig1: the ODE against DP-GD (Figure 1 of arXiv 2505.16329): contract, checks, overrides, bad input."""

import json

import numpy as np
import pytest

from privdyn.cli import main
from privdyn.experiments import registry
from privdyn.experiments.dpgd_trajectory import Fig1
from privdyn.runs import runner
from privdyn.runs.config import ConfigError, apply_overrides
from privdyn.runs.results import bonferroni_z

NAME = "dpgd-fig1"
SERIES_KEYS = {"method", "panel", "schedule", "schedule_exponent", "spectrum", "d", "n", "aspect_ratio", "clip",
               "rho", "initial_learning_rate", "label_noise", "quantity"}
OVERRIDES = {"aspect_ratio": 0.2, "clip": 0.7, "initial_learning_rate": 2.0, "rho": 2.0}


def run(out_dir=None, quick=True, **overrides):
    experiment, config = registry.prepare(NAME, quick=quick, overrides=overrides)
    return runner.run_experiment(experiment, config, seed=0, quick=quick, out_dir=out_dir)


def checks_named(result, prefix):
    return [c for c in result["checks"] if c["name"].startswith(prefix)]


@pytest.fixture(scope="module")
def quick_result(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig1")
    result = run(out_dir=out)
    return result, out / NAME


def test_quick_contract_and_checks(quick_result):
    result, target = quick_result
    assert (target / "figure.png").stat().st_size > 0 and (target / "series.csv").exists()
    assert json.loads((target / "result.json").read_text())["experiment"] == NAME
    cfg = result["config"]
    assert max(cfg["dims"]) >= 500
    for s in result["series"]:
        assert SERIES_KEYS <= set(s["params"]), s["name"]
        assert s["params"]["method"] in ("ode", "simulation")
        if s["params"]["method"] == "simulation":
            assert len(s["y_low"]) == len(s["y_high"]) == len(s["standard_error"]) == len(s["y"])
            assert all(lo <= y <= hi for lo, y, hi in zip(s["y_low"], s["y"], s["y_high"], strict=True))
    panels = {s["params"]["panel"] for s in result["series"]}
    assert panels == {1, 2, 3, 4}
    bad = [(c["name"], c["expected"], c["measured"]) for c in result["checks"] if c["passed"] is False]
    assert not bad
    # (a) the solver invariant for every panel and d; (b) simulation invariants at d >= 500, findings below
    assert len(checks_named(result, "ode_matches_independent_lsoda")) == 4 * len(cfg["dims"])
    mc = checks_named(result, "simulation_matches_ode")
    assert len(mc) == 4 and all(c["kind"] == "invariant" and c["passed"] for c in mc)
    # one SE per compared curve point (the worst point's SE gives the tolerance, its power the largest)
    assert all(min(c["standard_error"]) > 0 and "Bonferroni" in c["note"] for c in mc)
    assert all(c["tolerance"] <= 6.0 * max(c["standard_error"]) + 0.03 * c["expected"] for c in mc)
    small = checks_named(result, "simulation_vs_ode")
    assert len(small) == 4 and all(c["kind"] == "finding" and c["passed"] is None for c in small)
    # (c) paper claims: the reference table, the final jump 0.18 (alpha = 0 panels), the 1/sqrt(d) shrinkage
    table = checks_named(result, "ode_reference_table")
    assert len(table) == 4 and all(c["passed"] is True for c in table)
    jumps = checks_named(result, "final_jump")
    assert len(jumps) == 2 * len(cfg["dims"]) and all(c["expected"] == pytest.approx(0.18) for c in jumps)
    assert len(checks_named(result, "sd_shrinks_like_inverse_sqrt_d")) == 4


def test_simulated_start_is_the_initial_risk(quick_result):
    result, _ = quick_result
    for s in result["series"]:
        if s["params"]["method"] == "simulation" and s["params"]["quantity"] == "risk":
            assert s["x"][0] == 0.0 and s["y"][0] == pytest.approx(0.5, rel=1e-12)


def test_full_config_is_the_papers_setting():
    experiment = registry.get(NAME)
    config = experiment.config()
    assert config.dims == (10, 100, 1000) and config.schedule_exponents == (0.0, 0.5)
    assert (config.aspect_ratio, config.clip, config.initial_learning_rate, config.rho, config.label_noise) == (
        0.1, 1.0, 3.0, 1.0, 0.3)
    units = experiment.units(config)
    assert sum(u.params["method"] == "ode" for u in units) == 12
    assert sum(u.params.get("num_runs", 0) for u in units) == 2 * 3 * config.num_runs


def test_overrides_keep_invariants_and_make_the_table_not_applicable():
    result = run(**OVERRIDES, num_runs=24, runs_per_unit=12)
    assert result["config"]["aspect_ratio"] == 0.2
    failed = [(c["name"], c["expected"], c["measured"]) for c in result["checks"]
              if c["kind"] == "invariant" and c["passed"] is not True]
    assert not failed
    assert len(checks_named(result, "simulation_matches_ode")) == 4
    table = checks_named(result, "ode_reference_table")
    assert table and all(c["passed"] is None and "not applicable" in c["note"] for c in table)
    jumps = checks_named(result, "final_jump")
    expected = 2 * 0.7**2 * 2.0**2 * 0.2**2 / 2.0**2
    assert all(c["expected"] == pytest.approx(expected, rel=1e-12) for c in jumps)


@pytest.mark.parametrize("overrides", [
    {"aspect_ratio": 0.02, "initial_learning_rate": 150.0, "clip": 0.1, "rho": 0.1},  # cap 2/gamma active
    {"aspect_ratio": 0.5, "initial_learning_rate": 0.5, "clip": 5.0, "rho": 10.0},
    {"aspect_ratio": 0.01, "initial_learning_rate": 20.0, "clip": 0.3, "rho": 0.5, "schedule_exponents": [1.0, 2.0]},
])
def test_solver_invariant_under_other_parameters(overrides):
    experiment = registry.get(NAME)
    config = apply_overrides(experiment.config(quick=True), {"dims": [60], **overrides})
    for unit in experiment.units(config):
        if unit.params["method"] != "ode":
            continue
        check = Fig1._solver_check(unit.params["panel"], 60, experiment.compute_unit(config, unit, seed=0))
        assert check.passed, (unit.key, check.expected, check.measured)


def test_solver_invariant_fails_when_the_engine_is_wrong(monkeypatch):
    from privdyn.dynamics import dpgd as dyn

    original = dyn.solve_risk_ode

    def wrong(**kwargs):
        out = original(**kwargs)
        return type(out)(**{**out.__dict__, "risk": out.risk * (1 + 1e-3)})

    monkeypatch.setattr(dyn, "solve_risk_ode", wrong)
    experiment = registry.get(NAME)
    config = apply_overrides(experiment.config(quick=True), {"dims": [40]})
    unit = experiment.units(config)[0]
    assert not Fig1._solver_check(1, 40, experiment.compute_unit(config, unit, seed=0)).passed


def test_runs_do_not_depend_on_the_split_into_units():
    experiment = registry.get(NAME)
    outs = []
    for per_unit in (2, 4):
        config = apply_overrides(experiment.config(quick=True), {"dims": [20], "num_runs": 4,
                                                                  "runs_per_unit": per_unit})
        sims = [u for u in experiment.units(config) if u.params["method"] == "simulation"
                and u.params["spectrum"] == "identity"]
        risk = np.concatenate([np.asarray(experiment.compute_unit(config, u, seed=3)["risk"]) for u in sims], axis=1)
        outs.append(risk)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_bonferroni_z():
    assert bonferroni_z(1) == 5.0
    assert 5.5 < bonferroni_z(41) < 5.7


@pytest.mark.parametrize(("key", "value"), [
    ("aspect_ratio", 0), ("clip", -1.0), ("rho", 0), ("initial_learning_rate", -2), ("label_noise", 0),
    ("schedule_exponents", [0.3]), ("spectra", ["power_law"]), ("dims", [0]), ("num_runs", 1),
    ("dims", [100, 100]),
])
def test_bad_overrides_name_the_key(key, value):
    with pytest.raises(ConfigError, match=key):
        registry.prepare(NAME, quick=True, overrides={key: value})


def test_bad_override_exits_2_with_one_line(capsys, tmp_path):
    status = main(["run", NAME, "--quick", "--set", "clip=-1", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert status == 2 and len(err.strip().splitlines()) == 1 and "clip" in err
    assert not (tmp_path / "out").exists()


def test_deterministic_points_are_left_out_when_n_is_small():
    """n = 5 < num_time_points: the first grid points record θ_0 in every run; they carry no sampling error."""
    result = run(aspect_ratio=4.0, dims=[20], num_runs=4, runs_per_unit=4)
    assert not [c["name"] for c in result["checks"] if c["kind"] == "invariant" and c["passed"] is not True]
    findings = checks_named(result, "simulation_vs_ode")
    assert len(findings) == 4 and all("of 34 points" in c["note"] for c in findings)
