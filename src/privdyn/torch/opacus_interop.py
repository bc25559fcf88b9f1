"""Opacus interop: a ``DPOptimizer`` whose noise is privdyn's correlated noise, and a drop-in ``PrivacyEngine``.

An Opacus script changes one line, ``opacus.PrivacyEngine()`` -> ``privdyn.torch.PrivacyEngine()`` (independent noise)
or ``privdyn.torch.PrivacyEngine(strategy=LambdaCGD(0.5))`` (correlated noise):
``make_private`` then wraps the model in Opacus' ``GradSampleModule`` (per-example gradients by hooks), the optimizer
in :class:`DPOptimizer` (Opacus' per-example clipping; the noise ``clip * noise_multiplier * xi_t`` on the sum of
clipped gradients from :func:`privdyn.torch.noise_stream`, device-native :class:`~privdyn.torch.DeviceNormals` keyed
from OS entropy by default) and the data loader in privdyn's :class:`~privdyn.torch.BatchSampler`. The defaults are
Opacus' semantics: Poisson sampling, add/remove neighbours and ``len(data_loader)`` steps per epoch; fixed-size
batches (the kan paper's Algorithm 1, Wang et al., arXiv 2605.12648), zero-out neighbours or any other participation
come from a data loader whose ``batch_sampler`` is a :class:`~privdyn.torch.BatchSampler` (the one description of
the participation, read by the accountant), and :meth:`PrivacyEngine.get_epsilon` names them with every epsilon it
returns. Opacus' accountant is not used:
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
from privdyn._deprecation import deprecated_arguments
from privdyn.privacy.correlated import Independent, Strategy
from privdyn.privacy.labels import PrivacyLoss
from privdyn.torch.accountant import DPSGDAccountant, calibrate_participation
from privdyn.torch.distributed import broadcast_source, is_data_parallel, sum_across_ranks
from privdyn.torch.noise import Source, TorchNoiseStream, noise_stream, secure_source
from privdyn.torch.optimizer import flat_parameters, validate_private_args
from privdyn.torch.sampler import NEIGHBORING, BatchSampler, Participation, allow_empty_batches

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
        """The optimizer's and the noise stream's states, and the state of the accountant
        :meth:`PrivacyEngine.make_private` bound to this optimizer (None if none; it records its mechanism,
        :meth:`privdyn.torch.DPSGDAccountant.state_dict`)."""
        accountant = getattr(self, "_privdyn_accountant", None)
        return {"optimizer": self.original_optimizer.state_dict(), "steps": self.steps,
                "noise": None if self.noise is None else self.noise.state_dict(),
                "accountant": None if accountant is None else accountant.state_dict(),
                "holds_secret": bool(self.noise is not None and self.noise.holds_secret)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict`, the bound accountant's step count included (a checkpoint of another
        mechanism is refused, :meth:`privdyn.torch.DPSGDAccountant.load_state_dict`). A checkpoint saved before
        checkpoints held the accountant (no ``"accountant"`` entry) gives the accountant its ``steps``, with the
        accountant's warning that the mechanism could not be checked.

        Raises:
            ValueError: the accountant refuses the checkpoint; or this optimizer has an accountant and the
                checkpoint's optimizer had none (its steps were taken unaccounted).
        """
        accountant = getattr(self, "_privdyn_accountant", None)
        if accountant is not None:
            if "accountant" not in state_dict:
                saved = {"steps": int(state_dict["steps"])}
            elif state_dict["accountant"] is None:
                raise ValueError("the checkpoint has no accountant state (its optimizer was not made private by a "
                                 "PrivacyEngine): its steps cannot be accounted by this optimizer's accountant.")
            else:
                saved = state_dict["accountant"]
            counted = accountant.steps
            accountant.load_state_dict(saved)
            try:
                if self.noise is not None:
                    self.noise.load_state_dict(state_dict["noise"])
            except Exception:
                accountant.steps = counted
                raise
        elif self.noise is not None:
            self.noise.load_state_dict(state_dict["noise"])
        self.original_optimizer.load_state_dict(state_dict["optimizer"])
        self.steps = int(state_dict["steps"])


