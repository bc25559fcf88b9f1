"""Banded matrix-factorization noise under cyclic Poisson sampling: Theorem 4 of amplified banded MF.

Choquette-Choo, Ganesh, McKenna, McMahan, Rush, Guha Thakurta & Xu, "(Amplified) Banded Matrix Factorization: A
unified approach to private training", NeurIPS 2023, arXiv 2306.08153, Theorem 4.

**The mechanism.** The encoder ``C`` (``T x T``, lower triangular) is ``b``-banded: ``C[s, t] = 0`` for
``s - t >= b``. The records are put in ``b`` fixed parts; part ``t mod b`` is active at step ``t`` (``t = 0, 1,
...``) and each of its records joins the step independently with probability ``q``. The release is ``C X + kappa
clip Z`` (equivalently ``X + kappa clip C^{-1} Z``, the noisy sums privdyn's optimizers apply), ``X`` the per-step
sums of the clipped gradients, ``Z`` i.i.d. standard normal, ``kappa`` the noise multiplier of privdyn
(:mod:`privdyn.privacy.accounting`: the noise std on the *sum* divided by the clip; ``C`` is not normalized).

**The theorem.** A record of part ``j`` can join only the steps ``j, j + b, j + 2b, ...``: at most ``ceil(T / b)`` of
them, ``b`` apart, so the columns of ``C`` it touches have disjoint supports (rows ``t .. t + b - 1``). The block of
rows ``t .. t + b - 1`` depends on the record only through its participation in step ``t``, whose gradient is chosen
before those rows are released. Given the earlier releases, the block is a Poisson-subsampled Gaussian mechanism
with rate ``q``, L2 sensitivity ``clip ||C[:, t]||`` and noise std ``kappa clip``, and the run is the adaptive
composition of ``ceil(T / b)`` of them. With ``||C[:, t]|| <= ||c||`` (``c`` the encoder's coefficients, the largest
column norm of a Toeplitz ``C``), the whole run is dominated by ``ceil(T / b)`` Poisson-subsampled Gaussian steps at
rate ``q`` and noise multiplier ``sigma = kappa / ||c||``, accounted here by dp-accounting's PLD (pessimistic
discretization, an upper bound). Independent noise is the case ``b = 1``, ``c = (1)``: Poisson sampling, the same
computation as the allow-list's Poisson row.

**The sampler** (:func:`privdyn.algorithms.dpsgd.sample_batches`, ``"cyclic_poisson"``) draws each record's part
uniformly and independently of the other records, once per run; the bound holds for every fixed partition, hence for
the random one (the partition is independent of the data, and adding or removing a record moves no other record's
part). With ``n`` records and a batch size ``B`` (the expected size), ``q = B b / n``, so ``B <= n / b``.

**Conditions, enforced.** ``C`` must be banded with ``b <=`` the number of parts: independent noise (``b = 1``) and a
:class:`~privdyn.privacy.correlated.Toeplitz` encoder (``b`` = its number of coefficients). Strategies whose ``C``
is dense (a banded *inverse*, lambda-CGD, BLT, the square root) are refused (``cyclic_poisson_dense_encoder``):
a record's participations ``b`` steps apart still overlap in ``C`` and the theorem does not apply. Fewer parts than
bands are refused (``cyclic_poisson_bands_exceed_partitions``). Add-remove neighbours, and zero-out neighbours (a
zeroed record, like an absent one, adds nothing to any step: the same pair); replace-one is refused.
"""

from __future__ import annotations

import math

import numpy as np

from privdyn import _check
from privdyn.privacy import correlated
from privdyn.privacy.labels import Guarantee, NeighboringRelation, PrivacyLoss

__all__ = ["SOURCE", "num_partitions", "sampling_prob", "epsilon", "noise_multiplier", "dominating_releases"]

SOURCE = ("banded matrix factorization under cyclic Poisson sampling: Choquette-Choo et al., NeurIPS 2023 (arXiv "
          "2306.08153), Theorem 4: ceil(T / b) Poisson-subsampled Gaussian steps at rate q and noise multiplier "
          "kappa / ||c||, composed by dp-accounting's PLD")
"""The accountant's citation, as this module's privacy losses record it."""

_RELATIONS = (NeighboringRelation.ADD_REMOVE, NeighboringRelation.ZERO_OUT)


def _refuse(strategy: correlated.Strategy, relation: NeighboringRelation, reason: str, detail: str) -> None:
    from privdyn.privacy.accounting import REFUSAL_REASONS, NotAccountableError

    raise NotAccountableError(
        f"privdyn cannot account {strategy!r} under sampler='cyclic_poisson' with neighboring={relation.value!r}: "
        f"{detail} ({reason}: {REFUSAL_REASONS[reason]}).", reason=reason)


