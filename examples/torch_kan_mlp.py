"""Train the kan paper's KAN and an MLP privately in PyTorch with lambda-CGD noise; report accuracy and epsilon.

Run from a checkout with the torch extra installed::

    python examples/torch_kan_mlp.py

Data: the bundled breast-cancer set (scikit-learn's copy; no download), split 75 / 25 into training and test data,
standardized with the training statistics, each coordinate clipped at 3 standard deviations and divided by 3, so that
it lies in [-1, 1], the interval of the KAN's spline grid (scaling whole rows into the unit ball instead, as the kan
paper's risk bounds assume, leaves most coordinates near 0, where the splines barely vary; the privacy guarantee holds
either way, since it rests on the clipping of per-example gradients); a fifth of the training data is held out as a
validation split, on which the KAN's step size is chosen (at lambda = 0, each candidate trained privately on the
rest), before every row is trained on the whole training split. The table starts with the majority-class baseline
(always predict the class most frequent in the training data): a private model is of use only above it. The choice of
the step size looks at the data too and is not part of the printed epsilon, which covers one training run (private
selection, e.g. Papernot and Steinke, arXiv 2110.03620, would account for it).
Batches: privdyn's fixed-size sampler (the kan paper's Algorithm 1, Wang et al., arXiv 2605.12648).
Privacy: lambda > 0 is accounted under ``zero_out`` neighbours by the smaller of the amplified bound of Theorem F.8's
pair (privdyn.privacy.amplification) and Theorem F.12; lambda = 0 (DP-SGD) is accounted by dp-accounting, both under
``zero_out`` (Theorem F.8's pair at lambda = 0, comparable with the lambda > 0 rows) and under ``replace_one``.
Rows with different relations are not comparable and are printed apart.
Noise and batches come from fixed seeds so that the table reproduces: such noise is not private; deployments use
``privdyn.torch.secure_source()`` and ``numpy.random.default_rng()``.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from privdyn.data.classification import load_binary_dataset
from privdyn.privacy.correlated import LambdaCGD, step_normals
from privdyn.torch import KAN, BatchSampler, PrivateOptimizer

EPSILON, DELTA, BATCH_SIZE, EPOCHS = 1.0, 1e-5, 128, 50
KAN_STEP_SIZES = (3.0, 10.0, 30.0)
"""The KAN's candidate step sizes, chosen on the validation split (large: the clip is small and the noise is on the mean
of the batch's clipped gradients)."""
CLIPS = {"kan": 0.1, "mlp": 1.0}
"""Per-example clipping thresholds: the KAN's per-example gradients have norms about 0.2 at initialization, so a clip
of 0.1 keeps the noise (clip times kappa) near the signal instead of ten times above it."""


def _data(validation: bool = False) -> tuple[torch.Tensor, ...]:
    """(x_train, y_train, x_test, y_test); with ``validation``, the training split without its last fifth and that
    fifth in place of the test data."""
    x, y = load_binary_dataset("breast_cancer")
    order = np.random.default_rng(0).permutation(len(y))
    split = int(0.75 * len(y))
    train, test = order[:split], order[split:]
    if validation:
        cut = int(0.8 * len(train))
        train, test = train[:cut], train[cut:]
    mean, sd = x[train].mean(axis=0), x[train].std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    x_train, x_test = (np.clip((x[rows] - mean) / sd, -3.0, 3.0) / 3.0 for rows in (train, test))
    return (torch.tensor(x_train), torch.tensor(y[train]), torch.tensor(x_test), torch.tensor(y[test]))


def _models(d: int, seed: int, kan_step_size: float) -> dict[str, tuple[nn.Module, float]]:
    """The KAN (width 8, grid 3, cubic; closed-form per-example gradients) and an MLP d-32-1 (vmap or Opacus)."""
    rng = np.random.default_rng(seed)
    kan = KAN(d, rng.standard_normal((8, 6)), grid_size=3, generator=torch.Generator().manual_seed(seed))
    torch.manual_seed(seed)
    mlp = nn.Sequential(nn.Linear(d, 32), nn.Tanh(), nn.Linear(32, 1)).double()
    return {"kan": (kan, kan_step_size), "mlp": (mlp, 0.5)}


