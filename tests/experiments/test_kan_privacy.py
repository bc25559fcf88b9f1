"""kan-fig1-right and kan-calibration (arXiv 2605.12648): contract, checks, overrides, failing engines, bad input."""

import json
import math
import shutil

import numpy as np
import pytest

from privdyn.cli import main
from privdyn.experiments import kan_privacy, registry
from privdyn.experiments.kan_privacy import (
    cumulative_noise_variance,
    reference_noise_multiplier_d9,
    reference_noise_multiplier_f12,
)
from privdyn.privacy import correlated_calibration
from privdyn.privacy.correlated import LambdaCGD
from privdyn.runs import runner
from privdyn.runs.config import ConfigError, apply_overrides
from privdyn.runs.naming import json_number

FIG = "kan-fig1-right"
CAL = "kan-calibration"


def run(name, out_dir=None, quick=True, **overrides):
    experiment, config = registry.prepare(name, quick=quick, overrides=overrides)
    return runner.run_experiment(experiment, config, seed=0, quick=quick, out_dir=out_dir)


def checks_named(result, prefix):
    return [c for c in result["checks"] if c["name"].startswith(prefix)]


def failed(result):
    return [(c["name"], c["expected"], c["measured"], c["note"]) for c in result["checks"] if c["passed"] is False]


@pytest.fixture(scope="module")
def quick_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("kan_privacy")
    return {name: (run(name, out_dir=out), out / name) for name in (FIG, CAL)}


# ----------------------------------------------------------------------------------------------------------------
# kan-fig1-right
# ----------------------------------------------------------------------------------------------------------------


def test_fig1_right_quick_contract_and_checks(quick_results):
    result, target = quick_results[FIG]
    assert (target / "figure.png").stat().st_size > 0 and (target / "series.csv").exists()
    assert json.loads((target / "result.json").read_text())["experiment"] == FIG
    assert not failed(result)
    lams = result["config"]["noise_correlations"]
    for s in result["series"]:
        assert {"method", "noise_correlation", "noise_multiplier", "num_steps", "quantity"} <= set(s["params"])
        assert s["params"]["quantity"] == "cumulative_noise_variance"
        assert s["x"] == list(range(1, result["config"]["num_steps"] + 1))
    assert len([s for s in result["series"] if s["params"]["method"] == "monte_carlo"]) == len(lams)
    mc = checks_named(result, "cumulative_variance_matches_closed_form")
    assert len(mc) == len(lams)
    assert all(c["kind"] == "invariant" and c["passed"] and len(c["standard_error"]) == result["config"]["num_steps"]
               and min(c["standard_error"]) > 0 for c in mc)  # one SE per time point
    assert all("Bonferroni over 100 time points" in c["note"] for c in mc)
    claims = checks_named(result, "partial_cancellation_slows_growth")
    assert [c["passed"] for c in claims] == [None] + [True] * (len(lams) - 1)  # lambda = 0 is the reference
    (ratio,) = checks_named(result, "cumulative_variance_relative_to_independent")
    assert ratio["kind"] == "finding" and set(ratio["measured"]) == {str(json_number(v)) for v in lams}
    assert checks_named(result, "first_step_is_fresh_noise")[0]["passed"] is True
    (spec,) = checks_named(result, "spec_cumulative_variance_values")
    assert spec["kind"] == "paper_claim" and spec["passed"] is True and spec["expected"] in (3.25, 13.25)


def test_cumulative_noise_variance_equals_the_decoder_row_norms():
    """Row t of the map Z -> sum_{s<=t} xi_s, built entry by entry from xi_s = Z_s - lambda Z_{s-1}."""
    steps = 12
    for lam in (0.0, 0.25, 0.9):
        prefix = np.zeros((steps, steps))
        for t in range(steps):
            for s in range(t + 1):
                prefix[t, s] += 1.0
                if s >= 1:
                    prefix[t, s - 1] -= lam
        expected = 2.5**2 * np.sum(prefix**2, axis=1)
        got = cumulative_noise_variance(lam, np.arange(1, steps + 1), noise_multiplier=2.5)
        np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert cumulative_noise_variance(0.5, 10) == pytest.approx(3.25)  # spec seed-004 §2.2
    assert cumulative_noise_variance(0.5, 50) == pytest.approx(13.25)
    with pytest.raises(ValueError, match="noise_correlation"):
        cumulative_noise_variance(1.0, 3)
    with pytest.raises(ValueError, match="steps"):
        cumulative_noise_variance(0.5, 0)


