"""DP-SGD with correlated noise (Algorithm 1 of the kan paper, arXiv 2605.12648): exact identities, clipping,
projection, samplers, coupling and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privdyn.algorithms.dpsgd import DPSGD, dpsgd, sample_batches
from privdyn.models.bspline import bspline_bounds
from privdyn.models.kan import KAN
from privdyn.models.logistic import LogisticRegression
from privdyn.privacy.correlated import BufferedToeplitz, Independent, LambdaCGD, step_normals
from privdyn.rng import counter_stream


def _problem(n=40, d=3, width=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    x *= (rng.uniform(0.2, 1.0, n) / np.linalg.norm(x, axis=1))[:, None]
    y = np.where(x[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    model = KAN.initialize(d=d, width=width, rng=rng, grid_size=4, activation="tanh")
    return model, model.initial_parameters(rng), x, y


def _normals(source, steps, shape):
    """Z_1, ..., Z_steps exactly as every noise stream of ``source`` draws them (Independent: xi_t = Z_t)."""
    stream = Independent().stream(shape, source)
    return np.stack([stream.next().copy() for _ in range(steps)])


def _replayed_batches(sampler, n, batch_size, seed, count):
    batches = sample_batches(sampler, n=n, batch_size=batch_size, rng=np.random.default_rng(seed))
    return [next(batches) for _ in range(count)]


@pytest.mark.parametrize("noise_correlation", [0.0, 0.6])
def test_shifted_iterate_recursion_is_exact(noise_correlation):
    # Section 4.3 / Appendix C.1: with clipping and projection inactive, U_t = W_t + eta c_priv Z_t obeys
    # U_t = U_{t-1} - eta (grad L_B(W_{t-1}) + (1 - lambda) c_priv Z_{t-1}): the fresh noise cancels exactly.
    model, w0, x, y = _problem()
    eta, batch, clip, kappa, steps = 0.7, 8, 1e6, 2e-6, 12
    source = step_normals(4, "shifted")
    res = dpsgd(model, w0, x, y, num_steps=steps, step_size=eta, batch_size=batch, clip=clip, noise_multiplier=kappa,
                noise_correlation=noise_correlation, sampling_rng=np.random.default_rng(9), noise_rng=source,
                keep_iterates=True)
    assert res.num_clipped == 0 and not res.projection_triggered
    c_priv = clip * kappa / batch
    z = np.concatenate([np.zeros((1,) + w0.shape), _normals(source, steps, w0.shape)])
    batches = _replayed_batches("fixed_size", x.shape[0], batch, 9, steps)
    w = res.iterates
    for t in range(1, steps + 1):
        u_prev, u_t = w[t - 1] + eta * c_priv * z[t - 1], w[t] + eta * c_priv * z[t]
        grad = model.gradient(w[t - 1], x[batches[t - 1]], y[batches[t - 1]])
        expected = u_prev - eta * (grad + (1 - noise_correlation) * c_priv * z[t - 1])
        np.testing.assert_allclose(u_t, expected, rtol=0, atol=1e-12)


def test_noise_follows_any_strategy_and_scale():
    # With all-zero inputs every per-example gradient vanishes, so W_t - W_0 is exactly minus the accumulated noise
    # -eta c_priv sum_{s<=t} (C^{-1} Z)_s, with c_priv = clip * noise_multiplier / batch_size (noise on the average).
    model = LogisticRegression(d=4)
    x = np.zeros((10, 4))
    y = np.ones(10)
    source = step_normals(1, "strategy")
    steps, eta, clip, kappa, batch = 6, 0.3, 2.0, 1.5, 5
    for strategy in (Independent(), LambdaCGD(0.4), BufferedToeplitz([0.9, 0.5], [0.2, 0.1])):
        res = dpsgd(model, np.zeros((1, 4)), x, y, num_steps=steps, step_size=eta, batch_size=batch, clip=clip,
                    noise_multiplier=kappa, strategy=strategy, sampling_rng=np.random.default_rng(0),
                    noise_rng=source, keep_iterates=True)
        z = _normals(source, steps, 4)
        noise = strategy.noise_matrix(steps) @ z
        expected = -eta * clip * kappa / batch * np.cumsum(noise, axis=0)
        np.testing.assert_allclose(res.iterates[1:, 0], expected, rtol=1e-12, atol=1e-15)


def test_noise_source_may_be_a_counter_stream_and_regeneration_is_bit_identical():
    model, w0, x, y = _problem()
    common = dict(num_steps=8, step_size=0.5, batch_size=10, clip=0.05, noise_multiplier=1.3, noise_correlation=0.7,
                  projection_radius=3.0)
    stream = counter_stream(2, "regen")
    buffered = dpsgd(model, w0, x, y, sampling_rng=np.random.default_rng(5), noise_rng=stream, **common)
    regenerated = dpsgd(model, w0, x, y, sampling_rng=np.random.default_rng(5), noise_rng=stream,
                        regenerate=True, **common)
    np.testing.assert_array_equal(buffered.params, regenerated.params)
    assert buffered.num_clipped > 0


def test_clipped_step_matches_dense_per_example_clipping():
    model, w0, x, y = _problem(n=30)
    clip, eta, batch = 0.02, 0.9, 12
    res = dpsgd(model, w0, x, y, num_steps=3, step_size=eta, batch_size=batch, clip=clip,
                sampling_rng=np.random.default_rng(3), keep_iterates=True)
    batches = _replayed_batches("fixed_size", 30, batch, 3, 3)
    clipped_total = 0
    for t in range(1, 4):
        grads = [model.single_example_gradient(res.iterates[t - 1], x[i], y[i]) for i in batches[t - 1]]
        norms = np.array([np.linalg.norm(g) for g in grads])
        clipped_total += int(np.sum(norms > clip))
        v = np.mean([g * min(1.0, clip / nrm) for g, nrm in zip(grads, norms, strict=True)], axis=0)
        np.testing.assert_allclose(res.iterates[t], res.iterates[t - 1] - eta * v, rtol=1e-13, atol=1e-15)
    assert res.num_clipped == clipped_total > 0
    assert res.num_examples == 3 * batch
    assert res.clip_fraction == pytest.approx(clipped_total / (3 * batch))


def test_clipping_never_acts_at_the_theorys_threshold():
    # |l'| <= 1 and ||grad f|| <= B'_s B_b B'_b p ||c|| / sqrt(m) (Lemma B.6; eq. (5) on the event E_delta), so
    # C_clip at that value never clips, whatever the iterate: the theory's no-clipping regime.
    model, w0, x, y = _problem()
    b, db, _ = bspline_bounds(grid_size=model.basis.grid_size)
    threshold = model.activation.first_derivative_bound * b * db * model.num_basis
    threshold *= np.linalg.norm(model.second_layer) / math.sqrt(model.width)
    res = dpsgd(model, w0, x, y, num_steps=30, step_size=3.0, batch_size=10, clip=threshold, noise_multiplier=3.0,
                noise_rng=step_normals(0, "theory"), sampling_rng=np.random.default_rng(0), log_every=10)
    assert res.num_clipped == 0 and np.all(res.log.clip_fraction[1:] == 0)
    smaller = dpsgd(model, w0, x, y, num_steps=30, step_size=3.0, batch_size=10, clip=threshold / 100,
                    noise_multiplier=3.0, noise_rng=step_normals(0, "theory"),
                    sampling_rng=np.random.default_rng(0), log_every=10)
    assert smaller.num_clipped > 0


def test_non_private_special_case_is_minibatch_sgd_and_full_batch_is_gd():
    model, w0, x, y = _problem()
    res = dpsgd(model, w0, x, y, num_steps=5, step_size=0.4, batch_size=40, sampling_rng=np.random.default_rng(0),
                keep_iterates=True)
    w = w0.copy()
    for t in range(1, 6):
        w = w - 0.4 * model.gradient(w, x, y)  # B = n: full-batch gradient descent
        np.testing.assert_allclose(res.iterates[t], w, rtol=1e-13, atol=1e-15)
    assert res.clip_fraction == 0.0 and not res.projection_triggered


def test_projection_keeps_iterates_in_the_ball_and_is_logged():
    model, w0, x, y = _problem()
    radius = 0.05
    res = dpsgd(model, w0, x, y, num_steps=20, step_size=2.0, batch_size=10, clip=1.0, noise_multiplier=2.0,
                projection_radius=radius, sampling_rng=np.random.default_rng(1),
                noise_rng=step_normals(0, "proj"), keep_iterates=True, log_every=5)
    dist = np.linalg.norm((res.iterates - w0).reshape(21, -1), axis=1)
    assert np.all(dist <= radius * (1 + 1e-12))
    assert res.projection_triggered and res.num_projections == int(np.sum(np.isclose(dist[1:], radius, rtol=1e-12)))
    np.testing.assert_allclose(res.log.distance, dist[res.log.step], rtol=1e-12)
    assert res.log.projection_fraction[-1] == 1.0


def test_projection_formula_when_active():
    model, w0, x, y = _problem()
    trainer = DPSGD(model, w0, x, y, step_size=5.0, batch_size=40, projection_radius=1e-3,
                    sampling_rng=np.random.default_rng(0))
    v = w0 - 5.0 * model.gradient(w0, x, y)
    trainer.step()
    expected = w0 + (v - w0) * min(1.0, 1e-3 / np.linalg.norm(v - w0))
    np.testing.assert_allclose(trainer.params, expected, rtol=1e-13, atol=1e-15)
    assert trainer.last_projected


def test_logs_and_averaged_training_loss():
    model, w0, x, y = _problem()
    res = dpsgd(model, w0, x, y, num_steps=10, step_size=0.5, batch_size=8, clip=0.1, noise_multiplier=0.5,
                noise_rng=step_normals(3, "log"), sampling_rng=np.random.default_rng(2), keep_iterates=True)
    losses = np.array([model.loss(w, x, y) for w in res.iterates])
    np.testing.assert_allclose(res.log.train_loss, losses, rtol=1e-13)
    assert res.averaged_train_loss == pytest.approx(losses[:10].mean(), rel=1e-13)
    assert math.isnan(res.log.batch_loss[0]) and math.isnan(res.log.clip_fraction[0])
    assert np.all((res.log.clip_fraction[1:] >= 0) & (res.log.clip_fraction[1:] <= 1))
    thin = dpsgd(model, w0, x, y, num_steps=10, step_size=0.5, batch_size=8, clip=0.1, noise_multiplier=0.5,
                 noise_rng=step_normals(3, "log"), sampling_rng=np.random.default_rng(2), log_every=4)
    np.testing.assert_array_equal(thin.log.step, [0, 4, 8, 10])
    np.testing.assert_array_equal(thin.params, res.params)
    np.testing.assert_allclose(thin.log.train_loss, losses[[0, 4, 8, 10]], rtol=1e-13)


def test_runs_are_pure_functions_of_their_streams():
    # Coupled runs (Appendix C.2) need the batches and Z_t to be functions of the streams only: the same streams give
    # the same run bit for bit, and changing one stream changes the run.
    model, w0, x, y = _problem()
    kw = dict(num_steps=6, step_size=0.5, batch_size=10, clip=0.5, noise_multiplier=0.8, noise_correlation=0.5)

    def run(noise_key, sampling_seed):
        return dpsgd(model, w0, x, y, noise_rng=step_normals(8, noise_key),
                     sampling_rng=np.random.default_rng(sampling_seed), **kw).params

    base = run("couple", 4)
    np.testing.assert_array_equal(base, run("couple", 4))
    assert not np.array_equal(base, run("other", 4))
    assert not np.array_equal(base, run("couple", 5))


def test_samplers():
    n, batch = 20, 5
    rng = np.random.default_rng(0)
    fixed = sample_batches("fixed_size", n=n, batch_size=batch, rng=rng)
    steps = 4000
    counts = np.zeros(n)
    for _ in range(steps):
        idx = next(fixed)
        assert idx.size == batch and np.unique(idx).size == batch
        counts[idx] += 1
    # inclusion counts ~ Binomial(steps, B/n): Bonferroni-corrected z at family-wise level 1e-6 over the n indices
    r = batch / n
    se = math.sqrt(steps * r * (1 - r))
    z = stats.norm.isf(1e-6 / (2 * n))
    assert np.all(np.abs(counts - steps * r) <= z * se)
    shuffle = sample_batches("shuffle", n=n, batch_size=6, rng=rng)
    epoch = np.concatenate([next(shuffle) for _ in range(3)])  # n // 6 = 3 batches per epoch, 2 dropped
    assert epoch.size == 18 and np.unique(epoch).size == 18
    poisson = sample_batches("poisson", n=n, batch_size=batch, rng=rng)
    sizes = np.array([next(poisson).size for _ in range(steps)])
    assert abs(sizes.mean() - batch) <= 5.0 * math.sqrt(n * r * (1 - r) / steps)


def test_without_replacement_batch_variance_lemma_b2():
    # Lemma B.2: E||mean_B - mean||^2 = (n - B)/(B (n - 1)) (1/n) sum ||x_i - mean||^2, by Monte Carlo (z = 5).
    rng = np.random.default_rng(1)
    n, batch, steps = 12, 4, 20000
    pts = rng.standard_normal((n, 2))
    exact = (n - batch) / (batch * (n - 1)) * np.mean(np.sum((pts - pts.mean(0)) ** 2, axis=1))
    gen = sample_batches("fixed_size", n=n, batch_size=batch, rng=rng)
    dev = np.array([np.sum((pts[next(gen)].mean(0) - pts.mean(0)) ** 2) for _ in range(steps)])
    assert abs(dev.mean() - exact) <= 5.0 * dev.std(ddof=1) / math.sqrt(steps)


def test_poisson_and_shuffle_train():
    model, w0, x, y = _problem()
    for sampler in ("poisson", "shuffle", "random_allocation"):
        res = dpsgd(model, w0, x, y, num_steps=30, step_size=1.0, batch_size=10, sampler=sampler,
                    sampling_rng=np.random.default_rng(0), log_every=30)
        assert res.log.train_loss[-1] < res.log.train_loss[0]


def test_empty_poisson_batches_still_add_noise():
    model, w0, x, y = _problem()
    trainer = DPSGD(model, w0, x, y, step_size=0.5, batch_size=1, clip=1.0, noise_multiplier=1.0, sampler="poisson",
                    sampling_rng=np.random.default_rng(0), noise_rng=step_normals(0, "empty"))
    sizes = []
    for _ in range(30):
        before = trainer.params.copy()
        trainer.step()
        sizes.append(trainer.last_batch_size)
        assert not np.array_equal(before, trainer.params)
    assert 0 in sizes and math.isnan(trainer.last_batch_loss) == (sizes[-1] == 0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"batch_size": 41}, ValueError, "batch_size must be <= n=40"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"step_size": 0.0}, ValueError, "step_size"),
        ({"clip": 0.0}, ValueError, "clip"),
        ({"clip": math.inf, "noise_multiplier": 1.0, "noise_rng": step_normals(0)}, ValueError, "clip must be"),
        ({"noise_multiplier": -1.0}, ValueError, "noise_multiplier"),
        ({"noise_multiplier": 1.0, "clip": 1.0}, ValueError, "noise_rng"),
        ({"noise_correlation": 1.0}, ValueError, "noise_correlation"),
        ({"noise_correlation": 0.5, "strategy": Independent()}, ValueError, "not both"),
        ({"projection_radius": -1.0}, ValueError, "projection_radius"),
        ({"sampler": "cyclic"}, ValueError, "sampler"),
        ({"num_steps": 0}, ValueError, "num_steps"),
        ({"log_every": 0}, ValueError, "log_every"),
        ({"noise_multiplier": 1.0, "clip": 1.0, "noise_rng": 3}, TypeError, "noise_rng"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    model, w0, x, y = _problem()
    args = dict(num_steps=2, step_size=0.1, batch_size=5, sampling_rng=np.random.default_rng(0)) | kwargs
    with pytest.raises(error, match=match):
        dpsgd(model, w0, x, y, **args)


def test_bad_data():
    model, w0, x, y = _problem()
    kw = dict(num_steps=1, step_size=0.1, batch_size=5, sampling_rng=np.random.default_rng(0))
    bad = x.copy()
    bad[3, 0] = np.inf
    with pytest.raises(ValueError, match="x must be finite"):
        dpsgd(model, w0, bad, y, **kw)
    with pytest.raises(ValueError, match=r"\|\|x\|\|_2 <= 1"):
        dpsgd(model, w0, 2 * x / np.linalg.norm(x, axis=1, keepdims=True), y, **kw)
    with pytest.raises(ValueError, match="y must hold labels"):
        dpsgd(model, w0, x, np.where(y > 0, 1.0, 0.0), **kw)
    with pytest.raises(ValueError, match="initial_params must have shape"):
        dpsgd(model, w0[:, 1:], x, y, **kw)
    with pytest.raises(ValueError, match="initial_params must be finite"):
        dpsgd(model, np.full_like(w0, np.nan), x, y, **kw)


def test_random_allocation_puts_each_example_in_exactly_one_uniform_step_per_epoch():
    """Balls-in-bins as the accountant assumes: t = ceil(n / B) steps per epoch, the batches of an epoch partition
    the examples, and each example's step is uniform over the t steps (chi-square over 3,000 epochs, level 1e-6
    Bonferroni over the n examples) and independent of another example's (their same-step rate is 1/t, z = 5)."""
    n, batch, epochs = 20, 6, 3_000
    steps = 4  # ceil(20 / 6)
    gen = sample_batches("random_allocation", n=n, batch_size=batch, rng=np.random.default_rng(3))
    slots = np.empty((epochs, n), dtype=int)
    for e in range(epochs):
        batches = [next(gen) for _ in range(steps)]
        together = np.concatenate(batches)
        assert together.size == n and np.unique(together).size == n
        for s, idx in enumerate(batches):
            slots[e, idx] = s
    threshold = stats.chi2.isf(1e-6 / n, steps - 1)
    for i in range(n):
        counts = np.bincount(slots[:, i], minlength=steps)
        assert np.sum((counts - epochs / steps) ** 2 / (epochs / steps)) <= threshold
    same = np.mean(slots[:, 0] == slots[:, 1])
    assert abs(same - 1 / steps) <= 5.0 * math.sqrt((1 / steps) * (1 - 1 / steps) / epochs)
    again = sample_batches("random_allocation", n=n, batch_size=batch, rng=np.random.default_rng(3))
    first = sample_batches("random_allocation", n=n, batch_size=batch, rng=np.random.default_rng(3))
    for _ in range(8):
        np.testing.assert_array_equal(next(again), next(first))


