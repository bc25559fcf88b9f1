"""privdyn for PyTorch: correlated-noise DP-SGD, its accountant, Opacus interop and the kan paper's KAN.

An optional extra (``pip install "privdyn[torch]"``); ``import privdyn`` never imports this package. Contents:

* :func:`noise_stream` / :class:`TorchNoiseStream`: every privdyn noise strategy streamed into tensors on the
  parameters' device, from :class:`DeviceNormals` (keyed counter-based normals computed on that device, the
  default), from privdyn's NumPy counter-based source (the same noise as the NumPy streams of
  :mod:`privdyn.privacy.correlated`) or from a :class:`torch.Generator`; checkpoint and resume; :func:`secure_source`
  draws the key from OS entropy.
* :class:`PrivateOptimizer`: per-example gradients, per-example clipping and correlated noise around any torch
  optimizer; :class:`PrivacyEngine` and :class:`DPOptimizer` for Opacus scripts (Opacus' semantics by default;
  :class:`SemanticsWarning` names any other with each epsilon); both train data-parallel under
  ``DistributedDataParallel`` (:mod:`privdyn.torch.distributed`).
* :class:`BatchSampler` and :class:`DPSGDAccountant`: the participation the accountant assumes, and the accountant.
  One batch sampler is both the data loader's ``batch_sampler`` and the one description (sampler kind, ``n``, batch
  size, neighbouring relation) that the optimizer, the accountant and the engine read; the accountant's checkpoint
  records the mechanism and refuses to load into another. :func:`allow_empty_batches` lets a data loader yield
  Poisson sampling's empty batches.
* :class:`KAN`: the kan paper's two-layer KAN with closed-form rank-one per-example gradients.
"""

from __future__ import annotations

import importlib


def _require_torch() -> None:
    try:
        module = importlib.import_module("torch")
    except ImportError as error:
        raise ImportError("privdyn.torch needs PyTorch, which is not installed: install the extra with "
                          "pip install \"privdyn[torch]\" (after pip install torch==2.13.0 for the CPU build)."
                          ) from error
    if not hasattr(module, "Tensor"):
        raise ImportError("privdyn.torch needs PyTorch, but the module named torch found on the path is not "
                          "PyTorch: install the extra with pip install \"privdyn[torch]\".")


_require_torch()

from privdyn.torch.accountant import DPSGDAccountant  # noqa: E402
from privdyn.torch.device_source import DeviceNormals, device_normals  # noqa: E402
from privdyn.torch.kan import KAN  # noqa: E402
from privdyn.torch.noise import SecretStepNormals, TorchNoiseStream, noise_stream, secure_source  # noqa: E402
from privdyn.torch.opacus_interop import DPOptimizer, PrivacyEngine, SemanticsWarning  # noqa: E402
from privdyn.torch.optimizer import PrivateOptimizer  # noqa: E402
from privdyn.torch.sampler import BatchSampler, allow_empty_batches  # noqa: E402

__all__ = [
    "BatchSampler",
    "DPOptimizer",
    "DPSGDAccountant",
    "DeviceNormals",
    "KAN",
    "PrivacyEngine",
    "PrivateOptimizer",
    "SecretStepNormals",
    "SemanticsWarning",
    "TorchNoiseStream",
    "allow_empty_batches",
    "device_normals",
    "noise_stream",
    "secure_source",
]
