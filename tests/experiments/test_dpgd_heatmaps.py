"""dpgd Figures 4–6 (heatmaps): JSON contract, checks that pass and can fail, data fallback, config errors."""

import dataclasses
import json

import numpy as np
import pytest

from privdyn.dynamics.dpgd import isotropic_risk_ode
from privdyn.experiments import dpgd_heatmaps as hm
from privdyn.experiments import registry
from privdyn.experiments.dpgd_heatmaps.common import _final_noise_check, _Heatmap, _minimum_region_check, _Panel
from privdyn.experiments.dpgd_heatmaps.real import _RealHeatmaps
from privdyn.runs import runner
from privdyn.runs.config import ConfigError, apply_overrides
from privdyn.schedules import Polynomial

HEATMAP_KEYS = {"method", "panel", "schedule", "schedule_exponent", "aspect_ratio", "rho", "d", "n", "dataset",
                "quantity", "num_runs"}

# A small Figure 4 (γ = 0.01 only): the two γ = 0.01 panels on a coarse grid spanning c = 1 and 2/γ = 200.
SMALL_FIG4 = {"aspect_ratios": [0.01], "clips": [0.01, 0.0316, 0.1, 0.316, 1.0, 3.16],
              "initial_learning_rates": [3.0, 10.0, 30.0, 100.0, 300.0], "num_runs": 4, "run_block_size": 2}


def run(name, *, quick=True, out_dir=None, **overrides):
    experiment, config = registry.prepare(name, quick=quick, overrides=overrides)
    return runner.run_experiment(experiment, config, seed=0, quick=quick, out_dir=out_dir)


def by_name(result):
    return {c["name"]: c for c in result["checks"]}


@pytest.fixture(scope="module")
def fig4(tmp_path_factory):
    return run("dpgd-fig4", out_dir=tmp_path_factory.mktemp("fig4"), **SMALL_FIG4)


def test_fig4_contract_and_checks(fig4):
    result = fig4
    sims = [s for s in result["series"] if s["params"]["method"] == "simulation"]
    odes = [s for s in result["series"] if s["params"]["method"] == "ode"]
    assert len(sims) == len(odes) == 2
    for s in sims:
        assert HEATMAP_KEYS <= set(s["params"]) and s["params"]["dataset"] == "synthetic"
        assert s["params"]["n"] == 10_000 and s["params"]["d"] == 100 and s["params"]["num_runs"] == 4
        assert s["x"] == SMALL_FIG4["initial_learning_rates"] and s["y"] == SMALL_FIG4["clips"]
        z, se = np.array(s["z"], dtype=float), np.array(s["standard_error"], dtype=float)
        assert z.shape == se.shape == (6, 5) and np.all(se > 0)
    assert sorted(s["params"]["panel"] for s in sims) == [1, 2]  # panels run over γ first, then α
    checks = by_name(result)
    assert not [c["name"] for c in result["checks"] if c["kind"] == "invariant" and c["passed"] is not True]
    for panel in (1, 2):
        assert checks[f"ode_minimum_matches_spec_table panel={panel}"]["passed"] is True
        assert checks[f"minimum_below_clip_1_and_cap panel={panel}"]["passed"] is True
        assert checks[f"simulated_minimum_vs_ode_minimum panel={panel}"]["kind"] == "finding"
        assert checks[f"valley_follows_ode_argmin panel={panel}"]["kind"] == "paper_claim"
    assert checks["alpha_half_beats_alpha_zero aspect_ratio=0.001"]["passed"] is None  # γ = 0.001 not in the grid
    jump = checks["final_noise_jump panel=1"]
    assert min(jump["standard_error"]) > 0  # one SE per compared grid point; the worst point's is among them
    assert any(abs(jump["tolerance"] / jump["standard_error"][i] - jump["tolerance"] / se) < 1e-12
               for i, se in enumerate(jump["standard_error"]))
    assert checks["final_noise_jump panel=2"]["measured"] == 0.0  # α = ½: η̃(1) = 0, no final noise
    assert (result["config"]["clips"], result["config"]["aspect_ratios"]) == (SMALL_FIG4["clips"], [0.01])


