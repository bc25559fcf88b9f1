"""Tests of privdyn.tuning.dpgd: the dpgd ODE objective and the figures' tuners built on it.

Oracles: a fake ODE engine with a known optimum (monkeypatched in place of ``privdyn.dynamics.dpgd``; its optimum
is that of the bowl and the valley of ``test_minimize.py``), the real engine called directly, and the spec's Figure 7
table (ODE reference: isotropic, gamma = 0.01, rho = 0.1, c = 0.1, zeta = 0.3, alpha = 0 -> 0.0484 at initial
learning rate 13.3).
"""

from __future__ import annotations

import importlib.util
import math
import sys
import types
import warnings

import pytest

from privdyn import tuning
from privdyn.schedules import Harmonic, OutsideTheoryWarning, Polynomial

CLIP_STAR, ETA_STAR = 0.05, 13.3


def bowl(*, clip, initial_learning_rate):
    """Shifted log-quadratic bowl (positive definite, with a cross term): minimum 2.0 at (0.05, 13.3)."""
    u = math.log(clip / CLIP_STAR)
    w = math.log(initial_learning_rate / ETA_STAR)
    return 2.0 + u * u + 0.5 * u * w + 2.0 * w * w


def valley(*, harmonic_scale, harmonic_offset):
    """Flat valley along beta * tau = const (curvature 1e-3 along it): minimum 0.039 at (16.3, 0.6)."""
    u = math.log(harmonic_scale * harmonic_offset / (16.3 * 0.6))
    w = math.log(harmonic_scale / 16.3)
    return 0.039 * (1.0 + u * u + 1e-3 * w * w)


VALLEY_BOUNDS = {"harmonic_scale": (0.1, 1e3), "harmonic_offset": (1e-4, 10.0)}


# ----------------------------------------------------------------------------------------------------------------
# The tuners, with a fake ODE engine
# ----------------------------------------------------------------------------------------------------------------


@pytest.fixture
def fake_engine(monkeypatch):
    """Replace privdyn.dynamics.dpgd by a fake whose final_private_risk has a known optimum."""
    module = types.ModuleType("privdyn.dynamics.dpgd")
    module.calls = []

    def final_private_risk(*, spectrum, target_projections, aspect_ratio, learning_rate, clip, rho, label_noise,
                           method="exponential", rtol=1e-8):
        module.calls.append(dict(spectrum=spectrum, target_projections=target_projections, aspect_ratio=aspect_ratio,
                                 learning_rate=learning_rate, clip=clip, rho=rho, label_noise=label_noise,
                                 method=method, rtol=rtol))
        if isinstance(learning_rate, Polynomial):
            return bowl(clip=clip, initial_learning_rate=learning_rate.initial_learning_rate) - 2.0 + 0.0484
        return valley(harmonic_scale=learning_rate.harmonic_scale, harmonic_offset=learning_rate.harmonic_offset)

    module.final_private_risk = final_private_risk
    monkeypatch.setitem(sys.modules, "privdyn.dynamics.dpgd", module)
    return module


COMMON = dict(spectrum="SPECTRUM", target_projections="TARGET", aspect_ratio=0.01, rho=0.1, label_noise=0.3)


def test_tune_polynomial_over_clip_and_learning_rate(fake_engine):
    res = tuning.tune_polynomial(**COMMON, schedule_exponent=1.0, tol=1e-8, method="lsoda", rtol=1e-9)
    assert res.names == ("clip", "initial_learning_rate")
    assert res.optimum["clip"] == pytest.approx(CLIP_STAR, rel=1e-4)
    assert res.optimum["initial_learning_rate"] == pytest.approx(ETA_STAR, rel=1e-4)
    assert res.value == pytest.approx(0.0484, rel=1e-8)
    assert dict(res.fixed) == {"schedule_exponent": 1.0}
    call = fake_engine.calls[0]
    assert call["spectrum"] == "SPECTRUM" and call["target_projections"] == "TARGET"
    assert (call["aspect_ratio"], call["rho"], call["label_noise"], call["method"], call["rtol"]) == (
        0.01, 0.1, 0.3, "lsoda", 1e-9)
    assert isinstance(call["learning_rate"], Polynomial) and call["learning_rate"].schedule_exponent == 1.0
    assert len(fake_engine.calls) == res.num_evaluations
    # default boxes: clip in (1e-3, 10), initial learning rate in (1e-2, 2/aspect_ratio)
    assert res.column("clip").min() == pytest.approx(1e-3) and res.column("clip").max() == pytest.approx(10.0)
    lr = res.column("initial_learning_rate")
    assert lr.min() == pytest.approx(1e-2) and lr.max() == pytest.approx(200.0)


