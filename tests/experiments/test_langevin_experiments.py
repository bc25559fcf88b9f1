"""The langevin experiments: series equal the closed forms under any valid overrides; checks behave."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from privdyn.experiments import registry
from privdyn.runs import runner
from privdyn.runs.config import apply_overrides

HYPOTHESIS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                      suppress_health_check=[HealthCheck.too_slow])


def corollary1(alpha, k, eta, sigma, lam, sg, n):
    """Corollary 1, written out with the math module (independent of privdyn's engine)."""
    return alpha * sg**2 / (lam * sigma**2 * n**2) * -math.expm1(-lam * eta * k / 2)


def composition(alpha, k, eta, sigma, sg, n):
    return alpha * sg**2 * eta * k / (4 * n**2 * sigma**2)


def run(name, quick=True, **overrides):
    experiment, config = registry.prepare(name, quick=quick, overrides=overrides)
    return runner.run_experiment(experiment, config, seed=0, quick=quick)


@st.composite
def fig1_overrides(draw):
    smoothness = draw(st.floats(0.5, 20))
    lams = draw(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=3, unique=True))
    return {
        "smoothness": smoothness,
        "strong_convexities": [lam * smoothness for lam in lams],
        "step_size": draw(st.floats(1e-4, 0.999)) / smoothness,
        "renyi_orders": draw(st.lists(st.floats(1.01, 200), min_size=1, max_size=3, unique=True)),
        "noise_scale": draw(st.floats(1e-3, 10)),
        "sensitivity": draw(st.floats(1e-2, 10)),
        "n": draw(st.integers(1, 10**6)),
        "max_num_steps": draw(st.integers(1, 400)),
    }


@HYPOTHESIS
@given(fig1_overrides())
def test_fig1_series_equal_closed_forms_under_any_valid_overrides(overrides):
    result = run("langevin-fig1", quick=False, **overrides)
    cfg = result["config"]
    assert len(result["series"]) == 2 * len(cfg["renyi_orders"]) * len(cfg["strong_convexities"])
    for s in result["series"]:
        p = s["params"]
        assert s["x"] == list(range(1, cfg["max_num_steps"] + 1))
        for k, y in zip(s["x"], s["y"], strict=True):
            if p["method"] == "dynamics":
                ref = corollary1(p["renyi_order"], k, cfg["step_size"], cfg["noise_scale"], p["strong_convexity"],
                                 cfg["sensitivity"], cfg["n"])
            else:
                ref = composition(p["renyi_order"], k, cfg["step_size"], cfg["noise_scale"], cfg["sensitivity"],
                                  cfg["n"])
            assert y == pytest.approx(ref, rel=1e-12, abs=0)
        assert p["guarantee"] == "bound"
    failed = [c["name"] for c in result["checks"] if c["kind"] == "invariant" and c["passed"] is False]
    assert not failed


def test_fig1_paper_claims_pass_at_the_paper_config():
    result = run("langevin-fig1", quick=False)
    claims = [c for c in result["checks"] if c["kind"] == "paper_claim"]
    assert len(claims) >= 20
    assert all(c["passed"] is True for c in claims), [c["name"] for c in claims if c["passed"] is not True]
    assert all(c["passed"] is True for c in result["checks"] if c["kind"] == "invariant")
    crossover = {m["params"]["strong_convexity"]: m["value"] for m in result["metrics"]
                 if m["name"] == "crossover_num_steps"}
    assert crossover[1] == pytest.approx(3.18724852 / 0.02, rel=1e-8)


def test_fig1_claim_fails_when_the_engine_is_wrong(monkeypatch):
    """The claim checks can fail: corrupt Corollary 1 by 1e-3 and the table claims fail."""
    from privdyn.privacy import langevin as lv

    original = lv.dynamics_rdp

    def wrong(*args, **kwargs):
        out = original(*args, **kwargs)
        return type(out)(out.value * 1.001, out.guarantee, out.quantity, out.neighboring, out.source)

    monkeypatch.setattr(lv, "dynamics_rdp", wrong)
    result = run("langevin-fig1", quick=False)
    assert any(c["passed"] is False for c in result["checks"] if c["name"].startswith("corollary1_table"))


def test_tightness_checks_pass():
    result = run("langevin-tightness", quick=True)
    bad = [(c["name"], c["measured"], c["expected"]) for c in result["checks"] if c["passed"] is False]
    assert not bad
    mc = [c for c in result["checks"] if c["name"].startswith("simulation_")]
    assert len(mc) == 5 and all(c["standard_error"] > 0 for c in mc)
    guarantees = {s["params"]["quantity"]: s["params"]["guarantee"] for s in result["series"]}
    assert guarantees == {"exact": "exact", "exact_gaussian_init": "exact", "lower_bound": "lower_bound",
                          "corollary1": "bound", "corollary2": "bound", "composition": "bound"}


def test_tightness_simulation_is_reproducible_and_block_stable():
    a = run("langevin-tightness", quick=True)
    b = run("langevin-tightness", quick=True)
    sims = [c["measured"] for c in a["checks"] if c["name"].startswith("simulation_")]
    assert sims == [c["measured"] for c in b["checks"] if c["name"].startswith("simulation_")]
    experiment = registry.get("langevin-tightness")
    config = apply_overrides(experiment.config(quick=True), {"mc_num_runs": 40_000})
    more = apply_overrides(config, {"mc_num_runs": 60_000})
    first = experiment.compute_unit(config, experiment.units(config)[1], seed=0)
    again = experiment.compute_unit(more, experiment.units(more)[1], seed=0)
    assert first == again  # block 0 does not depend on how many blocks are requested


def test_table1_reference_values_and_rates():
    result = run("langevin-table1", quick=True)
    bad = [(c["name"], c["measured"], c["expected"]) for c in result["checks"] if c["passed"] is False]
    assert not bad
    assert {t["name"] for t in result["tables"]} >= {"table1", "theorem4_rdp_form", "theorem4_dp_form"}


def test_every_experiment_has_a_quick_config_and_unique_units():
    for experiment in registry.EXPERIMENTS.values():
        config = experiment.config(quick=True)
        keys = [u.key for u in experiment.units(config)]
        assert len(keys) == len(set(keys)) and keys
        assert experiment.name.startswith(experiment.paper_key + "-")


def test_tightness_runs_do_not_depend_on_unit_batching():
    """Run i draws the same noise whatever mc_block_size: the pooled moments agree up to summation order."""
    experiment = registry.get("langevin-tightness")
    base = experiment.config(quick=True)
    totals = []
    for block in (1_000, 2_500):
        config = apply_overrides(base, {"mc_num_runs": 5_000, "mc_block_size": block})
        sims = [u for u in experiment.units(config) if u.params.get("dataset") == "D"]
        outs = [experiment.compute_unit(config, u, seed=3) for u in sims]
        totals.append((sum(o["num_runs"] for o in outs), sum(o["sum"] for o in outs)))
    assert totals[0][0] == totals[1][0] == 5_000
    assert totals[0][1] == pytest.approx(totals[1][1], rel=1e-12)
