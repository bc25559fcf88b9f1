"""hsgd privacy: the O(m)-per-pair Gram-matrix path of privacy/hsgd.py against dense and per-pair references.

Setting (the paper's Section 5 scaling with a generic spectrum): Gaussian features a ~ N(0, Σ) with Σ = Q diag(λ) Qᵀ,
λ_j = (0.5 + (j + ½)/d)/(3d) (all distinct, so m = d eigen-groups, tr Σ = 1/3), a random rotation Q,
step_size η = 0.05 (γ = ηd), ridge 0.1, noise_std 1.5, n = 1500 records, x0 ~ N(0, I) realized (``fixed`` policy),
Renyi order 2, the neighbouring pairs with the largest proxy gap ‖g(θ)‖ (Section 5). The law is
``sgd_grid_law(problem, 1500)``.

* ``hsgd-privacy-divergence``: D_α (both orders, max) per (t, s) pair at d = 400: the candidate's one batched call
  for a batch of 1500 random pairs ℓ < k ≤ 1500 (its whole per-call overhead included) against dense laws whitened by
  an eigendecomposition, log det(V₂^{-½}V₁V₂^{-½}) from the eigenvalues of the whitened covariance (no difference of
  log-determinants), on every 30th pair of the batch (50 pairs: the dense path costs tens of ms per pair). The ratio
  compares times per pair. Agreement on those 50 pairs: relative 1e-9, or within d·eps absolute, the rounding level
  of the dense reference (its whitened eigenvalues near 1 carry absolute errors of that size; divergences of 1e-9 at
  long lags are then reproduced by the dense path only to ~1e-7 relative, while the candidate agrees with the exact
  low-rank path to 1e-13).
* ``hsgd-privacy-batch``: the whole batch of 1500 (t, s) pairs at d = 400: the batched path against the per-pair
  diagonal-plus-low-rank path (``renyi_divergence``: explicit laws and ``divergences.renyi_gaussian_lowrank``, also
  O(d) per pair). The candidate's median / 1500 is its time per pair in a batch.
* ``hsgd-privacy-curve``: the full last-iterate curve rdp_epsilon(k), k = 0..1500, at d = 1000 for the top 5 pairs
  (candidate time = the number asked for). The reference evaluates the same mixture (15) with the per-pair low-rank
  path at 2 of the iterates only, to check agreement: it does different work, so this ratio is not a speed-up.

Every callable runs with BLAS pinned to one thread (as every experiment unit is, ARCHITECTURE.md): on a shared machine
multi-threaded LAPACK calls on tiny matrices can be slowed down a thousandfold by thread contention, which would
flatter the candidate.
"""

import functools
import math

import numpy as np
from threadpoolctl import threadpool_limits

from privdyn.benchmarking import Benchmark
from privdyn.dynamics.hsgd import HSGDProblem
from privdyn.privacy import hsgd as ph
from privdyn.schedules import Constant

ALPHA, N, STEP_SIZE, RIDGE, NOISE_STD, LABEL_NOISE = 2.0, 1500, 0.05, 0.1, 1.5, 0.1
NUM_TIME_PAIRS, SUBSET_STRIDE = 1500, 30
CURVE_CHECK_ITERATES = (100, 1500)
DENSE_DIM = 400


def _setting(d: int, num_pairs: int, seed: int = 20261123):
    rng = np.random.default_rng(seed)
    lam = (0.5 + (np.arange(d) + 0.5) / d) / (3 * d)
    rotation, _ = np.linalg.qr(rng.normal(size=(d, d)))
    covariance = (rotation * lam) @ rotation.T
    target = rng.normal(size=d)
    features = (rng.normal(size=(N, d)) * np.sqrt(lam)) @ rotation.T
    labels = features @ target + LABEL_NOISE * rng.normal(size=N)
    problem = HSGDProblem.from_covariance(covariance, target=target, x0=rng.normal(size=d),
                                          learning_rate=Constant(STEP_SIZE * d), ridge=RIDGE, noise_std=NOISE_STD,
                                          label_noise=LABEL_NOISE)
    law = ph.sgd_grid_law(problem, N)
    pairs = ph.select_pairs(features, labels, ridge=RIDGE, num_pairs=num_pairs)
    iterates = rng.integers(1, N + 1, size=NUM_TIME_PAIRS)
    positions = np.floor(rng.uniform(size=NUM_TIME_PAIRS) * iterates).astype(np.int64)
    return law, pairs, iterates, positions


def _dense_whitened(alpha: float, mean1, cov1, mean2, cov2) -> float:
    """max of D_α(P₁‖P₂), D_α(P₂‖P₁) from B = V₂^{-½}V₁V₂^{-½} (symmetric square root by eigendecomposition)."""
    lam2, vec2 = np.linalg.eigh(cov2)
    inv_sqrt = (vec2 / np.sqrt(lam2)) @ vec2.T
    mu, vec = np.linalg.eigh(inv_sqrt @ cov1 @ inv_sqrt)
    w = vec.T @ (inv_sqrt @ (mean1 - mean2))
    x = mu - 1.0
    beta = alpha - 1.0
    forward_mix = 1.0 - beta * x  # eigenvalues of αI + (1 − α)B
    backward_mix = 1.0 + alpha * x  # eigenvalues of αB + (1 − α)I
    out = []
    for mix, own in ((forward_mix, -beta), (backward_mix, alpha)):
        if np.any(mix <= 0):
            out.append(math.inf)
            continue
        mean_term = 0.5 * alpha * np.sum(w * w / mix)
        logdet = -(np.sum(np.log1p(mix - 1.0)) - own * np.sum(np.log1p(x))) / (2.0 * beta)
        out.append(mean_term + logdet)
    return max(out)


