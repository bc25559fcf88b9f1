"""Correlated DP noise streamed into torch tensors: every strategy of :mod:`privdyn.privacy.correlated`.

The noise of step ``t`` is ``scale * (C^{-1} Z)_t`` for the strategy's noise matrix ``C^{-1}`` (the matrix mechanism
of Denisov et al. 2022, arXiv 2202.08312; Choquette-Choo et al. 2023, arXiv 2211.06530; DP-lambda-CGD is the kan
paper's Algorithm 1, Wang et al., arXiv 2605.12648, eqs. (24)-(25)). The recursions are those of the NumPy streams,
performed with tensor operations on the parameters' device and dtype:

* a finite history ``xi_t = sum_{j<=K} d_j Z_{t-j}`` (:class:`~privdyn.privacy.correlated.Independent`,
  :class:`~privdyn.privacy.correlated.LambdaCGD`, :class:`~privdyn.privacy.correlated.BandedInverse`,
  :class:`~privdyn.privacy.correlated.SquareRoot`): a ring of ``K`` past normals, or none when they are regenerated;
* forward substitution ``xi_t = (Z_t - sum_j c_j xi_{t-j}) / c_0``
  (:class:`~privdyn.privacy.correlated.Toeplitz`): the last ``L - 1`` noise vectors;
* BLT (:class:`~privdyn.privacy.correlated.BufferedToeplitz`): ``xi_t = Z_t - sum_i omega_i s_i`` and
  ``s_i <- theta_i s_i + xi_t``: one state per buffer.

Three sources of the normals ``Z_t``:

* :class:`~privdyn.torch.DeviceNormals` (the default: :func:`secure_source`): keyed counter-based normals computed on
  the parameters' device (Philox4x32-10 and Box-Muller, :mod:`privdyn.torch.device_source`); ``Z_t`` is a pure
  function of (key, t, position), so past normals are regenerated on the device, chunk by chunk, instead of stored,
  and the CPU and CUDA noise of one key agree.
* privdyn's NumPy counter-based :class:`~privdyn.privacy.correlated.StepNormals` (or a
  :class:`~privdyn.rng.CounterStream`), for experiments that must match the NumPy streams: ``Z_t`` is drawn by
  NumPy's Philox from the counter of step ``t``, chunk by chunk, and copied to the device; the noise is the NumPy
  stream's to float64 / float32 rounding (``secure_source(numpy_identical=True)`` keys it from OS entropy).
* a :class:`torch.Generator`: normals drawn natively on the generator's device. Regeneration restores the generator's
  state saved at the past step (a few kilobytes, not a parameter-sized buffer).

Noise from a known seed is not private. :func:`secure_source` draws a 64-bit key from the operating system's entropy
(:mod:`secrets`); its repr and the stream's hide the key, and a checkpoint that holds it says so
(``state_dict()["holds_secret"]``). Philox is a counter-based generator built for statistical quality, not a vetted
cryptographic cipher, and the Gaussian samplers are not hardened against floating-point attacks on the low-order bits
of the noise (Mironov 2012): the protection is against anyone who neither holds the key nor can observe the noise's
bit patterns.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import torch

from privdyn import _check
from privdyn.privacy.correlated import (
    DEFAULT_CHUNK_SIZE,
    BufferedToeplitz,
    StepNormals,
    Strategy,
    Toeplitz,
)
from privdyn.rng import CounterStream
from privdyn.torch.device_source import DeviceNormals

__all__ = ["SecretStepNormals", "Source", "TorchNoiseStream", "noise_stream", "secure_source"]

STATE_FORMAT = "privdyn.torch.noise_stream.v1"
"""The ``format`` entry of :meth:`TorchNoiseStream.state_dict`."""


class SecretStepNormals(StepNormals):
    """:class:`~privdyn.privacy.correlated.StepNormals` whose key came from OS entropy: its repr hides the key."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"SecretStepNormals(key=<hidden>, run={self.run})"


