"""The estimators' ``privacy_``: a PrivacyStatement built from the record of the fit, read as a mapping too."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privdyn.privacy import PrivacyStatement
from privdyn.privacy.membership import MEMBERSHIP_FPRS, gaussian_tpr
from privdyn.sklearn import AdaSSPRegression, DPLinearRegression, DPLogisticRegression

# the keys users read from the dict privacy_ was (tests, docs, experiments, the audit), per estimator
_COMMON = ("epsilon", "requested_epsilon", "delta", "delta_rule", "zcdp", "neighboring", "guarantee",
           "is_dp_guarantee", "unit", "released", "accountant", "assumptions", "text")
_KEYS = {DPLinearRegression: (*_COMMON, "rho", "shares", "conversion", "cross_checks"),
         AdaSSPRegression: (*_COMMON, "shares", "conversion", "cross_checks"),
         DPLogisticRegression: (*_COMMON, "bound", "sampler", "last_iterate_zcdp", "last_iterate_epsilon",
                                "composition_zcdp", "composition_epsilon", "saved", "plan")}


def _regression(n: int = 400, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, d))
    return x, x @ np.arange(1.0, d + 1.0) / d + 0.3 * rng.normal(size=n)


def _fit(cls: type) -> object:
    x, y = _regression()
    if cls is DPLogisticRegression:
        return cls(epsilon=1.5, feature_norm=3.0, max_iter=50, random_state=0).fit(x, y > 0)
    return cls(epsilon=1.5, feature_norm=3.0, label_bound=3.0, random_state=0).fit(x, y)


@pytest.mark.parametrize("cls", list(_KEYS))
def test_privacy_is_a_statement_read_as_the_dict_was(cls: type) -> None:
    model = _fit(cls)
    p = model.privacy_  # type: ignore[attr-defined]
    assert type(p) is PrivacyStatement
    assert set(_KEYS[cls]) <= set(p.keys()) and all(key in p for key in _KEYS[cls])
    record = dict(p)  # the whole JSON record
    assert record == p.to_json() and len(p) == len(record) and sorted(p) == sorted(record)
    assert p.get("no such key") is None and p.get("no such key", 3) == 3
    # the mapping reads the statement's fields
    assert p["epsilon"] == p.epsilon <= 1.5 and p["requested_epsilon"] == 1.5
    assert p["delta"] == p.delta == pytest.approx(400**-1.1) and p["delta_rule"].startswith("1/n^1.1")
    assert p["zcdp"] == p.zcdp and p["guarantee"] == "bound" and p["is_dp_guarantee"] is True
    assert p["neighboring"] == "replace_one" and p["unit"] == "one row (x, y) of the training set"
    assert isinstance(p["assumptions"], list) and p["text"] == p.text()
    # what an attacker can do, at the three false-positive rates
    assert p["membership"]["fpr"] == list(MEMBERSHIP_FPRS) and p.membership_reason is None
    for fpr, tpr in zip(p["membership"]["fpr"], p["membership"]["tpr"], strict=True):
        assert fpr < tpr < 1.0
    assert "Membership inference" in p["text"]


@pytest.mark.parametrize("cls", [DPLinearRegression, DPLogisticRegression])
def test_zcdp_membership_is_never_below_the_gaussian_law_of_the_same_zcdp(cls: type) -> None:
    """A Gaussian mechanism of μ = √(2ρ) is ρ-zCDP, so its exact rate is a lower bound on any ρ-zCDP bound."""
    p = _fit(cls).privacy_  # type: ignore[attr-defined]
    for fpr, tpr in zip(p["membership"]["fpr"], p["membership"]["tpr"], strict=True):
        assert gaussian_tpr(math.sqrt(2.0 * p["zcdp"]), fpr) - 1e-12 <= tpr


def test_adassp_membership_is_the_exact_gaussian_trade_off() -> None:
    """AdaSSP's three releases compose to a Gaussian mechanism of μ² = Σ (Δ_i/σ_i)² (Dong, Roth & Su, Corollary
    3.3): the best test's rate at FPR α is 1 − G_μ(α), G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), recomputed here from the shares."""
    p = _fit(AdaSSPRegression).privacy_  # type: ignore[attr-defined]
    releases = [s for s in p["shares"] if "noise_std" in s]
    mu = math.sqrt(sum((s["sensitivity"] / s["noise_std"]) ** 2 for s in releases))
    assert len(releases) == 3 and mu == pytest.approx(math.sqrt(2.0 * p["zcdp"]), rel=1e-12)
    table = dict(zip(p["membership"]["fpr"], p["membership"]["tpr"], strict=True))
    exact = 1.0 - stats.norm.cdf(stats.norm.ppf(1.0 - 0.01) - mu)
    assert abs(table[0.01] - exact) <= 1e-4  # the check (measured: equal to 1e-15)
    assert table[0.01] == pytest.approx(exact, abs=1e-12)
    try:
        from riskcal import analysis
    except ImportError:  # the oracle of the compare extra; the exact law above is checked without it
        analysis = None
    if analysis is not None:
        assert abs(table[0.01] - (1.0 - float(analysis.get_beta_for_mu(mu, 0.01)))) <= 1e-4
    # the exact composition's epsilon is beside the zCDP bound the noise was calibrated to (never above it)
    assert p["cross_checks"]["epsilon_exact_gaussian_composition"] <= p["epsilon"]