def test_tune_polynomial_with_fixed_clip(fake_engine):
    res = tuning.tune_polynomial(**COMMON, schedule_exponent=0.0, clip=CLIP_STAR, tol=1e-8,
                                 learning_rate_bounds=(1.0, 100.0))
    assert res.names == ("initial_learning_rate",)
    assert res.optimum["initial_learning_rate"] == pytest.approx(ETA_STAR, rel=1e-5)
    assert dict(res.fixed) == {"schedule_exponent": 0.0, "clip": CLIP_STAR}
    assert {c["clip"] for c in fake_engine.calls} == {CLIP_STAR}
    assert res.column("initial_learning_rate").min() == pytest.approx(1.0)


def test_tune_polynomial_warns_once_outside_theory(fake_engine):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tuning.tune_polynomial(**COMMON, schedule_exponent=0.3, clip=CLIP_STAR, starts=1)
    outside = [w for w in caught if issubclass(w.category, OutsideTheoryWarning)]
    assert len(outside) == 1 and "Assumption 2" in str(outside[0].message)


def test_tune_harmonic(fake_engine):
    res = tuning.tune_harmonic(**COMMON, clip=0.1, harmonic_scale_bounds=VALLEY_BOUNDS["harmonic_scale"],
                               harmonic_offset_bounds=VALLEY_BOUNDS["harmonic_offset"], tol=1e-8)
    assert res.names == ("harmonic_scale", "harmonic_offset")
    assert res.value == pytest.approx(0.039, rel=1e-7)
    assert res.optimum["harmonic_scale"] * res.optimum["harmonic_offset"] == pytest.approx(16.3 * 0.6, rel=1e-5)
    assert dict(res.fixed) == {"clip": 0.1}
    assert all(isinstance(c["learning_rate"], Harmonic) and c["clip"] == 0.1 for c in fake_engine.calls)


def test_tune_harmonic_over_initial_learning_rate_and_offset(fake_engine):
    # the same objective searched in (eta0 = beta/tau, tau): same optimum, reported in the searched coordinates
    res = tuning.tune_harmonic(**COMMON, clip=0.1, initial_learning_rate_bounds=(1e-2, 1e4),
                               harmonic_offset_bounds=VALLEY_BOUNDS["harmonic_offset"], tol=1e-8)
    assert res.names == ("initial_learning_rate", "harmonic_offset")
    assert res.value == pytest.approx(0.039, rel=1e-7)
    eta0, tau = res.optimum["initial_learning_rate"], res.optimum["harmonic_offset"]
    assert eta0 * tau * tau == pytest.approx(16.3 * 0.6, rel=1e-5)  # beta * tau on the valley floor
    schedules = [c["learning_rate"] for c in fake_engine.calls]
    assert all(isinstance(h, Harmonic) for h in schedules)
    assert any(h.harmonic_scale / h.harmonic_offset == pytest.approx(eta0) for h in schedules)


@pytest.mark.parametrize("kwargs, match", [
    (dict(aspect_ratio=0.0), "aspect_ratio"),
    (dict(rho=-1.0), "rho"),
    (dict(label_noise=0.0), "label_noise"),
    (dict(schedule_exponent=-1.0), "schedule_exponent"),
    (dict(clip=0.0), "clip"),
    (dict(clip_bounds=(1.0, 0.5)), "clip_bounds"),
    (dict(learning_rate_bounds=(0.0, 5.0)), "learning_rate_bounds"),
    (dict(aspect_ratio=300.0), "learning_rate_bounds"),  # default box (1e-2, 2/300) is empty
])
def test_tune_polynomial_validation(fake_engine, kwargs, match):
    with pytest.raises(ValueError, match=match):
        tuning.tune_polynomial(**{**COMMON, "schedule_exponent": 1.0, **kwargs})


