"""kan-fig1-left and kan-bounds: runner contract, checks, overrides, config errors, data and statistics utilities."""

import json
import math

import numpy as np
import pytest

from privdyn.bounds import kan as kb
from privdyn.data.classification import load_binary_dataset, scale_to_unit_ball
from privdyn.experiments import registry
from privdyn.experiments.kan_training import (
    Bounds,
    BoundsConfig,
    Fig1Left,
    Fig1LeftConfig,
    t_interval,
)
from privdyn.privacy.correlated_calibration import noise_multiplier_theorem_f12
from privdyn.reference.kan_noise_multipliers import reference_noise_multiplier_f12
from privdyn.runs import runner
from privdyn.runs.config import ConfigError

LEFT = "kan-fig1-left"
BOUNDS = "kan-bounds"
LEFT_KEYS = {"dataset", "panel", "quantity", "method", "n", "n_test", "d", "batch_size", "sampling_prob", "num_steps",
             "step_size", "clip", "delta", "width", "grid_size", "spline_order", "activation", "test_fraction"}


def run(name, out_dir=None, quick=True, **overrides):
    experiment, config = registry.prepare(name, quick=quick, overrides=overrides)
    return runner.run_experiment(experiment, config, seed=0, quick=quick, out_dir=out_dir)


def named(result, prefix):
    return [c for c in result["checks"] if c["name"].startswith(prefix)]


@pytest.fixture(scope="module")
def left_quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("left")
    return run(LEFT, out_dir=out), out / LEFT


@pytest.fixture(scope="module")
def bounds_quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bounds")
    return run(BOUNDS, out_dir=out), out / BOUNDS


# ------------------------------------------------------------------------------------------------------------------
# kan-fig1-left
# ------------------------------------------------------------------------------------------------------------------


def test_left_quick_contract(left_quick):
    result, target = left_quick
    assert (target / "figure.png").stat().st_size > 0 and (target / "series.csv").exists()
    assert json.loads((target / "result.json").read_text())["experiment"] == LEFT
    cfg = result["config"]
    assert set(cfg["datasets"]) == {"breast_cancer", "digits_1_vs_7"}
    acc = [s for s in result["series"] if s["params"]["quantity"] == "test_accuracy"]
    assert acc
    for s in result["series"]:
        assert LEFT_KEYS <= set(s["params"]), s["name"]
    for s in acc:
        assert len(s["y_low"]) == len(s["y_high"]) == len(s["standard_error"]) == len(s["y"])
        assert all(0 <= lo <= y <= hi <= 1 for lo, y, hi in zip(s["y_low"], s["y"], s["y_high"], strict=True))
    # panel (b): one series per dataset and epsilon, every kappa from the amplified bound
    for ds in cfg["datasets"]:
        cal = [s for s in acc if s["params"]["panel"] == "calibrated" and s["params"]["dataset"] == ds]
        assert len(cal) == len(cfg["calibrated_epsilons"])
        for s in cal:
            assert s["x"] == sorted(cfg["noise_correlations"])
            assert (s["params"]["accountant"], s["params"]["sampler"], s["params"]["neighboring"],
                    s["params"]["guarantee"]) == ("amplified_bound", "fixed_size", "zero_out", "bound")
        same = [s for s in acc if s["params"]["panel"] == "same_noise" and s["params"]["dataset"] == ds]
        assert {s["params"]["epsilon"] for s in same} == set(cfg["epsilons"])
        assert all(s["x"] == sorted(cfg["noise_correlations"]) for s in same)
        assert all(s["params"]["guarantee_holds_at"] == "noise_correlation = 0 only" for s in same)
        # the bound's kappa grows with lambda
        kap = next(s for s in result["series"] if s["params"]["quantity"] == "noise_multiplier"
                   and s["params"]["panel"] == "calibrated" and s["params"]["dataset"] == ds)["y"]
        assert np.all(np.diff(kap) > 0)
    clip = [m for m in result["metrics"] if m["name"] == "clip_fraction"]
    assert clip and all(0 <= m["value"] <= 1 for m in clip)