def test_cyclic_poisson_keeps_each_example_in_its_part_and_samples_at_rate_b_times_batch_over_n():
    """Cyclic Poisson as the accountant assumes: an example joins only the steps t = j mod b of its part j (one
    residue per example, fixed for the run), each of them with probability q = B b / n (pooled over the examples,
    z = 5; per example, two-sided binomial at level 1e-6 Bonferroni over n)."""
    n, batch, parts, cycles = 30, 4, 3, 2_000
    q = batch * parts / n
    gen = sample_batches("cyclic_poisson", n=n, batch_size=batch, rng=np.random.default_rng(5), num_partitions=parts)
    joins = np.zeros((parts, n), dtype=int)
    for step in range(parts * cycles):
        joins[step % parts, next(gen)] += 1
    part = np.argmax(joins, axis=0)
    assert np.all(np.count_nonzero(joins, axis=0) <= 1)  # no example joins steps of two residues
    counts = joins[part, np.arange(n)]
    assert abs(counts.sum() - n * cycles * q) <= 5.0 * math.sqrt(n * cycles * q * (1 - q))
    low, high = stats.binom.ppf([0.5e-6 / n, 1 - 0.5e-6 / n], cycles, q)
    assert np.all((counts >= low) & (counts <= high))
    again = sample_batches("cyclic_poisson", n=n, batch_size=batch, rng=np.random.default_rng(5), num_partitions=parts)
    first = sample_batches("cyclic_poisson", n=n, batch_size=batch, rng=np.random.default_rng(5), num_partitions=parts)
    for _ in range(7):
        np.testing.assert_array_equal(next(again), next(first))


