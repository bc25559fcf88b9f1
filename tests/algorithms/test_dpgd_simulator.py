"""Tests of privdyn.algorithms.dpgd (Algorithm 1 of Bombari, Luo, Seroussi, Mondelli, arXiv 2505.16329v2).

The oracle is a naive per-trial, per-step loop written here from the paper's pseudo-code. Monte-Carlo checks use
z = 5 standard errors (a false-failure rate of about 6e-7 per check) with fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from privdyn.algorithms import dpgd as dpgd_module
from privdyn.algorithms.dpgd import DPGDHyperparameters, DPGDSimulation, dpgd, simulate_dpgd
from privdyn.data.real import ArrayDataset, load_digits_1_vs_7, split_and_standardize
from privdyn.data.synthetic import SyntheticDesign
from privdyn.privacy.iteration import noise_calibration
from privdyn.rng import generator
from privdyn.schedules import Constant, Custom, Harmonic, OutsideTheoryWarning, Polynomial

Z = 5.0
SEED, KEY = 3, "test-dpgd"


def naive_trial(x_all, y_all, row, seed, key, run):
    """Algorithm 1 for one trial: returns θ_0..θ_n (n+1, d) and θ_n before its final noise."""
    noise_stream = generator(seed, key, run_index=run, purpose="noise")
    n, d = x_all.shape
    eta = row.learning_rate.step_sizes(n)
    sigma = noise_calibration(eta, rho=row.rho)  # from the uncapped η_k
    big_c = row.clip * math.sqrt(d)
    theta = np.zeros(d)
    path = [theta]
    for k in range(n):
        x, y = x_all[k], y_all[k]
        gradient = (x @ theta - y) * x
        norm = np.linalg.norm(gradient)
        if norm > big_c:
            gradient = gradient * (big_c / norm)
        step = min(eta[k], 2.0 / (x @ x))
        b = noise_stream.standard_normal(d)
        theta = theta - step * gradient
        before_noise = theta
        if sigma[k] > 0:
            theta = theta + 2.0 * big_c * sigma[k] * b
        path.append(theta)
    return np.array(path), before_noise


def synthetic_data(design, n, run, seed=SEED, key=KEY):
    return design.sample(n, generator(seed, key, run_index=run, purpose="data"))


ROWS = (
    DPGDHyperparameters(clip=0.3, learning_rate=Constant(4.0), rho=0.5),            # clipping active, α = 0
    DPGDHyperparameters(clip=1.0, learning_rate=Polynomial(3.0, 0.5), rho=1.0),     # α = ½
    DPGDHyperparameters(clip=2.0, learning_rate=Harmonic(2.0, 0.3), rho=0.2),       # harmonic: final jump
    DPGDHyperparameters(clip=0.5, learning_rate=Polynomial(60.0, 1.0), rho=2.0),    # the cap 2/‖x‖² binds early
)


# --- exactness against the naive loop ------------------------------------------------------------------------------


def test_simulator_equals_the_naive_loop():
    design = SyntheticDesign.uniform(7, label_noise=0.3, rng=np.random.default_rng(0))  # d = 7: odd tail in the dot
    n, runs = 60, 3
    times = [0.0, 0.1, 0.5, 59 / 60, 1.0]
    result = simulate_dpgd(data=design, rows=ROWS, num_runs=runs, seed=SEED, unit_key=KEY, n=n,
                           record_times=times, return_final_iterates=True)
    assert isinstance(result, DPGDSimulation)
    np.testing.assert_array_equal(result.steps, [0, 6, 30, 59, 60])
    np.testing.assert_allclose(result.times, result.steps / n)
    assert result.risk.shape == (4, runs, 5) and result.final_private_risk.shape == (4, runs)
    assert result.quantity == "excess_risk" and result.dataset == "synthetic" and result.aspect_ratio == 7 / 60
    for i in range(runs):
        x, y = synthetic_data(design, n, i)
        for r, row in enumerate(ROWS):
            path, before_noise = naive_trial(x, y, row, SEED, KEY, i)
            np.testing.assert_allclose(result.final_iterates[r, i], path[-1], rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(result.risk[r, i], design.excess_risk(path[result.steps]), rtol=1e-11)
            assert result.penultimate_risk[r, i] == pytest.approx(design.excess_risk(path[-2]), rel=1e-11)
            assert result.risk_before_final_noise[r, i] == pytest.approx(design.excess_risk(before_noise), rel=1e-11)
            assert result.final_private_risk[r, i] == pytest.approx(design.excess_risk(path[-1]), rel=1e-11)
    assert result.initial_risk == pytest.approx(design.initial_risk)


def test_dpgd_on_given_data_equals_the_naive_loop_and_the_simulator_bit_for_bit():
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((50, 9)), rng.standard_normal(50)
    row = ROWS[2]
    path, _ = naive_trial(x, y, row, SEED, KEY, 1)
    theta = dpgd(x, y, clip=row.clip, learning_rate=row.learning_rate, rho=row.rho,
                 rng=generator(SEED, KEY, run_index=1, purpose="noise"))
    np.testing.assert_allclose(theta, path[-1], rtol=1e-12, atol=1e-14)
    dataset = ArrayDataset(x, y, x[:5], y[:5], order="fixed")
    result = simulate_dpgd(data=dataset, rows=[ROWS[0], row], num_runs=2, seed=SEED, unit_key=KEY, n=50,
                           return_final_iterates=True)
    np.testing.assert_array_equal(result.final_iterates[1, 1], theta)


# --- common random numbers and stream independence -----------------------------------------------------------------


def test_run_i_does_not_depend_on_the_number_of_runs_or_on_the_rows():
    design = SyntheticDesign.isotropic(10, label_noise=0.3)
    common = dict(data=design, seed=SEED, unit_key=KEY, n=80, record_times=[0.5, 1.0], return_final_iterates=True)
    full = simulate_dpgd(rows=ROWS, num_runs=4, **common)
    single = simulate_dpgd(rows=ROWS, num_runs=1, first_run=2, **common)
    np.testing.assert_array_equal(single.final_iterates[:, 0], full.final_iterates[:, 2])
    np.testing.assert_array_equal(single.risk[:, 0], full.risk[:, 2])
    # a different row set, in a different order: each row's runs are unchanged
    subset = simulate_dpgd(rows=(ROWS[3], ROWS[1]), num_runs=3, **common)
    np.testing.assert_array_equal(subset.final_iterates[0], full.final_iterates[3, :3])
    np.testing.assert_array_equal(subset.final_iterates[1], full.final_iterates[1, :3])
    np.testing.assert_array_equal(subset.final_private_risk[1], full.final_private_risk[1, :3])


def test_each_row_of_a_batch_equals_the_row_simulated_alone():
    # Nine rows (the kernel's groups of four rows plus a remainder), sharing profiles and rho (one calibration for
    # equal (learning_rate, rho)), one without privacy noise, d = 7 (a dot product with a tail): every row's numbers
    # are those of the row simulated alone, i.e. of dpgd() on the run's data and noise.
    design = SyntheticDesign.power_law(7, power_law_exponent=0.5, target_exponent=0.2, label_noise=0.3)
    rows = [DPGDHyperparameters(clip=clip, learning_rate=Polynomial(lr, 0.5), rho=0.5)
            for clip in (0.1, 1.0) for lr in (2.0, 40.0)]
    rows += [rows[0], ROWS[0], ROWS[2], DPGDHyperparameters(clip=0.7, learning_rate=Polynomial(2.0, 0.5), rho=math.inf),
             DPGDHyperparameters(clip=0.7, learning_rate=Polynomial(2.0, 0.5), rho=0.5)]
    common = dict(data=design, num_runs=2, seed=SEED, unit_key=KEY, n=120, record_times=[0.5, 1.0],
                  return_final_iterates=True)
    batch = simulate_dpgd(rows=rows, **common)
    for r, row in enumerate(rows):
        alone = simulate_dpgd(rows=[row], **common)
        for field in ("risk", "penultimate_risk", "risk_before_final_noise", "final_private_risk", "final_iterates"):
            np.testing.assert_array_equal(getattr(batch, field)[r], getattr(alone, field)[0])


def test_rows_share_data_and_noise_vectors():
    # Rows differing only in rho see the same x_k and b_k. Without clipping (C far above |r|·‖x‖) the iterates are
    # affine in the noise, so halving rho exactly doubles the deviation from the non-private row.
    design = SyntheticDesign.isotropic(5, label_noise=0.3)
    rows = [DPGDHyperparameters(clip=100.0, learning_rate=Polynomial(1.0, 0.5), rho=rho)
            for rho in (1.0, 0.5, math.inf)]
    result = simulate_dpgd(data=design, rows=rows, num_runs=2, seed=SEED, unit_key=KEY, n=400,
                           return_final_iterates=True)
    deviation_1 = result.final_iterates[0] - result.final_iterates[2]
    deviation_2 = result.final_iterates[1] - result.final_iterates[2]
    assert np.all(np.abs(deviation_1) > 1e-3)
    np.testing.assert_allclose(deviation_2, 2 * deviation_1, rtol=1e-9)


def test_reproducible_from_the_seed_and_different_across_seeds_and_runs():
    design = SyntheticDesign.isotropic(6, label_noise=0.3)
    common = dict(data=design, rows=ROWS[:2], num_runs=3, n=30, record_times=1.0)
    a = simulate_dpgd(seed=1, unit_key="u", **common)
    b = simulate_dpgd(seed=1, unit_key="u", **common)
    c = simulate_dpgd(seed=2, unit_key="u", **common)
    d = simulate_dpgd(seed=1, unit_key="v", **common)
    np.testing.assert_array_equal(a.risk, b.risk)
    assert not np.any(a.risk == c.risk) and not np.any(a.risk == d.risk)
    assert len(np.unique(a.risk[0, :, 0])) == 3


def test_block_boundaries_and_prefixes_do_not_change_the_numbers(monkeypatch):
    design = SyntheticDesign.uniform(8, label_noise=0.3)
    common = dict(data=design, rows=ROWS, num_runs=2, seed=SEED, unit_key=KEY, n=50)
    reference = simulate_dpgd(record_times=[0.3, 1.0], return_final_iterates=True, **common)
    monkeypatch.setattr(dpgd_module, "_MAX_BLOCK", 7)
    blocked = simulate_dpgd(record_times=[0.3, 1.0], return_final_iterates=True, **common)
    for field in ("risk", "penultimate_risk", "risk_before_final_noise", "final_private_risk", "final_iterates"):
        np.testing.assert_array_equal(getattr(blocked, field), getattr(reference, field))
    prefix = simulate_dpgd(num_steps=15, record_times=[0.3], **common)
    np.testing.assert_array_equal(prefix.risk[..., 0], reference.risk[..., 0])
    assert prefix.num_steps == 15 and prefix.final_private_risk is None and prefix.penultimate_risk is None


# --- the algorithm's defining features ------------------------------------------------------------------------------


def test_huge_clip_is_plain_one_pass_sgd_with_the_cap():
    design = SyntheticDesign.isotropic(12, label_noise=0.3)
    n = 40
    rows = [DPGDHyperparameters(clip=c, learning_rate=Constant(30.0), rho=math.inf) for c in (1e12, math.inf)]
    result = simulate_dpgd(data=design, rows=rows, num_runs=2, seed=SEED, unit_key=KEY, n=n,
                           return_final_iterates=True)
    np.testing.assert_array_equal(result.final_iterates[0], result.final_iterates[1])
    for i in range(2):
        x, y = synthetic_data(design, n, i)
        theta = np.zeros(12)
        capped = 0
        for k in range(n):
            step = min(30.0 / n, 2.0 / (x[k] @ x[k]))
            capped += step < 30.0 / n
            theta = theta - step * (x[k] @ theta - y[k]) * x[k]
        assert capped > 0  # the cap binds in this setting (η = 0.75 > 2/‖x‖² ≈ 1/6)
        np.testing.assert_allclose(result.final_iterates[0, i], theta, rtol=1e-12, atol=1e-14)


def test_noise_is_calibrated_from_the_uncapped_steps():
    # α = 0 with η̃(0)/n far above 2/‖x‖²: every step is capped, yet σ_n = η_n/ρ uses the uncapped η_n. Without the
    # final noise the private and non-private runs coincide, so their difference is exactly 2·C·σ_n·b_n.
    d, n, eta0, clip, rho = 10, 50, 500.0, 0.4, 0.3
    design = SyntheticDesign.isotropic(d, label_noise=0.3)
    rows = [DPGDHyperparameters(clip=clip, learning_rate=Constant(eta0), rho=r) for r in (rho, math.inf)]
    result = simulate_dpgd(data=design, rows=rows, num_runs=2, seed=SEED, unit_key=KEY, n=n,
                           return_final_iterates=True)
    for i in range(2):
        x, _ = synthetic_data(design, n, i)
        assert np.all(eta0 / n > 2.0 / np.sum(x**2, axis=1))  # the cap binds at every step
        b_n = generator(SEED, KEY, run_index=i, purpose="noise").standard_normal((n, d))[-1]
        expected = 2.0 * clip * math.sqrt(d) * (eta0 / n) / rho * b_n
        np.testing.assert_allclose(result.final_iterates[0, i] - result.final_iterates[1, i], expected,
                                   rtol=1e-9, atol=1e-12)


def test_final_noise_jump_has_its_exact_expectation():
    # θ_n = θ_n⁻ + 2Cσ_n b with b independent of θ_n⁻, so E[R(θ_n) − R(θ_n⁻)] = ½E‖Σ^{1/2}2Cσ_n b‖² = 2C²σ_n² tr Σ
    # (= 2c²η̃(1)²γ²/ρ² when tr Σ = d: Proposition 4.4)
    d, n, runs = 20, 100, 2000
    design = SyntheticDesign.uniform(d, label_noise=0.3)
    rows = [DPGDHyperparameters(clip=1.0, learning_rate=Constant(3.0), rho=1.0),
            DPGDHyperparameters(clip=0.2, learning_rate=Harmonic(1.0, 0.5), rho=0.3)]
    result = simulate_dpgd(data=design, rows=rows, num_runs=runs, seed=SEED, unit_key="jump", n=n)
    jumps = result.final_private_risk - result.risk_before_final_noise
    for r, row in enumerate(rows):
        sigma_n = row.noise_multipliers(n)[-1]
        expected = 2.0 * row.clip_threshold(d) ** 2 * sigma_n**2 * design.spectrum.trace
        gamma = d / n
        assert expected == pytest.approx(2 * row.clip**2 * row.learning_rate.end_value**2 * gamma**2 / row.rho**2)
        standard_error = jumps[r].std(ddof=1) / math.sqrt(runs)
        assert abs(jumps[r].mean() - expected) <= Z * standard_error, (jumps[r].mean(), expected, standard_error)


def test_isotropic_output_perturbation_matches_the_spec_ode_reference():
    # spec seed-003 §5, Figure 1 panel 1 (γ = 0.1, ρ = 1, ζ = 0.3, η̃(0) = 3, c = 1, α = 0): ODE R(0.5) = 0.0624,
    # R(1) = 0.0122 and final private risk 0.1922. At d = 100 the mean over runs sits within sampling error plus a
    # finite-d allowance (the spec measured ~1% bias at d = 200; 5% relative is allowed here).
    design = SyntheticDesign.isotropic(100, label_noise=0.3)
    row = DPGDHyperparameters(clip=1.0, learning_rate=Constant(3.0), rho=1.0)
    runs = 40
    result = simulate_dpgd(data=design, rows=[row], num_runs=runs, seed=SEED, unit_key="fig1", aspect_ratio=0.1,
                           record_times=[0.5])
    assert result.n == 1000
    for values, ode in ((result.risk[0, :, 0], 0.0624), (result.penultimate_risk[0], 0.0122),
                        (result.final_private_risk[0], 0.1922)):
        standard_error = values.std(ddof=1) / math.sqrt(runs)
        assert abs(values.mean() - ode) <= Z * standard_error + 0.05 * ode, (values.mean(), ode, standard_error)


# --- real data ------------------------------------------------------------------------------------------------------


def test_real_data_runs_use_each_sample_once_and_report_the_validation_loss():
    features, labels = load_digits_1_vs_7()
    split = split_and_standardize(features, labels, train_size=None, normalization_size=100, validation_size=61,
                                  rng=np.random.default_rng(0), dataset="digits_1_vs_7")
    dataset = split.to_dataset()
    rows = [DPGDHyperparameters(clip=0.5, learning_rate=Polynomial(2.0, 0.5), rho=1.0)]
    result = simulate_dpgd(data=dataset, rows=rows, num_runs=3, seed=SEED, unit_key=KEY, n=200,
                           record_times=[0.0, 1.0], return_final_iterates=True)
    assert result.dataset == "digits_1_vs_7" and result.quantity == "validation_loss"
    assert result.risk[0, 0, 0] == pytest.approx(0.5 * np.mean(dataset.validation_labels**2))
    np.testing.assert_allclose(result.final_private_risk, dataset.validation_loss(result.final_iterates))
    np.testing.assert_array_equal(result.risk[..., 1], result.final_private_risk)
    # run i processes the first n samples of its own permutation of the training set
    order = generator(SEED, KEY, run_index=1, purpose="data").permutation(dataset.num_train)[:200]
    theta = dpgd(dataset.train_features[order], dataset.train_labels[order], clip=0.5,
                 learning_rate=Polynomial(2.0, 0.5), rho=1.0, rng=generator(SEED, KEY, run_index=1, purpose="noise"))
    np.testing.assert_array_equal(result.final_iterates[0, 1], theta)
    assert result.final_private_risk.mean() < 0.5  # better than predicting 0
    with pytest.raises(ValueError, match="n must be <="):
        simulate_dpgd(data=dataset, rows=rows, num_runs=1, seed=0, n=dataset.num_train + 1)


# --- bad input ------------------------------------------------------------------------------------------------------


def test_increasing_schedule_is_rejected_naming_the_row():
    rising = Custom(lambda t: 1.0 + t, check_non_increasing=False)
    row = DPGDHyperparameters(clip=1.0, learning_rate=rising, rho=1.0)
    design = SyntheticDesign.isotropic(3, label_noise=0.3)
    with pytest.raises(ValueError, match=r"rows\[1\]\.learning_rate.*step_sizes.*index 1"):
        simulate_dpgd(data=design, rows=[ROWS[0], row], num_runs=1, seed=0, n=10)
    with pytest.raises(ValueError, match="step_sizes"):
        dpgd(np.ones((4, 3)), np.ones(4), clip=1.0, learning_rate=rising, rho=1.0, rng=np.random.default_rng(0))


@pytest.mark.parametrize("name, kwargs", [
    ("clip", dict(clip=0.0)), ("clip", dict(clip=-1.0)), ("clip", dict(clip=math.nan)),
    ("rho", dict(rho=0.0)), ("rho", dict(rho=-0.1)), ("clip=inf", dict(clip=math.inf)),
])
def test_bad_hyperparameters(name, kwargs):
    values = dict(clip=1.0, learning_rate=Constant(1.0), rho=1.0) | kwargs
    with pytest.raises(ValueError, match=name):
        DPGDHyperparameters(**values)


def test_bad_simulation_arguments():
    design = SyntheticDesign.isotropic(4, label_noise=0.3)
    ok = dict(data=design, rows=ROWS[:1], num_runs=1, seed=0)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        simulate_dpgd(n=0, **ok)
    for gamma in (0.0, -0.5):
        with pytest.raises(ValueError, match="aspect_ratio"):
            simulate_dpgd(aspect_ratio=gamma, **ok)
    with pytest.raises(ValueError, match="exactly one of n and aspect_ratio"):
        simulate_dpgd(n=10, aspect_ratio=0.4, **ok)
    with pytest.raises(ValueError, match="num_runs"):
        simulate_dpgd(**(ok | dict(num_runs=0)), n=10)
    with pytest.raises(ValueError, match="record_times"):
        simulate_dpgd(n=10, record_times=[1.5], **ok)
    with pytest.raises(ValueError, match="record_times"):
        simulate_dpgd(n=10, num_steps=5, record_times=[0.9], **ok)
    with pytest.raises(ValueError, match="num_steps"):
        simulate_dpgd(n=10, num_steps=11, **ok)
    with pytest.raises(ValueError, match="rows"):
        simulate_dpgd(n=10, **(ok | dict(rows=[])))
    with pytest.raises(TypeError, match="rows"):
        simulate_dpgd(n=10, **(ok | dict(rows=[1.0])))
    with pytest.raises(TypeError, match="data"):
        simulate_dpgd(n=10, **(ok | dict(data=np.zeros((3, 4)))))
    with pytest.raises(ValueError, match="label_noise"):
        SyntheticDesign.isotropic(4, label_noise=-1.0)


def test_zero_label_noise_runs_with_a_warning():
    with pytest.warns(OutsideTheoryWarning, match="label_noise"):
        design = SyntheticDesign.isotropic(4, label_noise=0.0)
    result = simulate_dpgd(data=design, rows=ROWS[:2], num_runs=2, seed=0, n=20, record_times=1.0)
    assert np.all(np.isfinite(result.risk))


def test_a_single_step_run():
    design = SyntheticDesign.isotropic(3, label_noise=0.3)
    result = simulate_dpgd(data=design, rows=ROWS[:1], num_runs=2, seed=0, n=1, record_times=[0.0, 1.0])
    np.testing.assert_array_equal(result.penultimate_risk, design.initial_risk)
    np.testing.assert_array_equal(result.risk[..., 1], result.final_private_risk)


def test_hyperparameters_expose_their_schedule_and_privacy():
    row = DPGDHyperparameters(clip=0.5, learning_rate=Harmonic(2.0, 0.3), rho=0.2)
    eta = row.step_sizes(100)
    np.testing.assert_array_equal(eta, Harmonic(2.0, 0.3).step_sizes(100))
    np.testing.assert_array_equal(row.noise_multipliers(100), noise_calibration(eta, rho=0.2))
    assert row.clip_threshold(16) == 2.0
    privacy = row.privacy(100)
    assert privacy.quantity == "rho" and privacy.value == pytest.approx(0.2, rel=1e-12)
    with pytest.raises(TypeError, match="learning_rate"):
        DPGDHyperparameters(clip=1.0, learning_rate=lambda t: 1.0, rho=1.0)