def test_fig1_right_overrides_keep_the_invariants():
    result = run(FIG, noise_correlations=[0.95, 0.2], noise_multiplier=2.5, num_steps=40, num_coordinates=10_000)
    assert not failed(result)
    mc = checks_named(result, "cumulative_variance_matches_closed_form")
    assert len(mc) == 2 and all(c["passed"] for c in mc)
    final = {s["params"]["noise_correlation"]: s["y"][-1] for s in result["series"]
             if s["params"]["method"] == "closed_form"}
    assert final[0.95] == pytest.approx(2.5**2 * (1 + 0.05**2 * 39))
    assert "Bonferroni over 40 time points" in mc[0]["note"]
    (spec,) = checks_named(result, "spec_cumulative_variance_values")
    assert spec["passed"] is None and "not applicable" in spec["note"]


def test_fig1_right_claim_not_applicable_when_the_gap_is_unresolvable():
    result = run(FIG, noise_correlations=[0.01], num_steps=5, num_coordinates=10_000)
    (claim,) = checks_named(result, "partial_cancellation_slows_growth")
    assert claim["passed"] is None and "cannot resolve" in claim["note"]


def test_fig1_right_few_coordinates_give_findings_only():
    result = run(FIG, noise_correlations=[0.5], num_steps=3, num_coordinates=50)
    assert not checks_named(result, "cumulative_variance_matches_closed_form")
    (small,) = checks_named(result, "cumulative_variance_vs_closed_form")
    assert small["kind"] == "finding" and small["passed"] is None
    assert all(c["passed"] is None for c in result["checks"] if c["kind"] == "paper_claim")


def test_fig1_right_invariant_fails_for_a_wrong_noise_stream(monkeypatch):
    monkeypatch.setattr(kan_privacy.fig1_right, "LambdaCGD", lambda lam: LambdaCGD(0.9 * lam))
    result = run(FIG, noise_correlations=[0.5], num_steps=60, num_coordinates=10_000)
    (check,) = checks_named(result, "cumulative_variance_matches_closed_form")
    assert check["passed"] is False


def test_fig1_right_units_share_noise_across_the_grid():
    experiment = registry.get(FIG)
    outs = []
    for grid in ([0.5], [0.1, 0.5]):
        config = apply_overrides(experiment.config(quick=True), {"noise_correlations": grid, "num_steps": 5,
                                                                  "num_coordinates": 100})
        unit = next(u for u in experiment.units(config) if u.params["noise_correlation"] == 0.5)
        outs.append(experiment.compute_unit(config, unit, seed=4))
    assert outs[0] == outs[1]


# ----------------------------------------------------------------------------------------------------------------
# kan-calibration
# ----------------------------------------------------------------------------------------------------------------


def test_calibration_quick_contract_and_checks(quick_results):
    result, target = quick_results[CAL]
    assert (target / "figure.png").stat().st_size > 0 and (target / "series.csv").exists()
    assert not failed(result)
    cfg = result["config"]
    accountants = {(s["params"]["accountant"], s["params"]["neighboring"], s["params"]["guarantee"],
                    s["params"]["sampling"]) for s in result["series"]}
    assert accountants == {("theorem_f12", "zero_out", "bound", "without_replacement"),
                           ("theorem_f12_proved", "zero_out", "bound", "without_replacement"),
                           ("theorem_d9", "replace_one", "heuristic", "without_replacement"),
                           ("dp_accounting", "replace_one", "bound", "without_replacement"),
                           ("dp_accounting", "add_remove", "bound", "poisson")}
    for s in result["series"]:
        assert s["params"]["sampling_prob"] == pytest.approx(cfg["batch_size"] / cfg["n"])
        assert s["params"]["epsilon"] in cfg["epsilons"]
    n_eps = len(cfg["epsilons"])
    assert len(checks_named(result, "theorem_f12_matches_closed_form")) == 2 * n_eps
    assert len(checks_named(result, "theorem_d9_matches_closed_form")) == n_eps
    calib = checks_named(result, "dp_accounting_calibration")
    assert len(calib) == 2 * n_eps and all(c["passed"] and c["measured"] <= c["expected"] for c in calib)
    claims = [c for c in result["checks"] if c["kind"] == "paper_claim"]
    assert len(claims) == 14 and all(c["passed"] is True for c in claims)
    (eps_row1,) = checks_named(result, "spec_table_d9_epsilon row=1")
    assert eps_row1["expected"] == 0.82
    wins = checks_named(result, "paper_calibration_lambda_zero_wins")
    assert len(wins) == n_eps and all(c["kind"] == "finding" and c["measured"] == 0 for c in wins)
    assert {t["name"] for t in result["tables"]} == {"noise_multipliers", "spec_reference_table",
                                                     "amplified_reference_table"}