def _relation(strategy: correlated.Strategy, neighboring: str | NeighboringRelation) -> NeighboringRelation:
    try:
        relation = NeighboringRelation(neighboring)
    except ValueError:
        choices = ", ".join(repr(r.value) for r in NeighboringRelation)
        raise ValueError(f"neighboring must be one of {choices}; got neighboring={neighboring!r}.") from None
    if relation not in _RELATIONS:
        from privdyn.privacy.accounting import noise_kind, refusal_reason

        reason = refusal_reason(noise_kind(strategy), "cyclic_poisson", relation)
        _refuse(strategy, relation, reason, "Theorem 4's pair is stated for add-remove (and zero-out) neighbours")
    return relation


def _bands(strategy: correlated.Strategy, relation: NeighboringRelation) -> int:
    from privdyn.privacy.accounting import noise_kind

    kind = noise_kind(strategy)
    if kind == "independent":
        return 1
    if kind == "toeplitz":
        return int(strategy.bands)  # type: ignore[attr-defined]
    _refuse(strategy, relation, "cyclic_poisson_dense_encoder", f"its encoder C ({kind}) is not banded")
    raise AssertionError("unreachable")


def num_partitions(strategy: correlated.Strategy) -> int:
    """The number of parts ``b`` of the cyclic-Poisson sampler for this noise: the band count of its encoder ``C``
    (1 for independent noise, the number of coefficients of a Toeplitz encoder), the ``b`` the accountant uses.

    Raises:
        NotAccountableError: ``C`` is not banded (reason ``cyclic_poisson_dense_encoder``).
        TypeError: not one of privdyn's strategies.
    """
    return _bands(strategy, NeighboringRelation.ADD_REMOVE)


def sampling_prob(*, n: int, batch_size: int, num_partitions: int) -> float:
    """The rate inside the active part, ``q = batch_size * num_partitions / n`` (the expected batch size is
    ``batch_size``).

    Raises:
        ValueError: a size is not a positive integer, or ``batch_size > n / num_partitions`` (q would exceed 1).
    """
    _check.finite(n=n, batch_size=batch_size, num_partitions=num_partitions)
    _check.integer(minimum=1, n=n, batch_size=batch_size, num_partitions=num_partitions)
    n, batch_size, parts = int(n), int(batch_size), int(num_partitions)
    if batch_size * parts > n:
        raise ValueError(f"batch_size must be <= n / num_partitions = {n // parts} under cyclic Poisson sampling "
                         f"(the rate inside the active part, batch_size * num_partitions / n, is a probability); got "
                         f"batch_size={batch_size} with n={n}, num_partitions={parts}.")
    return batch_size * parts / n


