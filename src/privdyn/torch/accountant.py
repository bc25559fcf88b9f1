"""The privacy accountant of a torch training run, bound to privdyn's allow-list.

Every (noise strategy, sampler, neighbouring relation) goes through :func:`privdyn.privacy.accounting.accountant_for`,
which either names the accountant that covers it (with its guarantee label) or raises
:class:`~privdyn.privacy.accounting.NotAccountableError`: a combination it refuses is refused when the
:class:`DPSGDAccountant` is built, before any training step. ``epsilon`` and the calibrated ``noise_multiplier`` come
from :func:`~privdyn.privacy.accounting.dpsgd_epsilon` and :func:`~privdyn.privacy.accounting.dpsgd_noise_multiplier`:
dp-accounting for independent noise (the random-allocation PLD under random allocation);
for lambda-CGD, banded-inverse, Toeplitz and BLT noise under fixed-size
(zero-out) or Poisson sampling, the amplified bound of Theorem F.8's pair (Wang et al., arXiv 2605.12648; conditional
composition of mixture-of-Gaussians PLDs, Choquette-Choo et al., arXiv 2310.15526), and for lambda-CGD under
fixed-size sampling the smaller of it and Theorem F.12. The amplified bound costs seconds per evaluation, so
``privacy_spent`` is for reporting, not for every step. ``noise_multiplier`` is the noise std on the **sum** of
clipped per-example gradients divided by the clip.
"""

from __future__ import annotations

import math
from typing import Any

from privdyn import _check
from privdyn.privacy.correlated import Strategy
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = ["DPSGDAccountant", "calibrate_noise_multiplier"]


def _accounting() -> Any:
    """The allow-list module (imported on first use: it loads dp-accounting)."""
    from privdyn.privacy import accounting

    return accounting


class DPSGDAccountant:
    """Counts the steps of one DP-SGD run and reports its privacy through privdyn's allow-list.

    Args:
        strategy: the noise strategy.
        sampler: one of :data:`privdyn.privacy.labels.SAMPLERS` (as the run's :class:`~privdyn.torch.BatchSampler`):
            ``"fixed_size"``, ``"poisson"``, ``"random_allocation"`` (independent noise: the allow-list's
            random-allocation rows, over ``ceil(num_steps / ceil(n / batch_size))`` epochs) or ``"shuffle"``
            (refused).
        neighboring: ``"replace_one"``, ``"add_remove"`` or ``"zero_out"``.
        n, batch_size: dataset size and (expected) batch size.
        noise_multiplier: kappa (noise std on the sum of clipped gradients / clip).
        num_steps: the planned horizon, if known.
        delta: with ``num_steps``, the planned run is accounted at once, so that a run outside the accountant's
            validity is refused before training.

    Raises:
        NotAccountableError: the combination is not on the allow-list.
    """

    def __init__(self, strategy: Strategy, *, sampler: str, neighboring: str, n: int, batch_size: int,
                 noise_multiplier: float, num_steps: int | None = None, delta: float | None = None) -> None:
        if not isinstance(strategy, Strategy):
            raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")
        _check.integer(minimum=1, n=n, batch_size=batch_size)
        if int(batch_size) > int(n):
            raise ValueError(f"batch_size must be <= n={int(n)}; got batch_size={batch_size}.")
        _check.scalar(noise_multiplier=noise_multiplier)
        _check.non_negative(noise_multiplier=noise_multiplier)
        self.row = _accounting().accountant_for(strategy, sampler=sampler, neighboring=neighboring)
        self.strategy, self.sampler, self.neighboring = strategy, sampler, neighboring
        self.n, self.batch_size, self.noise_multiplier = int(n), int(batch_size), float(noise_multiplier)
        if num_steps is not None:
            _check.integer(minimum=1, num_steps=num_steps)
        self.num_steps = None if num_steps is None else int(num_steps)
        self.steps = 0
        if delta is not None and self.num_steps is not None:
            self.planned = self.epsilon(self.num_steps, delta)

    def step(self, count: int = 1) -> None:
        """Record ``count`` noisy steps; refuses to go past the planned horizon."""
        _check.integer(minimum=0, count=count)
        if self.num_steps is not None and self.steps + int(count) > self.num_steps:
            raise ValueError(f"the run would take {self.steps + int(count)} steps, past its planned "
                             f"num_steps={self.num_steps}.")
        self.steps += int(count)

    def epsilon(self, num_steps: int, delta: float) -> PrivacyLoss:
        """``epsilon`` of ``num_steps`` steps at ``delta`` (label, relation and sampler in the result)."""
        return _accounting().dpsgd_epsilon(self.strategy, noise_multiplier=self.noise_multiplier, n=self.n,
                                           batch_size=self.batch_size, num_steps=num_steps, delta=delta,
                                           sampler=self.sampler, neighboring=self.neighboring)

    def privacy_spent(self, delta: float) -> PrivacyLoss:
        """``epsilon`` of the steps taken so far, at ``delta``."""
        if self.steps == 0:
            _check.scalar(delta=delta)
            _check.in_range(0.0, 1.0, closed="neither", delta=delta)
            return PrivacyLoss(value=0.0, guarantee=Guarantee.EXACT, quantity="epsilon",
                               neighboring=NeighboringRelation(self.neighboring),
                               sampler=self.sampler, source="no step taken")
        return self.epsilon(self.steps, delta)

    def state_dict(self) -> dict[str, Any]:
        return {"steps": self.steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _check.integer(minimum=0, steps=state["steps"])
        self.steps = int(state["steps"])

    def __repr__(self) -> str:
        return (f"DPSGDAccountant({self.strategy!r}, sampler={self.sampler!r}, neighboring={self.neighboring!r}, "
                f"n={self.n}, batch_size={self.batch_size}, noise_multiplier={self.noise_multiplier!r}, "
                f"steps={self.steps})")


def calibrate_noise_multiplier(strategy: Strategy, *, epsilon: float, delta: float, n: int, batch_size: int,
                               num_steps: int, sampler: str, neighboring: str, rtol: float = 1e-4) -> PrivacyLoss:
    """The smallest ``noise_multiplier`` (to ``rtol``) whose run of ``num_steps`` steps is ``(epsilon, delta)``-DP,
    on the safe side. A calibration by the amplified bound (correlated noise) costs one bound evaluation (seconds)
    per search step: ``rtol=1e-2`` keeps it to tens of seconds at small sizes.

    Refuses, like :class:`DPSGDAccountant`, every combination the allow-list refuses.
    """
    loss = _accounting().dpsgd_noise_multiplier(strategy, epsilon=epsilon, delta=delta, n=n, batch_size=batch_size,
                                                num_steps=num_steps, sampler=sampler, neighboring=neighboring,
                                                rtol=rtol)
    if not math.isfinite(float(loss)):
        raise ValueError(f"no finite noise_multiplier reaches epsilon={epsilon!r} at delta={delta!r}.")
    return loss