def test_calibration_amplified_column_at_the_reference_settings(quick_results):
    result, _ = quick_results[CAL]
    (table,) = [t for t in result["tables"] if t["name"] == "amplified_reference_table"]
    col = {c: i for i, c in enumerate(table["columns"])}
    assert len(table["rows"]) == 15
    for row in table["rows"]:
        assert (row[col["sampler"]], row[col["neighboring"]], row[col["guarantee"]]) == ("fixed_size", "zero_out",
                                                                                          "bound")
        assert row[col["kappa_amplified_bound"]] <= row[col["kappa_theorem_f12_proved"]]
        assert row[col["bound_over_f12_proved"]] == pytest.approx(row[col["kappa_amplified_bound"]]
                                                                  / row[col["kappa_theorem_f12_proved"]])
        # the quick config computes lambda = 0 now and reads the rest from the shipped table
        assert row[col["source"]] == ("computed" if row[col["noise_correlation"]] == 0 else "shipped")
    for prefix in ("amplified_bound_at_most_f12_proved", "amplified_bound_lambda_zero_matches_pld",
                   "amplified_shipped_f12_columns", "amplified_shipped_table_current"):
        found = checks_named(result, prefix)
        assert len(found) == 3 and all(c["kind"] == "invariant" and c["passed"] is True for c in found), prefix
    assert len(checks_named(result, "amplified_cumulative_noise_lambda_zero_wins")) == 3
    assert all(c["passed"] is None for c in checks_named(result, "amplified_estimate"))


def test_amplified_invariants_fail_for_an_unsafe_or_loose_kappa(quick_results):
    from privdyn.experiments.kan_privacy import amplified

    experiment = registry.get(CAL)
    config = experiment.config(quick=True)
    outputs = {u.key: experiment.compute_unit(config, u, seed=0) for u in experiment.units(config)
               if u.params["method"].startswith("amplified") and u.params.get("source") != "computed"}
    for u in experiment.units(config):  # lambda = 0 from the shipped table too (same numbers, no calibration)
        if u.params.get("source") == "computed":
            outputs[u.key] = experiment.compute_unit(config, type(u)(u.key, {**u.params, "source": "shipped"}), 0)
    _, _, checks = amplified.amplified_findings(outputs)
    assert all(c.passed is not False for c in checks)
    key = "accountant=amplified_bound/row=1/noise_correlation=0"
    exact = outputs["accountant=amplified_exact/row=1"]["kappa"]
    for kappa in (exact * 0.999, exact * 1.02):  # under-reports epsilon / looser than the rtol
        bad = {**outputs, key: {**outputs[key], "kappa": kappa}}
        (check,) = [c for c in amplified.amplified_findings(bad)[2]
                    if c.name == "amplified_bound_lambda_zero_matches_pld row=1"]
        assert check.passed is False
    key = "accountant=amplified_bound/row=2/noise_correlation=0.5"
    bad = {**outputs, key: {**outputs[key], "kappa": 100.0}}  # above F.12's 96.05 with constant 2
    (check,) = [c for c in amplified.amplified_findings(bad)[2] if c.name == "amplified_bound_at_most_f12_proved row=2"]
    assert check.passed is False


