"""Train the kan paper's KAN and an MLP privately in PyTorch with lambda-CGD noise; report accuracy and epsilon.

Run from a checkout with the torch extra installed::

    python examples/torch_kan_mlp.py

Data: the bundled breast-cancer set (scikit-learn's copy; no download), standardized and scaled into the unit ball,
split 75 / 25. Batches: privdyn's fixed-size sampler (the kan paper's Algorithm 1, Wang et al., arXiv 2605.12648).
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

from privdyn.data.classification import load_binary_dataset, scale_to_unit_ball
from privdyn.privacy.correlated import LambdaCGD, step_normals
from privdyn.torch import KAN, BatchSampler, PrivateOptimizer

EPSILON, DELTA, CLIP, BATCH_SIZE, EPOCHS = 1.0, 1e-5, 1.0, 64, 45


def _data() -> tuple[torch.Tensor, ...]:
    x, y = load_binary_dataset("breast_cancer")
    order = np.random.default_rng(0).permutation(len(y))
    split = int(0.75 * len(y))
    train, test = order[:split], order[split:]
    x_train, x_test, _ = scale_to_unit_ball(x[train], x[test])
    return (torch.tensor(x_train), torch.tensor(y[train]), torch.tensor(x_test), torch.tensor(y[test]))


def _models(d: int, seed: int) -> dict[str, tuple[nn.Module, float]]:
    """The KAN (width 32, grid 5, cubic; closed-form per-example gradients) and an MLP d-32-1 (vmap or Opacus)."""
    rng = np.random.default_rng(seed)
    kan = KAN(d, rng.standard_normal((32, 8)), generator=torch.Generator().manual_seed(seed))
    torch.manual_seed(seed)
    mlp = nn.Sequential(nn.Linear(d, 32), nn.Tanh(), nn.Linear(32, 1)).double()
    return {"kan": (kan, 2.0), "mlp": (mlp, 0.5)}


def _margin_loss(output: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.softplus(-y * output.reshape(-1))


def train(name: str, lam: float, neighboring: str, seed: int = 0) -> tuple[float, object]:
    x, y, x_test, y_test = _data()
    n, d = x.shape
    model, step_size = _models(d, seed)[name]
    num_steps = EPOCHS * (n // BATCH_SIZE)
    private = PrivateOptimizer.with_epsilon(
        torch.optim.SGD(model.parameters(), lr=step_size), model, _margin_loss, epsilon=EPSILON, delta=DELTA,
        clip=CLIP, batch_size=BATCH_SIZE, n=n, num_steps=num_steps, sampler="fixed_size", neighboring=neighboring,
        strategy=LambdaCGD(lam), noise_source=step_normals(seed, f"example/{name}/{lam}"))
    for index in BatchSampler(n, BATCH_SIZE, sampler="fixed_size", num_steps=num_steps,
                              generator=np.random.default_rng(seed)):
        private.step(x[index], y[index])
    with torch.no_grad():
        accuracy = float((torch.sign(model(x_test).reshape(-1)) == y_test).double().mean())
    return accuracy, private


def main() -> None:
    rows = []
    for neighboring, lams in (("zero_out", (0.0, 0.5, 0.9)), ("replace_one", (0.0,))):
        for lam in lams:
            for name in ("kan", "mlp"):
                accuracy, private = train(name, lam, neighboring)
                spent = private.privacy_spent(DELTA)
                rows.append((neighboring, lam, name, float(private.calibration), accuracy, float(spent),
                             str(spent.guarantee), private.accountant.row.accountant))
    print(f"breast_cancer, {EPOCHS} epochs of fixed-size batches of {BATCH_SIZE}, clip {CLIP}, target epsilon "
          f"{EPSILON} at delta {DELTA}")
    for relation in ("zero_out", "replace_one"):
        print(f"\nneighboring = {relation}")
        print(f"{'lambda':>6} {'model':>5} {'kappa':>8} {'accuracy':>8} {'epsilon':>8} {'label':>6}  accountant")
        for neighboring, lam, name, kappa, accuracy, epsilon, label, accountant in rows:
            if neighboring == relation:
                print(f"{lam:>6} {name:>5} {kappa:>8.3f} {accuracy:>8.3f} {epsilon:>8.4f} {label:>6}  {accountant}")


if __name__ == "__main__":
    main()
