"""What a privacy number is: guarantee labels, neighbouring relations and labelled values.

Every accountant in privdyn returns a :class:`PrivacyLoss` (or documents its label), and experiments write the
label into each series' ``params["guarantee"]``, so a surrogate or a lower bound is never mistaken for a DP
guarantee.
"""

from __future__ import annotations

import dataclasses
import enum

import numpy as np

__all__ = ["SAMPLERS", "Guarantee", "NeighboringRelation", "PrivacyLoss"]

SAMPLERS = ("fixed_size", "poisson", "shuffle", "random_allocation", "cyclic_poisson")
"""How records join the steps of a training run: a fixed-size batch drawn without replacement at every step,
Poisson sampling (each record joins each step independently with probability ``sampling_prob``), one shuffled
pass split into batches per epoch, random allocation (balls-in-bins: every record joins exactly one step of
each epoch, chosen uniformly and independently of the other records), or cyclic Poisson (the records fixed in
``b`` parts, part ``t mod b`` active at step ``t``, each of its records joining independently with a rate ``q``;
:mod:`privdyn.privacy.cyclic_poisson`)."""


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


@dataclasses.dataclass(frozen=True)
class PrivacyLoss:
    """A privacy quantity together with what it is.

    Attributes:
        value: the number(s); a float or a NumPy array (broadcast over the inputs).
        guarantee: the :class:`Guarantee` label.
        quantity: what ``value`` measures, e.g. ``"rdp_epsilon"``, ``"epsilon"``, ``"noise_scale"``.
        neighboring: the neighbouring relation the number refers to.
        source: the result implemented (paper, arXiv id, theorem), and assumptions.
        sampler: how records join the steps, where the number depends on it (``"fixed_size"``, ``"poisson"``,
            ``"shuffle"``, ``"random_allocation"``, ``"cyclic_poisson"``; ARCHITECTURE.md's ``sampler``
            vocabulary), else None.
    """

    value: float | np.ndarray
    guarantee: Guarantee
    quantity: str = "rdp_epsilon"
    neighboring: NeighboringRelation = NeighboringRelation.REPLACE_ONE
    source: str = ""
    sampler: str | None = None

    def __post_init__(self) -> None:
        for name, kind in (("guarantee", Guarantee), ("neighboring", NeighboringRelation)):
            try:
                object.__setattr__(self, name, kind(getattr(self, name)))
            except (ValueError, TypeError):
                choices = ", ".join(repr(member.value) for member in kind)
                raise ValueError(f"{name} must be one of {choices}; got {name}={getattr(self, name)!r}.") from None
        if self.sampler is not None and self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS!r} or None; got sampler={self.sampler!r}.")

    def __float__(self) -> float:
        return float(np.asarray(self.value).item())