def test_calibration_lambda_grid_change_reuses_the_accountant_units(quick_results, tmp_path):
    _, target = quick_results[CAL]
    shutil.copytree(target / ".cache", tmp_path / CAL / ".cache")
    experiment, config = registry.prepare(CAL, quick=True, overrides={"noise_correlations": [0.0, 0.6]})
    counts = runner.UnitCounts()
    result = runner.run_experiment(experiment, config, seed=0, quick=True, out_dir=tmp_path, counts=counts)
    assert (counts.computed, counts.cached) == (1, len(experiment.units(config)) - 1)  # only the closed forms
    assert not failed(result)


def test_reference_transcriptions_reproduce_the_spec_table():
    setting = {"n": 50_000, "batch_size": 500, "num_steps": 5_000, "epsilon": 1.0, "delta": 1e-5}
    got = [reference_noise_multiplier_f12(lam, constant=8.0, **setting) for lam in (0.0, 0.3, 0.5, 0.7, 0.9)]
    np.testing.assert_allclose(got, [96.05, 137.22, 192.11, 320.18, 960.54], atol=0.005)
    assert reference_noise_multiplier_f12(0.3, constant=2.0, **setting) == pytest.approx(137.22 / 2, abs=0.005)
    assert reference_noise_multiplier_d9(**setting) == pytest.approx(13.864, abs=5e-4)
    assert reference_noise_multiplier_f12(0.3, constant=8.0, **{**setting, "epsilon": 1.5}) is None
    assert reference_noise_multiplier_f12(0.3, constant=8.0, **{**setting, "num_steps": 3661}) is None
    assert reference_noise_multiplier_f12(0.3, constant=8.0, **{**setting, "num_steps": 3662}) is not None


def test_calibration_overrides_report_the_closed_forms_exactly():
    overrides = {"n": 20_000, "batch_size": 2_000, "num_steps": 600, "delta": 1e-6, "epsilons": [0.7, 2.0],
                 "noise_correlations": [0.8, 0.0, 0.4]}
    result = run(CAL, **overrides)
    assert not failed(result)
    sizes = {k: overrides[k] for k in ("n", "batch_size", "num_steps", "delta")}
    f12 = [s for s in result["series"] if s["params"]["accountant"] == "theorem_f12"
           and s["params"]["quantity"] == "noise_multiplier"]
    assert len(f12) == 1 and f12[0]["params"]["epsilon"] == 0.7  # F.12 needs epsilon <= 1
    assert f12[0]["x"] == [0.0, 0.4, 0.8]  # sorted by lambda
    expected = [reference_noise_multiplier_f12(lam, constant=8.0, epsilon=0.7, **sizes) for lam in f12[0]["x"]]
    assert f12[0]["y"] == pytest.approx(expected, rel=1e-12)
    refused = [c for c in checks_named(result, "theorem_f12_matches_closed_form") if "epsilon=2 " in c["name"]]
    assert len(refused) == 2 and all(c["passed"] and "refuses" in c["note"] for c in refused)
    d9 = {s["params"]["epsilon"]: s["y"][0] for s in result["series"] if s["params"]["accountant"] == "theorem_d9"
          and s["params"]["quantity"] == "noise_multiplier"}
    assert d9[2] == pytest.approx(reference_noise_multiplier_d9(epsilon=2.0, **sizes), rel=1e-12)
    calib = checks_named(result, "dp_accounting_calibration")
    assert len(calib) == 4 and all(c["passed"] for c in calib)
    wins = {c["name"]: c for c in checks_named(result, "paper_calibration_lambda_zero_wins")}
    assert wins["paper_calibration_lambda_zero_wins epsilon=0.7"]["measured"] == 0
    assert wins["paper_calibration_lambda_zero_wins epsilon=2"]["passed"] is None
    # the spec's table is evaluated at its own settings whatever the config
    assert all(c["passed"] is True for c in result["checks"] if c["kind"] == "paper_claim")


