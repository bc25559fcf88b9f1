"""The dpsgd planner: calibration through the allow-list, the prefix-sum proxy, the ranking, refusals, verification."""

import dataclasses
import json
import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld

import privdyn.plan
from privdyn.cli import main
from privdyn.plan import _dpsgd
from privdyn.privacy import accounting, correlated
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

# Tiny sizes: the amplified bound (every correlated strategy) costs seconds per evaluation whatever the horizon.
SIZES = dict(n=1_000, batch_size=50, num_steps=10, epsilon=1.0, delta=1e-5)
RANKING = dict(SIZES, sampler="poisson", neighboring="add_remove")
STRATEGIES = ["independent", "lambda_cgd:0.5", "toeplitz:1,0.5,0.25"]  # lambda > 0 under Poisson: accounted now


@pytest.fixture(scope="module")
def plan():
    return privdyn.plan.dpsgd(**RANKING, strategies=STRATEGIES)


_BY_SPEC = {_dpsgd.strategy_spec(_dpsgd.parse_strategy(spec)): _dpsgd.parse_strategy(spec) for spec in STRATEGIES}


def _strategy(hyper):
    if "strategy_spec" in hyper:
        return _BY_SPEC[hyper["strategy_spec"]]
    return _BY_SPEC[f"lambda_cgd:{hyper['noise_correlation']:g}" if hyper["noise_correlation"] else "independent"]


def test_every_noise_multiplier_is_the_allow_listed_accountants(plan) -> None:
    sizes = {k: SIZES[k] for k in ("n", "batch_size", "num_steps", "delta")}
    seen = set()
    for hyper in [plan.hyperparameters] + [a.hyperparameters for a in plan.alternatives]:
        strategy = _strategy(hyper)
        row = accounting.accountant_for(strategy, sampler="poisson", neighboring="add_remove")
        assert hyper["accountant"] == row.accountant and hyper["guarantee"] == "bound"
        assert hyper["sampler"] == "poisson" and hyper["neighboring"] == "add_remove"
        seen.add(row.accountant)
        if row.accountant == "dp_accounting_pld":  # cheap: the dispatcher's calibration, recomputed
            expected = accounting.dpsgd_noise_multiplier(strategy, epsilon=SIZES["epsilon"], sampler="poisson",
                                                         neighboring="add_remove", rtol=hyper["calibration_rtol"],
                                                         **sizes)
            assert hyper["noise_multiplier"] == float(expected.value)
        else:  # the amplified bound: its kappa meets the target by the dispatcher's own epsilon (safe side)
            loss = accounting.dpsgd_epsilon(strategy, noise_multiplier=hyper["noise_multiplier"], sampler="poisson",
                                            neighboring="add_remove", **sizes)
            assert loss.value <= SIZES["epsilon"]
    assert seen == {"dp_accounting_pld", "amplified_bound"}


def test_plan_epsilon_checked_by_dp_accounting_pld(plan) -> None:
    """The chosen strategy is independent noise here (the amplified bounds ask for more noise at these sizes)."""
    assert plan.hyperparameters["strategy"] == "independent"
    kappa = plan.noise_multiplier
    accountant = pld.PLDAccountant()
    event = dp_accounting.PoissonSampledDpEvent(SIZES["batch_size"] / SIZES["n"],
                                                dp_accounting.GaussianDpEvent(kappa))
    accountant.compose(event, SIZES["num_steps"])
    assert accountant.get_epsilon(SIZES["delta"]) <= SIZES["epsilon"]
    assert plan.privacy.epsilon <= SIZES["epsilon"] and plan.privacy.guarantee is Guarantee.BOUND
    assert plan.privacy.sampler == "poisson" and plan.privacy.neighboring is NeighboringRelation.ADD_REMOVE
    # 1% less noise breaks the target: the calibration is tight
    accountant = pld.PLDAccountant()
    accountant.compose(dp_accounting.PoissonSampledDpEvent(
        SIZES["batch_size"] / SIZES["n"], dp_accounting.GaussianDpEvent(0.99 * kappa)), SIZES["num_steps"])
    assert accountant.get_epsilon(SIZES["delta"]) > SIZES["epsilon"]


@pytest.mark.parametrize("strategy", [correlated.Independent(), correlated.LambdaCGD(0.6), correlated.SquareRoot(),
                                      correlated.BufferedToeplitz([0.9, 0.5], [0.3, 0.1]),
                                      correlated.Toeplitz([1.0, 0.5, 0.25])])