def secure_source(run: int = 0, *, numpy_identical: bool = False) -> DeviceNormals | SecretStepNormals:
    """Normals keyed by 64 bits of OS entropy (:func:`secrets.randbits`): noise nobody can reproduce from a seed.

    By default the device-native :class:`~privdyn.torch.DeviceNormals` (computed on the parameters' device);
    ``numpy_identical=True`` gives :class:`SecretStepNormals` instead (the NumPy streams' normals, drawn on the CPU
    and copied). The key is never printed; it is stored in checkpoints (:meth:`TorchNoiseStream.state_dict`, which
    then reports ``holds_secret=True``): keep such checkpoints as secret as the training data.
    """
    if numpy_identical:
        return SecretStepNormals(secrets.randbits(64), run)
    return DeviceNormals.secure(run)


Source = DeviceNormals | StepNormals | CounterStream | torch.Generator
"""What a stream draws its normals from (see the module docstring)."""


def _as_source(source: Any) -> DeviceNormals | StepNormals | torch.Generator:
    if isinstance(source, DeviceNormals | StepNormals | torch.Generator):
        return source
    if isinstance(source, CounterStream):
        return StepNormals.from_counter_stream(source)
    raise TypeError("source must be a privdyn.torch.DeviceNormals, a privdyn.privacy.correlated.StepNormals, a "
                    f"privdyn.rng.CounterStream or a torch.Generator; got source of type {type(source).__name__}.")


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int | np.integer):
        shape = (int(shape),)
    try:
        dims = tuple(shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints; got shape={shape!r}.") from None
    for d in dims:
        _check.integer(minimum=0, shape=d)
    return tuple(int(d) for d in dims)


def _recursion(strategy: Strategy, num_steps: int | None, regenerate: bool) -> tuple[str, dict[str, np.ndarray]]:
    """Which recursion streams ``strategy`` and its coefficients, through the strategy's public interface."""
    if isinstance(strategy, BufferedToeplitz):
        strategy.num_buffers(regenerate=regenerate)  # refuses regeneration with the strategy's own message
        return "blt", {"theta": strategy.buffer_decays, "omega": strategy.output_scales}
    if isinstance(strategy, Toeplitz):
        lags = strategy.num_buffers(num_steps, regenerate=regenerate)
        return "substitution", {"c": strategy.encoder_coefficients(lags + 1)}
    if isinstance(strategy, Strategy) and strategy.supports_regeneration:
        lags = strategy.num_buffers(num_steps)  # raises for SquareRoot without num_steps
        return "history", {"d": strategy.noise_coefficients(lags + 1)}
    if isinstance(strategy, Strategy):
        raise TypeError(f"no torch stream for the strategy {strategy!r}: privdyn.torch streams Independent, "
                        "LambdaCGD, BandedInverse, SquareRoot, Toeplitz and BufferedToeplitz.")
    raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")


class TorchNoiseStream:
    """Streaming ``scale * (C^{-1} Z)_t`` into a tensor of shape ``shape``, t = 1, 2, ... (see the module docstring).

    Build one with :func:`noise_stream`. Memory: the output tensor, :attr:`buffers` (exactly
    ``strategy.num_buffers(num_steps, regenerate=regenerate)`` tensors of the parameter's shape, dtype and device) and
    one chunk of scratch (``chunk_size`` entries).

    Attributes:
        strategy, shape, scale, num_steps, regenerate, device, dtype: as given.
        step: the number of steps produced so far.
    """

    def __init__(self, strategy: Strategy, shape: int | Sequence[int],
                 source: Source, *, scale: float = 1.0,
                 device: torch.device | str | None = None, dtype: torch.dtype | None = None,
                 num_steps: int | None = None, regenerate: bool = False,
                 chunk_size: int = DEFAULT_CHUNK_SIZE) -> None:
        self.source = _as_source(source)
        if num_steps is not None:
            _check.finite(num_steps=num_steps)
            _check.integer(minimum=1, num_steps=num_steps)
            num_steps = int(num_steps)
        self.kind, coefficients = _recursion(strategy, num_steps, bool(regenerate))
        self.strategy = strategy
        self.shape = _shape(shape)
        self.size = int(math.prod(self.shape))
        _check.scalar(scale=scale)
        _check.non_negative(scale=scale)
        _check.integer(minimum=1, chunk_size=chunk_size)
        self.scale = float(scale)
        self.num_steps = num_steps
        self.regenerate = bool(regenerate)
        self.dtype = torch.get_default_dtype() if dtype is None else dtype
        if not (isinstance(self.dtype, torch.dtype) and self.dtype.is_floating_point):
            raise TypeError(f"dtype must be a floating-point torch.dtype; got dtype={dtype!r}.")
        if isinstance(self.source, torch.Generator):
            generator_device = self.source.device
            self.device = generator_device if device is None else torch.device(device)
            if self.device.type != generator_device.type:
                raise ValueError(f"device must be the generator's device ({generator_device}); got device={device!r}.")
        else:
            self.device = torch.device("cpu") if device is None else torch.device(device)
        self.chunk_size = int(min(chunk_size, max(self.size, 1)))
        self._coefficients = {name: np.asarray(value, dtype=np.float64) for name, value in coefficients.items()}
        if self.kind == "history":
            lags = self._coefficients["d"].size - 1
            count = 0 if self.regenerate else lags
        elif self.kind == "substitution":
            lags = count = self._coefficients["c"].size - 1
        else:
            lags = count = self._coefficients["theta"].size
        self._lags = lags
        self._buffers = [torch.zeros(self.size, dtype=self.dtype, device=self.device) for _ in range(count)]
        self.step = 0
        self._out: torch.Tensor | None = None
        self._host = np.empty(self.chunk_size)  # float64 draws of the counter-based source, chunk by chunk
        self._scratch: torch.Tensor | None = None  # one chunk, only when normals are regenerated
        # torch.Generator source: the generator state at the start of each of the last `lags` steps (regeneration)
        self._states: list[torch.Tensor] = []
        self._aux: list[torch.Generator] = []

    # -- what the stream holds ------------------------------------------------------------------------------------

    @property
    def buffers(self) -> tuple[torch.Tensor, ...]:
        """The parameter-sized tensors the stream holds besides its output (views of its state)."""
        return tuple(b.view(self.shape) for b in self._buffers)

    @property
    def buffer_bytes(self) -> int:
        """Bytes held by :attr:`buffers`."""
        return sum(b.numel() * b.element_size() for b in self._buffers)

    @property
    def holds_secret(self) -> bool:
        """Whether the stream's state reveals noise that must stay secret: a :func:`secure_source` key or the state of
        a torch.Generator (whose seed privdyn cannot know to be public)."""
        if isinstance(self.source, DeviceNormals):
            return self.source.secret
        return isinstance(self.source, SecretStepNormals | torch.Generator)

    def __repr__(self) -> str:
        source = "torch.Generator" if isinstance(self.source, torch.Generator) else repr(self.source)
        return (f"TorchNoiseStream({self.strategy!r}, shape={self.shape}, source={source}, scale={self.scale!r}, "
                f"step={self.step}, buffers={len(self._buffers)}, dtype={self.dtype}, device={self.device})")

    # -- drawing the normals ------------------------------------------------------------------------------------

    def _chunks(self) -> list[tuple[int, int]]:
        return [(a, min(a + self.chunk_size, self.size)) for a in range(0, self.size, self.chunk_size)]

    def _counter_draw(self, step: int, target: torch.Tensor) -> None:
        """``Z_step`` from the counter-based source into the flat tensor ``target`` (chunk by chunk)."""
        generator = cast(StepNormals, self.source).generator(step)
        if target.device.type == "cpu" and target.dtype == torch.float64 and target.is_contiguous():
            generator.standard_normal(out=target.numpy())
            return
        for a, b in self._chunks():
            host = self._host[: b - a]
            generator.standard_normal(out=host)
            target[a:b].copy_(torch.from_numpy(host))

    def _counter_chunks(self, steps: list[int]) -> list[np.random.Generator]:
        source = cast(StepNormals, self.source)
        return [source.generator(s) for s in steps]

    def _native_draw(self, generator: torch.Generator, target: torch.Tensor) -> None:
        """Normals from a torch.Generator into ``target``, always in the same chunks (so that regeneration from a
        saved state reproduces them)."""
        for a, b in self._chunks():
            target[a:b].normal_(generator=generator)

    def _draw(self, step: int, target: torch.Tensor) -> None:
        """``Z_step`` (the step being produced) into ``target``; with a torch.Generator, remember its state first."""
        if isinstance(self.source, DeviceNormals):
            self.source.standard_normal(step, target)
        elif isinstance(self.source, torch.Generator):
            if self.regenerate and self._lags:
                self._states.append(self.source.get_state())
                del self._states[: -self._lags - 1]
            self._native_draw(self.source, target)
        else:
            self._counter_draw(step, target)

    # -- one step -----------------------------------------------------------------------------------------------

    def next(self, out: torch.Tensor | None = None) -> torch.Tensor:
        """The noise of the next step (t = :attr:`step` + 1), written into ``out`` (or the stream's own tensor)."""
        if self.num_steps is not None and self.step >= self.num_steps:
            raise ValueError(f"the stream has produced all num_steps={self.num_steps} steps.")
        target = self._output(out)
        self.step += 1
        flat = target.view(-1)
        if self.kind == "history":
            if self.regenerate and min(self._lags, self.step - 1) > 0:
                self._history_regenerated(self.step, flat)
            else:
                self._history_buffered(self.step, flat)
        elif self.kind == "substitution":
            self._substitution(self.step, flat)
        else:
            self._blt(self.step, flat)
        if self.scale != 1.0:
            flat.mul_(self.scale)
        return target

    def _output(self, out: torch.Tensor | None) -> torch.Tensor:
        if out is None:
            if self._out is None:
                self._out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
            return self._out
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"out must be a torch.Tensor; got {type(out).__name__}.")
        if tuple(out.shape) != self.shape or out.dtype != self.dtype or out.device != self.device \
                or not out.is_contiguous():
            raise ValueError(f"out must be a contiguous tensor of shape {self.shape}, dtype {self.dtype} on "
                             f"{self.device}; got shape {tuple(out.shape)}, dtype {out.dtype} on {out.device}.")
        return out

    def _history_buffered(self, t: int, flat: torch.Tensor) -> None:
        # out = sum_{j>=1} d_j Z_{t-j} (j in order), then Z_t into its ring slot (whose Z_{t-K} was just read),
        # then out += d_0 Z_t: the order of the NumPy stream.
        d, k = self._coefficients["d"], len(self._buffers)
        lags = min(k, t - 1)
        if lags == 0:
            target = self._buffers[t % k] if k else flat
            self._draw(t, target)
            if k:
                torch.mul(target, float(d[0]), out=flat)
            elif d[0] != 1.0:
                flat.mul_(float(d[0]))
            return
        torch.mul(self._buffers[(t - 1) % k], float(d[1]), out=flat)
        for j in range(2, lags + 1):
            flat.add_(self._buffers[(t - j) % k], alpha=float(d[j]))
        slot = self._buffers[t % k]
        self._draw(t, slot)
        flat.add_(slot, alpha=float(d[0])) if d[0] != 1.0 else flat.add_(slot)

    def _history_regenerated(self, t: int, flat: torch.Tensor) -> None:
        # Z_{t-j} is redrawn chunk by chunk (counter sources: from its counter; generator: from the saved state).
        d = self._coefficients["d"]
        lags = min(self._lags, t - 1)
        if self._scratch is None:
            self._scratch = torch.empty(self.chunk_size, dtype=self.dtype, device=self.device)
        if isinstance(self.source, DeviceNormals):
            self._device_regenerated(self.source, t, lags, flat)
            return
        if isinstance(self.source, torch.Generator):
            self._states.append(self.source.get_state())
            del self._states[: -self._lags - 1]
            while len(self._aux) < lags:
                self._aux.append(torch.Generator(device=self.source.device))
            past: list[Any] = []
            for j in range(1, lags + 1):
                self._aux[j - 1].set_state(self._states[-1 - j])
                past.append(self._aux[j - 1])
            fresh: Any = self.source
        else:
            past = self._counter_chunks([t - j for j in range(1, lags + 1)])
            fresh = self._counter_chunks([t])[0]
        for a, b in self._chunks():
            o, tmp = flat[a:b], self._scratch[: b - a]
            for j in range(1, lags + 1):
                self._chunk_normals(past[j - 1], o if j == 1 else tmp)
                if j == 1:
                    o.mul_(float(d[1]))
                else:
                    o.add_(tmp, alpha=float(d[j]))
            self._chunk_normals(fresh, tmp)
            o.add_(tmp, alpha=float(d[0])) if d[0] != 1.0 else o.add_(tmp)

    def _device_regenerated(self, source: DeviceNormals, t: int, lags: int, flat: torch.Tensor) -> None:
        """:meth:`_history_regenerated` for device normals: ``Z_{t-j}`` of each chunk computed on the device."""
        d = self._coefficients["d"]
        scratch = cast(torch.Tensor, self._scratch)
        for a, b in self._chunks():
            o, tmp = flat[a:b], scratch[: b - a]
            for j in range(1, lags + 1):  # out = sum_{j>=1} d_j Z_{t-j}, j in order (as the buffered recursion)
                source.standard_normal(t - j, o if j == 1 else tmp, first=a)
                if j == 1:
                    o.mul_(float(d[1]))
                else:
                    o.add_(tmp, alpha=float(d[j]))
            source.standard_normal(t, tmp, first=a)
            o.add_(tmp, alpha=float(d[0])) if d[0] != 1.0 else o.add_(tmp)

    def _chunk_normals(self, generator: Any, target: torch.Tensor) -> None:
        if isinstance(generator, torch.Generator):
            target.normal_(generator=generator)
            return
        host = self._host[: target.numel()]
        generator.standard_normal(out=host)
        target.copy_(torch.from_numpy(host))

    def _substitution(self, t: int, flat: torch.Tensor) -> None:
        c, ring = self._coefficients["c"], self._buffers
        k = len(ring)
        self._draw(t, flat)
        for j in range(1, min(k, t - 1) + 1):
            flat.add_(ring[(t - j) % k], alpha=-float(c[j]))
        if c[0] != 1.0:
            flat.div_(float(c[0]))
        if k:
            ring[t % k].copy_(flat)

    def _blt(self, t: int, flat: torch.Tensor) -> None:
        theta, omega = self._coefficients["theta"], self._coefficients["omega"]
        self._draw(t, flat)
        for j, state in enumerate(self._buffers):
            flat.add_(state, alpha=-float(omega[j]))
        for j, state in enumerate(self._buffers):
            state.mul_(float(theta[j])).add_(flat)

    # -- checkpoint and resume ----------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume the stream with the same noise (the buffers are copies on the stream's device:
        ``torch.save`` keeps them there, ``torch.load(..., map_location=...)`` moves them).

        ``holds_secret`` is True when the checkpoint reveals noise that must stay secret (a :func:`secure_source`
        key, or a torch.Generator state): store it like the training data.
        """
        state: dict[str, Any] = {
            "format": STATE_FORMAT, "strategy": repr(self.strategy), "kind": self.kind, "shape": list(self.shape),
            "scale": self.scale, "num_steps": self.num_steps, "regenerate": self.regenerate,
            "chunk_size": self.chunk_size, "dtype": str(self.dtype), "step": self.step,
            "buffers": [b.detach().clone() for b in self._buffers],
            "holds_secret": self.holds_secret,
        }
        if isinstance(self.source, torch.Generator):
            state["source"] = {"type": "torch.Generator", "state": self.source.get_state().clone(),
                               "saved_states": [s.clone() for s in self._states]}
        elif isinstance(self.source, DeviceNormals):
            state["source"] = {"type": "DeviceNormals", "key": self.source.key, "run": self.source.run,
                               "secret": self.source.secret}
        else:
            state["source"] = {"type": type(self.source).__name__, "key": self.source.key, "run": self.source.run}
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from :meth:`state_dict`: the next :meth:`next` continues the checkpointed run bit for bit.

        The stream must have been built with the same strategy, shape, scale, dtype, regeneration and chunk size
        (a ``ValueError`` names every one that differs, with both values) and the same kind of source; a
        counter-based source takes the checkpoint's key (a secure key is restored), a torch.Generator takes the
        checkpoint's generator state.
        """
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"state must be a dict from TorchNoiseStream.state_dict (format {STATE_FORMAT!r}).")
        expected = {"strategy": repr(self.strategy), "shape": list(self.shape), "scale": self.scale,
                    "num_steps": self.num_steps, "regenerate": self.regenerate, "chunk_size": self.chunk_size,
                    "dtype": str(self.dtype)}
        differ = [f"{name}: checkpoint {state.get(name)!r}, this stream {value!r}"
                  for name, value in expected.items() if state.get(name) != value]
        if differ:
            raise ValueError("the checkpoint was made for another noise than this stream's (" + "; ".join(differ)
                             + ").")
        source = state["source"]
        kind = ("torch.Generator" if isinstance(self.source, torch.Generator)
                else "DeviceNormals" if isinstance(self.source, DeviceNormals) else "StepNormals")
        saved = source["type"] if source["type"] in ("torch.Generator", "DeviceNormals") else "StepNormals"
        if kind != saved:
            raise ValueError(f"the checkpoint's noise source is a {source['type']}; this stream's is a "
                             f"{type(self.source).__name__}.")
        buffers = state["buffers"]
        if len(buffers) != len(self._buffers):
            raise ValueError(f"the checkpoint holds {len(buffers)} buffers; this stream holds {len(self._buffers)}.")
        for mine, saved in zip(self._buffers, buffers, strict=True):
            mine.copy_(saved)
        if isinstance(self.source, torch.Generator):
            self.source.set_state(source["state"])
            self._states = [s.clone() for s in source["saved_states"]]
        elif isinstance(self.source, DeviceNormals):
            self.source = DeviceNormals(int(source["key"]), int(source["run"]), secret=bool(source["secret"]))
        else:
            cls = SecretStepNormals if source["type"] == "SecretStepNormals" else StepNormals
            self.source = cls(int(source["key"]), int(source["run"]))
        _check.integer(minimum=0, step=state["step"])
        self.step = int(state["step"])