def test_fig4_ode_series_equal_an_independent_lsoda_solve(fig4):
    (s,) = [s for s in fig4["series"] if s["params"]["method"] == "ode" and s["params"]["schedule_exponent"] == 0.5]
    for i, j in ((1, 3), (4, 0), (5, 4)):
        c, e = s["y"][i], s["x"][j]
        ref = isotropic_risk_ode(initial_risk=0.5, aspect_ratio=0.01, learning_rate=Polynomial(e, 0.5), clip=c,
                                 rho=0.1, label_noise=0.3, times=(1.0,), method="lsoda", rtol=1e-10)
        assert s["z"][i][j] == pytest.approx(ref.final_private_risk, rel=10 * fig4["config"]["ode_rtol"])


def test_fig4_outputs_written(fig4, tmp_path_factory):
    assert set(fig4["artifacts"]) == {"figure.png", "figure.svg", "figure_ode.png", "figure_ode.svg", "series.csv"}


def test_fig4_run_blocks_do_not_change_runs():
    """Run i of a panel is the same whatever the blocking (streams keyed by the panel and the run index)."""
    experiment = registry.get("dpgd-fig4")
    config = apply_overrides(experiment.config(quick=True), {"d": 20, "aspect_ratios": [0.1], "clips": [0.1, 1.0],
                                                             "initial_learning_rates": [5.0, 20.0],
                                                             "schedule_exponents": [0.0], "num_runs": 4})
    whole = [u for u in experiment.units(apply_overrides(config, {"run_block_size": 4}))
             if u.params["method"] == "simulation"]
    split = [u for u in experiment.units(apply_overrides(config, {"run_block_size": 2}))
             if u.params["method"] == "simulation"]
    assert len(whole) == 1 and len(split) == 2
    a = np.array(experiment.compute_unit(config, whole[0], seed=3)["final_private_risk"])
    b = np.array(experiment.compute_unit(config, split[1], seed=3)["final_private_risk"])
    np.testing.assert_array_equal(a[:, 2:], b)
    assert not np.array_equal(a[:, :2], b)


def test_fig4_checks_can_fail():
    """The spec-table claim fails on a wrong minimum; the final-jump invariant fails when the jump is 2× too big."""
    config = hm.Fig4Config()
    panel = _Panel(1, 0.01, 0.0)
    wrong = hm.Fig4._spec_table_check(config, panel, {"refined_minimum": 0.052, "final_private_risk": [[0.06]],
                                                      "refined_evaluations": 10})
    assert wrong.passed is False and "not reproduced" in wrong.note
    right = hm.Fig4._spec_table_check(config, panel, {"refined_minimum": 0.0482, "final_private_risk": [[0.06]],
                                                      "refined_evaluations": 10})
    assert right.passed is True
    other = hm.Fig4._spec_table_check(dataclasses.replace(config, rho=0.2), panel,
                                      {"refined_minimum": 0.0482, "final_private_risk": [[0.06]],
                                       "refined_evaluations": 10})
    assert other.passed is None and "not applicable" in other.note

    small = apply_overrides(hm.Fig4Config(), {"d": 50, "aspect_ratios": [0.05], "clips": [0.1, 1.0],
                                              "initial_learning_rates": [5.0, 20.0], "schedule_exponents": [0.0],
                                              "num_runs": 6, "run_block_size": 6})
    experiment = registry.get("dpgd-fig4")
    (unit,) = [u for u in experiment.units(small) if u.params["method"] == "simulation"]
    out = experiment.compute_unit(small, unit, seed=1)
    final, before = np.array(out["final_private_risk"]), np.array(out["risk_before_final_noise"])
    heatmap = _Heatmap(_Panel(1, 0.05, 0.0), out["n"], out["d"], final, before, out)
    good = _final_noise_check(small, heatmap, trace=50.0, trace_sq=50.0, gradient_bound=None)
    assert good.passed is True
    inflated = _Heatmap(heatmap.panel, out["n"], out["d"], before + 2.0 * (final - before), before, out)
    assert _final_noise_check(small, inflated, trace=50.0, trace_sq=50.0, gradient_bound=None).passed is False


