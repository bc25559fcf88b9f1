"""Keyed, counter-based standard normals computed on the tensor's own device: privdyn.torch's default noise source.

Normal ``i`` of step ``t`` is a pure function of ``(key, run, t, i)``:

1. the pair ``j = i // 2`` is encrypted by the Philox4x32-10 block cipher of Salmon et al. (SC'11, "Parallel random
   numbers: as easy as 1, 2, 3") under the 64-bit ``key``, with the counter ``(j, t, run mod 2**32, run // 2**32)``
   (the counter layout of :class:`privdyn.rng.CounterStream`, whose :func:`privdyn.rng.philox4x32` is the reference of
   the tests);
2. its four 32-bit words give two 53-bit uniforms, ``u1 = (m1 + 1) / 2**53`` in (0, 1] (words 0 and 1) and
   ``u2 = m2 / 2**53`` in [0, 1) (words 2 and 3), with ``m = (w_a >> 5) * 2**26 + (w_b >> 6)``;
3. the Box-Muller transform (Box and Muller 1958): ``Z_{2j} = r cos(2 pi u2)``, ``Z_{2j+1} = r cos(2 pi u2 - pi/2)``
   (= ``r sin(2 pi u2)``), ``r = sqrt(-2 log u1)``, in the output's dtype. ``u1 >= 2**-53`` bounds ``|Z|`` by
   ``sqrt(106 log 2) = 8.57``: the law beyond it has mass 1e-17.

On the CPU, steps 1-2 run in a compiled loop (numba) writing straight into the output's memory; on any other device
(CUDA) they run as int64 tensor operations on that device (a 32 x 32-bit product fits the 64 bits of an int64 in two's
complement; the high word is recovered by a shift and a mask). Both give the same bits; the cosine, logarithm and
square root are then the same torch operations on the output's device, so the CPU and CUDA normals of one
``(key, t)`` agree to the rounding of those functions. Nothing is drawn on the CPU and copied: regeneration of a past
step redraws it on the device, from its counter.

:func:`DeviceNormals.secure` takes the key from the operating system's entropy (:mod:`secrets`); the repr hides it.
Philox4x32-10 is a statistically strong counter-based generator (it passes TestU01's BigCrush), not a vetted
cryptographic cipher, and the Gaussian sampler is not hardened against floating-point attacks on the low-order bits of
the noise (Mironov 2012): the protection is against anyone who neither holds the key nor observes the noise's bits.
"""

from __future__ import annotations

import hashlib
import math
import secrets

import numba
import numpy as np
import torch

from privdyn import _check

__all__ = ["DeviceNormals", "device_normals"]

_M0, _M1 = 0xD2511F53, 0xCD9E8D57  # Philox4x32 multipliers
_W0, _W1 = 0x9E3779B9, 0xBB67AE85  # Philox4x32 key increments (Weyl sequence)
_MASK = 0xFFFFFFFF
_TWO_M53 = 2.0**-53
_ANGLE = 2.0 * math.pi * 2.0**-53  # 2 pi / 2**53: m2 -> the angle 2 pi u2
_QUARTER_TURN = 0.5 * math.pi
_PAIRS_PER_CHUNK = {"cpu": 1 << 17, "other": 1 << 22}  # pairs per pass (bounds the scratch memory)
_LIMIT = 2**32  # pairs per step and steps per run: one 32-bit counter word each

# The key of seeded sources is the privdyn.rng stream key with this tag XORed in, so a DeviceNormals never shares its
# bits with the CounterStream of the same (seed, unit_key).
_KEY_TAG = int.from_bytes(hashlib.sha256(b"privdyn.torch.DeviceNormals.v1").digest()[:8], "little")