def noise_stream(strategy: Strategy, shape: int | Sequence[int],
                 source: Source, *, scale: float = 1.0,
                 device: torch.device | str | None = None, dtype: torch.dtype | None = None,
                 num_steps: int | None = None, regenerate: bool = False,
                 chunk_size: int = DEFAULT_CHUNK_SIZE) -> TorchNoiseStream:
    """A :class:`TorchNoiseStream` of ``scale * (C^{-1} Z)_t`` for a tensor of shape ``shape``.

    Given :class:`~privdyn.torch.DeviceNormals` (:func:`secure_source`, :func:`~privdyn.torch.device_normals`) it
    computes the normals on ``device``; given privdyn's NumPy counter-based source
    (:class:`~privdyn.privacy.correlated.StepNormals`, :class:`~privdyn.rng.CounterStream`,
    ``secure_source(numpy_identical=True)``) it yields the noise of ``strategy.stream(shape, source, scale=scale)`` to
    float64 / float32 rounding; given a :class:`torch.Generator` it draws natively on the generator's device.

    Args:
        strategy: a :class:`~privdyn.privacy.correlated.Strategy`.
        shape: the shape of the noise (e.g. ``(num_parameters,)`` for a flattened model).
        source: the normals ``Z_t``.
        scale: multiplies the noise, e.g. ``clip * noise_multiplier`` for noise on the sum of clipped gradients.
        device, dtype: of the output and the buffers (default: the generator's device or the CPU; the default dtype).
        num_steps: the horizon T (required by :class:`~privdyn.privacy.correlated.SquareRoot`); the stream refuses to
            go past it.
        regenerate: regenerate past normals instead of storing them (strategies that support it).
        chunk_size: entries per draw (the scratch memory).
    """
    return TorchNoiseStream(strategy, shape, source, scale=scale, device=device, dtype=dtype, num_steps=num_steps,
                            regenerate=regenerate, chunk_size=chunk_size)