def _setting(strategy: correlated.Strategy, sampling_prob: float, num_steps: int,
             num_partitions: int | None, neighboring: str | NeighboringRelation) -> tuple[NeighboringRelation, int,
                                                                                         float, float, int]:
    """The checked inputs: (relation, parts b, rate q, largest column norm ||c||, releases ceil(T / b))."""
    relation = _relation(strategy, neighboring)
    bands = _bands(strategy, relation)
    _check.scalar(sampling_prob=sampling_prob, num_steps=num_steps)
    _check.finite(sampling_prob=sampling_prob, num_steps=num_steps)
    _check.in_range(0.0, 1.0, closed="right", sampling_prob=sampling_prob)
    _check.integer(minimum=1, num_steps=num_steps)
    if num_partitions is None:
        parts = bands
    else:
        _check.scalar(num_partitions=num_partitions)
        _check.integer(minimum=1, num_partitions=num_partitions)
        parts = int(num_partitions)
        if bands > parts:
            _refuse(strategy, relation, "cyclic_poisson_bands_exceed_partitions",
                    f"its encoder has {bands} bands but the sampler has num_partitions={parts} parts")
    num_steps = int(num_steps)
    column = strategy.encoder_coefficients(min(bands, num_steps))
    return relation, parts, float(sampling_prob), float(np.linalg.norm(column)), -(-num_steps // parts)


def _pld_epsilon(kappa: float, norm: float, q: float, releases: int, delta: float,
                 relation: NeighboringRelation) -> float:
    """``releases`` Poisson-subsampled Gaussian steps at rate q, noise multiplier kappa / ||c||, by the pessimistic
    PLD of the allow-list's Poisson row (:func:`privdyn.privacy._calibration_search.pld_epsilon`)."""
    from privdyn.privacy import _calibration_search as search

    if kappa == 0.0:
        return math.inf
    return search.pld_epsilon(kappa / norm, sampling_prob=q, num_steps=releases, delta=delta,
                              relation=relation.to_dp_accounting())


def _source(parts: int, releases: int, q: float, norm: float, relation: NeighboringRelation) -> str:
    note = ("; zero-out neighbours: the same pair as add-remove (a zeroed record adds nothing)"
            if relation == NeighboringRelation.ZERO_OUT else "")
    return f"{SOURCE}; b = {parts}, {releases} releases, q = {q:.6g}, ||c|| = {norm:.6g}{note}"


def dominating_releases(strategy: correlated.Strategy, *, sampling_prob: float, num_steps: int,
                        num_partitions: int | None = None,
                        neighboring: str | NeighboringRelation = NeighboringRelation.ADD_REMOVE,
                        ) -> tuple[float, int, float]:
    """The Poisson-subsampled Gaussian releases that dominate the run (Theorem 4, module docstring).

    Returns:
        ``(q, releases, norm)``: ``releases = ceil(T / b)`` Poisson-subsampled Gaussian steps at rate ``q``, each with
        noise multiplier ``kappa / norm`` (``norm`` = the encoder's largest column norm ``||c||``).

    Raises:
        NotAccountableError: a dense encoder, more bands than parts, or replace-one neighbours (named reasons).
    """
    _, _, q, norm, releases = _setting(strategy, sampling_prob, num_steps, num_partitions, neighboring)
    return q, releases, norm


def epsilon(strategy: correlated.Strategy, noise_multiplier: float, *, sampling_prob: float, num_steps: int,
            delta: float, num_partitions: int | None = None,
            neighboring: str | NeighboringRelation = NeighboringRelation.ADD_REMOVE) -> PrivacyLoss:
    """epsilon of ``num_steps`` steps with banded noise under cyclic Poisson sampling (module docstring).

    Args:
        strategy: independent noise or a :class:`~privdyn.privacy.correlated.Toeplitz` encoder (banded).
        noise_multiplier: kappa >= 0, the noise std on the summed clipped gradients divided by the clip.
        sampling_prob: q in (0, 1], the rate inside the active part (:func:`sampling_prob`).
        num_steps: T >= 1.
        delta: in (0, 1).
        num_partitions: the sampler's parts b (default: the encoder's band count; at least that).
        neighboring: ``"add_remove"`` or ``"zero_out"``.

    Returns:
        ``PrivacyLoss(value=epsilon, guarantee="bound", quantity="epsilon", sampler="cyclic_poisson")``; ``inf`` at
        kappa = 0.

    Raises:
        NotAccountableError: a dense encoder, more bands than parts, or replace-one neighbours (named reasons).
        ValueError: bad input (the message names the parameter, its value and the valid range).
    """
    relation, parts, q, norm, releases = _setting(strategy, sampling_prob, num_steps, num_partitions, neighboring)
    _check.scalar(noise_multiplier=noise_multiplier)
    _check.finite(noise_multiplier=noise_multiplier)
    _check.non_negative(noise_multiplier=noise_multiplier)
    _check.delta(delta)
    value = _pld_epsilon(float(noise_multiplier), norm, q, releases, float(delta), relation)
    return PrivacyLoss(value=value, guarantee=Guarantee.BOUND, quantity="epsilon", neighboring=relation,
                       sampler="cyclic_poisson", source=_source(parts, releases, q, norm, relation))


def noise_multiplier(strategy: correlated.Strategy, *, epsilon: float, delta: float, sampling_prob: float,
                     num_steps: int, num_partitions: int | None = None,
                     neighboring: str | NeighboringRelation = NeighboringRelation.ADD_REMOVE,
                     rtol: float = 1e-4) -> PrivacyLoss:
    """The smallest kappa (within ``rtol``) whose :func:`epsilon` is at most ``epsilon``, on the safe side.

    The Poisson-subsampled Gaussian is calibrated for ``sigma`` at rate q over ``ceil(T / b)`` releases (the search
    of the allow-list's Poisson row, :func:`privdyn.privacy._calibration_search.calibrate_pld`), kappa is ``sigma
    ||c||``, and :func:`epsilon` itself certifies the returned kappa (raised by ``rtol / 4`` steps until it does).

    Returns:
        ``PrivacyLoss(value=kappa, guarantee="bound", quantity="noise_multiplier", sampler="cyclic_poisson")``.

    Raises:
        as :func:`epsilon`.
    """
    from privdyn.privacy import _calibration_search as search

    relation, parts, q, norm, releases = _setting(strategy, sampling_prob, num_steps, num_partitions, neighboring)
    _check.scalar(epsilon=epsilon, rtol=rtol)
    _check.finite(epsilon=epsilon)
    _check.positive(epsilon=epsilon)
    _check.delta(delta)
    _check.in_range(1e-12, 1.0, closed="both", rtol=rtol)
    target, dlt = float(epsilon), float(delta)
    sigma, _, interval = search.calibrate_pld(sampling_prob=q, num_steps=releases, epsilon=target, delta=dlt,
                                              relation=relation.to_dp_accounting(), rtol=float(rtol))
    kappa = sigma * norm
    at_kappa = _pld_epsilon(kappa, norm, q, releases, dlt, relation)
    while at_kappa > target:  # certify with the computation that reports epsilon
        kappa *= 1.0 + float(rtol) / 4.0
        at_kappa = _pld_epsilon(kappa, norm, q, releases, dlt, relation)
    return PrivacyLoss(value=kappa, guarantee=Guarantee.BOUND, quantity="noise_multiplier", neighboring=relation,
                       sampler="cyclic_poisson",
                       source=f"{_source(parts, releases, q, norm, relation)}; calibrated to epsilon={target!r}, "
                              f"delta={float(delta)!r} (rtol {float(rtol):g}, PLD discretization {interval:.3g}); "
                              f"epsilon at kappa = {at_kappa:.6g}")