def test_qualitative_claims_fail_with_a_note():
    """A heatmap whose minimum sits at c > 1, or whose valley bends away from cη̃(0) = const, fails (i) and (ii)."""
    config = apply_overrides(hm.Fig4Config(), {"clips": [0.01, 0.1, 0.5, 3.0],
                                               "initial_learning_rates": [1.0, 3.0, 10.0, 300.0]})
    risk = np.full((4, 4), 0.5)
    risk[3, 1] = 0.01  # minimum at c = 3
    risk[0, 2], risk[1, 1], risk[2, 2] = 0.1, 0.1, 0.1  # row products 0.1, 0.3, 5: not parallel
    runs = np.repeat(risk.reshape(16, 1), 3, axis=1) + np.array([0.0, 1e-3, -1e-3])
    heatmap = _Heatmap(_Panel(1, 0.01, 0.0), 10_000, 100, runs, runs, {})
    region = _minimum_region_check(config, heatmap, "risk")
    assert region.passed is False and "not reproduced" in region.note and region.measured["clip"] == 3.0
    valley = hm.Fig4._valley_check(config, heatmap, risk, 1.0)
    assert valley.passed is False and valley.measured == pytest.approx(10.0) and "not reproduced" in valley.note
    parallel = _RealHeatmaps._valley_parallel_check(config, heatmap, risk)
    assert parallel.passed is False


@pytest.mark.parametrize(("name", "substitute", "real"), [("dpgd-fig5", "digits_1_vs_7", "mnist_1_vs_7"),
                                                          ("dpgd-fig6", "diabetes", "california_housing")])
def test_real_data_heatmaps_on_the_substitute(name, substitute, real, tmp_path, monkeypatch):
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path / "empty_data_home"))
    result = run(name, out_dir=tmp_path)
    assert result["config"]["dataset"] == substitute
    sims = result["series"]
    assert len(sims) == 4
    for s in sims:
        assert HEATMAP_KEYS <= set(s["params"])
        assert s["params"]["dataset"] == substitute and s["params"]["quantity"] == "validation_loss"
        assert np.array(s["z"], dtype=float).shape == (len(s["y"]), len(s["x"]))
    checks = by_name(result)
    assert not [c["name"] for c in result["checks"] if c["kind"] == "invariant" and c["passed"] is not True]
    for panel in range(1, 5):
        assert checks[f"minimum_below_clip_1_and_cap panel={panel}"]["passed"] is not None
        assert checks[f"diverged_runs panel={panel}"]["kind"] == "finding"
    na = [c for c in result["checks"] if c["name"].startswith("paper_panels")]
    assert len(na) == 2 and all(c["passed"] is None and substitute in c["note"] for c in na)
    data = {row[0]: row[1] for row in next(t for t in result["tables"] if t["name"] == "data")["rows"]}
    assert data["dataset"] == substitute and data["substitute_for"] == real
    saved = json.loads((tmp_path / name / "result.json").read_text())
    assert saved["config"]["dataset"] == substitute and "figure.png" in saved["artifacts"]


def test_fig5_uses_cached_mnist(tmp_path, monkeypatch):
    """With the loader's cache file present (written here in its format), Figure 5 runs on MNIST itself."""
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path))
    rng = np.random.default_rng(0)
    labels = np.where(rng.random(15170) < 0.5, 1, -1).astype(np.int8)
    pixels = rng.integers(0, 256, size=(15170, 784), dtype=np.uint8)
    pixels[:, :20] = 0  # constant border pixels
    np.savez(tmp_path / "mnist_1_vs_7.npz", features=pixels, labels=labels)
    experiment = registry.get("dpgd-fig5")
    assert experiment.config().dataset == "mnist_1_vs_7"
    assert experiment.config().aspect_ratios == (1.0, 0.1)
    result = run("dpgd-fig5", aspect_ratios=[1.0], schedule_exponents=[0.0], clips=[0.1, 1.0, 3.0],
                 initial_learning_rates=[0.5, 2.0, 8.0], num_runs=2, run_block_size=2)
    (s,) = result["series"]
    assert (s["params"]["dataset"], s["params"]["d"], s["params"]["n"]) == ("mnist_1_vs_7", 784, 784)
    assert not [c for c in result["checks"] if c["name"].startswith("paper_panels")]


