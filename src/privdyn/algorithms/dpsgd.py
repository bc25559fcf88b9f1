"""Mini-batch DP-SGD with correlated Gaussian noise and projection (Algorithm 1 of the kan paper).

Wang, Schuchardt, Kalinin, et al., "Population Risk Bounds for Kolmogorov-Arnold Networks Trained by DP-SGD with
Correlated Noise", arXiv 2605.12648, Algorithm 1. For any model that returns its per-example loss gradients as rank-one
factors (:class:`privdyn.models.kan.KAN`, :class:`privdyn.models.logistic.LogisticRegression`; see
:class:`PerExampleGradientModel`), starting from ``W_0`` with ``K = Ball(W_0, projection_radius)``::

    for t = 1, ..., num_steps:
        B_t = a batch of indices (``sampler``)
        g_i = grad l(y_i f_{W_{t-1}}(x_i)) = outer(A_i, H_i)               for i in B_t
        v_t = (1/B) sum_i g_i min(1, clip / ||g_i||)                        ||g_i|| = ||A_i|| ||H_i||
        W_t = Pi_K(W_{t-1} - step_size (v_t + (clip/B) noise_multiplier xi_t))
        Pi_K(V) = W_0 + (V - W_0) min(1, projection_radius / ||V - W_0||)

with ``B = batch_size`` and ``xi_t = (C^{-1} Z)_t`` the correlated noise of a
:class:`~privdyn.privacy.correlated.Strategy` (the paper's ``xi_t = Z_t - lambda Z_{t-1}``, ``Z_0 = 0``, is
``LambdaCGD(noise_correlation)``; ``noise_correlation = 0`` is DP-SGD). The noise is on the *average* of the clipped
gradients, with standard deviation ``clip * noise_multiplier / batch_size`` per fresh coordinate (``c_priv`` of the
paper): ``noise_multiplier`` is the usual noise multiplier relative to the clipping threshold of the *sum*. The
clipped sum is one matrix product ``(s * A)^T H``; no per-example gradient is formed.

**Iteration count.** ``num_steps`` is the number of updates (and of noise draws): the iterates are
``W_0, ..., W_{num_steps}``. The paper's Algorithm 1 with horizon ``T`` loops ``t = 1, ..., T-1`` (``T - 1`` updates)
and returns ``W_0, ..., W_{T-1}``, whose average the bounds control; its analysis and privacy accounting use ``T``.
privdyn reads it as follows: run ``num_steps = T`` updates, average
the risks over ``W_0, ..., W_{T-1}`` (:attr:`DPSGDResult.averaged_train_loss`) and account for ``T`` noisy steps
(conservative). Pass ``num_steps = T - 1`` for the literal loop of Algorithm 1.

**Samplers** (``sampler``) and the accountants that match them:

* ``"fixed_size"`` (the paper's): every step draws ``batch_size`` distinct indices uniformly, independently of the
  other steps. Matches Theorem 5.1 / F.12 (lambda > 0, zero-out neighbours) and Theorem 5.4 / D.9 (lambda = 0,
  replace-one neighbours, sampling without replacement).
* ``"poisson"``: every example joins independently with probability ``batch_size / n``; the sum is still divided by
  ``batch_size`` (the expected size, as in the standard Poisson-subsampled Gaussian accountant).
* ``"shuffle"``: one random permutation per epoch, cut into ``n // batch_size`` consecutive batches (the remainder of
  the permutation is dropped). No accountant of the kan paper covers it (in particular not lambda > 0), and privdyn
  refuses it (:mod:`privdyn.privacy.shuffling` shows why).
* ``"random_allocation"`` (balls-in-bins): an epoch has ``t = ceil(n / batch_size)`` steps and every example joins
  exactly one of them, drawn uniformly and independently of the other examples and of other epochs; batch sizes
  vary (mean ``n / t <= batch_size``) and the sum is divided by ``batch_size``, a public constant. Matches the
  allow-list's random-allocation row (independent noise, :mod:`privdyn.privacy.random_allocation`).
* ``"cyclic_poisson"`` (Choquette-Choo et al., arXiv 2306.08153, Section 4): at the start of the run every example is
  put in one of ``b`` parts, drawn uniformly and independently of the other examples (so adding or removing one
  example moves no other); part ``t mod b`` is active at step ``t`` (from 0) and each of its examples joins
  independently with probability ``q = batch_size * b / n`` (so ``batch_size <= n / b``; the expected batch size is
  ``batch_size``, and the sum is divided by it). ``b`` is not chosen by the user: it is the band count of the noise's
  encoder (:func:`privdyn.privacy.cyclic_poisson.num_partitions`), the number the accountant uses, and a strategy
  with a dense encoder is refused. Matches the allow-list's cyclic-Poisson rows (Theorem 4 of the paper).

**Random streams.** Batches come from ``sampling_rng`` (a :class:`numpy.random.Generator`) and the noise from
``noise_rng`` (a :class:`~privdyn.rng.StepNormals` or :class:`~privdyn.rng.CounterStream`), so
``Z_t`` is a pure function of ``(noise_rng, t)``: two runs with the same sources are coupled (the paper's
stability argument, Appendix C.2), and ``regenerate=True`` recomputes ``Z_{t-1}`` instead of buffering it, with
bit-identical output. Nothing touches global random state.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np

from privdyn import _check
from privdyn._deprecation import renamed_arguments
from privdyn.algorithms.dpgd import _diverged_as_inf
from privdyn.privacy.correlated import LambdaCGD, NoiseStream, StepNormals, Strategy
from privdyn.privacy.labels import DPSGD_SAMPLERS, Sampler, as_sampler
from privdyn.privacy.labels import DPSGD_SAMPLERS as SAMPLERS  # the name of the subset here, kept
from privdyn.rng import CounterStream

__all__ = [
    "SAMPLERS",
    "PerExampleGradientModel",
    "sample_batches",
    "DPSGD",
    "DPSGDLog",
    "DPSGDResult",
    "dpsgd",
]

@runtime_checkable
class PerExampleGradientModel(Protocol):
    """What DP-SGD needs from a model whose per-example loss gradients are rank-one matrices.

    ``loss_and_gradient_factors(params, x, y)`` returns ``(losses, A, H)`` with the gradient of example ``i`` equal
    to ``outer(A[i], H[i])`` (``params`` has :attr:`parameter_shape` ``(A.shape[1], H.shape[1])``);
    ``validate_inputs(x)`` raises ``ValueError`` for inputs outside the model's domain; ``loss(params, x, y)`` is the
    empirical risk.
    """

    @property
    def parameter_shape(self) -> tuple[int, int]: ...

    def validate_inputs(self, x: np.ndarray) -> np.ndarray: ...

    def loss(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> float: ...

    def loss_and_gradient_factors(self, params: np.ndarray, x: np.ndarray,
                                  y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


@renamed_arguments(generator="rng")
def sample_batches(sampler: Sampler | str, *, n: int, batch_size: int, rng: np.random.Generator,
                   num_partitions: int | None = None) -> Iterator[np.ndarray]:
    """An endless iterator of index batches (see the module docstring for the samplers).

    ``num_partitions`` is the number of parts ``b`` of ``"cyclic_poisson"`` (required there, refused for the other
    samplers). It must be the band count of the run's noise encoder, which the accountant uses: take it from
    :func:`privdyn.privacy.cyclic_poisson.num_partitions` (:class:`DPSGD` and :class:`privdyn.torch.BatchSampler`
    do). The partition is drawn from ``rng`` before the first batch and kept for the whole iterator.
    """
    sampler = as_sampler(sampler, DPSGD_SAMPLERS).value
    _check.integer(minimum=1, n=n, batch_size=batch_size)
    n, batch_size = int(n), int(batch_size)
    if batch_size > n:
        raise ValueError(f"batch_size must be <= n={n}; got batch_size={batch_size}.")
    _check.generator(rng=rng)
    if sampler != "cyclic_poisson":
        if num_partitions is not None:
            raise ValueError(f"num_partitions is used only by sampler='cyclic_poisson'; got "
                             f"num_partitions={num_partitions!r} with sampler={sampler!r}.")
        return _batches(sampler, n, batch_size, rng)
    if num_partitions is None:
        raise ValueError("num_partitions is required by sampler='cyclic_poisson' (an integer >= 1: the band count of "
                         "the noise encoder, privdyn.privacy.cyclic_poisson.num_partitions(strategy)); got "
                         "num_partitions=None.")
    _check.scalar(num_partitions=num_partitions)
    _check.integer(minimum=1, num_partitions=num_partitions)
    parts = int(num_partitions)
    if batch_size * parts > n:
        raise ValueError(f"batch_size must be <= n / num_partitions = {n // parts} under sampler='cyclic_poisson' "
                         f"(the rate inside the active part, batch_size * num_partitions / n, is a probability); got "
                         f"batch_size={batch_size} with n={n}, num_partitions={parts}.")
    return _cyclic_poisson_batches(n, batch_size, parts, rng)


def _cyclic_poisson_batches(n: int, batch_size: int, parts: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Each example's part uniform in ``0 .. parts - 1``, independently; part ``t mod parts`` active at step t, each
    of its examples joining with probability ``batch_size * parts / n``."""
    rate = batch_size * parts / n
    part = rng.integers(0, parts, size=n)
    members = [np.flatnonzero(part == j) for j in range(parts)]
    step = 0
    while True:
        active = members[step % parts]
        yield active[rng.random(active.size) < rate]
        step += 1


