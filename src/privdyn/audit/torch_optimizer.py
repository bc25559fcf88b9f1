"""The torch rows: DP-SGD with correlated noise run by :class:`privdyn.torch.PrivateOptimizer` itself.

The canary is the one of the ``dpsgd-*`` rows (:class:`privdyn.audit.mechanisms.DPSGDCanary`): every record but the
canary has per-example gradient 0 and the canary's is ``canary_gradient * clip`` (over the clip, so clipping is
active and its clipped gradient is +clip); under zero-out (and add-remove) neighbours D' replaces the canary by a
record of gradient 0. The model is linear in one scalar parameter per run, loss l(w; x) = x w, so the per-example
gradient is the record's feature x whatever w is. Each run takes ``num_steps`` steps of the optimizer (the kan paper's
Algorithm 1, Wang et al., arXiv 2605.12648, in :mod:`privdyn.torch.optimizer`)::

    grad_t = (1 / B) (clip * b_t + clip * kappa * xi_t),        w_t = w_{t-1} - lr * grad_t    (torch SGD)

with b_t = 1 when the canary is in the sampler's batch of step t (on D; 0 on D') and xi the strategy's correlated
noise. Every iterate may be released (the accountant's assumption), so the run releases
y_t = (w_{t-1} - w_t) B / (lr clip) = b_t + kappa xi_t, the release of the NumPy reduction, and is scored by the same
statistic (:meth:`~privdyn.audit.mechanisms.DPSGDCanary._score`: the whitened log-likelihood ratio of "the canary
joined step s" against "it joined none", nominal kappa); B, lr and clip are read from the optimizer.

**The cheapest faithful path.** One :class:`~privdyn.torch.PrivateOptimizer` step costs about 0.3 ms on one CPU core
(a 1-parameter model, closed-form per-example gradients, construction amortized over 10 steps), so a plain loop
over 2 x 1.25 x 10^4 runs of 10 steps takes about 80 s a row. Instead, a *block* of ``block_size`` runs is one
PrivateOptimizer whose parameter is a column of ``block_size`` scalars, run r's weight in row r, and whose records are
(run, record) pairs: run r's canary has feature ``canary_gradient * clip * e_r``. The optimizer's own code does
everything privacy-relevant: per-example gradients (its closed-form rule ``||a_i|| ||h_i||``, the same norms and
clipping factor as its vmap and Opacus paths), per-example clipping (the canary's gradient has norm
``canary_gradient * clip`` and only coordinate r, so it is clipped to ``clip e_r``: the runs do not interact), the
division by B, the noise (its :class:`~privdyn.torch.TorchNoiseStream` over the flattened parameter, i.i.d. across
coordinates, so each coordinate is one run's correlated noise) and the torch optimizer's step. The records of
gradient 0 add exactly 0 to the clipped sum, so a step is given only the canary slots of the runs whose batch holds
the canary (on D the canary's feature, on D' the zeroed record's). The batches come from a
:class:`~privdyn.torch.BatchSampler` per block and side, ``block_size`` consecutive batches per step, one per run:
fixed-size and Poisson batches are drawn independently at every step, so consecutive batches are independent and each
run sees the sampler's law. Random-allocation batches are independent only across epochs (each record joins exactly
one of the t = ceil(n / B) steps of an epoch), so under it a run takes *whole epochs* of consecutive batches: the
block's sampler draws epoch after epoch, run 0's first epoch, run 1's first epoch, ..., then every run's second, and
a partial last epoch uses the first steps of its epoch (:class:`TorchDPSGDRandomAllocation`). The reduction refuses
the shuffle sampler, which the allow-list does not account. The tests check that a
block of one run is, number for number, the user-facing loop (``nn.Linear(1, 1, bias=False)``, a ``DataLoader`` over
the n records with the sampler, vmap per-example gradients), and that a block of many runs is the release above
computed from its batches and the NumPy noise matrix.

Streams (:mod:`privdyn.rng`): the noise of block k on D comes from one of the optimizer's three noise sources, by
k mod 3: the NumPy counter-based :func:`~privdyn.rng.step_normals` of ``(seed, unit_key + "/D")`` with run k (0),
a torch.Generator seeded from that stream's generator (1), or the device-native default,
:func:`~privdyn.torch.device_normals` of the same stream with run k (2); on D' the choice is shifted by one. A side
has at least three blocks (blocks hold ``min(block_size, ceil(runs / 3))`` runs), so every row runs every source
on both datasets. The batches of block k come from the generator of
``(seed, unit_key + "/D", run_index=k, purpose="sampling")``; likewise on D'. ``torch-lambda-cgd-fixed-size``
regenerates past normals (the stream's other path) and also runs Opacus' :class:`privdyn.torch.DPOptimizer` with
its default source kind (device normals, seeded) on a block of runs (``nn.Linear(runs, 1)`` wrapped by
``GradSampleModule``).

**Law check.** Given the batches (b_t: the canary joined step t), the release is y = b + kappa C^{-1} Z, so
C (y - b) / kappa must be i.i.d. N(0, I_T) (kappa nominal, C the strategy's encoder): every block's releases are
tested against that law (:mod:`privdyn.audit.law`).

The reported epsilon is what the optimizer's accountant reports: a PrivateOptimizer bound, through the run's
:class:`~privdyn.torch.BatchSampler` (n, batch size, sampler, neighbouring relation), to its
:class:`~privdyn.torch.DPSGDAccountant` takes the row's ``num_steps`` steps on the canary and answers
``privacy_spent(delta)``. torch is imported inside the methods, so ``import privdyn.audit``
never imports it; without PyTorch a row raises the ImportError of :mod:`privdyn.torch`, which names the extra.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import warnings
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from privdyn.audit.base import Mechanism, Runs
from privdyn.audit.law import WhitenedSample
from privdyn.privacy.labels import PrivacyLoss

if TYPE_CHECKING:
    from privdyn.audit.mechanisms import DPSGDCanary

__all__ = ["TorchDPSGDPoisson", "TorchDPSGDRandomAllocation", "TorchLambdaCGDFixedSize", "TorchLambdaCGDPoisson",
           "TorchOptimizerCanary"]

_SIDES = ("D", "D'")


def _require_torch_extra() -> None:
    """Import :mod:`privdyn.torch` first: without PyTorch its ImportError names the ``privdyn[torch]`` extra."""
    import privdyn.torch  # noqa: F401


def _canary_columns(runs: int, single: bool = False) -> Any:
    """A module with one scalar weight per run (a ``(runs, 1)`` column) and the linear per-example loss
    l(w; x) = <x, w[:, 0]>: its gradient is x (so ``loss_and_gradient_factors`` gives A = x, H = 1)."""
    import torch
    from torch import nn

    class CanaryColumns(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.zeros(runs, 1, dtype=torch.float32 if single else torch.float64))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x @ self.weight

        def loss_and_gradient_factors(self, x: torch.Tensor,
                                      y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            return (x @ self.weight.detach())[:, 0], x, x.new_ones((x.shape[0], 1))

    return CanaryColumns()


@dataclasses.dataclass(frozen=True, kw_only=True)
class TorchOptimizerCanary(Mechanism):
    """:class:`privdyn.torch.PrivateOptimizer` (torch SGD) on the canary reduction of the module docstring;
    subclasses fix the strategy, the sampler and the relation.

    Fields: ``noise_multiplier`` kappa (nominal), ``n``, ``batch_size`` B, ``num_steps`` T, ``clip``,
    ``learning_rate`` of torch's SGD, ``canary_gradient`` (the canary's gradient norm over the clip, > 1),
    ``block_size`` (runs per optimizer).
    """

    sampler: ClassVar[str]
    neighboring: ClassVar[str]
    requires: ClassVar[str | None] = "torch"
    entry_point: ClassVar[str] = "privdyn.torch.PrivateOptimizer.step"

    noise_multiplier: float = 3.0
    n: int = 100
    batch_size: int = 10
    num_steps: int = 10
    clip: float = 1.0
    learning_rate: float = 0.5
    canary_gradient: float = 10.0
    block_size: int = 2048

    def __post_init__(self) -> None:
        if self.sampler not in ("fixed_size", "poisson", "random_allocation"):
            raise ValueError(f"sampler must be 'fixed_size' or 'poisson' (batches independent across steps) or "
                             f"'random_allocation' (epochs independent); got {self.sampler!r}.")
        if not self.canary_gradient > 1.0:
            raise ValueError(f"canary_gradient must be > 1 (clipping active); got {self.canary_gradient!r}.")
        if not (isinstance(self.block_size, int) and self.block_size >= 1):
            raise ValueError(f"block_size must be an integer >= 1; got {self.block_size!r}.")

    # --- the objects ---------------------------------------------------------------------------------------------

    def _strategy(self) -> Any:
        from privdyn.privacy.correlated import Independent

        return Independent()

    def _reference(self) -> DPSGDCanary:
        """The NumPy row of the same setting (and ``noise_factor``): its score is the statistic of this row."""
        raise NotImplementedError

    regenerate: bool = False
    """Regenerate past normals instead of buffering them (the noise stream's other path)."""
    opacus_runs: int = 0
    """Runs per dataset of :class:`privdyn.torch.DPOptimizer` (Opacus) added to the law check (needs opacus)."""
    single_runs: int = 0
    """Runs per dataset of a float32 model added to the law check (the noise stream's host-copy path)."""

    def _source(self, seed: int, key: str, block: int, side: int = 0) -> Any:
        """Block ``block``'s noise source on side ``side`` (0: D, 1: D'), by (block + side) mod 3: the NumPy
        counter-based :func:`privdyn.rng.step_normals` (0), a seeded torch.Generator (1, the stream's native draws) or
        the device-native :func:`privdyn.torch.device_normals` (2), so a row runs the optimizer's three sources on
        both datasets."""
        from privdyn.rng import generator, step_normals

        kind = (block + side) % 3
        if kind == 0:
            return step_normals(seed, key, run=block)
        import torch

        if kind == 2:
            from privdyn.torch import device_normals

            return device_normals(seed, key, run=block)
        native = torch.Generator()
        native.manual_seed(int(generator(seed, key, run_index=block, purpose="noise").integers(0, 2**62)))
        return native

    def _optimizer(self, runs: int, noise_source: Any, *, noise_multiplier: float, account: bool = False,
                   single: bool = False, batch_sampler: Any = None) -> Any:
        """A PrivateOptimizer over a block of ``runs`` runs (bound to its accountant through ``batch_sampler``, the
        run's :meth:`_batch_sampler`, if ``account``)."""
        _require_torch_extra()
        import torch

        from privdyn.torch import PrivateOptimizer

        module = _canary_columns(runs, single)
        if account and batch_sampler is None:
            raise ValueError("account=True binds the optimizer to its accountant through the run's batch sampler; "
                             "got batch_sampler=None.")
        bound: dict[str, Any] = {"batch_sampler": batch_sampler} if account else {}
        return PrivateOptimizer(torch.optim.SGD(module.parameters(), lr=self.learning_rate), module, clip=self.clip,
                                noise_multiplier=noise_multiplier, batch_size=self.batch_size,
                                strategy=self._strategy(), noise_source=noise_source, num_steps=self.num_steps,
                                per_example="closed_form", regenerate=self.regenerate, **bound)

    def _draws_per_run(self) -> int:
        """Batches the block's sampler draws per run: one per step."""
        return self.num_steps

    def _batch_sampler(self, generator: np.random.Generator, runs: int) -> Any:
        """The block's :class:`~privdyn.torch.BatchSampler`: :meth:`_draws_per_run` batches per run, one pass (with
        the row's neighbouring relation, for the accountant it binds)."""
        from privdyn.torch import BatchSampler

        return BatchSampler(self.n, self.batch_size, sampler=self.sampler, num_steps=self._draws_per_run() * runs,
                            neighboring=self.neighboring, generator=generator)

    def _batches(self, generator: np.random.Generator, runs: int) -> Any:
        return iter(self._batch_sampler(generator, runs))

    def _presence(self, batches: Any, runs: int) -> np.ndarray:
        """(T, runs): whether run r's batch of step t holds the canary (index 0); step t takes the next ``runs``
        batches of ``batches``, one per run (batches independent across steps)."""
        return np.array([[0 in next(batches) for _ in range(runs)] for _ in range(self.num_steps)], dtype=bool)

    def _reference_scores(self, reference: Any, released: np.ndarray, encoder: np.ndarray, q: float) -> np.ndarray:
        """The NumPy row's statistic of the releases (runs, T)."""
        scores: np.ndarray = reference._score(released @ encoder.T, encoder, q)
        return scores

    def _block(self, private: Any, batches: Any, runs: int, canary: bool,
               joined: np.ndarray | None = None) -> np.ndarray:
        """Run ``private`` for ``num_steps`` steps on a block of ``runs`` runs; the iterates w_0 .. w_T, (T + 1, runs);
        ``joined`` (T, runs), if given, receives whether each run's batch held the canary.

        At step t run r takes the next batch of ``batches``; when it holds the canary (index 0), the block's batch
        gets run r's canary slot: feature ``canary_gradient * clip * e_r`` on D (``canary``), 0 on D'.
        """
        import torch

        weight = private.params[0]
        iterates = np.empty((self.num_steps + 1, runs))
        iterates[0] = weight.detach().double().numpy()[:, 0]
        feature = self.canary_gradient * self.clip if canary else 0.0
        presence = self._presence(batches, runs)
        for t in range(self.num_steps):
            present = presence[t]
            if joined is not None:
                joined[t] = present
            rows = np.flatnonzero(present)
            x = torch.zeros((rows.size, runs), dtype=weight.dtype)
            x[torch.arange(rows.size), torch.from_numpy(rows)] = feature
            private.zero_grad()
            private.step(x, x.new_zeros(rows.size))
            iterates[t + 1] = weight.detach().double().numpy()[:, 0]
        return iterates

    def _releases(self, private: Any, iterates: np.ndarray) -> np.ndarray:
        """y_t = (w_{t-1} - w_t) B / (lr clip), shape (runs, T), with B, lr and clip read from the optimizer."""
        lr = float(private.optimizer.param_groups[0]["lr"])
        return ((iterates[:-1] - iterates[1:]) * (private.batch_size / (lr * private.clip))).T

    def _opacus_residuals(self, seed: int, key: str, runs: int, canary: bool) -> np.ndarray:
        """y - b (runs, T) of one block of ``runs`` runs of :class:`privdyn.torch.DPOptimizer` (Opacus' clipping and
        averaging, privdyn's noise stream): ``nn.Linear(runs, 1)`` wrapped by Opacus' ``GradSampleModule``, run r's
        canary the feature ``canary_gradient * clip * e_r`` (its per-sample gradient; clipped by Opacus to
        ``clip e_r`` up to its factor clip / (norm + 1e-6)), the noise ``clip kappa xi_t`` over the weight's
        coordinates (one correlated stream per run), the sum divided by the expected batch size B."""
        import torch
        from opacus import GradSampleModule

        from privdyn.rng import generator
        from privdyn.torch import DPOptimizer, device_normals

        model = torch.nn.Linear(runs, 1, bias=False).double()
        with torch.no_grad():
            model.weight.zero_()
        wrapped = GradSampleModule(model, loss_reduction="mean")
        private = DPOptimizer(torch.optim.SGD(wrapped.parameters(), lr=self.learning_rate),
                              noise_multiplier=self.noise_multiplier * self.noise_factor, max_grad_norm=self.clip,
                              expected_batch_size=self.batch_size, strategy=self._strategy(),
                              noise_source=device_normals(seed, key), num_steps=self.num_steps,
                              loss_reduction="mean")
        batches = self._batches(generator(seed, key, purpose="sampling"), runs)
        feature = self.canary_gradient * self.clip if canary else 0.0
        previous = model.weight.detach().numpy()[0].copy()
        residuals = np.empty((runs, self.num_steps))
        presence = self._presence(batches, runs)
        for t in range(self.num_steps):
            present = presence[t]
            rows = np.flatnonzero(present)
            x = torch.zeros((max(rows.size, 1), runs), dtype=torch.float64)
            x[torch.arange(rows.size), torch.from_numpy(rows)] = feature
            private.zero_grad()
            with warnings.catch_warnings():  # Opacus' hooks warn that the inputs need no gradient (they do not)
                warnings.simplefilter("ignore", UserWarning)
                wrapped(x)[:, 0].mean().backward()
            private.step()
            current = model.weight.detach().numpy()[0].copy()
            released = (previous - current) * self.batch_size / (self.learning_rate * self.clip)
            residuals[:, t] = released - (present if canary else 0.0)
            previous = current
        return residuals

    # --- the Mechanism interface ---------------------------------------------------------------------------------

    def reported(self) -> PrivacyLoss:
        """The optimizer's accountant after ``num_steps`` steps on the canary: ``privacy_spent(delta)`` (the optimizer
        bound to the run's BatchSampler, which refuses a sampler or sizes other than its own)."""
        from privdyn.rng import generator, step_normals

        _require_torch_extra()
        sampler = self._batch_sampler(generator(0, "audit/reported", purpose="sampling"), 1)
        private = self._optimizer(1, step_normals(0, "audit/reported"), noise_multiplier=self.noise_multiplier,
                                  account=True, batch_sampler=sampler)
        self._block(private, iter(sampler), 1, True)
        loss: PrivacyLoss = private.privacy_spent(self.delta)
        return loss

    def scores(self, seed: int, unit_key: str, runs: int) -> tuple[np.ndarray, np.ndarray]:
        return self.run(seed, unit_key, runs).scores

    def run(self, seed: int, unit_key: str, runs: int) -> Runs:
        """The scores, and the law check of the releases: given the batches (b_t: the canary joined step t), the
        release is y = b + kappa xi with xi = C^{-1} Z, so C (y - b) / kappa is N(0, I_T) (kappa nominal, C the
        strategy's encoder): a noise-scale or noise-correlation bug in the optimizer or its noise stream shows as a
        whitened variance or covariance away from the identity."""
        from privdyn.rng import generator

        _require_torch_extra()
        reference = self._reference()
        encoder = self._strategy().encoder_matrix(self.num_steps)
        q = self.batch_size / self.n
        kappa = self.noise_multiplier * self.noise_factor
        outputs, samples = [], []
        for index, side in enumerate(_SIDES):
            key = f"{unit_key}/{side}"
            released, residuals = [], []
            block_size = min(self.block_size, -(-runs // 3))  # at least three blocks: every noise source
            for block, first in enumerate(range(0, runs, block_size)):
                size = min(block_size, runs - first)
                private = self._optimizer(size, self._source(seed, key, block, index), noise_multiplier=kappa)
                batches = self._batches(generator(seed, key, run_index=block, purpose="sampling"), size)
                joined = np.zeros((self.num_steps, size))
                y = self._releases(private, self._block(private, batches, size, side == "D", joined))
                released.append(y)
                residuals.append(y - (joined.T if side == "D" else 0.0))
            outputs.append(self._reference_scores(reference, np.concatenate(released), encoder, q))
            samples.append(WhitenedSample(f"PrivateOptimizer releases on {side}",
                                          np.concatenate(residuals) @ encoder.T / self.noise_multiplier))
        if self.single_runs:
            for index, side in enumerate(_SIDES):
                key = f"{unit_key}/float32/{side}"
                size = min(self.single_runs, runs)
                private = self._optimizer(size, self._source(seed, key, 0, index), noise_multiplier=kappa,
                                          single=True)
                batches = self._batches(generator(seed, key, purpose="sampling"), size)
                joined = np.zeros((self.num_steps, size))
                y = self._releases(private, self._block(private, batches, size, side == "D", joined))
                samples.append(WhitenedSample(f"PrivateOptimizer float32 releases on {side}",
                                              (y - (joined.T if side == "D" else 0.0)) @ encoder.T
                                              / self.noise_multiplier))
        if self.opacus_runs and importlib.util.find_spec("opacus") is not None:
            for side in _SIDES:
                opacus = self._opacus_residuals(seed, f"{unit_key}/opacus/{side}", min(self.opacus_runs, runs),
                                                side == "D")
                samples.append(WhitenedSample(f"DPOptimizer (Opacus) releases on {side}",
                                              opacus @ encoder.T / self.noise_multiplier))
        # the statistic is large on D (with the canary); the audit's scores are large on D'
        return Runs(scores=(-outputs[0], -outputs[1]), law=tuple(samples))


@dataclasses.dataclass(frozen=True, kw_only=True)
class TorchLambdaCGDFixedSize(TorchOptimizerCanary):
    """PrivateOptimizer, lambda-CGD noise (lambda = 0.5), fixed-size batches, zero-out neighbours."""

    name: ClassVar[str] = "torch-lambda-cgd-fixed-size"
    description: ClassVar[str] = ("PrivateOptimizer (torch), lambda-CGD (lambda = 0.5), fixed-size batches, zero-out: "
                                  "DPSGDAccountant (amplified bound or Theorem F.12)")
    sampler: ClassVar[str] = "fixed_size"
    neighboring: ClassVar[str] = "zero_out"

    noise_correlation: float = 0.5
    regenerate: bool = True
    opacus_runs: int = 1024

    def _strategy(self) -> Any:
        from privdyn.privacy.correlated import LambdaCGD

        return LambdaCGD(self.noise_correlation)

    def _reference(self) -> DPSGDCanary:
        from privdyn.audit.mechanisms import DPSGDCorrelatedFixedSize

        return DPSGDCorrelatedFixedSize(noise_correlation=self.noise_correlation,
                                        noise_multiplier=self.noise_multiplier, n=self.n,
                                        batch_size=self.batch_size, num_steps=self.num_steps, delta=self.delta,
                                        noise_factor=self.noise_factor)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TorchLambdaCGDPoisson(TorchLambdaCGDFixedSize):
    """PrivateOptimizer, lambda-CGD noise (lambda = 0.5), Poisson sampling, zero-out neighbours."""

    name: ClassVar[str] = "torch-lambda-cgd-poisson"
    description: ClassVar[str] = ("PrivateOptimizer (torch), lambda-CGD (lambda = 0.5), Poisson sampling, zero-out: "
                                  "DPSGDAccountant (amplified bound)")
    sampler: ClassVar[str] = "poisson"
    neighboring: ClassVar[str] = "zero_out"

    regenerate: bool = False
    opacus_runs: int = 0

    def _reference(self) -> DPSGDCanary:
        from privdyn.audit.mechanisms import DPSGDCorrelatedPoisson

        return DPSGDCorrelatedPoisson(noise_correlation=self.noise_correlation,
                                      noise_multiplier=self.noise_multiplier, n=self.n, batch_size=self.batch_size,
                                      num_steps=self.num_steps, delta=self.delta, noise_factor=self.noise_factor)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TorchDPSGDPoisson(TorchOptimizerCanary):
    """PrivateOptimizer, independent noise, Poisson sampling, add-remove neighbours (the ``dpsgd-poisson`` setting:
    kappa = 1, q = 0.1, T = 20). Under Poisson sampling with every other gradient 0, removing the canary and zeroing
    it give the same release (the division is by the expected batch size B)."""

    name: ClassVar[str] = "torch-dpsgd-poisson"
    description: ClassVar[str] = ("PrivateOptimizer (torch), independent noise, Poisson sampling, add-remove: "
                                  "DPSGDAccountant (dp-accounting PLD)")
    sampler: ClassVar[str] = "poisson"
    neighboring: ClassVar[str] = "add_remove"

    noise_multiplier: float = 1.0
    num_steps: int = 20
    single_runs: int = 1024

    def _reference(self) -> DPSGDCanary:
        from privdyn.audit.mechanisms import DPSGDPoisson

        return DPSGDPoisson(noise_multiplier=self.noise_multiplier, n=self.n, batch_size=self.batch_size,
                            num_steps=self.num_steps, delta=self.delta, noise_factor=self.noise_factor)


@dataclasses.dataclass(frozen=True, kw_only=True)
class TorchDPSGDRandomAllocation(TorchOptimizerCanary):
    """PrivateOptimizer, independent noise, random allocation (balls-in-bins), add-remove neighbours, on the batches of
    the shipped :class:`~privdyn.torch.BatchSampler` (the ``dpsgd-random-allocation`` setting: kappa = 1, n = 100,
    B = 10, so epochs of t = 10 steps, T = 20). Each run takes whole epochs of the block's sampler (module docstring);
    the score is the NumPy row's Neyman-Pearson statistic of the allocation pair, and the reported epsilon is the
    optimizer's accountant, through the allow-list's random-allocation row."""

    name: ClassVar[str] = "torch-dpsgd-random-allocation"
    description: ClassVar[str] = ("PrivateOptimizer (torch), independent noise, random allocation (balls-in-bins), "
                                  "add-remove: DPSGDAccountant (random-allocation PLD)")
    sampler: ClassVar[str] = "random_allocation"
    neighboring: ClassVar[str] = "add_remove"

    noise_multiplier: float = 1.0
    num_steps: int = 20

    def _steps_per_epoch(self) -> int:
        return -(-self.n // self.batch_size)

    def _draws_per_run(self) -> int:
        """Whole epochs: ceil(T / t) epochs of t batches per run."""
        t = self._steps_per_epoch()
        return t * -(-self.num_steps // t)

    def _presence(self, batches: Any, runs: int) -> np.ndarray:
        """(T, runs): epoch e of run r is the (e * runs + r)-th epoch of ``batches`` (t consecutive batches; epochs are
        independent), its first T - e t batches where the last epoch is partial."""
        t = self._steps_per_epoch()
        presence = np.zeros((self._draws_per_run(), runs), dtype=bool)
        for epoch in range(self._draws_per_run() // t):
            for run in range(runs):
                presence[epoch * t:(epoch + 1) * t, run] = [0 in next(batches) for _ in range(t)]
        return presence[:self.num_steps]

    def _reference_scores(self, reference: Any, released: np.ndarray, encoder: np.ndarray, q: float) -> np.ndarray:
        scores: np.ndarray = reference._allocation_score(released, self._steps_per_epoch())
        return scores

    def _reference(self) -> DPSGDCanary:
        from privdyn.audit.mechanisms import DPSGDRandomAllocation

        return DPSGDRandomAllocation(noise_multiplier=self.noise_multiplier, n=self.n, batch_size=self.batch_size,
                                     num_steps=self.num_steps, delta=self.delta, noise_factor=self.noise_factor)