def test_adassp_noise_is_the_gaussian_releases_record_calibration() -> None:
    """The noise is GaussianReleases.calibrate_zcdp's: equal zCDP thirds, σ_i = Δ_i/√(2·zcdp/3)."""
    from privdyn.privacy.mechanism import GaussianRelease, GaussianReleases

    p = _fit(AdaSSPRegression).privacy_  # type: ignore[attr-defined]
    releases = [s for s in p["shares"] if "noise_std" in s]
    record = GaussianReleases(releases=tuple(
        GaussianRelease(sensitivity=s["sensitivity"], noise_std=1.0, neighboring="replace_one") for s in releases))
    assert [r.noise_std for r in record.calibrate_zcdp(p["zcdp"]).releases] == [s["noise_std"] for s in releases]
    assert [s["noise_std"] for s in releases] == pytest.approx(
        [s["sensitivity"] / math.sqrt(2.0 * p["zcdp"] / 3.0) for s in releases], rel=1e-15)


def test_logistic_statement_is_the_noisy_gd_record() -> None:
    from privdyn.privacy.mechanism import NoisyGDMechanism

    model = _fit(DPLogisticRegression)
    t, p = model.training_, model.privacy_  # type: ignore[attr-defined]
    record = NoisyGDMechanism(n=t["n"], num_steps=t["num_steps"], step_size=t["step_size"],
                              noise_scale=t["noise_scale"], strong_convexity=t["ridge"], smoothness=t["smoothness"],
                              sensitivity=t["sensitivity"])
    assert p["epsilon"] == float(record.privacy_loss(p["delta"]).value) and p["zcdp"] == record.zcdp
    assert p["membership"] == record.membership() and p["bound"] == record.bound


def test_public_preprocessing_is_exported() -> None:
    from privdyn.sklearn import Preprocessed, project_rows

    x, y = _regression(n=50)
    rows, intercept, radius = project_rows(x * 10.0, 2.0, True)
    prep = Preprocessed(x * 10.0, y, feature_norm=2.0, label_bound=1.0, fit_intercept=True)
    assert radius == prep.radius and intercept == prep.intercept_feature
    np.testing.assert_allclose(rows, prep.features / prep.radius, rtol=1e-14)
    assert np.linalg.norm(rows, axis=1).max() <= 1.0 + 1e-12


def test_dpgd_statement_matches_the_one_pass_record_of_the_steps_run() -> None:
    """The training zCDP stated (the planner's ρ²/2) is Proposition 4.1 recomputed on the steps the fit ran."""
    from privdyn.privacy.mechanism import OnePassDPGDMechanism

    model = _fit(DPLinearRegression)
    p, schedule = model.privacy_, model.training_schedule()  # type: ignore[attr-defined]
    sigma = schedule["noise_std"] / (2.0 * schedule["clip_threshold"])
    record = OnePassDPGDMechanism(step_sizes=schedule["step_sizes"], noise_multipliers=sigma)
    assert record.zcdp == pytest.approx(p["training_zcdp"], rel=1e-9)
    assert p["cross_checks"]["training_zcdp_of_the_record"] == pytest.approx(p["training_zcdp"], rel=1e-9)