@pytest.mark.parametrize("engine", ["noise_multiplier_theorem_f12", "noise_multiplier_theorem_d9"])
def test_closed_form_invariants_fail_when_the_engine_is_wrong(monkeypatch, engine):
    original = getattr(correlated_calibration, engine)

    def wrong(*args, **kwargs):
        loss = original(*args, **kwargs)
        return type(loss)(**{**loss.__dict__, "value": loss.value * (1 + 1e-9)})

    monkeypatch.setattr(correlated_calibration, engine, wrong)
    experiment = registry.get(CAL)
    config = apply_overrides(experiment.config(quick=True), {"epsilons": [1.0]})
    outputs = {"closed_forms": experiment.compute_unit(config, experiment.units(config)[0], seed=0)}
    prefix = "theorem_f12_matches" if engine.endswith("f12") else "theorem_d9_matches"
    checks = [c for c in _closed_form_checks(experiment, config, outputs) if c.name.startswith(prefix)]
    assert checks and all(c.passed is False for c in checks)


def _closed_form_checks(experiment, config, outputs):
    """Assemble with stand-in dp-accounting and table outputs (only the closed-form checks are inspected)."""
    fake_dp = {"value": 1.0, "guarantee": "bound", "neighboring": "replace_one", "epsilon_at_value": 0.0,
               "epsilon_below": 0.0, "kappa_below": 1.0}
    full = dict(outputs)
    for unit in experiment.units(config):
        if unit.params["method"] == "dp_accounting":
            full[unit.key] = fake_dp
        elif unit.params["method"].startswith("amplified"):
            full[unit.key] = {"kappa": 1.0, "source": "shipped", "rtol": 0.01, "seconds": 0.0, "shipped_kappa": 1.0,
                              "shipped_rtol": 0.01, "shipped_seconds": 0.0, "shipped_f12": [1.0, 1.0],
                              "shipped_estimate": {"kappa_estimate": None,
                                                   "epsilon_estimate_lower_at_kappa_bound": None}}
        elif unit.params["method"] == "spec_table":
            full[unit.key] = {"d9": 1.0, "f12": [1.0] * 5, "epsilon_half": 0.0, "epsilon_full": 0.0,
                              "f12_min_steps": 1}
    return experiment.assemble(config, full, seed=0, quick=True).checks


def test_calibration_check_fails_for_an_unsafe_kappa():
    experiment = registry.get(CAL)
    config = experiment.config(quick=True)
    unsafe = {"value": 10.0, "guarantee": "bound", "neighboring": "replace_one", "epsilon_at_value": 1.01,
              "epsilon_below": 1.02, "kappa_below": 9.999}
    loose = {**unsafe, "epsilon_at_value": 0.9, "epsilon_below": 0.95}
    assert experiment._calibration_check(config, 1.0, "without_replacement", unsafe).passed is False
    assert experiment._calibration_check(config, 1.0, "without_replacement", loose).passed is False


def test_calibration_default_is_the_first_spec_row():
    config = registry.get(CAL).config()
    assert (config.n, config.batch_size, config.num_steps, config.delta) == (50_000, 500, 5_000, 1e-5)
    assert math.isclose(config.sampling_prob, 0.01)


# ----------------------------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "key", "value"), [
    (FIG, "noise_correlations", [1.0]), (FIG, "noise_correlations", [0.3, 0.3]), (FIG, "noise_multiplier", 0),
    (FIG, "num_steps", 0), (FIG, "num_coordinates", 1),
    (CAL, "batch_size", 60_000), (CAL, "delta", 0.0), (CAL, "epsilons", [0.0]), (CAL, "epsilons", [0.5, 0.5]),
    (CAL, "noise_correlations", [-0.1]), (CAL, "calibration_rtol", 0.5), (CAL, "n", 0),
    (CAL, "amplified_computed_lambdas", [0.2]), (CAL, "amplified_computed_lambdas", [0.0, 0.0]),
    (CAL, "amplified_rtol", 0.5),
])
def test_bad_overrides_name_the_key(name, key, value):
    with pytest.raises(ConfigError, match=key):
        registry.prepare(name, quick=True, overrides={key: value})


def test_bad_override_exits_2_with_one_line(capsys, tmp_path):
    status = main(["run", CAL, "--quick", "--set", "delta=2", "--out", str(tmp_path / "out")])
    _, err = capsys.readouterr()
    assert status == 2 and len(err.strip().splitlines()) == 1 and "delta" in err
    assert not (tmp_path / "out").exists()