# -- the CPU kernel (numba) -----------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _cpu_uniforms(k0: int, k1: int, step: int, run: int, first_pair: int, radius: np.ndarray,
                  angle: np.ndarray) -> None:  # pragma: no cover - compiled; tested through its results
    """Philox4x32-10 of pairs ``first_pair ..``: ``radius[2j] = radius[2j + 1] = u1``, ``angle[2j] = 2 pi u2``,
    ``angle[2j + 1] = 2 pi u2 - pi / 2`` (module docstring, steps 1-2; the radius is written twice so that the
    transform's product is elementwise)."""
    mask = np.uint64(_MASK)
    m0, m1 = np.uint64(_M0), np.uint64(_M1)
    w0, w1 = np.uint64(_W0), np.uint64(_W1)
    c1 = np.uint64(step) & mask
    c2 = np.uint64(run) & mask
    c3 = np.uint64(run) >> np.uint64(32)
    b0, b1 = np.uint64(k0) & mask, np.uint64(k1) & mask
    first = np.uint64(first_pair)
    for j in range(radius.shape[0] // 2):
        x0, x1, x2, x3 = (first + np.uint64(j)) & mask, c1, c2, c3
        a0, a1 = b0, b1
        for _ in range(10):
            p0 = x0 * m0  # 32 x 32 -> 64 bits: exact in uint64
            p1 = x2 * m1
            y0 = (p1 >> np.uint64(32)) ^ x1 ^ a0
            y2 = (p0 >> np.uint64(32)) ^ x3 ^ a1
            x1 = p1 & mask
            x3 = p0 & mask
            x0 = y0
            x2 = y2
            a0 = (a0 + w0) & mask
            a1 = (a1 + w1) & mask
        u1 = (np.float64(x0 >> np.uint64(5)) * 67108864.0 + np.float64(x1 >> np.uint64(6)) + 1.0) * _TWO_M53
        radius[2 * j] = u1
        radius[2 * j + 1] = u1
        theta = (np.float64(x2 >> np.uint64(5)) * 67108864.0 + np.float64(x3 >> np.uint64(6))) * _ANGLE
        angle[2 * j] = theta
        angle[2 * j + 1] = theta - _QUARTER_TURN


# -- the tensor kernel (any device) ---------------------------------------------------------------------------------


def _philox_words(k0: int, k1: int, step: int, run: int, first_pair: int, count: int,
                  device: torch.device) -> tuple[torch.Tensor, ...]:
    """The four Philox4x32-10 words of pairs ``first_pair .. first_pair + count - 1``: int64 tensors on ``device``,
    each word in [0, 2**32)."""
    x0 = torch.arange(first_pair, first_pair + count, dtype=torch.int64, device=device)
    x1 = torch.full_like(x0, step)
    x2 = torch.full_like(x0, run & _MASK)
    x3 = torch.full_like(x0, run >> 32)
    a0, a1 = k0, k1
    for _ in range(10):
        p0 = x0 * _M0  # wraps modulo 2**64 in two's complement: the bits of the unsigned product
        p1 = x2 * _M1
        y0 = (p1 >> 32).bitwise_and_(_MASK).bitwise_xor_(x1).bitwise_xor_(a0)
        y2 = (p0 >> 32).bitwise_and_(_MASK).bitwise_xor_(x3).bitwise_xor_(a1)
        x1, x3 = p1.bitwise_and_(_MASK), p0.bitwise_and_(_MASK)
        x0, x2 = y0, y2
        a0, a1 = (a0 + _W0) & _MASK, (a1 + _W1) & _MASK
    return x0, x1, x2, x3


def _tensor_uniforms(k0: int, k1: int, step: int, run: int, first_pair: int, radius: torch.Tensor,
                     angle: torch.Tensor) -> None:
    """:func:`_cpu_uniforms` by tensor operations on ``radius``'s device (the same bits)."""
    x0, x1, x2, x3 = _philox_words(k0, k1, step, run, first_pair, radius.numel() // 2, radius.device)
    u1 = ((x0 >> 5).double().mul_(67108864.0).add_((x1 >> 6).double()).add_(1.0)).mul_(_TWO_M53)
    theta = (x2 >> 5).double().mul_(67108864.0).add_((x3 >> 6).double()).mul_(_ANGLE)
    radii = radius.view(-1, 2)
    radii[:, 0].copy_(u1)
    radii[:, 1].copy_(u1)
    pairs = angle.view(-1, 2)
    pairs[:, 0].copy_(theta)
    pairs[:, 1].copy_(theta.sub_(_QUARTER_TURN))


def _uses_cpu_kernel(out: torch.Tensor) -> bool:
    return out.device.type == "cpu" and out.dtype in (torch.float32, torch.float64)


def _fill_pairs(k0: int, k1: int, step: int, run: int, first_pair: int, out: torch.Tensor,
                cpu_kernel: bool) -> None:
    """Normals of pairs ``first_pair ..`` into the contiguous ``out`` of even length (module docstring)."""
    radius = torch.empty_like(out)
    if cpu_kernel:
        _cpu_uniforms(k0, k1, step, run, first_pair, radius.numpy(), out.numpy())
    else:
        _tensor_uniforms(k0, k1, step, run, first_pair, radius, out)
    radius.log_().mul_(-2.0).sqrt_()
    out.cos_().mul_(radius)


class DeviceNormals:
    """Standard normals ``Z_t`` of each step ``t >= 1``, a pure function of (key, run, t, position), computed on the
    output's device (module docstring).

    Build one with :meth:`secure` (deployment: OS entropy), :func:`device_normals` (from a seed, for experiments) or
    from a 64-bit key.

    Args:
        key: the 64-bit Philox key.
        run: the run index (>= 0): runs of one key are independent streams.
        secret: whether the key is secret (its repr hides it; checkpoints report ``holds_secret``).
    """

    __slots__ = ("_key", "_run", "_secret")

    def __init__(self, key: int, run: int = 0, *, secret: bool = False) -> None:
        _check.integer(minimum=0, key=key, run=run)
        if int(key) >= 2**64 or int(run) >= 2**64:
            raise ValueError(f"key and run must be < 2**64; got key={'<hidden>' if secret else key!r}, run={run!r}.")
        self._key, self._run, self._secret = int(key), int(run), bool(secret)

    @classmethod
    def secure(cls, run: int = 0) -> DeviceNormals:
        """Normals keyed by 64 bits of OS entropy (:func:`secrets.randbits`): noise nobody can reproduce from a seed.
        The key is never printed; checkpoints that hold it report ``holds_secret=True``."""
        return cls(secrets.randbits(64), run, secret=True)

    @property
    def key(self) -> int:
        return self._key

    @property
    def run(self) -> int:
        return self._run

    @property
    def secret(self) -> bool:
        return self._secret

    def __repr__(self) -> str:
        key = "<hidden>" if self._secret else f"{self._key:#018x}"
        return f"DeviceNormals(key={key}, run={self._run})"

    def standard_normal(self, step: int, out: torch.Tensor, first: int = 0) -> torch.Tensor:
        """Normals ``first .. first + out.numel() - 1`` of step ``step`` into the contiguous floating-point tensor
        ``out`` (any shape, device and dtype), on ``out``'s device; returns ``out``.

        Scratch, freed on return: the radius of one pass (2**18 entries on the CPU, 2**23 elsewhere, in ``out``'s
        dtype) and, off the CPU, the pass's int64 Philox words and float64 uniforms."""
        _check.integer(minimum=1, step=step)
        _check.integer(minimum=0, first=first)
        if not isinstance(out, torch.Tensor) or not out.dtype.is_floating_point or not out.is_contiguous():
            raise TypeError(f"out must be a contiguous floating-point torch.Tensor; got {out!r:.80}.")
        step, first, size = int(step), int(first), out.numel()
        if step >= _LIMIT or (first + size + 1) // 2 > _LIMIT:
            raise ValueError(f"step must be < 2**32 and first + out.numel() <= 2**33; got step={step}, "
                             f"first={first}, out.numel()={size}.")
        flat = out.view(-1)
        k0, k1 = self._key & _MASK, self._key >> 32
        cpu_kernel = _uses_cpu_kernel(flat)
        work = flat if cpu_kernel or flat.dtype in (torch.float32, torch.float64) else None
        if work is None:  # half precision: draw in float32 on the device, then round
            work = torch.empty(size, dtype=torch.float32, device=flat.device)
        position, end = first, first + size
        if position % 2 and position < end:  # an odd start: the second normal of its pair
            edge = torch.empty(2, dtype=work.dtype, device=work.device)
            _fill_pairs(k0, k1, step, self._run, position // 2, edge, cpu_kernel)
            work[0] = edge[1]
            position += 1
        chunk = 2 * _PAIRS_PER_CHUNK["cpu" if cpu_kernel else "other"]
        while end - position >= 2:
            stop = position + min(chunk, (end - position) // 2 * 2)
            _fill_pairs(k0, k1, step, self._run, position // 2, work[position - first: stop - first], cpu_kernel)
            position = stop
        if position < end:  # an odd end: the first normal of its pair
            edge = torch.empty(2, dtype=work.dtype, device=work.device)
            _fill_pairs(k0, k1, step, self._run, position // 2, edge, cpu_kernel)
            work[-1] = edge[0]
        if work is not flat:
            flat.copy_(work)
        return out


def device_normals(seed: int, unit_key: str = "", *, run: int = 0) -> DeviceNormals:
    """The :class:`DeviceNormals` of the privacy-noise stream ``(seed, unit_key)``: privdyn's SHA-256 stream key
    (:func:`privdyn.rng.counter_stream`, purpose ``"noise"``) with a tag of its own. Noise from a seed is for
    experiments: it is not private."""
    from privdyn.rng import counter_stream

    words = counter_stream(seed, unit_key, purpose="noise").key
    return DeviceNormals((int(words[0]) | (int(words[1]) << 32)) ^ _KEY_TAG, run)