def _dense_reference(inputs):
    law, pairs, iterates, positions = inputs
    out = np.empty(iterates.size)
    for i, (k, ell) in enumerate(zip(iterates.tolist(), positions.tolist(), strict=True)):
        laws = ph.neighboring_laws(law, pairs, iterate=k, position=ell)
        out[i] = _dense_whitened(ALPHA, laws.mean1, laws.cov1.dense(), laws.mean2, laws.cov2.dense())
    return out


def _batched(inputs):
    law, pairs, iterates, positions = inputs
    return ph.renyi_divergences(ALPHA, law, pairs, iterates=iterates, positions=positions).value[:, 0]


def _per_pair_lowrank(inputs):
    law, pairs, iterates, positions = inputs
    return np.array([ph.renyi_divergence(ALPHA, law, pairs, iterate=k, position=ell).value
                     for k, ell in zip(iterates.tolist(), positions.tolist(), strict=True)])


def _agree(candidate, reference):
    np.testing.assert_allclose(candidate, reference, rtol=1e-9, atol=0)


def _agree_dense(candidate, reference):
    np.testing.assert_allclose(candidate, reference, rtol=1e-9, atol=DENSE_DIM * np.finfo(float).eps)


def _one_thread(fn):
    @functools.wraps(fn)
    def wrapped(*args):
        with threadpool_limits(limits=1):
            return fn(*args)

    return wrapped


def _setup_batch_and_subset():
    law, pairs, iterates, positions = _setting(DENSE_DIM, 1)
    return {"batch": (law, pairs, iterates, positions),
            "subset": (law, pairs, iterates[::SUBSET_STRIDE], positions[::SUBSET_STRIDE])}


def _batched_whole(inputs):
    return _batched(inputs["batch"])


def _dense_subset(inputs):
    return _dense_reference(inputs["subset"])


def _agree_dense_subset(candidate, reference):
    _agree_dense(candidate[::SUBSET_STRIDE], reference)


def _setup_batch():
    return _setting(DENSE_DIM, 1)


def _setup_curve():
    law, pairs, _, _ = _setting(1000, 5)
    return law, pairs


def _curve(inputs):
    law, pairs = inputs
    return ph.rdp_epsilon(ALPHA, law, pairs, num_steps=N).value


def _curve_check(inputs):
    """The mixture (15) at a few iterates from the per-pair low-rank divergences (both orders, all pairs)."""
    law, pairs = inputs
    out = {}
    for k in CURVE_CHECK_ITERATES:
        worst = np.array([max(ph.renyi_divergence(ALPHA, law, pairs, iterate=k, position=ell, pair=p).value
                              for p in range(pairs.num_pairs)) for ell in range(k)])
        terms = (ALPHA - 1.0) * worst
        if k < N:
            terms = np.concatenate(([math.log(N - k)], terms))
        top = terms.max()
        out[k] = (top + math.log(np.sum(np.exp(terms - top))) - math.log(N)) / (ALPHA - 1.0)
    return out


def _agree_curve(candidate, reference):
    for k, value in reference.items():
        np.testing.assert_allclose(candidate[k], value, rtol=1e-9, atol=0, err_msg=f"iterate {k}")


BENCHMARKS = (
    Benchmark(
        name="hsgd-privacy-divergence",
        description=f"D_alpha (alpha = {ALPHA}, both orders) of neighbouring HSGD laws, d = 400 (m = 400 groups), per "
                    f"(t, s) pair: a batch of {NUM_TIME_PAIRS} pairs vs the dense path on every "
                    f"{SUBSET_STRIDE}th of them",
        candidate_name="renyi_divergences (Gram matrix from group sums, O(m) per pair, 4x4 kernel)",
        reference_name="dense laws, eigendecomposition whitening log det(V2^-1/2 V1 V2^-1/2), O(d^3) per pair",
        setup=_one_thread(_setup_batch_and_subset),
        candidate=_one_thread(_batched_whole),
        reference=_one_thread(_dense_subset),
        agree=_agree_dense_subset,
        target_ratio=1000.0,
        repeats=5,
        candidate_items=NUM_TIME_PAIRS,
        reference_items=len(range(0, NUM_TIME_PAIRS, SUBSET_STRIDE)),
    ),
    Benchmark(
        name="hsgd-privacy-batch",
        description=f"D_alpha (alpha = {ALPHA}, both orders), a batch of {NUM_TIME_PAIRS} (t, s) pairs, d = 400 "
                    "(m = 400 groups); candidate median / 1500 = time per pair",
        candidate_name="renyi_divergences (one batched call)",
        reference_name="renyi_divergence per pair (diagonal + rank-2 laws, divergences.renyi_gaussian_lowrank)",
        setup=_one_thread(_setup_batch),
        candidate=_one_thread(_batched),
        reference=_one_thread(_per_pair_lowrank),
        agree=_agree,
        repeats=5,
    ),
    Benchmark(
        name="hsgd-privacy-curve",
        description=f"rdp_epsilon(k), k = 0..{N}, d = 1000 (m = 1000 groups), 5 proxy pairs, alpha = {ALPHA}; "
                    "the candidate time is the full-curve time (target < 60 s)",
        candidate_name="rdp_epsilon (full curve, 1.1e6 (k, l) pairs x 5 pairs x 2 orders)",
        reference_name=f"per-pair low-rank mixture at iterates {CURVE_CHECK_ITERATES} only (agreement check; "
                       "different work: the ratio is not a speed-up)",
        setup=_one_thread(_setup_curve),
        candidate=_one_thread(_curve),
        reference=_one_thread(_curve_check),
        agree=_agree_curve,
        repeats=5,
    ),
)