def test_tune_harmonic_validation(fake_engine):
    kw = dict(**COMMON, clip=0.1, harmonic_scale_bounds=(1.0, 10.0), harmonic_offset_bounds=(0.01, 1.0))
    with pytest.raises(ValueError, match="harmonic_offset_bounds"):
        tuning.tune_harmonic(**{**kw, "harmonic_offset_bounds": (1.0, 0.01)})
    with pytest.raises(ValueError, match="clip"):
        tuning.tune_harmonic(**{**kw, "clip": -0.1})
    with pytest.raises(ValueError, match="exactly one of harmonic_scale_bounds and initial_learning_rate_bounds"):
        tuning.tune_harmonic(**{**kw, "initial_learning_rate_bounds": (1.0, 10.0)})
    with pytest.raises(ValueError, match="exactly one"):
        tuning.tune_harmonic(**{**kw, "harmonic_scale_bounds": None})
    with pytest.raises(ValueError, match="initial_learning_rate_bounds"):
        tuning.tune_harmonic(**{**kw, "harmonic_scale_bounds": None, "initial_learning_rate_bounds": (0.0, 10.0)})


def test_missing_engine_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "privdyn.dynamics.dpgd", None)  # makes the import fail
    with pytest.raises(ImportError, match="privdyn.dynamics.dpgd"):
        tuning.tune_harmonic(**COMMON, clip=0.1, harmonic_scale_bounds=(1.0, 10.0),
                             harmonic_offset_bounds=(0.01, 1.0))


# ----------------------------------------------------------------------------------------------------------------
# The real ODE engine (spec seed-003 §5, Figure 7 table)
# ----------------------------------------------------------------------------------------------------------------


def _real_engine_available() -> bool:
    try:
        if importlib.util.find_spec("privdyn.dynamics.dpgd") is None:
            return False
        module = importlib.import_module("privdyn.dynamics.dpgd")
    except ImportError:
        return False
    return hasattr(module, "final_private_risk")


@pytest.mark.skipif(not _real_engine_available(), reason="privdyn.dynamics.dpgd.final_private_risk not available")
def test_figure7_output_perturbation_optimum_on_the_real_ode():
    from privdyn.spectra import Spectrum, isotropic_target

    spectrum = Spectrum.identity(100)
    res = tuning.tune_polynomial(spectrum=spectrum, target_projections=isotropic_target(spectrum),
                                 aspect_ratio=0.01, rho=0.1, label_noise=0.3, schedule_exponent=0.0, clip=0.1)
    # spec: 0.0484 at initial learning rate 13.3 (printed digits; the spec's optimizer, log grid + Nelder-Mead,
    # may differ from this one in the last digit)
    assert res.value == pytest.approx(0.0484, abs=5e-5)
    assert res.optimum["initial_learning_rate"] == pytest.approx(13.3, abs=0.05)
    assert res.at_bound == ()


# ----------------------------------------------------------------------------------------------------------------
# The one objective of both searches
# ----------------------------------------------------------------------------------------------------------------


