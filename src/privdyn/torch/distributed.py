"""Data-parallel private training: the clipped sums of all ranks summed once, the same noise on every rank.

Under :class:`torch.nn.parallel.DistributedDataParallel` each rank holds a shard of the batch of step ``t``. The
private gradient of the whole batch (:mod:`privdyn.torch.optimizer`) is::

    grad = (1 / batch_size) (sum_ranks sum_{i in rank's shard} clip(g_i) + clip * noise_multiplier * xi_t)

so each rank clips its own examples, the per-rank clipped sums are summed across ranks (one all-reduce of a
parameter-sized tensor), and the noise is added once: every rank holds the same noise source (the key of rank 0,
broadcast when the optimizer is built) and the same correlated-noise state, so every rank computes the same
``xi_t`` locally, with no communication, and all ranks take the same step. ``batch_size`` is the (expected) batch size
of the whole step, over all ranks. The key travels over the process group's transport once: on a network that others
can read, that transport must be protected like the checkpoints that hold the key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import torch
import torch.distributed as dist

from privdyn.rng import StepNormals
from privdyn.torch.device_source import DeviceNormals
from privdyn.torch.noise import SecretStepNormals, Source

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

__all__ = ["broadcast_source", "is_data_parallel", "sum_across_ranks", "unwrap"]


def is_data_parallel(module: Any) -> bool:
    """Whether ``module`` is wrapped in :class:`torch.nn.parallel.DistributedDataParallel`."""
    return isinstance(module, torch.nn.parallel.DistributedDataParallel)


def unwrap(module: torch.nn.Module) -> torch.nn.Module:
    """The module inside a :class:`~torch.nn.parallel.DistributedDataParallel` wrapper (``module`` otherwise)."""
    return cast(torch.nn.Module, module.module) if is_data_parallel(module) else module


def _require_process_group() -> None:
    if not (dist.is_available() and dist.is_initialized()):
        raise ValueError("distributed training needs an initialized process group (torch.distributed."
                         "init_process_group); got none.")


def broadcast_source(source: Source, group: ProcessGroup | None = None) -> Source:
    """Rank 0's noise source on every rank of ``group`` (a key and run, or a torch.Generator's state).

    A torch.Generator keeps its device; its state becomes rank 0's."""
    _require_process_group()
    if isinstance(source, torch.Generator):
        payload: list[Any] = [("torch.Generator", source.get_state())]
    elif isinstance(source, DeviceNormals):
        payload = [("DeviceNormals", source.key, source.run, source.secret)]
    elif isinstance(source, StepNormals):
        payload = [(type(source).__name__, source.key, source.run)]
    else:  # a CounterStream: its step normals
        converted = StepNormals.from_counter_stream(source)
        payload = [("StepNormals", converted.key, converted.run)]
    dist.broadcast_object_list(payload, src=dist.get_global_rank(group, 0) if group is not None else 0, group=group)
    kind, *values = payload[0]
    if kind == "torch.Generator":
        if not isinstance(source, torch.Generator):
            raise ValueError("rank 0 holds a torch.Generator noise source; this rank does not.")
        source.set_state(values[0])
        return source
    if kind == "DeviceNormals":
        return DeviceNormals(int(values[0]), int(values[1]), secret=bool(values[2]))
    cls = SecretStepNormals if kind == "SecretStepNormals" else StepNormals
    return cls(int(values[0]), int(values[1]))


def sum_across_ranks(tensors: list[torch.Tensor], group: ProcessGroup | None = None) -> list[torch.Tensor]:
    """``tensors`` summed over the ranks of ``group`` (one all-reduce of their concatenation), in their shapes."""
    _require_process_group()
    flat = torch.cat([t.reshape(-1) for t in tensors])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM, group=group)
    out, offset = [], 0
    for t in tensors:
        out.append(flat[offset: offset + t.numel()].view_as(t))
        offset += t.numel()
    return out