def test_prefix_sum_mse_is_the_dense_matrix_error(strategy) -> None:
    num_steps, kappa, clip = 37, 1.7, 0.6
    workload = np.tril(np.ones((num_steps, num_steps)))
    b = workload @ strategy.noise_matrix(num_steps)
    mean, last = _dpsgd.prefix_sum_mse(strategy, noise_multiplier=kappa, num_steps=num_steps, clip=clip)
    assert math.isclose(mean, (kappa * clip) ** 2 * np.sum(b * b) / num_steps, rel_tol=1e-12)
    assert math.isclose(last, (kappa * clip) ** 2 * np.sum(b[-1] ** 2), rel_tol=1e-12)


def test_prefix_sum_mse_closed_forms(plan) -> None:
    t = SIZES["num_steps"]
    assert math.isclose(plan.predicted_risk, plan.noise_multiplier**2 * (t + 1) / 2, rel_tol=1e-12)
    for alt in plan.alternatives:
        if "noise_correlation" not in alt.hyperparameters:
            continue
        lam, kappa = alt.hyperparameters["noise_correlation"], alt.hyperparameters["noise_multiplier"]
        assert math.isclose(alt.predicted_risk, kappa**2 * (1 + (1 - lam) ** 2 * (t - 1) / 2), rel_tol=1e-12)


def test_ranking_says_it_is_biased_against_correlated_noise(plan) -> None:
    risks = [plan.predicted_risk] + [a.predicted_risk for a in plan.alternatives]
    assert risks == sorted(risks)
    assert plan.ranking["biased_against_correlated"] is True and "biased against correlated" in plan.ranking["text"]
    assert "of the Monte-Carlo estimate of epsilon" in plan.ranking["text"] and "provisional" not in plan.summary()
    assert plan.ranking["accountants"] == {spec: ("dp_accounting_pld" if spec == "independent" else "amplified_bound")
                                           for spec in _BY_SPEC}
    assert {a.hyperparameters["calibration_rtol"] for a in plan.alternatives} == {_dpsgd.RANKING_RTOL}
    assert plan.hyperparameters["calibration_rtol"] == _dpsgd.CALIBRATION_RTOL and not plan.refused


def test_json_prints_sampler_and_relation_with_every_number(plan) -> None:
    doc = json.loads(json.dumps(plan.to_json(), allow_nan=False))
    for entry in [doc] + doc["alternatives"]:
        assert entry["sampler"] == "poisson" and entry["neighboring"] == "add_remove"
        assert "noise_multiplier" in entry and "predicted_risk" in entry and "accountant" in entry
    assert doc["quantity"] == "prefix_sum_mse" and doc["guarantee"] == "bound"
    assert doc["ranking"]["biased_against_correlated"] is True
    statement = doc["privacy_statement"]
    assert statement["sampler"] == "poisson" and statement["neighboring"] == "add_remove"
    assert "dp_accounting_pld" in statement["accountant"]


def test_verification_simulates_the_noise_stream(plan) -> None:
    check = plan.simulate(12, seed=3)
    assert check.within is True and check.num_runs == 12
    lam = next(a for a in plan.alternatives if a.hyperparameters.get("noise_correlation") == 0.5)
    lam_plan = dataclasses.replace(plan, strategy=correlated.LambdaCGD(0.5),
                                   noise_multiplier=lam.hyperparameters["noise_multiplier"],
                                   predicted_risk=lam.predicted_risk)
    assert lam_plan.simulate(12, seed=4).within is True
    wrong = dataclasses.replace(plan, predicted_risk=plan.predicted_risk * 1.5)  # a wrong proxy is detected
    assert wrong.simulate(12, seed=3).within is False


def test_pareto_front_reuses_the_plans_calibrations() -> None:
    plan = privdyn.plan.dpsgd(**RANKING, strategies=["independent", "lambda_cgd:0.5"])
    lam_key = (repr(correlated.LambdaCGD(0.5)), "poisson", 1.0, _dpsgd.RANKING_RTOL)
    cached = plan.calibrations[lam_key]
    front = plan.pareto_front([0.5, 1.0])
    assert plan.calibrations[lam_key] is cached  # reused, not recalibrated
    assert front.budget_name == "epsilon" and np.all(np.diff(front.predicted) < 0)
    assert math.isclose(front.predicted[1], plan.predicted_risk, rel_tol=3e-3)  # rtol 1e-3 on kappa


