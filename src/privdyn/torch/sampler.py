"""Batch samplers for torch data loaders: the participation that privdyn's accountants assume.

A :class:`BatchSampler` yields index batches as :func:`privdyn.algorithms.dpsgd.sample_batches` draws them (the kan
paper's fixed-size sampling without replacement, Wang et al., arXiv 2605.12648, Algorithm 1: ``batch_size`` distinct
indices, independently at every step; or Poisson sampling with rate ``batch_size / n``; or random allocation, also
called balls-in-bins: every record in exactly one of the ``ceil(n / batch_size)`` steps of each epoch, chosen
uniformly and independently of the other records; or cyclic Poisson over as many parts as the noise encoder has bands;
or shuffled epochs), for ``DataLoader(dataset, batch_sampler=...)``. Which (noise, sampler, neighbouring relation) can
be accounted is decided by :mod:`privdyn.privacy.accounting` alone (:class:`privdyn.torch.DPSGDAccountant`), not here.

The batch sampler is the one description of a run's participation: :class:`~privdyn.torch.PrivateOptimizer`,
:class:`~privdyn.torch.DPSGDAccountant` and :class:`~privdyn.torch.PrivacyEngine` take the sampler kind, ``n``, the
batch size (hence the rate ``batch_size / n``) and the neighbouring relation from the very object the data loader
draws its batches from (:func:`resolve_participation`). The string arguments they took before still work for one
release, with a :class:`DeprecationWarning`; one that disagrees with the batch sampler is refused
(:meth:`BatchSampler.check_run`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

import numpy as np
import torch

from privdyn import _check
from privdyn._deprecation import deprecated_arguments
from privdyn.algorithms.dpsgd import sample_batches
from privdyn.privacy.correlated import Strategy
from privdyn.privacy.labels import DPSGD_SAMPLERS, NeighboringRelation, Sampler, as_sampler

__all__ = ["NEIGHBORING", "BatchSampler", "Participation", "allow_empty_batches", "resolve_participation"]

NEIGHBORING = tuple(relation.value for relation in NeighboringRelation)
"""The neighbouring relations a run can be accounted under."""


class BatchSampler(torch.utils.data.Sampler[list[int]]):
    """``num_steps`` index batches per pass (each pass continues the same random stream).

    Args:
        n: the number of training examples.
        batch_size: the batch size (the expected size under Poisson sampling).
        sampler: one of :data:`privdyn.privacy.labels.DPSGD_SAMPLERS` (a :class:`~privdyn.privacy.Sampler` or its
            string value).
        num_steps: batches per pass over the sampler (``len(sampler)``; the steps of an "epoch"). Under random
            allocation a multiple of :attr:`steps_per_epoch`, so that a pass is whole allocation epochs: the
            accountant assumes every record joins exactly one step of each run of ``ceil(n / batch_size)``
            consecutive steps, which a pass that stopped mid-epoch would break if the sampler were rebuilt for the
            next pass.
        neighboring: the neighbouring relation the run is accounted under (one of :data:`NEIGHBORING`:
            ``"add_remove"``, ``"zero_out"`` or ``"replace_one"``). Not used to draw the batches: it completes the
            description of the participation that an optimizer, accountant or engine bound to this sampler reads, and
            those require it (the :class:`~privdyn.torch.PrivacyEngine` defaults to Opacus' ``"add_remove"``).
        generator: the :class:`numpy.random.Generator` of the batches (default: ``numpy.random.default_rng()``, OS
            entropy). Batches from a known seed are not private: in deployment keep the default.
        strategy: the run's noise strategy; required by ``"cyclic_poisson"``, whose number of parts is its encoder's
            band count (:func:`privdyn.privacy.cyclic_poisson.num_partitions`, the ``b`` the accountant uses; a
            dense encoder is refused), unused by the other samplers. Give the optimizer the same strategy.

    Poisson and random-allocation batches can be empty; their size varies. torch's default collate cannot make a
    batch of nothing: give the data loader ``collate_fn=allow_empty_batches(dataset)``
    (:class:`~privdyn.torch.PrivacyEngine` does); the private optimizers still add the step's noise and count the
    step for an empty batch, as the accountant assumes.
    """

    def __init__(self, n: int, batch_size: int, *, sampler: Sampler | str, num_steps: int,
                 neighboring: str | None = None, generator: np.random.Generator | None = None,
                 strategy: Strategy | None = None) -> None:
        sampler = as_sampler(sampler, DPSGD_SAMPLERS).value
        if neighboring is not None:
            _check.one_of(NEIGHBORING, neighboring=neighboring)
        _check.integer(minimum=1, n=n, batch_size=batch_size, num_steps=num_steps)
        if generator is not None and not isinstance(generator, np.random.Generator):
            raise TypeError(f"generator must be a numpy.random.Generator or None; got {type(generator).__name__}.")
        if int(batch_size) > int(n):
            raise ValueError(f"batch_size must be <= n={int(n)} (the number of training examples); "
                             f"got batch_size={batch_size}.")
        self.n, self.batch_size, self.sampler, self.num_steps = int(n), int(batch_size), sampler, int(num_steps)
        self.neighboring = None if neighboring is None else str(NeighboringRelation(neighboring).value)
        if sampler == "random_allocation" and self.num_steps % self.steps_per_epoch:
            raise ValueError(f"num_steps must be a multiple of the {self.steps_per_epoch} steps of an allocation epoch "
                             f"(ceil(n / batch_size)) under sampler='random_allocation', so that every pass is whole "
                             f"epochs; got num_steps={num_steps}.")
        self.num_partitions: int | None = None
        if sampler == "cyclic_poisson":
            if strategy is None:
                raise ValueError("strategy is required by sampler='cyclic_poisson' (its number of parts is the "
                                 "band count of the noise encoder); got strategy=None.")
            from privdyn.privacy.cyclic_poisson import num_partitions

            self.num_partitions = num_partitions(strategy)
        rng = np.random.default_rng() if generator is None else generator
        self._batches = sample_batches(sampler, n=self.n, batch_size=self.batch_size, rng=rng,
                                       num_partitions=self.num_partitions)

    @property
    def sampling_prob(self) -> float:
        """``batch_size / n``: the per-step rate (the average one under cyclic Poisson, whose rate inside the active
        part is ``batch_size * num_partitions / n``)."""
        return self.batch_size / self.n

    @property
    def steps_per_epoch(self) -> int:
        """``ceil(n / batch_size)``: the steps of a random-allocation epoch (each record joins exactly one)."""
        return -(-self.n // self.batch_size)

    def check_run(self, *, n: int | None = None, batch_size: int | None = None, sampler: Sampler | str | None = None,
                  neighboring: str | None = None, strategy: Strategy | None = None) -> None:
        """Refuse a run accounted for another participation than this sampler's.

        Raises:
            ValueError: ``sampler``, ``n``, ``batch_size`` or ``neighboring`` (the optimizer's, hence its
                accountant's) is not this sampler's, naming both values; None means "not given" and is not compared
                (nor is ``neighboring`` when this sampler has none). Under cyclic Poisson, also the number of parts
                the optimizer's ``strategy`` implies (its encoder's band count), when a strategy is given.
        """
        for name, value, own in (("sampler", sampler, self.sampler), ("n", n, self.n),
                                 ("batch_size", batch_size, self.batch_size),
                                 ("neighboring", neighboring, self.neighboring)):
            if value is not None and own is not None and value != own:
                raise ValueError(f"{name}={value!r} disagrees with the batch sampler's {name}={own!r}: the accountant "
                                 f"would account another participation than the one the data loader draws.")
        if self.num_partitions is not None and strategy is not None:
            from privdyn.privacy.cyclic_poisson import num_partitions

            parts = num_partitions(strategy)
            if parts != self.num_partitions:
                raise ValueError(f"strategy={strategy!r} implies {parts} cyclic-Poisson parts (its encoder's band "
                                 f"count), but the batch sampler draws from num_partitions={self.num_partitions}: "
                                 "the accountant would account another participation than the one the data loader "
                                 "draws. Give both the same strategy.")

    def __len__(self) -> int:
        return self.num_steps

    def __iter__(self) -> Iterator[list[int]]:
        for _ in range(self.num_steps):
            yield next(self._batches).tolist()

    def __repr__(self) -> str:
        parts = "" if self.num_partitions is None else f", num_partitions={self.num_partitions}"
        relation = "" if self.neighboring is None else f", neighboring={self.neighboring!r}"
        return (f"BatchSampler(n={self.n}, batch_size={self.batch_size}, sampler={self.sampler!r}, "
                f"num_steps={self.num_steps}{relation}{parts})")


class Participation(NamedTuple):
    """Who joins which step, as the accountant reads it: the sampler kind, the dataset size, the (expected) batch size
    and the neighbouring relation."""

    sampler: str
    n: int
    batch_size: int
    neighboring: str

    @property
    def sampling_prob(self) -> float:
        """``batch_size / n``."""
        return self.batch_size / self.n


def resolve_participation(owner: str, batch_sampler: BatchSampler | None, *, n: int | None = None,
                          batch_size: int | None = None, sampler: Sampler | str | None = None,
                          neighboring: str | None = None, strategy: Strategy | None = None,
                          stacklevel: int = 4) -> Participation:
    """The participation of a run, from its batch sampler (the one description) or, deprecated, from strings.

    ``batch_size`` is not deprecated (it is also the divisor of a private step); ``sampler``, ``n`` and
    ``neighboring`` are, and warn (a :class:`DeprecationWarning` naming ``owner``) when given. With a batch sampler,
    every value given must be the sampler's (:meth:`BatchSampler.check_run`: a ``ValueError`` naming both values),
    and the neighbouring relation is the sampler's, or the deprecated ``neighboring`` when the sampler has none.

    Raises:
        TypeError: ``batch_sampler`` is not a :class:`BatchSampler`.
        ValueError: a disagreement with the batch sampler; no neighbouring relation; without a batch sampler, a
            missing ``sampler``, ``n``, ``batch_size`` or ``neighboring``, or a value out of its range.
    """
    if batch_sampler is not None:
        if not isinstance(batch_sampler, BatchSampler):
            raise TypeError(f"batch_sampler must be a privdyn.torch.BatchSampler; got {type(batch_sampler).__name__}.")
        given = [name for name, value in (("n", n), ("sampler", sampler), ("neighboring", neighboring))
                 if value is not None]
        if given:
            deprecated_arguments(owner, given, "the batch sampler carries them (BatchSampler(n, batch_size, "
                                 "sampler=..., neighboring=...)); omit them here", stacklevel=stacklevel)
        batch_sampler.check_run(n=n, batch_size=batch_size, sampler=sampler, neighboring=neighboring,
                                strategy=strategy)
        relation = batch_sampler.neighboring if batch_sampler.neighboring is not None else neighboring
        if relation is None:
            raise ValueError(f"{owner}: the batch sampler binds the run to privdyn's accountant, which needs its "
                             "neighbouring relation: build it with BatchSampler(..., neighboring='add_remove', "
                             "'zero_out' or 'replace_one'); got neighboring=None.")
        _check.one_of(NEIGHBORING, neighboring=relation)
        return Participation(batch_sampler.sampler, batch_sampler.n, batch_sampler.batch_size, str(relation))
    given = [name for name, value in (("n", n), ("sampler", sampler), ("neighboring", neighboring))
             if value is not None]
    if given:
        deprecated_arguments(owner, given, "pass batch_sampler=BatchSampler(n, batch_size, sampler=..., "
                             "neighboring=..., num_steps=...), the object the data loader draws its batches from",
                             stacklevel=stacklevel)
    if sampler is None or n is None or batch_size is None or neighboring is None:
        raise ValueError(f"{owner}: give batch_sampler (a privdyn.torch.BatchSampler) to bind the run to an "
                         f"accountant; got batch_sampler=None, n={n!r}, batch_size={batch_size!r}, "
                         f"sampler={sampler!r}, neighboring={neighboring!r}.")
    sampler = as_sampler(sampler, DPSGD_SAMPLERS).value
    _check.one_of(NEIGHBORING, neighboring=neighboring)
    _check.integer(minimum=1, n=n, batch_size=batch_size)
    if int(batch_size) > int(n):
        raise ValueError(f"batch_size must be <= n={int(n)} (the number of training examples); "
                         f"got batch_size={batch_size}.")
    return Participation(str(sampler), int(n), int(batch_size), str(neighboring))


def allow_empty_batches(dataset: Sequence[object],
                        collate_fn: Callable[[list[object]], object] | None = None) -> Callable[[list[object]], object]:
    """A collate function that also makes empty batches (a Poisson or random-allocation batch with no example), for
    ``DataLoader``.

    A non-empty batch is collated by ``collate_fn`` (default: torch's ``default_collate``). An empty one is the
    collation of ``dataset[0]`` with every tensor cut to length 0 along the batch axis, so shapes after the first
    axis and dtypes are the data's: the model's forward pass and the per-example gradients see a batch of size 0, and
    the private step adds only its noise, as the accountant assumes.

    Raises:
        ValueError: at collation of an empty batch when ``dataset`` is empty.
    """
    collate = torch.utils.data.default_collate if collate_fn is None else collate_fn

    def empty_tensors(value: object) -> object:
        if isinstance(value, torch.Tensor):
            return value[:0]
        if isinstance(value, tuple | list):
            return type(value)(empty_tensors(v) for v in value)
        if isinstance(value, dict):
            return {key: empty_tensors(v) for key, v in value.items()}
        return value

    def collate_batch(batch: list[object]) -> object:
        if batch:
            return collate(batch)
        if len(dataset) == 0:
            raise ValueError("dataset is empty: an empty batch has no example to take its shapes from.")
        return empty_tensors(collate([dataset[0]]))

    return collate_batch
