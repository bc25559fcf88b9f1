"""kan-identities and kan-stability (arXiv 2605.12648): contract, invariants, overrides, failing engines, bad input."""

import json

import numpy as np
import pytest

from privdyn.experiments import kan_identities as ki
from privdyn.experiments import registry
from privdyn.runs import runner
from privdyn.runs.config import ConfigError


def run(name, out_dir=None, quick=True, **overrides):
    experiment, config = registry.prepare(name, quick=quick, overrides=overrides)
    return runner.run_experiment(experiment, config, seed=0, quick=quick, out_dir=out_dir)


def checks_named(result, prefix):
    return [c for c in result["checks"] if c["name"].startswith(prefix)]


@pytest.fixture(scope="module")
def identities(tmp_path_factory):
    out = tmp_path_factory.mktemp("identities")
    return run("kan-identities", out_dir=out), out / "kan-identities"


@pytest.fixture(scope="module")
def stability(tmp_path_factory):
    out = tmp_path_factory.mktemp("stability")
    return run("kan-stability", out_dir=out), out / "kan-stability"


def test_identities_contract_and_invariants(identities):
    result, target = identities
    assert (target / "figure.png").stat().st_size > 0
    assert json.loads((target / "result.json").read_text())["experiment"] == "kan-identities"
    lams = result["config"]["noise_correlations"]
    assert not [c["name"] for c in result["checks"] if c["passed"] is not True]
    for prefix in ("shifted_iterate_recursion", "lemma_c1_expansion", "gradient_norm_within_g_delta",
                   "clipping_inactive", "projection_inactive"):
        found = checks_named(result, prefix)
        assert len(found) == len(lams) and all(c["kind"] == "invariant" for c in found), prefix
    # machine precision: a few roundoff units, far below any noise or gradient term
    assert all(c["measured"] < c["tolerance"] for c in checks_named(result, "shifted_iterate_recursion"))
    assert all(c["measured"] < 100 for c in checks_named(result, "lemma_c1_expansion"))
    assert all(c["measured"] == 0.0 for c in checks_named(result, "clipping_inactive"))
    assert len(checks_named(result, "lemma_b2_")) == 3
    sampler = checks_named(result, "fixed_size_sampler_inclusion")[0]
    assert sampler["standard_error"] > 0 and "Bonferroni" in sampler["note"]
    b2 = checks_named(result, "lemma_b2_variance_identity")[0]
    n = len(b2["expected"])
    assert b2["expected"][-1] == 0.0 and n == result["config"]["enumeration_n"]
    for s in result["series"]:
        assert {"method", "quantity"} <= set(s["params"])
    assert {s["params"]["noise_correlation"] for s in result["series"] if s["params"]["method"] == "dpsgd"} == set(lams)


def test_identity_check_fails_when_an_iterate_is_perturbed(monkeypatch):
    engine = ki.identities.dpsgd

    def perturbed(*args, **kwargs):
        result = engine(*args, **kwargs)
        result.iterates[3] += 1e-9  # far below the noise (~1e-4 per coordinate), far above rounding
        return result

    monkeypatch.setattr(ki.identities, "dpsgd", perturbed)
    result = run("kan-identities", noise_correlations=[0.5], num_runs=1)
    assert checks_named(result, "shifted_iterate_recursion")[0]["passed"] is False
    assert checks_named(result, "lemma_c1_expansion")[0]["passed"] is False


def test_small_clip_makes_clipping_a_finding_and_clips(tmp_path):
    result = run("kan-identities", noise_correlations=[0.0], num_runs=1, clip_factor=0.002)
    found = checks_named(result, "clipping_fraction")
    assert len(found) == 1 and found[0]["kind"] == "finding" and found[0]["measured"] > 0
    assert not checks_named(result, "clipping_inactive")


def test_identities_under_overrides():
    result = run("kan-identities", dataset="digits_1_vs_7", n=24, batch_size=5, num_steps=6, width=4, grid_size=4,
                 activation="tanh", noise_correlations=[0.3], num_runs=1, enumeration_n=6, noise_multiplier=2.0)
    assert not [c["name"] for c in result["checks"] if c["passed"] is False]
    assert len(checks_named(result, "shifted_iterate_recursion")) == 1


