"""The dpgd planner: a plan's guarantee, schedule, per-step noise, JSON vocabulary and bad input."""

import json
import math
import subprocess
import sys

import dp_accounting
import numpy as np
import pytest
from dp_accounting import rdp

import privdyn.plan
from privdyn.dynamics import dpgd as engine
from privdyn.plan import _dpgd
from privdyn.privacy.iteration import noise_calibration, privacy_level
from privdyn.spectra import Spectrum, isotropic_target
from privdyn.tuning import Candidate

SMALL = dict(n=2000, d=40, spectrum="power_law:0.4", target_norm=1.0, label_noise=0.5, epsilon=2.0, delta=1e-5)


@pytest.fixture(scope="module")
def plan():
    return privdyn.plan.dpgd(**SMALL)


def test_guarantee_recomputed_by_dp_accounting_is_at_most_the_request(plan) -> None:
    doc = plan.to_json()
    accountant = rdp.RdpAccountant()
    accountant.compose(dp_accounting.ZCDpEvent(doc["zcdp"]))
    assert accountant.get_epsilon(doc["delta"]) <= 2.0
    assert doc["epsilon"] <= 2.0 and doc["guarantee"] == "bound" and doc["neighboring"] == "replace_one"
    assert math.isclose(doc["zcdp"], doc["rho"] ** 2 / 2, rel_tol=1e-12)


def test_json_has_the_issue_vocabulary(plan) -> None:
    doc = json.loads(json.dumps(plan.to_json(), allow_nan=False))
    for key in ("schedule", "clip", "initial_learning_rate", "rho", "zcdp", "epsilon", "delta", "guarantee",
                "predicted_risk", "step_sizes", "noise_stds", "alternatives", "privacy_statement"):
        assert key in doc, key
    assert ("schedule_exponent" in doc) or ("harmonic_scale" in doc and "harmonic_offset" in doc)
    assert len(doc["step_sizes"]) == len(doc["noise_stds"]) == SMALL["n"]
    assert all("predicted_risk" in a for a in doc["alternatives"])
    assert len(doc["alternatives"]) == 4  # five families searched: polynomial 1/2, 1, 2, constant, harmonic
    statement = doc["privacy_statement"]
    for key in ("unit", "neighboring", "sampler", "released", "accountant", "guarantee", "planning_share",
                "epsilon", "delta", "zcdp", "rdp_curve", "text"):
        assert key in statement


def test_per_step_noise_is_the_proposition_4_1_calibration(plan) -> None:
    eta = np.asarray(plan.per_step["step_sizes"])
    sigma = noise_calibration(eta, rho=plan.rho)
    assert np.allclose(plan.per_step["noise_stds"], 2 * plan.clip * math.sqrt(SMALL["d"]) * sigma, rtol=1e-12)
    recomputed = float(privacy_level(eta, sigma).value)
    assert recomputed <= plan.rho * (1 + 1e-12)
    assert np.all(np.diff(eta) <= 0)


def test_predicted_risk_is_the_ode_at_the_chosen_hyperparameters(plan) -> None:
    m = plan.model
    value = engine.final_private_risk(spectrum=m.spectrum, target_projections=m.target_projections,
                                      aspect_ratio=m.aspect_ratio, learning_rate=plan.learning_rate, clip=plan.clip,
                                      rho=plan.rho, label_noise=m.label_noise, rtol=1e-10)
    assert math.isclose(plan.predicted_risk, value, rel_tol=1e-5)
    assert plan.predicted_risk <= min(a.predicted_risk for a in plan.alternatives)


def test_runner_up_risks_are_the_exact_ode_within_the_search_tolerance(plan) -> None:
    m = plan.model
    for alt in plan.alternatives:
        h = alt.hyperparameters
        candidate = Candidate(h["schedule"], None if h["schedule"] == "harmonic" else h["schedule_exponent"])
        point = [h["clip"], h["initial_learning_rate"]] + ([h["harmonic_offset"]] if "harmonic_offset" in h else [])
        exact = _dpgd._final_risk(m, candidate, point, plan.rho)
        assert math.isclose(alt.predicted_risk, exact, rel_tol=2e-4), alt.name


def test_the_chosen_point_is_a_local_minimum_of_the_ode(plan) -> None:
    """Moving clip or the initial learning rate by 20% does not lower the ODE risk by more than the tolerance."""
    m, h = plan.model, plan.hyperparameters
    cand = plan.chosen
    base = list(cand.names)
    point = [h["clip"], h["initial_learning_rate"]] + ([h["harmonic_offset"]] if "harmonic_offset" in h else [])
    best = _dpgd._final_risk(m, cand, point, plan.rho)
    for i in range(2):
        for factor in (0.8, 1.25):
            moved = list(point)
            moved[i] *= factor
            if i == 1 and moved[1] > 2 / m.aspect_ratio:
                continue
            assert _dpgd._final_risk(m, cand, moved, plan.rho) >= best * (1 - 2e-3), (base[i], factor)


def test_family_names_are_the_planning_functions() -> None:
    import importlib

    from privdyn.plan._dpgd import DPGDPlan  # noqa: F401

    for family in privdyn.plan.FAMILIES:
        function = getattr(privdyn.plan, family)
        assert callable(function) and function.__name__ == family
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("privdyn.plan.dpgd")  # the module is privdyn.plan._dpgd