def test_cyclic_poisson_parts_are_uniform_and_independent_across_examples():
    """At q = 1 (B b = n) the first b batches are the parts: over 3,000 runs example 0's part is uniform (chi-square,
    level 1e-6) and examples 0 and 1 share a part with probability 1/b (z = 5): each example's part is drawn
    independently, so adding or removing one moves no other."""
    n, parts, runs = 6, 3, 3_000
    rng = np.random.default_rng(11)
    part0, same = np.zeros(parts, dtype=int), 0
    for _ in range(runs):
        gen = sample_batches("cyclic_poisson", n=n, batch_size=n // parts, rng=rng, num_partitions=parts)
        where = np.empty(n, dtype=int)
        for j in range(parts):
            where[next(gen)] = j
        part0[where[0]] += 1
        same += where[0] == where[1]
    assert np.sum((part0 - runs / parts) ** 2 / (runs / parts)) <= stats.chi2.isf(1e-6, parts - 1)
    assert abs(same / runs - 1 / parts) <= 5.0 * math.sqrt((1 / parts) * (1 - 1 / parts) / runs)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"sampler": "cyclic_poisson"}, ValueError, "num_partitions is required"),
    ({"sampler": "cyclic_poisson", "num_partitions": 0}, ValueError,
     "num_partitions must be an integer >= 1; got num_partitions=0"),
    ({"sampler": "cyclic_poisson", "num_partitions": 2.5}, TypeError, "num_partitions must be an integer"),
    ({"sampler": "cyclic_poisson", "num_partitions": 9}, ValueError,
     r"batch_size must be <= n / num_partitions = 4 .* got batch_size=5 with n=40, num_partitions=9"),
    ({"sampler": "poisson", "num_partitions": 2}, ValueError, "num_partitions is used only by "
                                                              "sampler='cyclic_poisson'"),
])
def test_cyclic_poisson_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        next(sample_batches(n=40, batch_size=5, rng=np.random.default_rng(0), **kwargs))


