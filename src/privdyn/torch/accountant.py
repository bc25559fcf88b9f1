"""The privacy accountant of a torch training run, bound to privdyn's allow-list.

Every (noise strategy, sampler, neighbouring relation) goes through :func:`privdyn.privacy.accounting.accountant_for`,
which either names the accountant that covers it (with its guarantee label) or raises
:class:`~privdyn.privacy.accounting.NotAccountableError`: a combination it refuses is refused when the
:class:`DPSGDAccountant` is built, before any training step. ``epsilon`` and the calibrated ``noise_multiplier`` come
from the run's :class:`~privdyn.privacy.mechanism.DPSGDMechanism` record (``privacy_loss`` and ``calibration``):
dp-accounting for independent noise (the random-allocation PLD under random allocation);
for lambda-CGD, banded-inverse, Toeplitz and BLT noise under fixed-size
(zero-out) or Poisson sampling, the amplified bound of Theorem F.8's pair (Wang et al., arXiv 2605.12648; conditional
composition of mixture-of-Gaussians PLDs, Choquette-Choo et al., arXiv 2310.15526), and for lambda-CGD under
fixed-size sampling the smaller of it and Theorem F.12. The amplified bound costs seconds per evaluation, so
``privacy_spent`` is for reporting, not for every step. ``noise_multiplier`` is the noise std on the **sum** of
clipped per-example gradients divided by the clip.

The participation (sampler kind, ``n``, batch size, neighbouring relation) is read from the run's
:class:`~privdyn.torch.BatchSampler`, the object the data loader draws from. A checkpoint
(:meth:`DPSGDAccountant.state_dict`) records the whole mechanism with the step count, and
:meth:`DPSGDAccountant.load_state_dict` refuses one of another mechanism, so that the steps of one run are never
accounted as those of another.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

from privdyn import _check
from privdyn.privacy.correlated import Strategy
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss
from privdyn.torch.sampler import BatchSampler, Participation, resolve_participation

if TYPE_CHECKING:
    from privdyn.privacy.mechanism import DPSGDMechanism

__all__ = ["STATE_FORMAT", "DPSGDAccountant", "calibrate_noise_multiplier"]

STATE_FORMAT = "privdyn.torch.DPSGDAccountant/2"
"""The ``format`` entry of :meth:`DPSGDAccountant.state_dict` (the first format was ``{"steps": n}`` alone)."""

MECHANISM_FIELDS = ("strategy", "sampler", "n", "batch_size", "neighboring", "noise_multiplier")
"""What a checkpoint records of the mechanism, and what :meth:`DPSGDAccountant.load_state_dict` compares: the fields
of the run's :class:`~privdyn.privacy.mechanism.DPSGDMechanism` record but ``num_steps`` (the checkpoint's ``steps``
is the horizon so far)."""


def _record(strategy: Strategy, participation: Participation, *, noise_multiplier: float,
            num_steps: int) -> DPSGDMechanism:
    """The record of ``num_steps`` steps over ``participation`` (refused if off the allow-list)."""
    from privdyn.privacy.mechanism import DPSGDMechanism

    return DPSGDMechanism(strategy=strategy, noise_multiplier=noise_multiplier, n=participation.n,
                          batch_size=participation.batch_size, num_steps=num_steps, sampler=participation.sampler,
                          neighboring=NeighboringRelation(participation.neighboring))


class DPSGDAccountant:
    """Counts the steps of one DP-SGD run and reports its privacy through privdyn's allow-list.

    Typical use, with the sampler the data loader draws from::

        batches = BatchSampler(n, B, sampler="poisson", neighboring="add_remove", num_steps=T)
        accountant = DPSGDAccountant(LambdaCGD(0.5), batches, noise_multiplier=1.0, num_steps=T, delta=1e-5)

    Args:
        strategy: the noise strategy.
        batch_sampler: the run's :class:`~privdyn.torch.BatchSampler`: its sampler kind (``"fixed_size"``,
            ``"poisson"``, ``"random_allocation"`` (independent noise: the allow-list's random-allocation rows, over
            ``ceil(num_steps / ceil(n / batch_size))`` epochs), ``"cyclic_poisson"`` or ``"shuffle"`` (refused)),
            ``n``, (expected) batch size and neighbouring relation (``"replace_one"``, ``"add_remove"`` or
            ``"zero_out"``) are the accounted run's.
        noise_multiplier: kappa (noise std on the sum of clipped gradients / clip).
        num_steps: the planned horizon, if known.
        delta: with ``num_steps``, the planned run is accounted at once, so that a run outside the accountant's
            validity is refused before training.
        sampler, neighboring, n, batch_size: deprecated (one release): the participation as loose values, in place
            of ``batch_sampler``; a value given with ``batch_sampler`` that disagrees with it raises a ``ValueError``
            naming both.

    Raises:
        NotAccountableError: the combination is not on the allow-list.
    """

    def __init__(self, strategy: Strategy, batch_sampler: BatchSampler | None = None, *,
                 noise_multiplier: float, num_steps: int | None = None, delta: float | None = None,
                 sampler: str | None = None, neighboring: str | None = None, n: int | None = None,
                 batch_size: int | None = None) -> None:
        if not isinstance(strategy, Strategy):
            raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")
        participation = resolve_participation("DPSGDAccountant", batch_sampler, n=n, batch_size=batch_size,
                                              sampler=sampler, neighboring=neighboring, strategy=strategy)
        self._bind(strategy, participation, noise_multiplier=noise_multiplier, num_steps=num_steps, delta=delta)
        self.batch_sampler = batch_sampler

    @classmethod
    def _from_participation(cls, strategy: Strategy, participation: Participation, *, noise_multiplier: float,
                            num_steps: int | None = None, delta: float | None = None,
                            batch_sampler: BatchSampler | None = None) -> DPSGDAccountant:
        """The accountant of a participation already resolved by
        :func:`~privdyn.torch.sampler.resolve_participation` (which has warned of any deprecated argument): the
        private optimizers build theirs so."""
        accountant = cls.__new__(cls)
        accountant._bind(strategy, participation, noise_multiplier=noise_multiplier, num_steps=num_steps, delta=delta)
        accountant.batch_sampler = batch_sampler
        return accountant

    def _bind(self, strategy: Strategy, participation: Participation, *, noise_multiplier: float,
              num_steps: int | None, delta: float | None) -> None:
        _check.scalar(noise_multiplier=noise_multiplier)
        _check.non_negative(noise_multiplier=noise_multiplier)
        if num_steps is not None:
            _check.integer(minimum=1, num_steps=num_steps)
        self.num_steps = None if num_steps is None else int(num_steps)
        record = _record(strategy, participation, noise_multiplier=float(noise_multiplier),
                         num_steps=1 if num_steps is None else int(num_steps))
        self.row = record.row
        self.strategy, self.participation = strategy, participation
        self.sampler, self.neighboring = participation.sampler, participation.neighboring
        self.n, self.batch_size, self.noise_multiplier = participation.n, participation.batch_size, float(
            noise_multiplier)
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

    def record(self, num_steps: int | None = None) -> DPSGDMechanism:
        """The :class:`~privdyn.privacy.mechanism.DPSGDMechanism` of ``num_steps`` steps of this run (default: the
        planned horizon, else the steps taken; at least one)."""
        if num_steps is None:
            num_steps = self.num_steps if self.num_steps is not None else max(self.steps, 1)
        return _record(self.strategy, self.participation, noise_multiplier=self.noise_multiplier,
                       num_steps=num_steps)

    def epsilon(self, num_steps: int, delta: float) -> PrivacyLoss:
        """``epsilon`` of ``num_steps`` steps at ``delta`` (label, relation and sampler in the result): the record's
        ``privacy_loss``."""
        return self.record(num_steps).privacy_loss(delta)

    def privacy_spent(self, delta: float) -> PrivacyLoss:
        """``epsilon`` of the steps taken so far, at ``delta``."""
        if self.steps == 0:
            _check.delta(delta)
            return PrivacyLoss(value=0.0, guarantee=Guarantee.EXACT, quantity="epsilon",
                               neighboring=NeighboringRelation(self.neighboring),
                               sampler=self.sampler, source="no step taken")
        return self.epsilon(self.steps, delta)

    def mechanism(self) -> dict[str, str | int | float]:
        """The accounted mechanism, as a checkpoint records it: the noise strategy with its parameters (its exact
        ``repr``), the sampler kind, ``n``, the (expected) batch size (the rate is ``batch_size / n``), the
        neighbouring relation and the noise multiplier: the fields :data:`MECHANISM_FIELDS` of :meth:`record`."""
        record = self.record()
        return {"strategy": repr(record.strategy), "sampler": record.sampler, "n": record.n,
                "batch_size": record.batch_size, "neighboring": record.neighboring.value,
                "noise_multiplier": record.noise_multiplier}

    def state_dict(self) -> dict[str, Any]:
        """``{"format", "mechanism", "steps"}``: the steps taken and the mechanism they were taken under
        (:meth:`mechanism`), so that :meth:`load_state_dict` can refuse a checkpoint of another mechanism."""
        return {"format": STATE_FORMAT, "mechanism": self.mechanism(), "steps": self.steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume the step count of a checkpoint of the same mechanism.

        A checkpoint of the first format, ``{"steps": n}``, records no mechanism: it is loaded with a
        ``UserWarning`` saying that it could not be checked (it is the caller's word that it is this mechanism's).

        Raises:
            ValueError: ``state`` is not an accountant checkpoint; its mechanism differs from this accountant's (the
                message names every differing field with both values); its steps exceed the planned ``num_steps``.
        """
        if not isinstance(state, dict) or "steps" not in state:
            raise ValueError(f"state must be a dict from DPSGDAccountant.state_dict; got {_describe(state)}.")
        _check.integer(minimum=0, steps=state["steps"])
        if "mechanism" not in state and "format" not in state:
            warnings.warn("the accountant checkpoint has the first format, {'steps': n}, which records no mechanism: "
                          "it could not be checked against this accountant's "
                          f"({self._describe_mechanism()}). Save a new checkpoint to have it checked.",
                          UserWarning, stacklevel=2)
        else:
            if state.get("format") != STATE_FORMAT or not isinstance(state.get("mechanism"), dict):
                raise ValueError(f"state must be a dict from DPSGDAccountant.state_dict (format {STATE_FORMAT!r}); "
                                 f"got format={state.get('format')!r}.")
            saved, own = state["mechanism"], self.mechanism()
            differ = [f"{name}: checkpoint {saved.get(name)!r}, this accountant {own[name]!r}"
                      for name in MECHANISM_FIELDS if saved.get(name) != own[name]]
            if differ:
                raise ValueError("the checkpoint was accounted for another mechanism than this accountant's ("
                                 + "; ".join(differ) + "): its steps cannot be counted as this run's.")
        if self.num_steps is not None and int(state["steps"]) > self.num_steps:
            raise ValueError(f"the checkpoint has taken steps={int(state['steps'])}, past this accountant's planned "
                             f"num_steps={self.num_steps}.")
        self.steps = int(state["steps"])

    def _describe_mechanism(self) -> str:
        return ", ".join(f"{name}={value!r}" for name, value in self.mechanism().items())

    def __repr__(self) -> str:
        return (f"DPSGDAccountant({self.strategy!r}, sampler={self.sampler!r}, neighboring={self.neighboring!r}, "
                f"n={self.n}, batch_size={self.batch_size}, noise_multiplier={self.noise_multiplier!r}, "
                f"steps={self.steps})")