def test_import_plan_does_not_import_matplotlib() -> None:
    code = ("import sys, privdyn.plan\n"
            "heavy = [m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy', 'matplotlib', 'dp_accounting')]\n"
            "assert not heavy, heavy\n"
            "privdyn.plan.dpgd, privdyn.plan.dpsgd\n"
            "assert 'matplotlib' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_spectrum_file_is_rescaled_to_trace_d(tmp_path) -> None:
    path = tmp_path / "eig.txt"
    values = np.linspace(0.5, 3.0, 30)
    np.savetxt(path, values)
    m = _dpgd.model(n=600, spectrum=str(path), label_noise=0.3, target_norm=2.0)
    assert m.d == 30 and math.isclose(m.spectrum.trace, 30.0)
    assert math.isclose(m.feature_scale, math.sqrt(30 / values.sum()))
    # theta* in the rescaled units has norm target_norm / feature_scale
    assert math.isclose(float(np.sum(m.target_projections)), (2.0 / m.feature_scale) ** 2)


def test_identity_matches_hand_built_model() -> None:
    m = _dpgd.model(n=100, d=10, spectrum="identity", label_noise=1.0)
    sp = Spectrum.identity(10)
    assert np.allclose(m.target_projections, isotropic_target(sp, norm=1.0))


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(SMALL, n=0), "n must be an integer >= 1"),
    (dict(SMALL, d=0), "d must be an integer >= 1"),
    (dict(SMALL, epsilon=0.0), "epsilon must be > 0"),
    (dict(SMALL, epsilon=-2.0), "epsilon must be > 0"),
    (dict(SMALL, delta=1.5), r"delta must be in \(0.0, 1.0\)"),
    (dict(SMALL, delta=0.0), r"delta must be in \(0.0, 1.0\)"),
    (dict(SMALL, spectrum="gaussian"), "spectrum must be 'identity', 'uniform', 'power_law:EXPONENT'"),
    (dict(SMALL, spectrum="power_law:x"), "power_law:EXPONENT"),
    (dict(SMALL, spectrum="power_law:1.5"), "power_law_exponent must be < 1"),
    (dict(SMALL, schedules=("cosine",)), "schedule must be one of"),
    (dict(SMALL, label_noise=0.0), "label_noise must be > 0"),
    (dict(SMALL, target_exponent=0.7), "target_exponent must be <"),
    (dict(SMALL, public_stats=True), "apply to a data file only"),
])
def test_bad_input_names_the_parameter(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        privdyn.plan.dpgd(**kwargs)


def test_unknown_family() -> None:
    with pytest.raises(ValueError, match="family must be one of"):
        privdyn.plan.plan("sgd", n=1)


def test_data_file_refusals(tmp_path) -> None:
    rng = np.random.default_rng(0)
    table = np.column_stack([rng.standard_normal((200, 5)), rng.standard_normal(200)])
    good = tmp_path / "d.npy"
    np.save(good, table)
    budget = dict(epsilon=2.0, delta=1e-5)
    with pytest.raises(ValueError, match="refused unless you say how its statistics may be used"):
        privdyn.plan.dpgd(data=str(good), **budget)
    with pytest.raises(ValueError, match="needs public bounds"):
        privdyn.plan.dpgd(data=str(good), planning_share=0.1, **budget)
    with pytest.raises(ValueError, match=r"planning_share must be in \(0.0, 1.0\)"):
        privdyn.plan.dpgd(data=str(good), planning_share=1.0, feature_norm_bound=3, label_bound=3, **budget)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,x\n2,3\n")
    with pytest.raises(ValueError, match="non-numeric"):
        privdyn.plan.dpgd(data=str(bad), public_stats=True, **budget)
    with pytest.raises(ValueError, match="no such file"):
        privdyn.plan.dpgd(data=str(tmp_path / "missing.csv"), public_stats=True, **budget)
    odd = tmp_path / "d.txt"
    odd.write_text("1 2\n")
    with pytest.raises(ValueError, match=r"must be a .csv, .npy or .parquet"):
        privdyn.plan.dpgd(data=str(odd), public_stats=True, **budget)


def test_public_stats_recover_the_model_and_dp_share_is_composed(tmp_path) -> None:
    rng = np.random.default_rng(3)
    n, d = 4000, 8
    x = rng.standard_normal((n, d))
    theta = np.full(d, 0.5)
    y = x @ theta + 0.4 * rng.standard_normal(n)
    path = tmp_path / "train.csv"
    path.write_text(",".join([f"x{i}" for i in range(d)] + ["y"]) + "\n"
                    + "\n".join(",".join(f"{v:.10g}" for v in row) for row in np.column_stack([x, y])))
    public = privdyn.plan.dpgd(data=str(path), label_column="y", public_stats=True, epsilon=2.0, delta=1e-5,
                               schedules=("constant",))
    assert public.model.n == n and public.model.d == d
    assert abs(public.model.label_noise - 0.4) < 0.03
    assert abs(public.inputs["target_norm"] - math.sqrt(d) * 0.5) < 0.05
    assert public.privacy.planning.mode == "public_stats"
    shared = privdyn.plan.dpgd(data=str(path), label_column="y", planning_share=0.2, feature_norm_bound=6.0,
                               label_bound=5.0, epsilon=2.0, delta=1e-5, schedules=("constant",))
    statement = shared.privacy
    assert statement.planning.mode == "dp" and math.isclose(statement.planning.zcdp, 0.2 * shared.budget.zcdp)
    assert math.isclose(statement.zcdp, statement.planning.zcdp + statement.training_zcdp, rel_tol=1e-12)
    assert statement.zcdp <= shared.budget.zcdp and statement.epsilon <= 2.0
    for mech in statement.planning.mechanisms:  # each Gaussian mechanism's zCDP is sensitivity^2 / (2 std^2)
        assert math.isclose(mech["zcdp"], mech["sensitivity"] ** 2 / (2 * mech["noise_std"] ** 2), rel_tol=1e-12)
