"""dpgd-fig9 … dpgd-fig13: clipping factors and the exponent optimization (arXiv 2505.16329, Appendices B and E)."""

import math

import pytest

from privdyn.dynamics import scaling
from privdyn.experiments import registry
from privdyn.experiments.dpgd_closed_forms import max_min_exponent
from privdyn.runs import runner
from privdyn.runs.config import ConfigError

EXPONENT_FIGURES = ("dpgd-fig10", "dpgd-fig11", "dpgd-fig12", "dpgd-fig13")


def run(name, out_dir=None, **overrides):
    experiment, config = registry.prepare(name, quick=True, overrides=overrides)
    return runner.run_experiment(experiment, config, seed=0, quick=True, out_dir=out_dir)


def by_name(result):
    return {c["name"]: c for c in result["checks"]}


def test_fig9_contract_and_checks(tmp_path):
    result = run("dpgd-fig9", out_dir=tmp_path)
    assert (tmp_path / "dpgd-fig9" / "figure.png").exists()
    quantities = {s["params"]["quantity"] for s in result["series"]}
    assert quantities == {"mu", "nu", "mu_over_c_prime", "nu_over_c_prime_squared", "nu_over_c_prime"}
    assert all(s["params"]["method"] == "closed_form" for s in result["series"])
    checks = by_name(result)
    assert not [n for n, c in checks.items() if c["passed"] is False]
    assert checks["closed_forms_match_mpmath_oracle"]["kind"] == "invariant"
    assert checks["nu_at_one"]["measured"] == pytest.approx(0.51606, abs=5e-6)
    assert checks["mu_over_c_prime_limit"]["expected"] == pytest.approx(0.7979, abs=5e-5)
    non_monotone = checks["nu_over_c_prime_non_monotone"]
    assert non_monotone["kind"] == "finding" and non_monotone["measured"]["interior_maximum"] is True
    assert 1.0 < non_monotone["measured"]["c_prime_at_max"] < 1.5


def test_fig9_edge_of_window_is_reported():
    result = run("dpgd-fig9", c_prime_max=1.0)
    assert by_name(result)["nu_over_c_prime_non_monotone"]["measured"]["interior_maximum"] is False
    assert not [c["name"] for c in result["checks"] if c["passed"] is False]


@pytest.mark.parametrize("name", EXPONENT_FIGURES)
def test_exponent_figures_pass_at_the_paper_setting(name):
    result = run(name)
    checks = by_name(result)
    assert not [n for n, c in checks.items() if c["passed"] is False]
    claims = [c for c in result["checks"] if c["kind"] == "paper_claim"]
    assert len(claims) == 2 and all(c["passed"] is True for c in claims)
    assert {s["params"]["quantity"] for s in result["series"]} == {"e1", "e2", "e3", "envelope"}
    assert all(s["params"]["method"] == "theory" for s in result["series"])
    free = checks["privacy_free"]["measured"]
    assert free is (name != "dpgd-fig11")


@pytest.mark.parametrize("overrides", [
    {"privacy_exponent": 0.45},
    {"power_law_exponent": 0.7, "target_exponent": 0.0, "schedule_exponent": 2.0, "privacy_exponent": 0.45},
    {"power_law_exponent": 0.5, "target_exponent": 0.2, "schedule_exponent": 1.0, "privacy_exponent": -0.5},
    {"power_law_exponent": -1.0, "target_exponent": 0.3, "schedule_exponent": 0.5, "privacy_exponent": 0.1},
])
def test_exponent_invariants_under_overrides(overrides):
    result = run("dpgd-fig10", **overrides)
    checks = by_name(result)
    assert all(c["passed"] is True for c in result["checks"] if c["kind"] == "invariant")
    assert checks["threshold_fig10"]["passed"] is None and "not applicable" in checks["threshold_fig10"]["note"]


def test_exponent_invariant_fails_when_the_engine_is_wrong(monkeypatch):
    original = scaling.scaling_exponent
    monkeypatch.setattr(scaling, "scaling_exponent", lambda **kw: (original(**kw)[0], original(**kw)[1] + 1e-6))
    result = run("dpgd-fig11")
    assert by_name(result)["theorem4_h_matches_max_min"]["passed"] is False


def test_max_min_exponent_by_hand():
    # min(-a, a + 1) on [-1, 0] peaks at a = -1/2 with value 1/2; a constant line caps it
    assert max_min_exponent([(-1.0, 0.0), (1.0, 1.0)], -1.0, 0.0) == pytest.approx((-0.5, 0.5))
    a, h = max_min_exponent([(-1.0, 0.0), (1.0, 1.0), (0.0, 0.25)], -1.0, 0.0)
    assert h == pytest.approx(0.25) and a == pytest.approx(-0.75)
    assert max_min_exponent([(1.0, 0.0)], -1.0, 0.0) == (0.0, 0.0)
    assert not math.isnan(max_min_exponent([(-2.0, 0.0), (0.5, 1.0)], -0.1, 0.0)[0])


@pytest.mark.parametrize(("name", "key", "value"), [
    ("dpgd-fig9", "c_prime_max", 0.001), ("dpgd-fig9", "c_prime_min", -1.0), ("dpgd-fig9", "num_points", 1),
    ("dpgd-fig10", "schedule_exponent", 0.3), ("dpgd-fig11", "privacy_exponent", 1.2),
    ("dpgd-fig12", "target_exponent", 1.5), ("dpgd-fig13", "a_max", -2.0), ("dpgd-fig10", "power_law_exponent", 1.0),
])
def test_bad_overrides_name_the_key(name, key, value):
    with pytest.raises(ConfigError, match=key):
        registry.prepare(name, quick=True, overrides={key: value})
