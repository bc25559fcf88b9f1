"""A private optimizer around any torch optimizer: per-example gradients, clipping, correlated noise, accounting.

One step of DP-SGD with correlated noise (the kan paper's Algorithm 1, Wang et al., arXiv 2605.12648; matrix-mechanism
noise of any :class:`~privdyn.privacy.correlated.Strategy`), with the batch ``B_t`` given by the caller::

    g_i = grad_theta loss(theta; x_i, y_i)                           per-example gradients, i in B_t
    grad = (1 / batch_size) (sum_i g_i min(1, clip / ||g_i||) + clip * noise_multiplier * xi_t)
    optimizer.step()                                                   any torch optimizer reads grad

where ``||g_i||`` is the norm over all trained parameters together, ``xi_t = (C^{-1} Z)_t`` the strategy's noise over
the flattened parameters (:mod:`privdyn.torch.noise`) and ``batch_size`` the sampler's (expected) batch size.

Per-example gradients (``per_example``):

* ``"closed_form"``: a module with the rank-one rule ``loss_and_gradient_factors(x, y) -> (losses, A, H)`` (the
  kan paper's KAN, :class:`privdyn.torch.KAN`): norms ``||A_i|| ||H_i||``, clipped sum ``(s * A)^T H``; no
  ``B x parameters`` tensor.
* ``"opacus"``: Opacus' ``GradSampleModule`` (hooks with a rule per layer type).
* ``"vmap"``: ``torch.func.vmap(torch.func.grad(...))`` over the examples.
* ``"auto"`` (default): closed form if the module has it, else Opacus when installed, else vmap.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from privdyn import _check
from privdyn.privacy.correlated import Independent, Strategy
from privdyn.privacy.labels import PrivacyLoss
from privdyn.torch.accountant import DPSGDAccountant, calibrate_participation
from privdyn.torch.distributed import broadcast_source, is_data_parallel, sum_across_ranks, unwrap
from privdyn.torch.noise import Source, TorchNoiseStream, noise_stream, secure_source
from privdyn.torch.sampler import BatchSampler, Participation, resolve_participation

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

__all__ = ["PER_EXAMPLE", "PrivateOptimizer", "flat_parameters", "validate_private_args"]

PER_EXAMPLE = ("auto", "closed_form", "opacus", "vmap")
"""How per-example gradients are computed (see the module docstring)."""

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def flat_parameters(optimizer: torch.optim.Optimizer, module: nn.Module | None = None) -> list[nn.Parameter]:
    """The trained parameters of ``optimizer`` (all of one dtype and device; all in ``module`` if given)."""
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer must be a torch.optim.Optimizer; got {type(optimizer).__name__}.")
    params = [p for group in optimizer.param_groups for p in group["params"] if p.requires_grad]
    if not params:
        raise ValueError("optimizer must hold at least one parameter with requires_grad=True; got none.")
    if module is not None:
        owned = {id(p) for p in module.parameters()}
        if any(id(p) not in owned for p in params):
            raise ValueError("optimizer holds parameters that are not the module's parameters.")
    kinds = {(p.dtype, p.device) for p in params}
    if len(kinds) > 1:
        raise ValueError(f"the trained parameters must share one dtype and device; got {sorted(map(str, kinds))}.")
    return params


def validate_private_args(*, clip: Any, noise_multiplier: Any, batch_size: Any, n: Any = None,
                          num_steps: Any = None, clip_name: str = "clip") -> None:
    """The checks every private optimizer runs before its first step (``ValueError`` naming the parameter; the
    clipping threshold is named ``clip_name``, e.g. Opacus' ``max_grad_norm``)."""
    _check.scalar(**{clip_name: clip}, noise_multiplier=noise_multiplier)
    _check.positive(**{clip_name: clip})
    _check.non_negative(noise_multiplier=noise_multiplier)
    _check.integer(minimum=1, batch_size=batch_size)
    if n is not None:
        _check.integer(minimum=1, n=n)
        if int(batch_size) > int(n):
            raise ValueError(f"batch_size must be <= n={int(n)} (the number of training examples); "
                             f"got batch_size={batch_size}.")
    if num_steps is not None:
        _check.finite(num_steps=num_steps)
        _check.integer(minimum=1, num_steps=num_steps)


def _check_horizon(stream_steps: int | None, num_steps: int | None) -> None:
    if stream_steps is not None and num_steps is not None and num_steps > stream_steps:
        raise ValueError(f"num_steps={num_steps} exceeds the noise strategy's horizon of {stream_steps} steps; "
                         f"build the noise for num_steps >= {num_steps}.")


def _has_closed_form(module: nn.Module) -> bool:
    return callable(getattr(module, "loss_and_gradient_factors", None)) and isinstance(
        getattr(module, "weight", None), nn.Parameter)


def _opacus_installed() -> bool:
    return importlib.util.find_spec("opacus") is not None


def _reject_mixing_layers(module: nn.Module) -> None:
    """Layers that mix the examples of a batch (batch normalization) have no per-example gradient."""
    for name, sub in module.named_modules():
        if isinstance(sub, nn.modules.batchnorm._BatchNorm):
            raise ValueError(f"module has a layer with no per-example gradient rule: {name or 'module'} "
                             f"({type(sub).__name__} mixes the examples of a batch); use GroupNorm or LayerNorm.")


class _ClosedForm:
    """Per-example gradients of a rank-one module (:class:`privdyn.torch.KAN`)."""

    def __init__(self, module: nn.Module, params: list[nn.Parameter]) -> None:
        if len(params) != 1 or params[0] is not module.weight:
            raise ValueError("per_example='closed_form' trains the module's weight alone; the optimizer holds "
                             f"{len(params)} parameter(s).")
        self.module: Any = module  # duck-typed: any module with loss_and_gradient_factors (_has_closed_form)

    def clipped_sum(self, x: torch.Tensor, y: torch.Tensor, clip: float) -> tuple[torch.Tensor, list[torch.Tensor]]:
        losses, a, h = self.module.loss_and_gradient_factors(x, y)
        norms = torch.linalg.vector_norm(a, dim=1) * torch.linalg.vector_norm(h, dim=1)
        factor = _clip_factor(norms, clip)
        return losses.detach(), [(a * factor.unsqueeze(1)).T @ h]


class _Vmap:
    """Per-example gradients by ``torch.func.vmap(torch.func.grad(...))``."""

    def __init__(self, module: nn.Module, params: list[nn.Parameter], loss_fn: LossFn) -> None:
        _reject_mixing_layers(module)
        names = {id(p): name for name, p in module.named_parameters()}
        self.module, self.params, self.loss_fn = module, params, loss_fn
        self.names = [names[id(p)] for p in params]

        def loss_one(trained: dict[str, torch.Tensor], x: torch.Tensor,
                     y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            out = torch.func.functional_call(self.module, trained, (x.unsqueeze(0),))
            loss = self.loss_fn(out, y.unsqueeze(0))
            return loss.sum(), loss.detach().sum()

        self._per_example = torch.func.vmap(torch.func.grad(loss_one, has_aux=True), in_dims=(None, 0, 0))

    def clipped_sum(self, x: torch.Tensor, y: torch.Tensor, clip: float) -> tuple[torch.Tensor, list[torch.Tensor]]:
        trained = {name: p.detach() for name, p in zip(self.names, self.params, strict=True)}
        grads, losses = self._per_example(trained, x, y)
        per_example = [grads[name] for name in self.names]
        return losses, _clip_and_sum(per_example, clip)


class _Opacus:
    """Per-example gradients by Opacus' ``GradSampleModule`` (hooks; loss summed over the batch)."""

    def __init__(self, module: nn.Module, params: list[nn.Parameter], loss_fn: LossFn) -> None:
        from opacus import GradSampleModule
        from opacus.validators import ModuleValidator

        errors = ModuleValidator.validate(module, strict=False)
        if errors:
            raise ValueError(f"module has a layer with no per-example gradient rule: {errors[0]}")
        try:
            self.wrapped = GradSampleModule(module, batch_first=True, loss_reduction="sum", strict=True)
        except NotImplementedError as error:
            raise ValueError(f"module has a layer with no per-example gradient rule in Opacus: {error}") from None
        self.params, self.loss_fn = params, loss_fn

    def clipped_sum(self, x: torch.Tensor, y: torch.Tensor, clip: float) -> tuple[torch.Tensor, list[torch.Tensor]]:
        for p in self.params:
            p.grad_sample = None  # type: ignore[attr-defined]  # Opacus' per-example gradient attribute
        losses = self.loss_fn(self.wrapped(x), y)
        with warnings.catch_warnings():  # the inputs need no gradient: Opacus' hooks fire on the outputs, as intended
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            losses.sum().backward()
        per_example = [p.grad_sample for p in self.params]  # type: ignore[attr-defined]
        for p in self.params:
            p.grad_sample = None  # type: ignore[attr-defined]
            p.grad = None
        return losses.detach(), _clip_and_sum(per_example, clip)


def _clip_factor(norms: torch.Tensor, clip: float) -> torch.Tensor:
    """``min(1, clip / norm)`` (1 for a zero gradient)."""
    return torch.where(norms > clip, clip / norms.clamp_min(torch.finfo(norms.dtype).tiny), torch.ones_like(norms))


def _clip_and_sum(per_example: list[torch.Tensor], clip: float) -> list[torch.Tensor]:
    batch = per_example[0].shape[0]
    squares = torch.stack([g.reshape(batch, -1).square().sum(dim=1) for g in per_example], dim=1).sum(dim=1)
    factor = _clip_factor(squares.sqrt(), clip)
    return [torch.einsum("i,i...->...", factor, g) for g in per_example]


class PrivateOptimizer:
    """DP-SGD with correlated noise around any torch optimizer (see the module docstring).

    Typical use: one :class:`~privdyn.torch.BatchSampler` draws the data loader's batches and describes them to the
    optimizer's accountant::

        batches = BatchSampler(n, B, sampler="poisson", neighboring="add_remove", num_steps=T)
        loader = DataLoader(dataset, batch_sampler=batches, collate_fn=allow_empty_batches(dataset))
        private = PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, loss_fn, clip=1.0,
                                   noise_multiplier=1.0, strategy=LambdaCGD(0.5), batch_sampler=batches, num_steps=T)
        for x, y in loader:
            private.step(x, y)
        private.privacy_spent(delta=1e-5)

    Args:
        optimizer: any torch optimizer over (some of) ``module``'s parameters; it reads the private ``.grad``.
        module: the model.
        loss_fn: ``loss_fn(module(x), y)`` returns the **per-example** losses, shape ``(batch,)`` (e.g.
            ``functools.partial(torch.nn.functional.cross_entropy, reduction="none")``); unused by the closed form.
        clip: per-example clipping threshold (> 0, finite).
        noise_multiplier: kappa >= 0: noise std ``clip * kappa`` on the sum of clipped gradients.
        batch_size: the (expected) batch size dividing the sum; default (and, if given, it must be) the batch
            sampler's. Required without a batch sampler.
        strategy: the noise strategy (default :class:`~privdyn.privacy.correlated.Independent`).
        noise_source: the normals: :func:`~privdyn.torch.secure_source` by default (device-native
            :class:`~privdyn.torch.DeviceNormals` keyed from OS entropy); a seeded
            :func:`~privdyn.torch.device_normals`, :class:`~privdyn.privacy.correlated.StepNormals`,
            :class:`~privdyn.rng.CounterStream` or :class:`torch.Generator` for experiments.
        num_steps: the horizon (required by the square-root strategy and for a planned accounting).
        regenerate: regenerate past normals instead of buffering them (strategies that support it).
        per_example: one of :data:`PER_EXAMPLE`.
        batch_sampler: the run's :class:`~privdyn.torch.BatchSampler`, the object the data loader draws its batches
            from: it binds the run to privdyn's accountant (:attr:`accountant`), which takes the sampler kind, ``n``,
            the batch size and the neighbouring relation from it (refused at construction if not on the allow-list);
            ``delta`` with ``num_steps`` also accounts the planned run up front. Without it the optimizer has no
            accountant.
        n, sampler, neighboring: deprecated (one release): the participation as loose values (all three, in place
            of ``batch_sampler``; ``neighboring`` also completes a batch sampler built without one). A value given
            with ``batch_sampler`` that disagrees with it raises a ``ValueError`` naming both.
        distributed: data-parallel training (:mod:`privdyn.torch.distributed`): each rank clips its own examples,
            the clipped sums are summed across ranks and the same noise (rank 0's key) is added on every rank;
            ``batch_size`` and ``n`` are then those of all ranks together. Default: whether ``module`` is wrapped in
            :class:`~torch.nn.parallel.DistributedDataParallel`.
        process_group: the ranks (default: the default process group).
    """

    calibration: PrivacyLoss
    """The calibrated noise multiplier, with its label, on an optimizer built by :meth:`with_epsilon`."""

    def __init__(self, optimizer: torch.optim.Optimizer, module: nn.Module, loss_fn: LossFn | None = None, *,
                 clip: float, noise_multiplier: float, batch_size: int | None = None,
                 strategy: Strategy | None = None,
                 noise_source: Source | None = None,
                 num_steps: int | None = None, regenerate: bool = False,
                 per_example: str = "auto", n: int | None = None, sampler: str | None = None,
                 neighboring: str | None = None, delta: float | None = None, distributed: bool | None = None,
                 process_group: ProcessGroup | None = None, batch_sampler: BatchSampler | None = None) -> None:
        if not isinstance(module, nn.Module):
            raise TypeError(f"module must be a torch.nn.Module; got {type(module).__name__}.")
        self.distributed = is_data_parallel(module) if distributed is None else bool(distributed)
        self.process_group = process_group
        module = unwrap(module)
        strategy = Independent() if strategy is None else strategy
        if not isinstance(strategy, Strategy):
            raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")
        participation = self._participation(batch_sampler, n=n, batch_size=batch_size, sampler=sampler,
                                            neighboring=neighboring, strategy=strategy)
        if batch_size is None:
            if participation is None:
                raise ValueError("give batch_sampler (a privdyn.torch.BatchSampler), or batch_size for an optimizer "
                                 "with no accountant; got neither.")
            batch_size = participation.batch_size
        validate_private_args(clip=clip, noise_multiplier=noise_multiplier, batch_size=batch_size,
                              n=None if participation is None else participation.n, num_steps=num_steps)
        _check.one_of(PER_EXAMPLE, per_example=per_example)
        self.params = flat_parameters(optimizer, module)
        self.optimizer, self.module = optimizer, module
        self.clip, self.noise_multiplier, self.batch_size = float(clip), float(noise_multiplier), int(batch_size)
        self.strategy = strategy
        self.num_steps = None if num_steps is None else int(num_steps)
        self.batch_sampler = batch_sampler
        self.accountant = None if participation is None else DPSGDAccountant._from_participation(
            strategy, participation, noise_multiplier=self.noise_multiplier, num_steps=self.num_steps, delta=delta,
            batch_sampler=batch_sampler)
        self.noise: TorchNoiseStream | None = None
        if self.noise_multiplier > 0:
            noise_source = secure_source() if noise_source is None else noise_source
            if self.distributed:
                noise_source = broadcast_source(noise_source, process_group)
            size = sum(p.numel() for p in self.params)
            self.noise = noise_stream(strategy, (size,), noise_source, num_steps=self.num_steps,
                                      regenerate=regenerate, scale=self.clip * self.noise_multiplier / self.batch_size,
                                      device=self.params[0].device, dtype=self.params[0].dtype)
        self.engine = self._engine(per_example, loss_fn)
        self.steps = 0

    @staticmethod
    def _participation(batch_sampler: BatchSampler | None, *, n: int | None, batch_size: int | None,
                       sampler: str | None, neighboring: str | None, strategy: Strategy,
                       stacklevel: int = 5) -> Participation | None:
        """The accounted participation (None: no accountant): the batch sampler's, or the deprecated strings'."""
        if batch_sampler is None and n is None and sampler is None and neighboring is None:
            return None
        return resolve_participation("PrivateOptimizer", batch_sampler, n=n, batch_size=batch_size, sampler=sampler,
                                     neighboring=neighboring, strategy=strategy, stacklevel=stacklevel)

    def _engine(self, per_example: str, loss_fn: LossFn | None) -> _ClosedForm | _Vmap | _Opacus:
        if per_example == "auto":
            per_example = ("closed_form" if _has_closed_form(self.module)
                           else "opacus" if _opacus_installed() else "vmap")
        self.per_example = per_example
        if per_example == "closed_form":
            if not _has_closed_form(self.module):
                raise ValueError(f"module has no closed-form per-example gradient rule "
                                 f"(loss_and_gradient_factors); got {type(self.module).__name__}.")
            return _ClosedForm(self.module, self.params)
        if loss_fn is None or not callable(loss_fn):
            raise TypeError(f"loss_fn must be a callable returning per-example losses; got {loss_fn!r}.")
        if per_example == "opacus":
            if not _opacus_installed():
                raise ValueError("per_example='opacus' needs Opacus (pip install opacus); use 'vmap'.")
            return _Opacus(self.module, self.params, loss_fn)
        return _Vmap(self.module, self.params, loss_fn)

    @classmethod
    def with_epsilon(cls, optimizer: torch.optim.Optimizer, module: nn.Module, loss_fn: LossFn | None = None, *,
                     epsilon: float, delta: float, clip: float, num_steps: int,
                     batch_sampler: BatchSampler | None = None, strategy: Strategy | None = None,
                     rtol: float = 1e-4, batch_size: int | None = None, n: int | None = None,
                     sampler: str | None = None, neighboring: str | None = None, **kwargs: Any) -> PrivateOptimizer:
        """A :class:`PrivateOptimizer` whose ``noise_multiplier`` is calibrated so that ``num_steps`` steps over
        ``batch_sampler``'s participation are ``(epsilon, delta)``-DP (``make_private_with_epsilon``), within
        ``rtol`` of the smallest such multiplier (:func:`~privdyn.torch.accountant.calibrate_noise_multiplier`).
        ``n``, ``sampler`` and ``neighboring`` are deprecated, as in the constructor."""
        strategy = Independent() if strategy is None else strategy
        participation = cls._participation(batch_sampler, n=n, batch_size=batch_size, sampler=sampler,
                                           neighboring=neighboring, strategy=strategy)
        if participation is None:
            raise ValueError("with_epsilon calibrates for the batch sampler's participation: give batch_sampler (a "
                             "privdyn.torch.BatchSampler); got none.")
        kappa = calibrate_participation(strategy, participation, epsilon=epsilon, delta=delta, num_steps=num_steps,
                                        rtol=rtol)
        with warnings.catch_warnings():  # the deprecated arguments have been warned of once, above
            warnings.simplefilter("ignore", DeprecationWarning)
            private = cls(optimizer, module, loss_fn, clip=clip, noise_multiplier=float(kappa),
                          batch_size=participation.batch_size, strategy=strategy, num_steps=num_steps, n=n,
                          sampler=sampler, neighboring=neighboring, delta=delta, batch_sampler=batch_sampler,
                          **kwargs)
        private.calibration = kappa
        return private

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.optimizer.zero_grad(set_to_none=set_to_none)

    def step(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """One private step on the batch ``(x, y)``; returns the batch's per-example losses (detached).

        An empty batch (size 0 along the first axis: Poisson sampling or random allocation, collated by
        :func:`~privdyn.torch.allow_empty_batches`) is a step like any other: the update is the step's noise alone, the
        noise stream advances and the accountant counts the step."""
        if self.num_steps is not None and self.steps >= self.num_steps:
            raise ValueError(f"the run has taken all num_steps={self.num_steps} steps.")
        if self.accountant is not None:
            self.accountant.step()
        if x.shape[0]:
            losses, sums = self.engine.clipped_sum(x, y, self.clip)
        else:
            losses, sums = x.new_zeros((0,)), [torch.zeros_like(p) for p in self.params]
        if self.distributed:
            sums = sum_across_ranks(sums, self.process_group)
        noise = self.noise.next().view(-1) if self.noise is not None else None
        offset = 0
        for p, total in zip(self.params, sums, strict=True):
            grad = total.reshape(p.shape).to(p.dtype).div_(self.batch_size)
            if noise is not None:
                grad.add_(noise[offset: offset + p.numel()].view_as(p))
            offset += p.numel()
            p.grad = grad
        self.optimizer.step()
        self.steps += 1
        return losses

    def privacy_spent(self, delta: float) -> PrivacyLoss:
        """``epsilon`` of the steps taken so far (guarantee label and neighbouring relation in the result)."""
        if self.accountant is None:
            raise ValueError("this optimizer is not bound to an accountant: pass batch_sampler (a "
                             "privdyn.torch.BatchSampler with its neighbouring relation).")
        return self.accountant.privacy_spent(delta)

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's, the noise stream's and the accountant's states (see
        :meth:`privdyn.torch.TorchNoiseStream.state_dict` for ``holds_secret``; the accountant's records its
        mechanism, :meth:`privdyn.torch.DPSGDAccountant.state_dict`)."""
        return {"optimizer": self.optimizer.state_dict(), "steps": self.steps,
                "noise": None if self.noise is None else self.noise.state_dict(),
                "accountant": None if self.accountant is None else self.accountant.state_dict(),
                "holds_secret": bool(self.noise is not None and self.noise.holds_secret)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict`. The noise stream refuses another strategy, scale or source, and the
        accountant a checkpoint of another mechanism (:meth:`privdyn.torch.DPSGDAccountant.load_state_dict`); a
        refused checkpoint leaves the accountant's step count as it was.

        Raises:
            ValueError: as above; or this optimizer has an accountant and the checkpoint none (its steps were taken
                unaccounted, and resuming would report the privacy of the steps after it alone).
        """
        if (state["noise"] is None) != (self.noise is None):
            raise ValueError("the checkpoint's noise does not match this optimizer's (one has noise, one not).")
        if self.accountant is not None and state.get("accountant") is None:
            raise ValueError("the checkpoint has no accountant state (it was saved by an optimizer with no "
                             "batch_sampler): its steps cannot be accounted by this optimizer's accountant.")
        counted = None if self.accountant is None else self.accountant.steps
        try:
            if self.accountant is not None:
                self.accountant.load_state_dict(state["accountant"])
            if self.noise is not None:
                self.noise.load_state_dict(state["noise"])
        except Exception:
            if self.accountant is not None and counted is not None:
                self.accountant.steps = counted
            raise
        self.optimizer.load_state_dict(state["optimizer"])
        self.steps = int(state["steps"])

    def __repr__(self) -> str:
        return (f"PrivateOptimizer({type(self.optimizer).__name__}, clip={self.clip!r}, "
                f"noise_multiplier={self.noise_multiplier!r}, batch_size={self.batch_size}, "
                f"strategy={self.strategy!r}, per_example={self.per_example!r}, steps={self.steps})")
