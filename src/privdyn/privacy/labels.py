"""What a privacy number is, and the words it is stated in: guarantee labels, neighbouring relations, samplers and
labelled values.

Every accountant in privdyn returns a :class:`PrivacyLoss` (or documents its label), and experiments write the
label into each series' ``params["guarantee"]``, so a surrogate or a lower bound is never mistaken for a DP
guarantee. :class:`Sampler` and :class:`NeighboringRelation` are the vocabulary of ``sampler`` and ``neighboring``
arguments everywhere (ARCHITECTURE.md): each subset of samplers a part of privdyn accepts is derived here from the one
type, named for why it is a subset, and every ``sampler`` argument is validated by :func:`as_sampler`.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING

import numpy as np

from privdyn import _check

if TYPE_CHECKING:
    import dp_accounting

__all__ = [
    "AMPLIFIED_SAMPLERS",
    "DPSGD_SAMPLERS",
    "DP_ACCOUNTING_SAMPLERS",
    "SAMPLERS",
    "STATEMENT_SAMPLERS",
    "Guarantee",
    "NeighboringRelation",
    "PrivacyLoss",
    "Sampler",
    "as_neighboring",
    "as_sampler",
]


class Sampler(enum.StrEnum):
    """How records join the steps of a training run (ARCHITECTURE.md's ``sampler`` vocabulary).

    A ``str`` enum: every function that takes a ``sampler`` accepts a member or its string value, and a member
    compares, hashes and formats as its value. Which samplers a part of privdyn accepts is one of the subsets below
    (:data:`DPSGD_SAMPLERS`, :data:`DP_ACCOUNTING_SAMPLERS`, :data:`AMPLIFIED_SAMPLERS`, :data:`STATEMENT_SAMPLERS`).
    """

    FIXED_ORDER = "fixed_order"
    """One pass over the records in a fixed order, each record used at exactly one step (dpgd's one-pass DP-GD)."""
    FULL_BATCH = "full_batch"
    """Every record at every step (langevin's noisy gradient descent)."""
    SHUFFLE = "shuffle"
    """One pass per epoch in a uniformly random order, split into batches (hsgd; DP-SGD's shuffled epochs, which
    privdyn runs but refuses to account: participation is not i.i.d. per step)."""
    POISSON = "poisson"
    """Each record joins each step independently with probability ``sampling_prob = batch_size / n``, so batch
    sizes vary (DP-SGD; the kan paper's Poisson variant)."""
    FIXED_SIZE = "fixed_size"
    """A batch of exactly ``batch_size`` records drawn without replacement, afresh at every step (DP-SGD; the kan
    paper's sampler, Theorems D.9, F.8 and F.12)."""
    RANDOM_ALLOCATION = "random_allocation"
    """Balls-in-bins: every record joins exactly one step of each epoch of ``ceil(n / batch_size)`` steps, chosen
    uniformly and independently of the other records (DP-SGD; :mod:`privdyn.privacy.random_allocation`)."""
    CYCLIC_POISSON = "cyclic_poisson"
    """The records fixed in ``b`` parts, part ``t mod b`` active at step ``t``, each of its records joining
    independently with a rate ``q`` (DP-SGD with banded noise; :mod:`privdyn.privacy.cyclic_poisson`)."""


DPSGD_SAMPLERS: tuple[Sampler, ...] = (Sampler.FIXED_SIZE, Sampler.POISSON, Sampler.SHUFFLE,
                                       Sampler.RANDOM_ALLOCATION, Sampler.CYCLIC_POISSON)
"""The samplers DP-SGD runs with (:mod:`privdyn.algorithms.dpsgd`, :mod:`privdyn.torch`) and the allow-list
(:mod:`privdyn.privacy.accounting`) knows: every sampler that draws batches, i.e. all but the one-pass and
full-batch schedules of the other families. ``shuffle`` is known (to run it, and to refuse to account it with its
reason), not accounted."""

SAMPLERS = DPSGD_SAMPLERS
"""The earlier name of :data:`DPSGD_SAMPLERS`, kept (the same tuple)."""

DP_ACCOUNTING_SAMPLERS: tuple[Sampler, ...] = (Sampler.FIXED_SIZE, Sampler.POISSON)
"""The samplers of the independent-noise dp-accounting path (:mod:`privdyn.privacy.correlated_calibration`): the
kan paper's fixed-size batches and Poisson sampling at rate B/n, the two dp-accounting subsamples a Gaussian under."""

AMPLIFIED_SAMPLERS: tuple[Sampler, ...] = (Sampler.POISSON, Sampler.FIXED_SIZE)
"""The samplers the amplified bound's dominating pair covers (:mod:`privdyn.privacy.amplification.pair`, Theorem
F.8): those under which the differing record joins each step i.i.d. Bernoulli(r); ``shuffle`` does not (refused)."""

STATEMENT_SAMPLERS: tuple[Sampler, ...] = tuple(Sampler)
"""The samplers a :class:`~privdyn.privacy.PrivacyStatement` can name: every one privdyn knows, since a statement
describes a run of any family (dpgd's fixed order, langevin's full batch, hsgd's shuffled pass, DP-SGD's samplers)."""


def as_sampler(value: object, choices: tuple[Sampler, ...] = DPSGD_SAMPLERS, *,
               name: str = "sampler") -> Sampler:
    """``value`` (a :class:`Sampler` or its string value) as a :class:`Sampler`, if it is one of ``choices``.

    Raises:
        ValueError: ``value`` is not one of ``choices``; the message names the parameter ``name``, the value and
            the choices (by their string values, in the order of ``choices``).
    """
    _check.one_of(tuple(choice.value for choice in choices), **{name: value})
    return Sampler(str(value))


class Guarantee(enum.StrEnum):
    """The kind of privacy number (ARCHITECTURE.md, "Privacy numbers say what they are")."""

    EXACT = "exact"
    """The divergence itself, for a fully specified (e.g. Gaussian) case."""
    BOUND = "bound"
    """A formal upper bound under stated assumptions."""
    ESTIMATE = "estimate"
    """A Monte-Carlo value, reported as an upper confidence bound at a stated level."""
    SURROGATE = "surrogate"
    """An approximation with no formal guarantee."""
    LOWER_BOUND = "lower_bound"
    """Known to be at most the true privacy loss: never a DP guarantee."""
    HEURISTIC = "heuristic"
    """A paper's formula whose proof is not rigorous in general."""

    @property
    def is_guarantee(self) -> bool:
        """Whether a number with this label may be reported as a privacy guarantee."""
        return self in (Guarantee.EXACT, Guarantee.BOUND, Guarantee.ESTIMATE)


class NeighboringRelation(enum.StrEnum):
    """Which datasets are neighbours."""

    REPLACE_ONE = "replace_one"
    ADD_REMOVE = "add_remove"
    ZERO_OUT = "zero_out"

    def to_dp_accounting(self) -> dp_accounting.NeighboringRelation:
        """dp-accounting's name for this relation (zero-out is its ``REPLACE_SPECIAL``)."""
        import dp_accounting

        relation = dp_accounting.NeighboringRelation
        return {NeighboringRelation.REPLACE_ONE: relation.REPLACE_ONE,
                NeighboringRelation.ADD_REMOVE: relation.ADD_OR_REMOVE_ONE,
                NeighboringRelation.ZERO_OUT: relation.REPLACE_SPECIAL}[self]


def as_neighboring(value: NeighboringRelation | str, *, name: str = "neighboring") -> NeighboringRelation:
    """``value`` (a :class:`NeighboringRelation` or its string value) as a :class:`NeighboringRelation`.

    Raises:
        ValueError: ``value`` is not a relation; the message names the parameter ``name``, the value and the choices.
    """
    return _check.member(NeighboringRelation, **{name: value})


@dataclasses.dataclass(frozen=True)
class PrivacyLoss:
    """A privacy quantity together with what it is.

    Attributes:
        value: the number(s); a float or a NumPy array (broadcast over the inputs).
        guarantee: the :class:`Guarantee` label.
        quantity: what ``value`` measures, e.g. ``"rdp_epsilon"``, ``"epsilon"``, ``"noise_scale"``.
        neighboring: the neighbouring relation the number refers to.
        source: the result implemented (paper, arXiv id, theorem), and assumptions.
        sampler: how records join the steps, where the number depends on it (one of :data:`DPSGD_SAMPLERS`, a
            :class:`Sampler` or its string value, kept as given), else None.
    """

    value: float | np.ndarray
    guarantee: Guarantee
    quantity: str = "rdp_epsilon"
    neighboring: NeighboringRelation = NeighboringRelation.REPLACE_ONE
    source: str = ""
    sampler: Sampler | str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "guarantee", _check.member(Guarantee, guarantee=self.guarantee))
        object.__setattr__(self, "neighboring", _check.member(NeighboringRelation, neighboring=self.neighboring))
        if self.sampler is not None:
            try:
                as_sampler(self.sampler)
            except ValueError:
                known = tuple(sampler.value for sampler in DPSGD_SAMPLERS)
                raise ValueError(f"sampler must be one of {known!r} or None; got sampler={self.sampler!r}.") from None

    def __float__(self) -> float:
        return float(np.asarray(self.value).item())