def _describe(value: Any) -> str:
    return f"a dict with keys {sorted(map(str, value))}" if isinstance(value, dict) else type(value).__name__


def calibrate_noise_multiplier(strategy: Strategy, batch_sampler: BatchSampler | None = None, *, epsilon: float,
                               delta: float, num_steps: int, rtol: float = 1e-4, n: int | None = None,
                               batch_size: int | None = None, sampler: str | None = None,
                               neighboring: str | None = None) -> PrivacyLoss:
    """The smallest ``noise_multiplier`` (to ``rtol``) whose run of ``num_steps`` steps over ``batch_sampler``'s
    participation is ``(epsilon, delta)``-DP, on the safe side. A calibration by the amplified bound (correlated
    noise) costs one bound evaluation (seconds) per search step: ``rtol=1e-2`` keeps it to tens of seconds at small
    sizes. ``n``, ``batch_size``, ``sampler`` and ``neighboring`` are deprecated, as in :class:`DPSGDAccountant`.

    Refuses, like :class:`DPSGDAccountant`, every combination the allow-list refuses.
    """
    participation = resolve_participation("calibrate_noise_multiplier", batch_sampler, n=n, batch_size=batch_size,
                                          sampler=sampler, neighboring=neighboring, strategy=strategy)
    return calibrate_participation(strategy, participation, epsilon=epsilon, delta=delta, num_steps=num_steps,
                                   rtol=rtol)


def calibrate_participation(strategy: Strategy, participation: Participation, *, epsilon: float, delta: float,
                            num_steps: int, rtol: float = 1e-4) -> PrivacyLoss:
    """:func:`calibrate_noise_multiplier` of a participation already resolved."""
    loss = _record(strategy, participation, noise_multiplier=0.0, num_steps=num_steps).calibration(epsilon, delta,
                                                                                                  rtol=rtol)
    if not math.isfinite(float(loss)):
        raise ValueError(f"no finite noise_multiplier reaches epsilon={epsilon!r} at delta={delta!r}.")
    return loss
