"""Opacus interop: a ``DPOptimizer`` whose noise is privdyn's correlated noise, and a drop-in ``PrivacyEngine``.

An Opacus script changes one line, ``opacus.PrivacyEngine()`` -> ``privdyn.torch.PrivacyEngine()`` (independent noise)
or ``privdyn.torch.PrivacyEngine(strategy=LambdaCGD(0.5))`` (correlated noise):
``make_private`` then wraps the model in Opacus' ``GradSampleModule`` (per-example gradients by hooks), the optimizer
in :class:`DPOptimizer` (Opacus' per-example clipping; the noise ``clip * noise_multiplier * xi_t`` on the sum of
clipped gradients from :func:`privdyn.torch.noise_stream`, device-native :class:`~privdyn.torch.DeviceNormals` keyed
from OS entropy by default) and the data loader in privdyn's :class:`~privdyn.torch.BatchSampler`. The defaults are
Opacus' semantics: Poisson sampling, add/remove neighbours and ``len(data_loader)`` steps per epoch; fixed-size
batches (the kan paper's Algorithm 1, Wang et al., arXiv 2605.12648) or zero-out neighbours are explicit arguments,
and :meth:`PrivacyEngine.get_epsilon` names them with every epsilon it returns. Opacus' accountant is not used:
:class:`DPOptimizer` refuses step hooks (Opacus attaches its accountants through them), and
:meth:`PrivacyEngine.get_epsilon` asks privdyn's allow-list (:class:`~privdyn.torch.DPSGDAccountant`), so an
independent-noise epsilon is never reported for correlated noise.
Requires Opacus (``pip install opacus``).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from privdyn import _check
from privdyn.privacy.correlated import Independent, Strategy
from privdyn.privacy.labels import PrivacyLoss
from privdyn.torch.accountant import DPSGDAccountant, calibrate_noise_multiplier
from privdyn.torch.distributed import broadcast_source, is_data_parallel, sum_across_ranks
from privdyn.torch.noise import Source, TorchNoiseStream, noise_stream, secure_source
from privdyn.torch.optimizer import flat_parameters, validate_private_args
from privdyn.torch.sampler import BatchSampler, allow_empty_batches

if TYPE_CHECKING:
    from collections.abc import Callable

    from torch.distributed import ProcessGroup

try:
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer as _OpacusDPOptimizer
    from opacus.validators import ModuleValidator
except ImportError:  # the class below needs Opacus; the rest of privdyn.torch does not
    _OpacusDPOptimizer = None

__all__ = ["OPACUS_SEMANTICS", "DPOptimizer", "PrivacyEngine", "SemanticsWarning"]

OPACUS_SEMANTICS = ("poisson", "add_remove")
"""Opacus' (sampler, neighbouring relation): :class:`PrivacyEngine`'s defaults."""


class SemanticsWarning(UserWarning):
    """An epsilon reported for a sampler or neighbouring relation other than Opacus' (see
    :meth:`PrivacyEngine.get_epsilon`)."""


def _require_opacus() -> None:
    if _OpacusDPOptimizer is None:
        raise ImportError("privdyn.torch.DPOptimizer and PrivacyEngine need Opacus: pip install opacus.")


class DPOptimizer(_OpacusDPOptimizer if _OpacusDPOptimizer is not None else object):  # type: ignore[misc]
    """Opacus' ``DPOptimizer`` (clipping of ``p.grad_sample``, averaging) with privdyn's correlated noise.

    Args:
        optimizer: any torch optimizer over a ``GradSampleModule``'s parameters.
        noise_multiplier, max_grad_norm, expected_batch_size, loss_reduction: as in Opacus.
        strategy: the noise strategy.
        noise_source: the normals (:func:`~privdyn.torch.secure_source` by default; a seeded
            :class:`~privdyn.privacy.correlated.StepNormals` or a torch.Generator for experiments).
        num_steps: the horizon of the noise (required by the square-root strategy); the optimizer refuses to go past.
        regenerate: regenerate past normals instead of buffering them.
        distributed: data-parallel training (:mod:`privdyn.torch.distributed`): the clipped sums of all ranks are
            summed (one all-reduce) and the same noise (rank 0's key) is added on every rank; ``expected_batch_size``
            is then the expected batch size over all ranks.
        process_group: the ranks (default: the default process group).
    """

    def __init__(self, optimizer: torch.optim.Optimizer, *, noise_multiplier: float, max_grad_norm: float,
                 expected_batch_size: int | None, strategy: Strategy,
                 noise_source: Source | None = None,
                 num_steps: int | None = None, regenerate: bool = False, loss_reduction: str = "mean",
                 distributed: bool = False, process_group: ProcessGroup | None = None) -> None:
        _require_opacus()
        validate_private_args(clip=max_grad_norm, noise_multiplier=noise_multiplier,
                              batch_size=1 if expected_batch_size is None else expected_batch_size,
                              num_steps=num_steps, clip_name="max_grad_norm")
        if not isinstance(strategy, Strategy):
            raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")
        super().__init__(optimizer, noise_multiplier=float(noise_multiplier), max_grad_norm=float(max_grad_norm),
                         expected_batch_size=expected_batch_size, loss_reduction=loss_reduction)
        params = flat_parameters(optimizer)
        self.strategy = strategy
        self.num_steps = None if num_steps is None else int(num_steps)
        self.steps = 0
        self.noise: TorchNoiseStream | None = None
        self.distributed, self.process_group = bool(distributed), process_group
        if noise_multiplier > 0:
            source = secure_source() if noise_source is None else noise_source
            if self.distributed:
                source = broadcast_source(source, process_group)
            self.noise = noise_stream(strategy, (sum(p.numel() for p in params),), source,
                                      scale=float(noise_multiplier) * float(max_grad_norm), num_steps=self.num_steps,
                                      regenerate=regenerate, device=params[0].device, dtype=params[0].dtype)

    def attach_step_hook(self, fn: Callable[[_OpacusDPOptimizer], None]) -> None:
        raise TypeError("privdyn's DPOptimizer adds correlated noise: Opacus' accountants (attached as step hooks) "
                        "would report the epsilon of independent noise. Use privdyn.torch.PrivacyEngine.get_epsilon "
                        "or privdyn.torch.DPSGDAccountant.")

    def add_noise(self) -> None:
        """``p.grad = p.summed_grad + clip * noise_multiplier * xi_t`` (the view of ``p`` in the flat noise; the
        summed gradient of all ranks when distributed)."""
        if self.num_steps is not None and self.steps >= self.num_steps:
            raise ValueError(f"the run has taken all num_steps={self.num_steps} steps.")
        for p in self.params:
            if hasattr(p.summed_grad, "_processed"):
                raise ValueError("Gradients have not been cleared since the last optimizer step: call "
                                 "optimizer.zero_grad() at every step.")
        if self.distributed:  # the clipped sums of all ranks, summed once
            for p, total in zip(self.params, sum_across_ranks([p.summed_grad for p in self.params],
                                                              self.process_group), strict=True):
                p.summed_grad = total
        noise = self.noise.next() if self.noise is not None else None
        offset = 0
        for p in self.params:
            if noise is None:
                p.grad = p.summed_grad.view_as(p).clone()
            else:
                p.grad = (p.summed_grad + noise[offset: offset + p.numel()].view_as(p.summed_grad)).view_as(p)
            offset += p.numel()
            p.summed_grad._processed = True
        self.steps += 1
        accountant = getattr(self, "_privdyn_accountant", None)
        if accountant is not None:
            accountant.step()

    def state_dict(self) -> dict[str, Any]:
        return {"optimizer": self.original_optimizer.state_dict(), "steps": self.steps,
                "noise": None if self.noise is None else self.noise.state_dict(),
                "holds_secret": bool(self.noise is not None and self.noise.holds_secret)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.original_optimizer.load_state_dict(state_dict["optimizer"])
        if self.noise is not None:
            self.noise.load_state_dict(state_dict["noise"])
        self.steps = int(state_dict["steps"])


class PrivacyEngine:
    """A drop-in for ``opacus.PrivacyEngine`` with privdyn's noise, sampler and accountant.

    Args:
        strategy: the noise strategy (e.g. ``LambdaCGD(0.5)``; default ``Independent()``, Opacus' noise).
        sampler: ``"poisson"`` (default, Opacus' sampling: each example joins each step with probability
            ``batch_size / n``), ``"fixed_size"`` (the kan paper's), ``"random_allocation"`` (every example in exactly
            one of the ``ceil(n / batch_size)`` steps of each epoch; independent noise only; the data loader must
            then have ``len(data_loader) = ceil(n / batch_size)``, i.e. ``drop_last=False``) or ``"shuffle"`` (which
            the allow-list refuses to account with amplification).
        neighboring: the neighbouring relation of the reported epsilon: ``"add_remove"`` (default, Opacus') or
            ``"zero_out"`` (the relation of Theorem F.12) or ``"replace_one"``.
        noise_source: the normals (default :func:`~privdyn.torch.secure_source`).
        sampling_generator: the batches' :class:`numpy.random.Generator` (default: OS entropy).
        regenerate: regenerate past normals instead of buffering them.
    """

    def __init__(self, *, strategy: Strategy | None = None, sampler: str = "poisson", neighboring: str = "add_remove",
                 noise_source: Source | None = None,
                 sampling_generator: np.random.Generator | None = None,
                 regenerate: bool = False) -> None:
        _require_opacus()
        strategy = Independent() if strategy is None else strategy
        if not isinstance(strategy, Strategy):
            raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")
        self.strategy, self.sampler, self.neighboring = strategy, sampler, neighboring
        self.noise_source = secure_source() if noise_source is None else noise_source
        self.sampling_generator = np.random.default_rng() if sampling_generator is None else sampling_generator
        self.regenerate = bool(regenerate)
        self.accountant: DPSGDAccountant | None = None

    def make_private(self, *, module: nn.Module, optimizer: torch.optim.Optimizer,
                     data_loader: torch.utils.data.DataLoader, noise_multiplier: float, max_grad_norm: float,
                     epochs: int | None = None, num_steps: int | None = None, delta: float | None = None,
                     batch_first: bool = True, loss_reduction: str = "mean",
                     ) -> tuple[nn.Module, DPOptimizer, torch.utils.data.DataLoader]:
        """``(GradSampleModule, DPOptimizer, DataLoader)`` as Opacus' ``make_private`` returns them.

        The data loader's ``batch_size`` becomes the sampler's (expected) batch size and ``len(data_loader)`` its
        steps per epoch, as in Opacus (whose Poisson rate is ``1 / len(data_loader)``; privdyn samples and accounts
        at ``batch_size / n``, the same rate when ``batch_size`` divides ``n`` and otherwise a slightly larger one).
        The horizon is ``num_steps`` or ``epochs`` times the steps per epoch (needed by the square-root strategy and
        to account the planned run at ``delta`` before training). The combination (strategy, sampler, neighboring) is
        checked against privdyn's allow-list here, before any step.
        """
        n, batch_size, steps_per_epoch = self._sizes(data_loader)
        if self.sampler == "random_allocation" and steps_per_epoch != -(-n // batch_size):
            raise ValueError(f"random allocation puts every example in one of the ceil(n / batch_size) = "
                             f"{-(-n // batch_size)} steps of an epoch; the data loader has len(data_loader) = "
                             f"{steps_per_epoch} (build it with drop_last=False).")
        horizon = self._horizon(epochs, num_steps, steps_per_epoch)
        validate_private_args(clip=max_grad_norm, noise_multiplier=noise_multiplier, batch_size=batch_size, n=n,
                              num_steps=horizon, clip_name="max_grad_norm")
        self.accountant = DPSGDAccountant(self.strategy, sampler=self.sampler, neighboring=self.neighboring, n=n,
                                          batch_size=batch_size, noise_multiplier=noise_multiplier,
                                          num_steps=horizon, delta=delta)
        if is_data_parallel(module):
            raise ValueError("make_private builds one process's data loader over the whole dataset: under "
                             "DistributedDataParallel, build privdyn.torch.DPOptimizer(..., distributed=True) "
                             "with a loader per rank that samples its shard (see docs/torch.md).")
        errors = ModuleValidator.validate(module, strict=False)
        if errors:
            raise ValueError(f"module has a layer with no per-example gradient rule: {errors[0]}")
        wrapped = GradSampleModule(module, batch_first=batch_first, loss_reduction=loss_reduction, strict=True)
        private = DPOptimizer(optimizer, noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm,
                              expected_batch_size=batch_size, strategy=self.strategy, noise_source=self.noise_source,
                              num_steps=horizon, regenerate=self.regenerate, loss_reduction=loss_reduction)
        private._privdyn_accountant = self.accountant
        batches = BatchSampler(n, batch_size, sampler=self.sampler, num_steps=steps_per_epoch,
                               generator=self.sampling_generator, strategy=self.strategy)
        loader = torch.utils.data.DataLoader(data_loader.dataset, batch_sampler=batches,
                                             collate_fn=allow_empty_batches(data_loader.dataset,  # type: ignore[arg-type]
                                                                            data_loader.collate_fn),
                                             num_workers=data_loader.num_workers,
                                             pin_memory=data_loader.pin_memory)
        return wrapped, private, loader

    def make_private_with_epsilon(self, *, module: nn.Module, optimizer: torch.optim.Optimizer,
                                  data_loader: torch.utils.data.DataLoader, target_epsilon: float,
                                  target_delta: float, max_grad_norm: float, epochs: int | None = None,
                                  num_steps: int | None = None, batch_first: bool = True,
                                  loss_reduction: str = "mean", rtol: float = 1e-4,
                                  ) -> tuple[nn.Module, DPOptimizer, torch.utils.data.DataLoader]:
        """:meth:`make_private` with the smallest ``noise_multiplier`` (to ``rtol``) whose planned run is
        ``(target_epsilon, target_delta)``-DP under privdyn's accountant (the calibration is kept in
        :attr:`calibration`, with its label). Correlated noise is calibrated by the amplified bound, seconds per
        search step: ``rtol=1e-2`` keeps it short."""
        n, batch_size, steps_per_epoch = self._sizes(data_loader)
        horizon = self._horizon(epochs, num_steps, steps_per_epoch)
        if horizon is None:
            raise ValueError("give epochs or num_steps: the calibration needs the horizon; got neither.")
        self.calibration = calibrate_noise_multiplier(self.strategy, epsilon=target_epsilon, delta=target_delta, n=n,
                                                      batch_size=batch_size, num_steps=horizon, sampler=self.sampler,
                                                      neighboring=self.neighboring, rtol=rtol)
        return self.make_private(module=module, optimizer=optimizer, data_loader=data_loader,
                                 noise_multiplier=float(self.calibration), max_grad_norm=max_grad_norm,
                                 num_steps=horizon, delta=target_delta, batch_first=batch_first,
                                 loss_reduction=loss_reduction)

    def get_epsilon(self, delta: float) -> float:
        """``epsilon`` of the steps taken so far (see :meth:`privacy_spent` for its label and relation).

        When the sampler or the neighbouring relation is not Opacus' (Poisson, add/remove), every call also warns with
        the value and the sampler and relation it holds for, so that the number is never read under Opacus'
        semantics."""
        loss = self.privacy_spent(delta)
        if (self.sampler, self.neighboring) != OPACUS_SEMANTICS:
            warnings.warn(f"epsilon={float(loss):.6g} at delta={delta!r} holds for {self.sampler} sampling and "
                          f"{self.neighboring} neighbours (explicit arguments; Opacus reports Poisson sampling and "
                          "add_remove neighbours).", SemanticsWarning, stacklevel=2)
        return float(loss)

    def privacy_spent(self, delta: float) -> PrivacyLoss:
        if self.accountant is None:
            raise ValueError("make_private has not been called: there is no run to account.")
        return self.accountant.privacy_spent(delta)

    @staticmethod
    def _sizes(data_loader: torch.utils.data.DataLoader) -> tuple[int, int, int]:
        """``(n, batch_size, steps per epoch = len(data_loader))``."""
        if not isinstance(data_loader, torch.utils.data.DataLoader):
            raise TypeError(f"data_loader must be a torch DataLoader; got {type(data_loader).__name__}.")
        if data_loader.batch_size is None:
            raise ValueError("data_loader must have a batch_size (the sampler's batch size); got None.")
        steps = len(data_loader)
        if steps < 1:
            raise ValueError(f"data_loader must yield at least one batch per epoch; len(data_loader)={steps}.")
        return len(data_loader.dataset), int(data_loader.batch_size), steps  # type: ignore[arg-type]

    @staticmethod
    def _horizon(epochs: int | None, num_steps: int | None, steps_per_epoch: int) -> int | None:
        if epochs is not None and num_steps is not None:
            raise ValueError("give epochs or num_steps, not both.")
        if epochs is not None:
            _check.integer(minimum=1, epochs=epochs)
            return int(epochs) * steps_per_epoch
        return num_steps