def test_left_quick_checks(left_quick):
    result, _ = left_quick
    assert not [c["name"] for c in result["checks"] if c["passed"] is False]
    invariants = [c for c in result["checks"] if c["kind"] == "invariant" and c["passed"] is not None]
    assert len(named(result, "nonprivate_equals_clipped_sgd")) == 2
    cfg = result["config"]
    for prefix in ("calibrated_lambda_zero_matches_pld", "calibrated_kappa_at_most_f12_proved"):
        assert len([c for c in named(result, prefix) if c["passed"] is True]) == 2, prefix
    assert not named(result, "calibrated_kappa_shipped_current")  # the quick config reads the shipped kappas
    assert len(invariants) >= 8
    claim = named(result, "figure1_left_moderate_lambda_wins")
    assert len(claim) == 1 and claim[0]["kind"] == "paper_claim" and claim[0]["passed"] is None
    findings = named(result, "interior_lambda_beats_zero")
    assert len(findings) == len(cfg["datasets"]) * (len(cfg["epsilons"]) + len(cfg["calibrated_epsilons"]))
    for f in findings:
        assert f["kind"] == "finding" and f["passed"] is None
        m = f["measured"]
        assert m["lambda_star"] > 0 and m["ci_lambda_zero"][0] <= m["accuracy_lambda_zero"] <= m["ci_lambda_zero"][1]
        assert m["interior_beats_zero"] == (m["accuracy_lambda_star"] > m["accuracy_lambda_zero"])
        if "calibrated" in f["name"]:
            assert "biased against lambda > 0" in f["note"]
    paired = named(result, "calibrated_paired_difference")
    assert len(paired) == len(cfg["datasets"]) * (len(cfg["noise_correlations"]) - 1)
    for f in paired:
        lo, hi = f["measured"]["ci"]
        assert lo <= f["measured"]["difference"] <= hi and "biased against lambda > 0" in f["note"]
    lr = named(result, "nonprivate_kan_against_logistic_regression")
    assert len(lr) == 2 and all(0.5 < c["measured"]["logistic_regression"] <= 1 for c in lr)


def test_left_overrides_compute_the_kappas(tmp_path):
    # a setting the shipped file lacks: the lambda = 0 kappa is computed (and checked against dp-accounting's PLD)
    result = run(LEFT, out_dir=tmp_path, datasets=["digits_1_vs_7"], num_seeds=2, noise_correlations=[0],
                 epsilons=[0.5], calibrated_epsilons=[2.0], num_steps=80, batch_size=64, width=4)
    assert result["config"]["num_steps"] == 80
    assert not [c["name"] for c in result["checks"] if c["passed"] is False]
    (check,) = named(result, "calibrated_lambda_zero_matches_pld")
    assert check["passed"] is True and "(computed)" in check["note"]
    assert named(result, "calibrated_kappa_at_most_f12_proved")[0]["passed"] is None  # epsilon > 1, no lambda > 0
    assert all(s["params"]["num_steps"] == 80 and s["params"]["width"] == 4 for s in result["series"])


def test_left_shipped_kappas_match_the_default_config():
    from privdyn.experiments.kan_training import kappas

    for setting in kappas.default_settings():
        entry = kappas.shipped(**setting)
        assert entry is not None, setting
        assert (entry["accountant"], entry["sampler"], entry["neighboring"], entry["guarantee"]) == (
            "amplified_bound", "fixed_size", "zero_out", "bound")


@pytest.mark.parametrize("key, value, fragment", [
    ("noise_correlations", [0.3, 0.5], "noise_correlations"),
    ("noise_correlations", [0.0, 1.0], "noise_correlations"),
    ("epsilons", [-1.0], "epsilons"),
    ("num_seeds", 1, "num_seeds"),
    ("batch_size", 300, "batch_size"),
    ("spline_order", 2, "spline_order"),
    ("datasets", ["mnist"], "datasets"),
    ("delta", 1.5, "delta"),
    ("calibrated_epsilons", [0.0], "calibrated_epsilons"),
    ("kappa_source", "cached", "kappa_source"),
])
def test_left_config_errors(key, value, fragment):
    with pytest.raises(ConfigError, match=fragment):
        registry.prepare(LEFT, quick=True, overrides={key: value})
    with pytest.raises(ConfigError, match="unknown config key"):
        registry.prepare(LEFT, quick=True, overrides={"lambdas": [0.0]})