def test_dpsgd_takes_the_parts_from_the_strategy_bands_and_refuses_a_dense_encoder():
    from privdyn.privacy.accounting import NotAccountableError
    from privdyn.privacy.correlated import Toeplitz

    model, w0, x, y = _problem()
    kw = dict(step_size=0.1, batch_size=5, clip=1.0, noise_multiplier=1.0, noise_rng=step_normals(0, "cyc"),
              sampler="cyclic_poisson")
    trainer = DPSGD(model, w0, x, y, strategy=Toeplitz([1.0, 0.5, 0.25]), sampling_rng=np.random.default_rng(4),
                    **kw)
    expected = sample_batches("cyclic_poisson", n=40, batch_size=5, rng=np.random.default_rng(4), num_partitions=3)
    for _ in range(9):
        np.testing.assert_array_equal(next(trainer._batches), next(expected))
    with pytest.raises(NotAccountableError, match="cyclic_poisson_dense_encoder"):
        DPSGD(model, w0, x, y, strategy=LambdaCGD(0.5), sampling_rng=np.random.default_rng(4), **kw)
    res = dpsgd(model, w0, x, y, num_steps=30, step_size=1.0, batch_size=10, sampler="cyclic_poisson",
                sampling_rng=np.random.default_rng(0), log_every=30)
    assert res.log.train_loss[-1] < res.log.train_loss[0]