def test_fig6_uses_california_housing_when_it_loads(monkeypatch):
    """When the housing loader finds its data (here: stand-in arrays of the real shape), Figure 6 runs the paper's
    setting: d = 8, γ ∈ {0.01, 0.001}, 5 runs, and no not-applicable panels."""
    from privdyn.data import real

    original = real.load_dataset
    rng = np.random.default_rng(1)
    features = rng.standard_normal((20640, 8))
    labels = features @ rng.standard_normal(8) + rng.standard_normal(20640)

    def load(name, *, cache_dir=None, substitute=True):
        if name == "california_housing":
            return name, features, labels
        return original(name, cache_dir=cache_dir, substitute=substitute)

    monkeypatch.setattr(real, "load_dataset", load)
    experiment = registry.get("dpgd-fig6")
    config = experiment.config()
    assert (config.dataset, config.aspect_ratios, config.num_runs) == ("california_housing", (0.01, 0.001), 5)
    result = run("dpgd-fig6", aspect_ratios=[0.01], clips=[0.1, 1.0, 3.0], initial_learning_rates=[10.0, 100.0, 300.0])
    assert {(s["params"]["dataset"], s["params"]["d"], s["params"]["n"]) for s in result["series"]} == {
        ("california_housing", 8, 800)}
    assert not [c for c in result["checks"] if c["name"].startswith("paper_panels")]
    assert not [c["name"] for c in result["checks"] if c["kind"] == "invariant" and c["passed"] is not True]


@pytest.mark.parametrize(("name", "overrides", "key"), [
    ("dpgd-fig4", {"clips": [1.0, 0.1]}, "clips"),
    ("dpgd-fig4", {"schedule_exponents": [1.0]}, "schedule_exponents"),
    ("dpgd-fig4", {"num_runs": 1}, "num_runs"),
    ("dpgd-fig4", {"initial_learning_rates": [0.0, 1.0]}, "initial_learning_rates"),
    ("dpgd-fig4", {"ode_rtol": 0.1}, "ode_rtol"),
    ("dpgd-fig5", {"aspect_ratios": [0.01]}, "aspect_ratios"),
    ("dpgd-fig6", {"dataset": "boston"}, "dataset"),
    ("dpgd-fig6", {"validation_size": 100_000}, "validation_size"),
])
def test_config_errors_name_the_key(name, overrides, key, tmp_path, monkeypatch):
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path))
    with pytest.raises(ConfigError, match=key):
        registry.prepare(name, quick=True, overrides=overrides)


def test_quick_configs_are_coarser():
    for name in ("dpgd-fig4", "dpgd-fig5", "dpgd-fig6"):
        experiment = registry.get(name)
        full, quick = experiment.config(), experiment.config(quick=True)
        assert len(quick.clips) * len(quick.initial_learning_rates) < len(full.clips) * len(full.initial_learning_rates)
        assert quick.num_runs < full.num_runs
    assert registry.get("dpgd-fig4").config().num_runs == 10
    assert registry.get("dpgd-fig6").config().num_runs == 5


def test_uncached_real_data_is_a_config_error(tmp_path, monkeypatch):
    """Asking for real data that is not cached fails validation (CLI exit 2), naming the substitute."""
    monkeypatch.setenv("SCIKIT_LEARN_DATA", str(tmp_path))
    experiment = registry.get("dpgd-fig5")
    assert experiment.config().dataset == "digits_1_vs_7"
    with pytest.raises(ConfigError, match="dataset='mnist_1_vs_7' is not cached.*'digits_1_vs_7'"):
        apply_overrides(experiment.config(quick=True), {"dataset": "mnist_1_vs_7"})