def test_left_invariant_can_fail():
    config = Fig1LeftConfig().quick()
    good = {"reference": {"relative_params_error": 1e-15, "num_steps": 40}, "nonprivate_accuracy": 0.9,
            "nonprivate_max_lambda_params_diff": 0.0}
    bad = {**good, "reference": {"relative_params_error": 1e-6, "num_steps": 40},
           "nonprivate_max_lambda_params_diff": 1e-3}
    passed = {c.name.split(" ")[0]: c.passed for c in Fig1Left._invariants(config, "digits_1_vs_7", 253, [good, good])}
    failed = {c.name.split(" ")[0]: c.passed for c in Fig1Left._invariants(config, "digits_1_vs_7", 253, [bad, good])}
    assert passed["nonprivate_equals_clipped_sgd"] and passed["nonprivate_independent_of_lambda"]
    assert failed["nonprivate_equals_clipped_sgd"] is False and failed["nonprivate_independent_of_lambda"] is False


def test_data_and_statistics_utilities():
    x, y = load_binary_dataset("breast_cancer")
    assert x.shape == (569, 30) and set(np.unique(y)) == {-1.0, 1.0}
    with pytest.raises(ValueError, match="dataset"):
        load_binary_dataset("cifar10")
    rng = np.random.default_rng(0)
    tr, te, rescaled = scale_to_unit_ball(rng.normal(size=(50, 4)) * 5 + 3, rng.normal(size=(20, 4)) * 9)
    assert np.all(np.linalg.norm(tr, axis=1) <= 1) and np.all(np.linalg.norm(te, axis=1) <= 1)
    assert np.isclose(np.max(np.linalg.norm(tr, axis=1)), 1.0) and rescaled > 0
    mean, se, lo, hi = t_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and se == pytest.approx(1 / math.sqrt(3)) and hi - mean == pytest.approx(4.302653 * se, 1e-6)
    with pytest.raises(ValueError, match="at least 2"):
        t_interval([1.0])
    for lam in (0.0, 0.3, 0.9):
        expected = reference_noise_multiplier_f12(lam, n=1000, batch_size=100, num_steps=500, epsilon=0.5, delta=1e-6,
                                                  constant=8.0)
        got = float(noise_multiplier_theorem_f12(lam, n=1000, batch_size=100, num_steps=500, epsilon=0.5, delta=1e-6))
        assert got == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------------------------------------------------------------------
# kan-bounds
# ------------------------------------------------------------------------------------------------------------------