@pytest.mark.slow
def test_blt_under_poisson_sampling_is_planned() -> None:
    plan = privdyn.plan.dpsgd(**RANKING, strategies=["blt:0.9:0.2"], rtol=1e-2)
    assert plan.hyperparameters["accountant"] == "amplified_bound" and plan.privacy.epsilon <= SIZES["epsilon"]


def test_other_relations_rank_what_they_can_account() -> None:
    """fixed_size / replace_one: independent noise only; every correlated default is refused (one relation is not
    another), and the square root is refused under every relation."""
    replace = privdyn.plan.dpsgd(**dict(SIZES, sampler="fixed_size", neighboring="replace_one"))
    assert replace.hyperparameters["accountant"] == "dp_accounting_rdp" and not replace.alternatives
    assert replace.ranking["biased_against_correlated"] is False
    assert {spec for spec, _ in replace.refused} == set(_dpsgd.DEFAULT_STRATEGIES) - {"independent"}
    assert all("not on the allow-list" in reason for _, reason in replace.refused)
    assert any("amplified bound" in note for note in replace.notes)
    curve = replace.privacy.rdp_curve
    assert curve is not None and len(curve["renyi_orders"]) == len(curve["rdp_epsilons"])


def test_a_new_allow_list_row_is_accepted_without_a_list_of_its_own(monkeypatch) -> None:
    """The planner asks the dispatcher: a row added to ALLOW_LIST (as the amplification work will) is ranked."""
    def loss(value: float, quantity: str) -> PrivacyLoss:
        return PrivacyLoss(value=value, guarantee=Guarantee.BOUND, quantity=quantity,
                           neighboring=NeighboringRelation.ZERO_OUT, sampler="fixed_size", source="a test row")

    def epsilon(strategy, kappa, sizes, delta):
        return loss(0.4, "epsilon")

    def noise_multiplier(strategy, epsilon, delta, sizes, rtol):
        return loss(3.0, "noise_multiplier")

    row = accounting.AllowListRow("square_root", "fixed_size", NeighboringRelation.ZERO_OUT, "test_row",
                                  Guarantee.BOUND, "", epsilon, noise_multiplier)
    monkeypatch.setattr(accounting, "ALLOW_LIST", accounting.ALLOW_LIST + (row,))
    plan = _dpsgd.dpsgd(**dict(SIZES, sampler="fixed_size", neighboring="zero_out", strategies=["square_root"]))
    assert plan.hyperparameters["strategy"] == "square_root" and plan.hyperparameters["noise_multiplier"] == 3.0
    assert plan.hyperparameters["accountant"] == "test_row" and plan.privacy.epsilon == 0.4


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(SIZES, sampler="shuffle", neighboring="zero_out"), "sampler='shuffle'"),
    (dict(SIZES, sampler="shuffle", neighboring="add_remove", strategies=["independent"]), "sampler='shuffle'"),
    (dict(SIZES, sampler="fixed_size", neighboring="replace_one", strategies=["lambda_cgd:0.5"]),
     "lambda_cgd noise .* neighboring='replace_one'"),
    (dict(SIZES, sampler="shuffle", neighboring="zero_out", strategies=["blt:0.9:0.2"]), "blt noise"),
    (dict(SIZES, sampler="fixed_size", neighboring="add_remove", strategies=["banded_inverse:1,-0.5"]),
     "banded_inverse noise"),
    (dict(RANKING, strategies=["square_root"]), "square_root noise"),
    (dict(RANKING, rtol=0.0), "rtol"),
    (dict(RANKING, ranking_rtol=2.0), "ranking_rtol"),
    (dict(SIZES, neighboring="zero_out"), "sampler is required"),
    (dict(SIZES, sampler="poisson"), "neighboring is required"),
    (dict(RANKING, sampler="uniform"), "sampler must be one of"),
    (dict(RANKING, neighboring="swap"), "neighboring must be one of"),
    (dict(RANKING, epsilon=0.0), "epsilon must be > 0"),
    (dict(RANKING, delta=1.0), r"delta must be in \(0.0, 1.0\)"),
    (dict(RANKING, n=0), "n must be an integer >= 1"),
    (dict(RANKING, batch_size=20_000), "batch_size must be <= n"),
    (dict(RANKING, strategies=["cosine"]), "strategy must be 'independent'"),
    (dict(RANKING, strategies=["lambda_cgd:1.5"]), r"noise_correlation must be in \[0.0, 1.0\)"),
    (dict(RANKING, strategies=[]), "at least one noise strategy"),
    (dict(RANKING, samplers=["poisson", "uniform"]), r"samplers must name .* \(unknown: 'uniform'\)"),
    (dict(RANKING, samplers="poisson,,bogus"), r"\(unknown: 'bogus'\)"),
    (dict(RANKING, samplers=[]), "samplers must name one or more"),
    (dict(RANKING, samplers=["random_allocation", "fixed_size"]), "sampler must be one of the ranked samplers"),
    (dict(SIZES, samplers="all"), "neighboring is required"),
    (dict(RANKING, samplers="poisson,random_allocation", strategies=["square_root"]),
     "'square_root' cannot be accounted under any of the samplers poisson, random_allocation"),
])
def test_refusals_and_bad_input(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        privdyn.plan.dpsgd(**kwargs)


def test_refusal_is_the_dispatchers_error() -> None:
    with pytest.raises(accounting.NotAccountableError, match="not on the allow-list"):
        privdyn.plan.dpsgd(**dict(SIZES, sampler="shuffle", neighboring="add_remove"))


def test_cli_dpsgd_json_and_refusal(capsys, tmp_path) -> None:
    args = ["plan", "dpsgd", "--n", "1000", "--batch-size", "50", "--num-steps", "10", "--epsilon", "1",
            "--delta", "1e-5", "--sampler", "fixed_size", "--neighboring", "zero_out"]
    assert main([*args, "--strategy", "independent", "--strategy", "lambda_cgd:0.5", "--json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert out.strip().count("\n") == 0
    assert doc["family"] == "dpsgd" and doc["strategy"] == "independent" and len(doc["alternatives"]) == 1
    # lambda-CGD under fixed-size sampling outside Theorem F.12's range (r T = 0.5) is accounted by the amplified bound
    assert doc["alternatives"][0]["accountant"] == "amplified_bound_or_theorem_f12"
    assert doc["ranking"]["biased_against_correlated"] is True
    written = tmp_path / "written"
    assert main([*args, "--strategy", "independent", "--out", str(written), "--pareto", "2", "--verify", "3"]) == 0
    assert sorted(p.name for p in written.iterdir()) == ["plan.json", "plan.png"]
    saved = json.loads((written / "plan.json").read_text())
    assert saved["verification"]["num_runs"] == 3 and len(saved["pareto_front"]["budgets"]) == 2
    assert "fixed_size" in capsys.readouterr().out
    target = tmp_path / "out"
    assert main([*args[:-4], "--sampler", "poisson", "--neighboring", "add_remove", "--strategy", "square_root",
                 "--out", str(target)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1 and "square_root noise" in lines[0]
    assert not target.exists()


# ------------------------------------------------------------------------------------------------------------
# Ranking participation schemes (samplers) as well as noise strategies
# ------------------------------------------------------------------------------------------------------------

SCHEMES = dict(SIZES, neighboring="add_remove", strategies=["independent", "lambda_cgd:0.5"])


@pytest.fixture(scope="module")
def schemes_plan():
    """Every sampler privdyn knows (``"all"``: a sampler added to SAMPLERS is ranked or refused here too)."""
    return privdyn.plan.dpsgd(**SCHEMES, samplers="all")


def test_every_accountable_pair_is_ranked_and_every_other_refused_with_its_reason(schemes_plan) -> None:
    """The ranked and refused pairs partition (strategy, sampler) over accounting.SAMPLERS, as the allow-list says."""
    entries = schemes_plan.ranking["entries"]
    ranked = {(e["strategy"], e["sampler"]): e for e in entries}
    refused = {(p.strategy, p.sampler): p for p in schemes_plan.refused_pairs}
    assert schemes_plan.samplers == accounting.SAMPLERS and not set(ranked) & set(refused)
    for spec in SCHEMES["strategies"]:
        strategy = _dpsgd.parse_strategy(spec)
        for sampler in accounting.SAMPLERS:
            try:
                row = accounting.accountant_for(strategy, sampler=sampler, neighboring="add_remove")
            except accounting.NotAccountableError as exc:
                assert refused[spec, sampler].reason == exc.reason in accounting.REFUSAL_REASONS
                continue
            if (spec, sampler) in refused:  # listed, but the accountant's conditions fail here
                assert refused[spec, sampler].reason is None
                continue
            assert ranked[spec, sampler]["accountant"] == row.accountant
            assert ranked[spec, sampler]["guarantee"] == row.guarantee.value
    assert refused["lambda_cgd:0.5", "cyclic_poisson"].reason == "cyclic_poisson_dense_encoder"
    assert ranked["lambda_cgd:0.5", "random_allocation"]["accountant"] == "allocation_bound"
    assert refused["independent", "shuffle"].reason == "shuffled_epochs"
    assert refused["independent", "fixed_size"].reason == "relation_not_covered"  # fixed_size has no add_remove row
    mses = [e["prefix_sum_mse"] for e in entries]
    assert mses == sorted(mses) and mses[0] == schemes_plan.predicted_risk
    assert [schemes_plan.hyperparameters["sampler"]] + [a.hyperparameters["sampler"] for a in
                                                        schemes_plan.alternatives] == [e["sampler"] for e in entries]


def test_random_allocation_ranks_at_or_above_poisson_at_a_small_budget(schemes_plan) -> None:
    """Feldman and Shenfeld: random allocation over t = ceil(n/B) steps is never worse than Poisson sampling at rate
    B/n, so its calibrated kappa is not larger (each kappa is within rtol above the smallest) and it ranks first."""
    entries = schemes_plan.ranking["entries"]
    order = [(e["strategy"], e["sampler"]) for e in entries]
    allocation = order.index(("independent", "random_allocation"))
    poisson = order.index(("independent", "poisson"))
    assert allocation < poisson
    kappa = {key: e["noise_multiplier"] for key, e in zip(order, entries, strict=True)}
    assert kappa["independent", "random_allocation"] <= kappa["independent", "poisson"] * (1 + _dpsgd.CALIBRATION_RTOL)
    # the chosen pair is the first entry, and the statement is its sampler's, by its allow-list row
    first = entries[0]
    assert schemes_plan.hyperparameters["sampler"] == first["sampler"] == schemes_plan.privacy.sampler
    assert schemes_plan.hyperparameters["accountant"] == first["accountant"] in schemes_plan.privacy.accountant
    assert schemes_plan.privacy.epsilon <= SIZES["epsilon"]
    independent = correlated.Independent()
    sizes = {k: SIZES[k] for k in ("n", "batch_size", "num_steps", "delta")}
    for sampler in ("random_allocation", "poisson"):  # each kappa meets the target by its own accountant
        loss = accounting.dpsgd_epsilon(independent, noise_multiplier=kappa["independent", sampler], sampler=sampler,
                                        neighboring="add_remove", **sizes)
        assert loss.value <= SIZES["epsilon"]


def test_the_ranking_says_one_relation_and_what_each_loader_must_do(schemes_plan) -> None:
    text = schemes_plan.ranking["text"]
    assert "one neighbouring relation per ranking" in text and "add_remove neighbours" in text
    assert "expected batch size 50" in text and "biased against correlated noise" in text
    loaders = schemes_plan.ranking["loaders"]
    assert set(loaders) == {e["sampler"] for e in schemes_plan.ranking["entries"]}
    assert "exactly one of the ceil(n / batch_size) steps of every epoch" in loaders["random_allocation"]
    assert any("data loader must draw its batches that way" in note for note in schemes_plan.notes)
    summary = schemes_plan.summary()
    assert "what the data loader must do" in summary and "independent / random_allocation" in summary
    assert "  cyclic_poisson_dense_encoder: lambda_cgd:0.5 / cyclic_poisson\n" in summary


def test_json_names_the_scheme_of_every_ranked_and_refused_pair(schemes_plan) -> None:
    doc = json.loads(json.dumps(schemes_plan.to_json(), allow_nan=False))
    for entry in [doc] + doc["alternatives"] + doc["ranking"]["entries"]:
        assert entry["sampler"] in accounting.SAMPLERS
    assert [a["name"] for a in doc["alternatives"]] == [f"{e['strategy']} / {e['sampler']}"
                                                          for e in doc["ranking"]["entries"][1:]]
    assert doc["inputs"]["samplers"] == list(accounting.SAMPLERS) and doc["inputs"]["sampler"] is None
    for entry in doc["refused"]:
        assert set(entry) == {"strategy", "sampler", "reason_name", "reason"}
        assert f"sampler={entry['sampler']!r}" in entry["reason"]
    assert doc["privacy_statement"]["sampler"] == doc["sampler"] == doc["ranking"]["entries"][0]["sampler"]


def test_pareto_front_of_a_scheme_ranking_recalibrates_each_pair_under_its_sampler() -> None:
    plan = privdyn.plan.dpsgd(**dict(SIZES, neighboring="zero_out", strategies=["independent", "lambda_cgd:0.5"]),
                              samplers=["fixed_size", "poisson"])
    pairs = set(zip(map(_dpsgd.strategy_spec, plan.candidates), plan.candidate_samplers, strict=True))
    assert pairs == {("independent", "fixed_size"), ("lambda_cgd:0.5", "fixed_size"), ("lambda_cgd:0.5", "poisson")}
    assert [(p.strategy, p.sampler, p.reason) for p in plan.refused_pairs] == [
        ("independent", "poisson", "relation_not_covered")]
    lam_key = (repr(correlated.LambdaCGD(0.5)), "poisson", 1.0, _dpsgd.RANKING_RTOL)
    cached = plan.calibrations[lam_key]
    front = plan.pareto_front([SIZES["epsilon"]])
    assert plan.calibrations[lam_key] is cached  # reused under its own sampler, not recalibrated under another
    assert (repr(correlated.Independent()), "fixed_size", 1.0, _dpsgd.PARETO_RTOL) in plan.calibrations
    assert math.isclose(front.predicted[0], plan.predicted_risk, rel_tol=3e-3)  # rtol 1e-3 on kappa
    assert front.hyperparameters[0]["sampler"] == plan.hyperparameters["sampler"]
    assert "fixed_size/poisson sampling, zero_out neighbours" in front.note


def test_default_is_one_sampler_and_its_output_is_unchanged() -> None:
    """Regression: without ``samplers`` (or with the user's sampler alone) the plan is the plan of one sampler, with
    the JSON layout it had before participation schemes were ranked."""
    kwargs = dict(SIZES, sampler="fixed_size", neighboring="replace_one")
    docs = []
    for samplers in (None, ["fixed_size"], "fixed_size"):
        plan = privdyn.plan.dpsgd(**kwargs, samplers=samplers)
        assert plan.samplers == ("fixed_size",) and not plan.ranks_samplers
        doc = plan.to_json()
        doc["search"].pop("elapsed_s")
        docs.append(doc)
    assert docs[0] == docs[1] == docs[2]
    doc = docs[0]
    assert "samplers" not in doc["inputs"] and doc["inputs"]["sampler"] == "fixed_size"
    assert set(doc["ranking"]) == {"criterion", "sampler", "neighboring", "biased_against_correlated", "accountants",
                                   "text"}
    assert doc["ranking"]["accountants"] == {"independent": "dp_accounting_rdp"}
    assert doc["ranking"]["text"].startswith("by prefix_sum_mse at each strategy's calibrated noise_multiplier, all "
                                             "under fixed_size sampling, replace_one neighbours; ")
    assert all(set(entry) == {"strategy", "reason"} for entry in doc["refused"])
    assert [entry["strategy"] for entry in doc["refused"]] == list(_dpsgd.DEFAULT_STRATEGIES[1:])
    expected = accounting.dpsgd_noise_multiplier(correlated.Independent(), epsilon=SIZES["epsilon"],
                                                 delta=SIZES["delta"], n=SIZES["n"], batch_size=SIZES["batch_size"],
                                                 num_steps=SIZES["num_steps"], sampler="fixed_size",
                                                 neighboring="replace_one", rtol=_dpsgd.CALIBRATION_RTOL)
    assert doc["noise_multiplier"] == float(expected.value)
    assert "what the data loader must do" not in plan.summary()


def test_cli_ranks_samplers_and_refuses_an_unknown_one(capsys, tmp_path) -> None:
    args = ["plan", "dpsgd", "--n", "1000", "--batch-size", "50", "--num-steps", "10", "--epsilon", "1",
            "--delta", "1e-5", "--neighboring", "zero_out", "--strategy", "independent"]
    assert main([*args, "--samplers", "fixed_size,poisson", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ranking"]["samplers"] == ["fixed_size", "poisson"] and doc["sampler"] == "fixed_size"
    assert [(e["strategy"], e["sampler"]) for e in doc["refused"]] == [("independent", "poisson")]
    target = tmp_path / "out"
    for bad, fragment in ((["--samplers", "poisson,bogus"], "(unknown: 'bogus')"),
                          (["--sampler", "shuffle", "--samplers", "poisson"], "sampler must be one of the ranked")):
        assert main([*args, *bad, "--out", str(target)]) == 2
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert captured.out == "" and len(lines) == 1 and fragment in lines[0], captured.err
        assert not target.exists()