def _margin_loss(output: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.softplus(-y * output.reshape(-1))


def train(name: str, lam: float, neighboring: str, seed: int = 0, *, kan_step_size: float = KAN_STEP_SIZES[1],
          validation: bool = False) -> tuple[float, object]:
    """Train one model privately; return its accuracy on the test split (the validation split with ``validation``)
    and the private optimizer."""
    x, y, x_test, y_test = _data(validation)
    n, d = x.shape
    model, step_size = _models(d, seed, kan_step_size)[name]
    num_steps = EPOCHS * (n // BATCH_SIZE)
    batches = BatchSampler(n, BATCH_SIZE, sampler="fixed_size", neighboring=neighboring, num_steps=num_steps,
                           generator=np.random.default_rng(seed))  # one sampler: the batches and the accountant's run
    private = PrivateOptimizer.with_epsilon(
        torch.optim.SGD(model.parameters(), lr=step_size), model, _margin_loss, epsilon=EPSILON, delta=DELTA,
        clip=CLIPS[name], num_steps=num_steps, batch_sampler=batches,
        strategy=LambdaCGD(lam), noise_source=step_normals(seed, f"example/{name}/{lam}"))
    for index in batches:
        private.step(x[index], y[index])
    with torch.no_grad():
        accuracy = float((torch.sign(model(x_test).reshape(-1)) == y_test).double().mean())
    return accuracy, private


def majority_baseline() -> tuple[int, float]:
    """The class most frequent in the training split and the test accuracy of always predicting it."""
    _, y, _, y_test = _data()
    majority = 1 if float((y == 1).double().mean()) >= 0.5 else -1
    return majority, float((y_test == majority).double().mean())


def tune_kan_step_size() -> tuple[float, dict[float, float]]:
    """The KAN step size of :data:`KAN_STEP_SIZES` with the best validation accuracy (lambda = 0, replace-one)."""
    scores = {s: train("kan", 0.0, "replace_one", kan_step_size=s, validation=True)[0] for s in KAN_STEP_SIZES}
    return max(scores, key=lambda s: scores[s]), scores


def main() -> None:
    majority, baseline = majority_baseline()
    step_size, scores = tune_kan_step_size()
    print("KAN step size by validation accuracy (lambda = 0, replace-one): "
          + ", ".join(f"{s:g}: {a:.3f}" for s, a in scores.items()) + f"; chosen {step_size:g}")
    rows = []
    for neighboring, lams in (("zero_out", (0.0, 0.5, 0.9)), ("replace_one", (0.0,))):
        for lam in lams:
            for name in ("kan", "mlp"):
                accuracy, private = train(name, lam, neighboring, kan_step_size=step_size)
                spent = private.privacy_spent(DELTA)
                rows.append((neighboring, lam, name, float(private.calibration), accuracy, float(spent),
                             str(spent.guarantee), private.accountant.row.accountant))
    print(f"breast cancer, {EPOCHS} epochs of fixed-size batches of {BATCH_SIZE}, clip {CLIPS['kan']} (KAN) and "
          f"{CLIPS['mlp']} (MLP), target epsilon {EPSILON} at delta {DELTA}")
    print(f"majority-class baseline (always predict {majority:+d}): test accuracy {baseline:.3f}")
    for relation in ("zero_out", "replace_one"):
        print(f"\nneighboring = {relation}")
        print(f"{'lambda':>6} {'model':>5} {'kappa':>8} {'accuracy':>8} {'epsilon':>8} {'label':>6}  accountant")
        for neighboring, lam, name, kappa, accuracy, epsilon, label, accountant in rows:
            if neighboring == relation:
                print(f"{lam:>6} {name:>5} {kappa:>8.3f} {accuracy:>8.3f} {epsilon:>8.4f} {label:>6}  {accountant}")


if __name__ == "__main__":
    main()