def test_bounds_quick_contract_and_checks(bounds_quick):
    result, target = bounds_quick
    assert (target / "figure.png").stat().st_size > 0 and (target / "series.csv").exists()
    cfg = result["config"]
    assert not [c["name"] for c in result["checks"] if c["passed"] is False]
    for cor in cfg["corollaries"]:
        series = {s["params"]["quantity"]: s for s in result["series"] if s["params"]["corollary"] == cor}
        for q in ("averaged_train_loss", "averaged_test_loss", "generalization_gap", "rate", "optimization_rate",
                  "population_bound", "lemma_c11_bound", "ntk_margin", "noise_multiplier", "clip_fraction"):
            assert q in series, (cor, q)
            assert series[q]["x"] == sorted(cfg["ns"])
        assert series["lemma_c11_bound"]["params"]["guarantee"] == "bound"
        assert series["population_bound"]["params"]["guarantee"] == "surrogate"
        assert series["averaged_train_loss"]["params"]["method"] == "simulation"
        assert len(series["averaged_train_loss"]["standard_error"]) == len(cfg["ns"])
        b = series["batch_size"]["y"]
        t = series["num_steps"]["y"]
        if cor == "5.3":
            assert b == [round(cfg["batch_fraction"] * n) for n in sorted(cfg["ns"])]
            assert series["noise_multiplier"]["params"]["accountant"] == "theorem_f12"
        if cor == "5.6":
            assert series["noise_multiplier"]["y"] == [0.0] * len(cfg["ns"])
            assert t == [math.ceil(cfg["nonprivate_num_steps_constant"] * n**2 / bb)
                         for n, bb in zip(sorted(cfg["ns"]), b, strict=True)]
        pop = named(result, f"population_bound_comparison corollary={cor}")
        assert len(pop) == 1 and pop[0]["kind"] == "finding" and pop[0]["measured"] > 0
        assert isinstance(b[0], int) and isinstance(t[0], int)
        slopes = named(result, f"loglog_slope corollary={cor}")
        assert len(slopes) == 3 and all(c["kind"] == "finding" for c in slopes)
        c11 = [c for c in result["checks"] if c["name"].startswith("lemma_c11_bound") and f"={cor} " in c["name"]]
        assert len(c11) == len(cfg["ns"])
        for c in c11:  # an invariant where every condition holds, else a finding naming the failed conditions
            assert (c["kind"] == "invariant") == ("_holds" in c["name"])
            if c["kind"] == "finding":
                assert "failed conditions" in c["note"]
    literal = next(t for t in result["tables"] if t["name"] == "literal_corollary_schedules")
    assert len(literal["rows"]) == len(cfg["corollaries"]) * len(cfg["ns"])
    assert all(row[3] is not None or row[-1] for row in literal["rows"])  # a schedule, or why there is none
    margins = [m for m in result["metrics"] if m["name"] == "lemma_c11_condition_margin"]
    assert {m["params"]["condition"] for m in margins} >= {"step_size", "self_consistency", "projection_radius"}
    # the shifted radius is solved so that condition (10) and the projection radius hold
    assert all(m["value"] >= 0 for m in margins if m["params"]["condition"] in ("self_consistency",
                                                                               "projection_radius"))


def test_bounds_overrides(tmp_path):
    result = run(BOUNDS, out_dir=tmp_path, corollaries=["5.6"], ns=[32, 64], num_seeds=2, n_test=200,
                 nonprivate_num_steps_constant=0.02)
    assert {s["params"]["corollary"] for s in result["series"]} == {"5.6"}
    steps = next(s for s in result["series"] if s["params"]["quantity"] == "num_steps")["y"]
    assert steps == [math.ceil(0.02 * 32**2 / round(math.sqrt(32))), math.ceil(0.02 * 64**2 / 8)]
    assert not [c["name"] for c in result["checks"] if c["passed"] is False]


@pytest.mark.parametrize("overrides, fragment", [
    ({"ns": [8]}, "ns"),
    ({"num_steps_constant": 1.0}, "ns"),  # Theorem F.12 undefined: rT < 3 ln(2/delta)
    ({"epsilon": 2.0}, "ns"),  # Theorem F.12 needs epsilon <= 1
    ({"noise_correlation": 1.0}, "noise_correlation"),
    ({"corollaries": ["5.4"]}, "corollaries"),
    ({"num_seeds": 1}, "num_seeds"),
])
def test_bounds_config_errors(overrides, fragment):
    with pytest.raises(ConfigError, match=fragment):
        registry.prepare(BOUNDS, quick=True, overrides=overrides)


def test_lemma_c11_shifted_radius_is_tight():
    config = BoundsConfig()
    k = kb.kan_constants(activation="sigmoid", grid_size=3)
    bound = Bounds._lemma_c11(k, config, n=200, b=100, t=140, eta=0.5, kappa=3.0, lam=0.5, tau=20.0,
                              comparator_loss=0.01)
    cond = bound.condition("self_consistency")
    assert cond.margin >= 0 and cond.margin <= 1e-6 * cond.rhs
    assert bound.condition("projection_radius").holds
    assert bound.terms["projection_radius_used"] > bound.terms["shifted_radius"] + 20.0