def _batches(sampler: str, n: int, batch_size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    if sampler == "fixed_size":
        while True:
            yield rng.choice(n, size=batch_size, replace=False)
    elif sampler == "poisson":
        rate = batch_size / n
        while True:
            yield np.flatnonzero(rng.random(n) < rate)
    elif sampler == "random_allocation":
        steps = -(-n // batch_size)
        while True:
            slot = rng.integers(0, steps, size=n)
            order = np.argsort(slot, kind="stable")
            bounds = np.searchsorted(slot[order], np.arange(steps + 1))
            for b in range(steps):
                yield order[bounds[b]: bounds[b + 1]]
    else:
        per_epoch = n // batch_size
        while True:
            order = rng.permutation(n)
            for b in range(per_epoch):
                yield order[b * batch_size: (b + 1) * batch_size]


# ---------------------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DPSGDLog:
    """What the trainer records at the logged iterates ``t = 0, k, 2k, ..., num_steps`` (``k = log_every``).

    Attributes:
        step: the logged ``t`` (``W_t`` is the iterate after ``t`` updates).
        train_loss: the empirical risk ``L_S(W_t)`` on the whole training set (``nan`` if not evaluated).
        batch_loss: the mean loss of the batches of steps ``(t_prev, t]``, each at the iterate it started from.
        clip_fraction: the fraction of per-example gradients clipped in steps ``(t_prev, t]``.
        projection_fraction: the fraction of steps in ``(t_prev, t]`` in which the projection moved the iterate.
        distance: ``||W_t - W_0||``.

    At ``t = 0`` no step has run: ``batch_loss``, ``clip_fraction`` and ``projection_fraction`` are ``nan``
    (``batch_loss`` also for a window whose batches were all empty, under Poisson sampling). A run that diverged holds
    ``inf`` in its losses and distances; the fractions are in [0, 1].
    """

    step: np.ndarray
    train_loss: np.ndarray
    batch_loss: np.ndarray
    clip_fraction: np.ndarray
    projection_fraction: np.ndarray
    distance: np.ndarray

    def __post_init__(self) -> None:
        arrays = {field.name: _check.real_array(**{field.name: getattr(self, field.name)})
                  for field in dataclasses.fields(self)}
        length = arrays["step"].shape
        for name, value in arrays.items():
            if value.ndim != 1 or value.shape != length:
                raise ValueError(f"{name} must be a 1-d array as long as step {length}; got {name} of shape "
                                 f"{value.shape}.")
        later = arrays["step"] > 0
        for name in ("clip_fraction", "projection_fraction"):
            value = arrays[name]
            if np.any(np.isnan(value[later])) or np.any(value[~np.isnan(value)] < 0) or np.any(value > 1):
                raise ValueError(f"{name} must be in [0, 1] (nan only at step 0); got {name}={value!r}.")
        for name in ("step", "distance"):
            if np.any(np.isnan(arrays[name])):
                raise ValueError(f"{name} must not be NaN; got {name}={arrays[name]!r}.")
        if not np.all(np.isfinite(arrays["step"])) or np.any(arrays["step"] < 0):
            raise ValueError(f"step must be finite and >= 0; got step={arrays['step']!r}.")


@dataclasses.dataclass(frozen=True)
class DPSGDResult:
    """The outcome of :func:`dpsgd`.

    Attributes:
        params: the last iterate ``W_{num_steps}``.
        initial_params: ``W_0`` (the centre of the projection ball).
        log: the :class:`DPSGDLog`.
        num_steps: the number of updates.
        num_clipped: per-example gradients clipped over the whole run.
        num_examples: per-example gradients computed over the whole run.
        num_projections: steps in which the projection was active.
        iterates: ``W_0, ..., W_{num_steps}`` stacked (only with ``keep_iterates=True``), else ``None``.

    A run that diverged holds ``inf`` in ``params`` and ``iterates`` (written where the overflow left NaN).
    """

    params: np.ndarray
    initial_params: np.ndarray
    log: DPSGDLog
    num_steps: int
    num_clipped: int
    num_examples: int
    num_projections: int
    iterates: np.ndarray | None = None

    def __post_init__(self) -> None:
        _check.instance(DPSGDLog, log=self.log)
        _check.integer(minimum=0, num_steps=self.num_steps, num_clipped=self.num_clipped,
                       num_examples=self.num_examples, num_projections=self.num_projections)
        _check.record(self, infinite=("params", "iterates"))

    @property
    def clip_fraction(self) -> float:
        """The fraction of all per-example gradients that were clipped."""
        return self.num_clipped / self.num_examples if self.num_examples else 0.0

    @property
    def projection_triggered(self) -> bool:
        """Whether the projection was ever active (the theory predicts not, on its good event)."""
        return self.num_projections > 0

    @property
    def averaged_train_loss(self) -> float:
        """The mean of ``L_S(W_t)`` over the logged ``t < num_steps``: the paper's averaged optimization risk
        ``(1/T) sum_{t<T} L_S(W_t)`` with ``T = num_steps`` (exactly when ``log_every = 1``, else on the logged
        subsample)."""
        mask = self.log.step < self.num_steps
        values = self.log.train_loss[mask]
        if values.size == 0 or np.any(np.isnan(values)):
            raise ValueError("averaged_train_loss needs the training loss logged (log_train_loss=True).")
        return float(np.mean(values))


# ---------------------------------------------------------------------------------------------------------------
# The trainer
# ---------------------------------------------------------------------------------------------------------------


def _noise_source(source: Any) -> StepNormals:
    if isinstance(source, StepNormals):
        return source
    if isinstance(source, CounterStream):
        return StepNormals.from_counter_stream(source)
    raise TypeError("noise_rng must be a privdyn.rng.StepNormals or a privdyn.rng.CounterStream; "
                    f"got {type(source).__name__}.")


class DPSGD:
    """The state of one run of Algorithm 1 (kan paper, arXiv 2605.12648); :meth:`step` performs one update.

    Args:
        model: a :class:`PerExampleGradientModel`.
        initial_params: ``W_0`` (copied; the centre of the projection ball).
        x, y: the training set (validated once by the model; labels in ``{-1, +1}``).
        step_size: ``eta > 0``.
        batch_size: ``B``, an integer in ``[1, n]``.
        clip: the clipping threshold ``C_clip > 0`` (``inf``: no clipping, allowed only without noise).
        noise_multiplier: ``kappa >= 0`` (noise std ``clip * kappa / B`` on the average per fresh coordinate).
        noise_correlation: ``lambda in [0, 1)`` of the paper's ``LambdaCGD`` strategy (default 0: DP-SGD).
        strategy: any :class:`~privdyn.privacy.correlated.Strategy` instead of ``noise_correlation``.
        projection_radius: ``R* > 0`` (``inf``: no projection).
        sampler: one of :data:`SAMPLERS` (``"cyclic_poisson"`` uses as many parts as the strategy's encoder has
            bands, and refuses a strategy with a dense encoder).
        sampling_rng: the generator of the batches (``sampling_generator`` is its deprecated name).
        noise_rng: the step normals (required when ``noise_multiplier > 0``; ``noise_source`` is its deprecated
            name). It must be independent of ``sampling_rng``.
        regenerate: regenerate past normals instead of buffering them (strategies that support it).
        num_steps: the horizon, needed only by strategies whose memory grows with it.

    Attributes:
        params: the current iterate ``W_t`` (updated in place by :meth:`step`).
        initial_params: ``W_0`` (read-only).
        t: the number of updates so far.
        noise_stream: the :class:`~privdyn.privacy.correlated.NoiseStream` (``None`` without noise); it emits
            ``step_size * c_priv * xi_t`` so that one subtraction applies the noise.
        last_batch_size, last_batch_loss, last_num_clipped, last_projected, last_distance: statistics of the last
            step (``last_distance`` is ``||W_t - W_0||``, ``nan`` when there is no projection to compute it).
    """

    @renamed_arguments(sampling_generator="sampling_rng", noise_source="noise_rng")
    def __init__(self, model: PerExampleGradientModel, initial_params: np.ndarray, x: np.ndarray, y: np.ndarray, *,
                 step_size: float, batch_size: int, clip: float = math.inf, noise_multiplier: float = 0.0,
                 noise_correlation: float | None = None, strategy: Strategy | None = None,
                 projection_radius: float = math.inf, sampler: Sampler | str = "fixed_size",
                 sampling_rng: np.random.Generator, noise_rng: StepNormals | CounterStream | None = None,
                 regenerate: bool = False, num_steps: int | None = None) -> None:
        if not isinstance(model, PerExampleGradientModel):
            raise TypeError("model must expose parameter_shape, validate_inputs, loss and loss_and_gradient_factors; "
                            f"got {type(model).__name__}.")
        x = model.validate_inputs(x)
        n = x.shape[0]
        y = np.asarray(y)
        if y.shape != (n,):
            raise ValueError(f"y must have shape ({n},) (one label per row of x); got shape {y.shape}.")
        y = y.astype(np.float64)
        _check.finite(y=y)
        if np.any((y != 1.0) & (y != -1.0)):
            raise ValueError(f"y must hold labels in {{-1, +1}}; got y={y[(y != 1.0) & (y != -1.0)][0]!r}.")
        params = np.array(initial_params, dtype=np.float64)
        if params.shape != tuple(model.parameter_shape):
            raise ValueError(f"initial_params must have shape {tuple(model.parameter_shape)}; got {params.shape}.")
        _check.finite(initial_params=params)
        _check.scalar(step_size=step_size, noise_multiplier=noise_multiplier)
        _check.positive(step_size=step_size)
        _check.non_negative(noise_multiplier=noise_multiplier)
        _check.integer(minimum=1, batch_size=batch_size)
        if int(batch_size) > n:
            raise ValueError(f"batch_size must be <= n={n} (the number of training examples); "
                             f"got batch_size={batch_size}.")
        for name, value in (("clip", clip), ("projection_radius", projection_radius)):
            _check.scalar(**{name: value})
            if not (value > 0):
                raise ValueError(f"{name} must be > 0 (inf allowed); got {name}={value!r}.")
        if noise_multiplier > 0 and math.isinf(clip):
            raise ValueError(f"clip must be finite when noise_multiplier > 0; got clip={clip!r}.")
        if strategy is not None and noise_correlation is not None:
            raise ValueError("give either noise_correlation or strategy, not both.")
        if strategy is None:
            strategy = LambdaCGD(0.0 if noise_correlation is None else noise_correlation)
        if not isinstance(strategy, Strategy):
            raise TypeError(f"strategy must be a privdyn.privacy.correlated.Strategy; got {type(strategy).__name__}.")
        if num_steps is not None:
            _check.integer(minimum=1, num_steps=num_steps)
        self.model = model
        self.x, self.y, self.n = x, y, n
        self.step_size = float(step_size)
        self.batch_size = int(batch_size)
        self.clip = float(clip)
        self.noise_multiplier = float(noise_multiplier)
        self.strategy = strategy
        self.projection_radius = float(projection_radius)
        self.sampler = sampler
        self.initial_params = params.copy()
        self.initial_params.setflags(write=False)
        self.params = params
        partitions = None
        if sampler == "cyclic_poisson":
            from privdyn.privacy.cyclic_poisson import num_partitions as band_count

            partitions = band_count(strategy)
        self._batches = sample_batches(sampler, n=n, batch_size=self.batch_size, rng=sampling_rng,
                                       num_partitions=partitions)
        self.noise_rng: StepNormals | None = None
        self.noise_stream: NoiseStream | None = None
        if self.noise_multiplier > 0:
            if noise_rng is None:
                raise ValueError("noise_rng must be given when noise_multiplier > 0.")
            self.noise_rng = _noise_source(noise_rng)
            scale = self.step_size * self.clip * self.noise_multiplier / self.batch_size
            self.noise_stream = strategy.stream(params.shape, self.noise_rng, num_steps=num_steps,
                                                regenerate=bool(regenerate), scale=scale)
        self._scratch = np.empty_like(params) if math.isfinite(self.projection_radius) else None
        self.t = 0
        self.last_batch_loss = math.nan
        self.last_num_clipped = 0
        self.last_batch_size = 0
        self.last_projected = False
        self.last_distance = 0.0

    def step(self) -> np.ndarray:
        """One update ``W_{t-1} -> W_t`` (in place in :attr:`params`, which is returned)."""
        index = next(self._batches)
        losses, a, h = self.model.loss_and_gradient_factors(self.params, self.x[index], self.y[index])
        self.last_batch_size = losses.shape[0]
        self.last_batch_loss = float(np.mean(losses)) if losses.size else math.nan
        if math.isfinite(self.clip) and losses.size:
            # ||outer(A_i, H_i)|| = ||A_i|| ||H_i||; factor min(1, clip / norm) (1 for a zero gradient).
            norms = np.sqrt(np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", h, h))
            clipped = norms > self.clip
            self.last_num_clipped = int(np.count_nonzero(clipped))
            if self.last_num_clipped:
                factor = np.ones_like(norms)
                np.divide(self.clip, norms, out=factor, where=clipped)
                a *= factor[:, None]
        else:
            self.last_num_clipped = 0
        update = a.T @ h  # the sum of the clipped per-example gradients
        update *= self.step_size / self.batch_size
        params = self.params
        params -= update
        if self.noise_stream is not None:
            params -= self.noise_stream.next()
        self.t += 1
        self.last_projected = False
        if self._scratch is not None:
            diff = np.subtract(params, self.initial_params, out=self._scratch)
            flat = diff.reshape(-1)
            distance = math.sqrt(float(flat @ flat))
            if distance > self.projection_radius:
                diff *= self.projection_radius / distance
                np.add(self.initial_params, diff, out=params)
                self.last_projected = True
                distance = self.projection_radius
            self.last_distance = distance
        else:
            self.last_distance = math.nan
        return params

    def distance(self) -> float:
        """``||W_t - W_0||``."""
        return float(np.linalg.norm(self.params - self.initial_params))


@renamed_arguments(sampling_generator="sampling_rng", noise_source="noise_rng")
def dpsgd(model: PerExampleGradientModel, initial_params: np.ndarray, x: np.ndarray, y: np.ndarray, *, num_steps: int,
          step_size: float, batch_size: int, sampling_rng: np.random.Generator, clip: float = math.inf,
          noise_multiplier: float = 0.0, noise_correlation: float | None = None, strategy: Strategy | None = None,
          projection_radius: float = math.inf, sampler: Sampler | str = "fixed_size",
          noise_rng: StepNormals | CounterStream | None = None, regenerate: bool = False, log_every: int = 1,
          log_train_loss: bool = True, keep_iterates: bool = False) -> DPSGDResult:
    """Run ``num_steps`` updates of Algorithm 1 of the kan paper (arXiv 2605.12648); see the module docstring.

    The arguments are those of :class:`DPSGD`, plus ``num_steps`` (updates; the paper's loop runs ``T - 1``),
    ``log_every`` (log ``W_0``, every ``log_every``-th iterate and the last), ``log_train_loss`` (evaluate
    ``L_S(W_t)`` on the whole training set at the logged iterates: ``n`` forward passes each) and ``keep_iterates``
    (store every iterate, for analysis and tests; ``(num_steps + 1) * m d p`` floats).
    """
    _check.integer(minimum=1, num_steps=num_steps, log_every=log_every)
    trainer = DPSGD(model, initial_params, x, y, step_size=step_size, batch_size=batch_size, clip=clip,
                    noise_multiplier=noise_multiplier, noise_correlation=noise_correlation, strategy=strategy,
                    projection_radius=projection_radius, sampler=sampler, sampling_rng=sampling_rng,
                    noise_rng=noise_rng, regenerate=regenerate, num_steps=num_steps)
    num_steps = int(num_steps)
    iterates = np.empty((num_steps + 1,) + trainer.params.shape) if keep_iterates else None
    if iterates is not None:
        iterates[0] = trainer.params
    rows: list[tuple[float, ...]] = []

    def train_loss() -> float:
        return trainer.model.loss(trainer.params, trainer.x, trainer.y) if log_train_loss else math.nan

    rows.append((0, train_loss(), math.nan, math.nan, math.nan, 0.0))
    total_clipped = total_examples = total_projections = 0
    window_loss: float = 0
    window_clipped = window_examples = window_projections = window_steps = 0
    window_loss_steps = 0
    for t in range(1, num_steps + 1):
        trainer.step()
        if iterates is not None:
            iterates[t] = trainer.params
        total_clipped += trainer.last_num_clipped
        total_examples += trainer.last_batch_size
        total_projections += trainer.last_projected
        window_clipped += trainer.last_num_clipped
        window_examples += trainer.last_batch_size
        window_projections += trainer.last_projected
        window_steps += 1
        if not math.isnan(trainer.last_batch_loss):
            window_loss += trainer.last_batch_loss
            window_loss_steps += 1
        if t % int(log_every) == 0 or t == num_steps:
            distance = trainer.last_distance if not math.isnan(trainer.last_distance) else trainer.distance()
            rows.append((t, train_loss(), window_loss / window_loss_steps if window_loss_steps else math.nan,
                         window_clipped / window_examples if window_examples else 0.0,
                         window_projections / window_steps, distance))
            window_loss = window_clipped = window_examples = window_projections = window_steps = 0
            window_loss_steps = 0
    table = np.array(rows, dtype=np.float64)
    log = DPSGDLog(step=table[:, 0].astype(np.int64), train_loss=table[:, 1], batch_loss=table[:, 2],
                   clip_fraction=table[:, 3], projection_fraction=table[:, 4], distance=table[:, 5])
    return DPSGDResult(params=_diverged_as_inf(trainer.params), initial_params=np.array(trainer.initial_params),
                       log=log, num_steps=num_steps, num_clipped=total_clipped, num_examples=total_examples,
                       num_projections=total_projections,
                       iterates=None if iterates is None else _diverged_as_inf(iterates))