def test_stability_contract_and_bound(stability):
    result, target = stability
    assert (target / "figure.png").stat().st_size > 0
    lams = result["config"]["noise_correlations"]
    bound = checks_named(result, "stability_within_theorem_c22")
    assert len(bound) == len(lams)
    for c in bound:
        assert c["kind"] == "invariant" and c["passed"] is True and c["standard_error"] > 0
        assert c["measured"] + 5 * c["standard_error"] < c["expected"]
    assert all(c["passed"] is True for c in checks_named(result, "lemma_c21_pathwise"))
    loose = checks_named(result, "theorem_c22_looseness")
    assert len(loose) == len(lams) and all(c["kind"] == "finding" and c["measured"] > 1 for c in loose)
    bound_series = [s for s in result["series"] if s["params"]["method"] == "theorem_c22"]
    assert bound_series and all(s["params"]["guarantee"] == "bound" for s in bound_series)
    assert all(s["params"]["neighboring"] == "replace_one" for s in result["series"])


def test_stability_check_fails_when_the_bound_constant_is_wrong(monkeypatch):
    constants = ki.stability.kb.stability_constants

    def shrunk(*args, **kwargs):
        a, b = constants(*args, **kwargs)
        return a, b * 1e-6

    monkeypatch.setattr(ki.stability.kb, "stability_constants", shrunk)
    # a small delta_stab and radius so that 2 R* delta_stab cannot cover the shrunken first term
    result = run("kan-stability", noise_correlations=[0.5], n=8, num_steps=10, num_seeds=4, seeds_per_unit=4,
                 width=16, failure_prob=1e-4, projection_radius=0.05)
    assert checks_named(result, "stability_within_theorem_c22")[0]["passed"] is False
    assert checks_named(result, "lemma_c21_pathwise")[0]["passed"] is False


def test_stability_outside_the_theory_regime_is_a_finding():
    result = run("kan-stability", noise_correlations=[0.5], n=8, num_steps=6, num_seeds=2, seeds_per_unit=2,
                 step_size=1.0)
    found = checks_named(result, "stability_vs_theorem_c22")
    assert len(found) == 1 and found[0]["kind"] == "finding" and "step_size" in found[0]["note"]


@pytest.mark.parametrize(("name", "key", "value"), [
    ("kan-identities", "n", 1),
    ("kan-identities", "batch_size", 1000),
    ("kan-identities", "noise_correlations", [1.0]),
    ("kan-identities", "enumeration_n", 20),
    ("kan-identities", "dataset", "mnist"),
    ("kan-identities", "failure_prob", 1.5),
    ("kan-identities", "step_size", -1.0),
    ("kan-stability", "num_seeds", 1),
    ("kan-stability", "clip_factor", 0.0),
    ("kan-stability", "projection_radius", -2.0),
])
def test_bad_overrides_name_the_key(name, key, value):
    with pytest.raises(ConfigError, match=key):
        registry.prepare(name, quick=True, overrides={key: value})


def test_pool_is_in_the_unit_ball():
    for dataset in ki.DATASETS:
        x, y = ki.load_pool(dataset)
        assert np.max(np.linalg.norm(x, axis=1)) <= 1.0 + 1e-12
        assert set(np.unique(y)) == {-1.0, 1.0}


def test_stability_with_the_event_failing_is_a_finding():
    # width 8 and T = 60 at eta = 1/(12 beta): sum_t M_t^(i) ~ 1.7 > 1, so Lemma C.20's conclusion fails
    result = run("kan-stability", noise_correlations=[0.5], n=6, batch_size=2, width=8, num_steps=60, num_seeds=2,
                 seeds_per_unit=2)
    found = checks_named(result, "stability_vs_theorem_c22")
    assert len(found) == 1 and "fails in" in found[0]["note"]
    assert checks_named(result, "lemma_c21_pathwise")[0]["kind"] == "finding"


def test_stability_does_not_depend_on_the_split_into_units():
    small = {"noise_correlations": [0.5], "n": 6, "batch_size": 2, "num_steps": 8, "num_seeds": 4}
    one = run("kan-stability", seeds_per_unit=1, **small)
    four = run("kan-stability", seeds_per_unit=4, **small)
    assert one["metrics"] == four["metrics"]