def test_objective_solves_each_point_once_and_ranks_failed_solves_last(fake_engine, monkeypatch):
    class ODESolverError(RuntimeError):
        pass

    solve = fake_engine.final_private_risk

    def final_private_risk(**kwargs):
        if kwargs["clip"] > 1.0:
            raise ODESolverError("the solver gave up")
        return math.nan if kwargs["clip"] > 0.5 else solve(**kwargs)

    monkeypatch.setattr(fake_engine, "ODESolverError", ODESolverError, raising=False)
    monkeypatch.setattr(fake_engine, "final_private_risk", final_private_risk)
    ode = tuning.Objective("SPECTRUM", "TARGET", 0.01, 0.3, 1e-6, extra=lambda clip: 10.0 * clip)
    family = tuning.Candidate("polynomial", 1.0)
    value = ode(family, (CLIP_STAR, ETA_STAR), 0.1)
    assert value == pytest.approx(0.0484 + 10.0 * CLIP_STAR, rel=1e-12)  # the extra term of the clip is added
    assert ode(family, [CLIP_STAR, ETA_STAR], 0.1) == value and ode.solves == 1  # the same point: no new solve
    ode(family, (CLIP_STAR, ETA_STAR), 0.2)
    ode(tuning.Candidate("polynomial", 2.0), (CLIP_STAR, ETA_STAR), 0.1)
    assert ode.solves == 3  # another rho, another family: new solves
    assert ode(family, (2.0, ETA_STAR), 0.1) == math.inf  # the solver failed
    assert ode(family, (0.7, ETA_STAR), 0.1) == math.inf  # a NaN risk
    assert ode.solves == 5
    call = fake_engine.calls[0]
    assert (call["spectrum"], call["target_projections"], call["aspect_ratio"], call["label_noise"], call["rho"],
            call["method"], call["rtol"]) == ("SPECTRUM", "TARGET", 0.01, 0.3, 0.1, "exponential", 1e-6)
    assert call["learning_rate"].initial_learning_rate == ETA_STAR and call["clip"] == CLIP_STAR


def test_candidate_points_and_records():
    harmonic = tuning.Candidate("harmonic", None)
    profile = harmonic.learning_rate((0.2, 3.0, 0.5))
    assert isinstance(profile, Harmonic) and (profile.harmonic_scale, profile.harmonic_offset) == (1.5, 0.5)
    assert harmonic.names == ("clip", "initial_learning_rate", "harmonic_offset")
    assert harmonic.hyperparameters((0.2, 3.0, 0.5)) == {"schedule": "harmonic", "clip": 0.2,
                                                         "initial_learning_rate": 3.0, "harmonic_scale": 1.5,
                                                         "harmonic_offset": 0.5}
    assert harmonic.shape_integral(0.5) == pytest.approx(0.5 * math.log(3.0), rel=1e-12)  # τ ln(1 + 1/τ)
    assert tuning.Candidate("polynomial", 2.0).shape_integral() == pytest.approx(1.0 / 3.0, rel=1e-12)
    assert tuning.Candidate("constant", 0.0).hyperparameters((0.1, 4.0))["schedule_exponent"] == 0.0
    names = [c.name for c in tuning.candidates(("constant", "polynomial", "harmonic"))]
    assert names == ["polynomial (schedule_exponent 1)", "polynomial (schedule_exponent 0.5)",
                     "polynomial (schedule_exponent 2)", "constant", "harmonic"]


def test_the_tuners_and_the_staged_search_evaluate_one_objective():
    """Every value a tuner records is the planner's objective at the same point, to the last bit, on the real ODE."""
    from privdyn.spectra import Spectrum, isotropic_target

    spectrum = Spectrum.identity(20)
    setting = dict(spectrum=spectrum, target_projections=isotropic_target(spectrum), aspect_ratio=0.05, rho=1.0,
                   label_noise=0.5, rtol=1e-6, grid_points=3, starts=0)
    ode = tuning.Objective(spectrum, isotropic_target(spectrum), 0.05, 0.5, 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tuning.OptimumAtBoundWarning)
        poly = tuning.tune_polynomial(**setting, schedule_exponent=1.0, clip=0.2)
        harm = tuning.tune_harmonic(**setting, clip=0.2, initial_learning_rate_bounds=(0.5, 40.0),
                                    harmonic_offset_bounds=(0.1, 10.0))
    family = tuning.Candidate("polynomial", 1.0)
    assert [ode(family, (0.2, rate), 1.0) for rate in poly.column("initial_learning_rate")] == poly.values.tolist()
    harmonic = tuning.Candidate("harmonic", None)
    assert [ode(harmonic, (0.2, *point), 1.0) for point in harm.points.tolist()] == harm.values.tolist()
    found = tuning.search(ode, [family], 1.0, 0.05)[0]
    assert found.candidate == family and found.search_risk == ode(family, found.point, 1.0)
    assert found.search_risk <= poly.value * (1.0 + 1e-12)  # the search also moves c; the grid held c = 0.2
