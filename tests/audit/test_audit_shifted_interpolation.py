"""The ``langevin-quadratic-shifted-interpolation`` row: DPLogisticRegression's accountant (NoisyGDMechanism,
shifted interpolation) audited on its worst case, the quadratic, where the output law is exactly Gaussian."""

from privdyn.audit.core import DEFAULT_CONFIDENCE, DEFAULT_RUNS, audit_mechanism
from privdyn.audit.mechanisms import mechanism

NAME = "langevin-quadratic-shifted-interpolation"


def test_tight_and_without_violation_at_the_contract() -> None:
    """The bound ignores only the start's variance, which the steps shrink by c^(2K) = 0.9^100: the audited value
    (the ε of the exact law, checked against the runs) is within 10⁻³ of the reported one, and never above it."""
    row = audit_mechanism(mechanism(NAME), runs=DEFAULT_RUNS, confidence=DEFAULT_CONFIDENCE, seed=1)
    assert row.method == "exact_gaussian" and row.law_check and not row.violation, row
    assert 0.999 <= row.ratio <= 1.0 and row.tight, row


def test_three_percent_less_noise_is_a_violation() -> None:
    row = audit_mechanism(mechanism(NAME, noise_factor=0.97), runs=DEFAULT_RUNS, confidence=DEFAULT_CONFIDENCE,
                          seed=0)
    assert row.violation and row.law_check, row


def test_reported_is_the_estimators_accountant_and_below_corollary_1() -> None:
    from privdyn.privacy.correlated_allocation import gaussian_epsilon
    from privdyn.sklearn._logistic import account

    mech = mechanism(NAME)
    reported = mech.reported()
    accounted = account(n=mech.n, num_steps=mech.num_steps, step_size=mech.step_size, noise_scale=mech.noise_scale,
                        strong_convexity=1.0, smoothness=1.0, sensitivity=mech.sensitivity, delta=mech.delta)
    assert reported.value == accounted["epsilon"] and accounted["bound"] == "shifted_interpolation"
    law = mech.gaussian_law()
    exact = gaussian_epsilon(abs(law.neighbour_mean - law.mean) / law.std, mech.delta)
    assert exact <= reported.value <= exact * 1.001
    # Corollary 1 on the same runs: the estimator's optimal conversion, and the langevin-quadratic row's
    assert reported.value < accounted["corollary_1_epsilon"] <= mechanism("langevin-quadratic").reported().value