class PrivacyEngine:
    """A drop-in for ``opacus.PrivacyEngine`` with privdyn's noise, sampler and accountant.

    The participation is Opacus' (Poisson sampling at ``batch_size / n``, add/remove neighbours) for a plain data
    loader, and otherwise the data loader's own: give ``make_private`` a loader whose ``batch_sampler`` is a
    :class:`~privdyn.torch.BatchSampler`, and the engine samples with that very object and accounts its sampler kind,
    ``n``, batch size and neighbouring relation::

        batches = BatchSampler(len(dataset), 64, sampler="fixed_size", neighboring="zero_out", num_steps=steps)
        loader = DataLoader(dataset, batch_sampler=batches)
        model, optimizer, loader = PrivacyEngine(strategy=LambdaCGD(0.5)).make_private(
            module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=1.0, max_grad_norm=1.0, epochs=2)

    Args:
        strategy: the noise strategy (e.g. ``LambdaCGD(0.5)``; default ``Independent()``, Opacus' noise).
        noise_source: the normals (default :func:`~privdyn.torch.secure_source`).
        sampling_generator: the batches' :class:`numpy.random.Generator` when the engine builds the batch sampler of
            a plain data loader (default: OS entropy).
        regenerate: regenerate past normals instead of buffering them.
        sampler: deprecated (one release; give the data loader a batch sampler instead): ``"poisson"`` (the
            default, Opacus' sampling: each example joins each step with probability ``batch_size / n``),
            ``"fixed_size"`` (the kan paper's), ``"random_allocation"`` (every example in exactly one of the
            ``ceil(n / batch_size)`` steps of each epoch; independent noise only; the data loader must then have
            ``len(data_loader) = ceil(n / batch_size)``, i.e. ``drop_last=False``) or ``"shuffle"`` (which the
            allow-list refuses to account with amplification).
        neighboring: deprecated (one release; give the batch sampler its relation instead): the neighbouring relation
            of the reported epsilon, ``"add_remove"`` (the default, Opacus'), ``"zero_out"`` (the relation of Theorem
            F.12) or ``"replace_one"``.

    A deprecated ``sampler`` or ``neighboring`` that disagrees with the data loader's batch sampler is refused by
    ``make_private`` (a ``ValueError`` naming both values).
    """

    def __init__(self, *, strategy: Strategy | None = None, sampler: str | None = None,
                 neighboring: str | None = None, noise_source: Source | None = None,
                 sampling_generator: np.random.Generator | None = None,
                 regenerate: bool = False) -> None:
        _require_opacus()
        strategy = Independent() if strategy is None else strategy
        if not isinstance(strategy, Strategy):
            raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")
        given = [name for name, value in (("sampler", sampler), ("neighboring", neighboring)) if value is not None]
        if given:
            deprecated_arguments("PrivacyEngine", given, "give make_private a data loader whose batch_sampler is a "
                                 "privdyn.torch.BatchSampler(n, batch_size, sampler=..., neighboring=..., "
                                 "num_steps=...)")
        if neighboring is not None:
            _check.one_of(NEIGHBORING, neighboring=neighboring)
        self._given = (sampler, neighboring)
        self.strategy = strategy
        self.sampler = OPACUS_SEMANTICS[0] if sampler is None else sampler
        self.neighboring = OPACUS_SEMANTICS[1] if neighboring is None else neighboring
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

        A data loader whose ``batch_sampler`` is a :class:`~privdyn.torch.BatchSampler` keeps it: the returned loader
        draws from that same object and the accountant reads the participation from it (its ``n`` must be the
        dataset's size). Otherwise, as in Opacus, the data loader's ``batch_size`` becomes the (expected) batch size
        of a Poisson :class:`~privdyn.torch.BatchSampler` and ``len(data_loader)`` its steps per epoch (Opacus'
        Poisson rate is ``1 / len(data_loader)``; privdyn samples and accounts at ``batch_size / n``, the same rate
        when ``batch_size`` divides ``n`` and otherwise a slightly larger one). The horizon is ``num_steps`` or
        ``epochs`` times the steps per epoch (needed by the square-root strategy and to account the planned run at
        ``delta`` before training). The combination (strategy, sampler, neighboring) is checked against privdyn's
        allow-list here, before any step.
        """
        participation, batches, steps_per_epoch = self._participation(data_loader)
        horizon = self._horizon(epochs, num_steps, steps_per_epoch)
        validate_private_args(clip=max_grad_norm, noise_multiplier=noise_multiplier,
                              batch_size=participation.batch_size, n=participation.n, num_steps=horizon,
                              clip_name="max_grad_norm")
        self.accountant = DPSGDAccountant._from_participation(
            self.strategy, participation, noise_multiplier=noise_multiplier, num_steps=horizon, delta=delta,
            batch_sampler=batches)
        self.sampler, self.neighboring = participation.sampler, participation.neighboring
        if is_data_parallel(module):
            raise ValueError("make_private builds one process's data loader over the whole dataset: under "
                             "DistributedDataParallel, build privdyn.torch.DPOptimizer(..., distributed=True) "
                             "with a loader per rank that samples its shard (see docs/torch.md).")
        errors = ModuleValidator.validate(module, strict=False)
        if errors:
            raise ValueError(f"module has a layer with no per-example gradient rule: {errors[0]}")
        wrapped = GradSampleModule(module, batch_first=batch_first, loss_reduction=loss_reduction, strict=True)
        private = DPOptimizer(optimizer, noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm,
                              expected_batch_size=participation.batch_size, strategy=self.strategy,
                              noise_source=self.noise_source, num_steps=horizon, regenerate=self.regenerate,
                              loss_reduction=loss_reduction)
        private._privdyn_accountant = self.accountant
        if batches is None:
            batches = BatchSampler(participation.n, participation.batch_size, sampler=participation.sampler,
                                   neighboring=participation.neighboring, num_steps=steps_per_epoch,
                                   generator=self.sampling_generator, strategy=self.strategy)
            self.accountant.batch_sampler = batches
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
        participation, _, steps_per_epoch = self._participation(data_loader)
        horizon = self._horizon(epochs, num_steps, steps_per_epoch)
        if horizon is None:
            raise ValueError("give epochs or num_steps: the calibration needs the horizon; got neither.")
        self.calibration = calibrate_participation(self.strategy, participation, epsilon=target_epsilon,
                                                   delta=target_delta, num_steps=horizon, rtol=rtol)
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

    def _participation(self, data_loader: torch.utils.data.DataLoader,
                       ) -> tuple[Participation, BatchSampler | None, int]:
        """``(participation, the loader's privdyn batch sampler or None, steps per epoch = len(data_loader))``."""
        if not isinstance(data_loader, torch.utils.data.DataLoader):
            raise TypeError(f"data_loader must be a torch DataLoader; got {type(data_loader).__name__}.")
        n = len(data_loader.dataset)  # type: ignore[arg-type]
        sampler, neighboring = self._given
        default_sampler = OPACUS_SEMANTICS[0] if sampler is None else sampler
        default_relation = OPACUS_SEMANTICS[1] if neighboring is None else neighboring
        batches = data_loader.batch_sampler
        if isinstance(batches, BatchSampler):
            batches.check_run(sampler=sampler, neighboring=neighboring, strategy=self.strategy)
            if batches.n != n:
                raise ValueError(f"the data loader's batch sampler draws from n={batches.n} examples, but its dataset "
                                 f"has len(dataset)={n}: the accountant would account another participation than "
                                 "the one the data loader draws.")
            relation = batches.neighboring if batches.neighboring is not None else default_relation
            return Participation(batches.sampler, n, batches.batch_size, relation), batches, len(batches)
        if data_loader.batch_size is None:
            raise ValueError("data_loader must have a batch_size (the sampler's batch size) or a privdyn.torch."
                             f"BatchSampler as its batch_sampler; got batch_size=None and a "
                             f"{type(batches).__name__}.")
        steps = len(data_loader)
        if steps < 1:
            raise ValueError(f"data_loader must yield at least one batch per epoch; len(data_loader)={steps}.")
        batch_size = int(data_loader.batch_size)
        if default_sampler == "random_allocation" and steps != -(-n // batch_size):
            raise ValueError(f"random allocation puts every example in one of the ceil(n / batch_size) = "
                             f"{-(-n // batch_size)} steps of an epoch; the data loader has len(data_loader) = "
                             f"{steps} (build it with drop_last=False).")
        return Participation(default_sampler, n, batch_size, default_relation), None, steps

    @staticmethod
    def _horizon(epochs: int | None, num_steps: int | None, steps_per_epoch: int) -> int | None:
        if epochs is not None and num_steps is not None:
            raise ValueError("give epochs or num_steps, not both.")
        if epochs is not None:
            _check.integer(minimum=1, epochs=epochs)
            return int(epochs) * steps_per_epoch
        return num_steps
