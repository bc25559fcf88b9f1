"""Noise calibration for DP-SGD with lambda-correlated noise: the kan paper's closed forms and a dp-accounting path.

Wang, Schuchardt, Kalinin, Zhou, Fellenz, Lampert & Kloft, "Population Risk Bounds for Kolmogorov-Arnold Networks
Trained by DP-SGD with Correlated Noise" (arXiv 2605.12648v1). Algorithm 1 adds ``(clip / B) * kappa * (Z_t -
lambda Z_{t-1})`` to the averaged clipped gradient, i.e. noise of std ``clip * kappa`` on the **sum**: kappa is
``noise_multiplier`` relative to the clip (``docs/notation.md`` section 2.4). Batches are fixed-size, drawn
without replacement, independently at every step. ``num_steps`` is T as in the paper's privacy statements.

Three calibrations, which answer different questions:

* :func:`noise_multiplier_theorem_f12` (lambda in [0, 1); Theorem 5.1 = Theorem F.12): ``zero_out``
  neighbours, a formal bound (label ``bound``) under its conditions ``epsilon <= 1``, ``delta <= 1`` and
  ``r T >= 3 ln(2 / delta)`` with ``r = B / n``. Scales like ``(B / n) T``.
* :func:`noise_multiplier_theorem_d9` (lambda = 0; Theorem 5.4 = Theorem D.9): ``replace_one`` neighbours, label
  ``heuristic``: its RDP constant ``c_sgm = 8`` keeps only the leading term of Wang-Balle-Kasiviswanathan's
  Theorem 9 and is not an upper bound in general. Scales like ``(B / n)^2 T``; the two formulas do not agree
  as lambda -> 0.
* :func:`epsilon_dp_accounting` / :func:`noise_multiplier_dp_accounting` (lambda = 0), with a required
  ``sampler`` and neighbouring relation: dp-accounting's RDP accountant for ``sampler="fixed_size"`` under
  ``replace_one`` (Wang, Balle & Kasiviswanathan 2019, arXiv 1808.00087, Theorem 27 with Corollary 10 at
  fractional orders), or its PLD accountant for ``sampler="poisson"`` under ``add_remove`` / ``zero_out`` and for
  ``sampler="fixed_size"`` under ``zero_out`` (Theorem F.8's dominating pair at lambda = 0 is the
  Poisson-subsampled Gaussian at rate B/n). dp-accounting's noise multiplier is the noise std divided by the
  L2 sensitivity *under the relation*: ``kappa / 2`` under ``replace_one`` (sensitivity ``2 clip``), ``kappa``
  otherwise. The old ``sampling="without_replacement"`` spelling still works, with a deprecation warning.

Which of these a DP-SGD run may use is decided by :mod:`privdyn.privacy.accounting` (the allow-list).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from privdyn import _check
from privdyn.privacy import _calibration_search as search
from privdyn.privacy.labels import (
    DP_ACCOUNTING_SAMPLERS,
    Guarantee,
    NeighboringRelation,
    PrivacyLoss,
    Sampler,
    as_neighboring,
    as_sampler,
)
from privdyn.privacy.labels import DP_ACCOUNTING_SAMPLERS as SAMPLERS  # the name of the subset here, kept

__all__ = [
    "F12_CONSTANTS",
    "SAMPLERS",
    "noise_multiplier_theorem_f12",
    "noise_multiplier_theorem_d9",
    "rdp_dp_accounting",
    "epsilon_dp_accounting",
    "noise_multiplier_dp_accounting",
]

F12_CONSTANTS = {8.0: "theorem_f12", 2.0: "theorem_f12_proved"}
"""The leading constant of Theorem F.12: 8 as stated, 2 as its proof gives (``accountant`` names)."""

_PAPER = "Wang et al., arXiv 2605.12648v1"


def _sizes(n: Any, batch_size: Any, num_steps: Any) -> tuple[int, int, int]:
    _check.finite(n=n, batch_size=batch_size, num_steps=num_steps)
    _check.integer(minimum=1, n=n, batch_size=batch_size, num_steps=num_steps)
    if int(batch_size) > int(n):
        raise ValueError(f"batch_size must be <= n = {int(n)}; got batch_size={batch_size!r}.")
    return int(n), int(batch_size), int(num_steps)


def _epsilon_delta(epsilon: Any, delta: Any) -> tuple[float, float]:
    _check.scalar(epsilon=epsilon)
    _check.positive(epsilon=epsilon)
    return float(epsilon), _check.delta(delta)


def _noise_correlation(noise_correlation: Any) -> float:
    _check.scalar(noise_correlation=noise_correlation)
    _check.finite(noise_correlation=noise_correlation)
    _check.in_range(0.0, 1.0, closed="left", noise_correlation=noise_correlation)
    return float(noise_correlation)


def _geometric_sum(lam: float, num_steps: int) -> float:
    """``(1 - lambda^T) / (1 - lambda) = sum_{k<T} lambda^k`` (1 at lambda = 0), without cancellation."""
    if lam == 0.0:
        return 1.0
    return -math.expm1(num_steps * math.log(lam)) / (1.0 - lam)


def noise_multiplier_theorem_f12(noise_correlation: float, *, n: int, batch_size: int, num_steps: int,
                                 epsilon: float, delta: float, constant: float = 8.0) -> PrivacyLoss:
    """kappa such that Algorithm 1 with correlation lambda is (epsilon, delta)-DP (zero-out), Theorem F.12.

    Wang et al. (arXiv 2605.12648v1), Theorem 5.1 = Theorem F.12 (Appendix F):

        kappa^2 = K ((1 - lambda^T) / (1 - lambda))^2 (r T + sqrt(3 r T ln(2 / delta))) ln(2.5 / delta) / epsilon^2,

    r = B / n. It bounds ``||C y||`` by ``(1 - lambda^T) / (1 - lambda) sqrt(tau)`` for every participation
    vector y with at most ``tau = r T + sqrt(3 r T ln(2 / delta))`` ones (Lemma F.11; the Chernoff bound of
    Lemma F.10 puts the rest in delta / 2) and applies the classical Gaussian mechanism, which needs
    ``epsilon <= 1``. The stated theorem has ``K = 8``; its proof gives ``K = 2`` (``2 Delta^2 ln(1.25 /
    delta')`` with ``delta' = delta / 2``): ``constant`` selects one (accountant ``theorem_f12`` or
    ``theorem_f12_proved``). Also valid at lambda = 0 (C = I, factor 1), where it is looser than the lambda = 0
    calibrations because it gets no amplification from *which* steps a record joins.

    Args:
        noise_correlation: lambda in [0, 1).
        n, batch_size, num_steps: dataset size, fixed batch size B <= n, number of steps T.
        epsilon: in (0, 1].
        delta: in (0, 1).
        constant: 8.0 (as stated) or 2.0 (as proved).

    Returns:
        ``PrivacyLoss(value=kappa, guarantee="bound", quantity="noise_multiplier", neighboring="zero_out")``.

    Raises:
        ValueError: bad input, or a validity condition of the theorem fails (the message names it).
    """
    lam = _noise_correlation(noise_correlation)
    n, batch_size, num_steps = _sizes(n, batch_size, num_steps)
    _check.scalar(epsilon=epsilon, constant=constant)
    _check.positive(epsilon=epsilon)
    _check.delta(delta)
    if float(constant) not in F12_CONSTANTS:
        raise ValueError(f"constant must be 8.0 (Theorem F.12 as stated) or 2.0 (as its proof gives); "
                         f"got constant={constant!r}.")
    eps, dlt = float(epsilon), float(delta)
    if eps > 1.0:
        raise ValueError(f"Theorem F.12 needs epsilon <= 1 (the classical Gaussian mechanism); got epsilon={eps!r}.")
    rate_steps = batch_size / n * num_steps
    chernoff = 3.0 * math.log(2.0 / dlt)
    if rate_steps < chernoff:
        raise ValueError(f"Theorem F.12 needs r*T >= 3*ln(2/delta) (Lemma F.10's Chernoff bound): r*T = "
                         f"batch_size/n*num_steps = {rate_steps:.6g} < {chernoff:.6g} at delta={dlt!r}; take "
                         "more steps or a larger batch.")
    tau = rate_steps + math.sqrt(rate_steps * chernoff)
    factor = _geometric_sum(lam, num_steps)
    kappa = math.sqrt(float(constant) * tau * math.log(2.5 / dlt)) * factor / eps
    _check.representable(kappa, "the noise multiplier", epsilon=epsilon, num_steps=num_steps)
    return PrivacyLoss(value=kappa, guarantee=Guarantee.BOUND, quantity="noise_multiplier",
                       neighboring=NeighboringRelation.ZERO_OUT,
                       source=f"{_PAPER}, Theorem F.12 (= Thm 5.1), constant {float(constant):g} "
                              f"(accountant {F12_CONSTANTS[float(constant)]}); fixed-size batches without "
                              "replacement, zero-out neighbours, noise multiplier relative to the clip")


def noise_multiplier_theorem_d9(*, n: int, batch_size: int, num_steps: int, epsilon: float,
                                delta: float) -> PrivacyLoss:
    """kappa of Theorem D.9 for DP-SGD (lambda = 0), replace-one neighbours; label ``heuristic``.

    Wang et al. (arXiv 2605.12648v1), Theorem 5.4 = Theorem D.9:

        kappa^2 = 16 B^2 T / (n^2 epsilon) + 32 B^2 T ln(1 / delta) / (n^2 epsilon^2).

    Its proof (Lemma D.7) replaces Wang-Balle-Kasiviswanathan's Theorem 9 by its leading j = 2 term with
    ``c_sgm = 8``, "in the standard low-sampling regime"; that is not an upper bound for every (q, kappa,
    alpha), and the order ``alpha = 1 + 2 ln(1 / delta) / epsilon`` is used where the theorem needs an integer.
    The value is therefore labelled ``heuristic`` and must not be reported as a guarantee: check it with
    :func:`epsilon_dp_accounting`. (For B = n the paper points to the plain Gaussian mechanism instead.)

    Returns:
        ``PrivacyLoss(value=kappa, guarantee="heuristic", quantity="noise_multiplier",
        neighboring="replace_one")``.
    """
    n, batch_size, num_steps = _sizes(n, batch_size, num_steps)
    eps, dlt = _epsilon_delta(epsilon, delta)
    q2t = (batch_size / n) ** 2 * num_steps
    # the same kappa as sqrt(q2t) sqrt(16 eps + 32 ln(1/delta)) / eps: eps**2 would underflow for a tiny epsilon
    kappa = math.sqrt(q2t) * math.sqrt(16.0 * eps + 32.0 * math.log(1.0 / dlt)) / eps
    _check.representable(kappa, "the noise multiplier", epsilon=epsilon, num_steps=num_steps)
    return PrivacyLoss(value=kappa, guarantee=Guarantee.HEURISTIC, quantity="noise_multiplier",
                       neighboring=NeighboringRelation.REPLACE_ONE,
                       source=f"{_PAPER}, Theorem D.9 (= Thm 5.4); c_sgm = 8 keeps only the leading term of "
                              "WBK19 Theorem 9: not rigorous in general")


# ---------------------------------------------------------------------------------------------------------------
# dp-accounting (lambda = 0)
# ---------------------------------------------------------------------------------------------------------------


_DEPRECATED_SAMPLINGS = {"without_replacement": "fixed_size", "poisson": "poisson"}


def _resolve_sampler(sampler: Sampler | str | None, sampling: str | None, neighboring: Any) -> tuple[str, Any]:
    """The sampler, from ``sampler`` or the deprecated ``sampling`` spelling (which keeps its default relation)."""
    if sampling is not None:
        if sampler is not None:
            raise ValueError(f"give sampler (got sampler={sampler!r}) or its deprecated spelling sampling (got "
                             f"sampling={sampling!r}), not both.")
        _check.one_of(tuple(_DEPRECATED_SAMPLINGS), sampling=sampling)
        warnings.warn("sampling= is deprecated; use sampler='fixed_size' (was 'without_replacement') or "
                      "sampler='poisson', and name the neighbouring relation.", DeprecationWarning, stacklevel=3)
        sampler = _DEPRECATED_SAMPLINGS[sampling]
        if neighboring is None:
            neighboring = "replace_one" if sampler == "fixed_size" else "add_remove"
    if sampler is None:
        choices = tuple(choice.value for choice in DP_ACCOUNTING_SAMPLERS)
        raise ValueError(f"sampler is required: one of {choices!r} (fixed-size batches without replacement, or "
                         "Poisson sampling at rate batch_size / n).")
    sampler = as_sampler(sampler, DP_ACCOUNTING_SAMPLERS).value
    if neighboring is None:
        raise ValueError(f"neighboring is required with sampler={sampler!r}: one of "
                         f"{tuple(r.value for r in _SUPPORTED[sampler])!r}.")
    return sampler, neighboring


_SUPPORTED: dict[str, tuple[NeighboringRelation, ...]] = {
    Sampler.FIXED_SIZE: (NeighboringRelation.REPLACE_ONE, NeighboringRelation.ZERO_OUT),
    Sampler.POISSON: (NeighboringRelation.ADD_REMOVE, NeighboringRelation.ZERO_OUT),
}
"""The relations each sampler is accounted under (see the module docstring)."""


def _relation(sampler: str, neighboring: Any) -> NeighboringRelation:
    relation = as_neighboring(neighboring)
    if relation not in _SUPPORTED[sampler]:
        allowed = " or ".join(repr(r.value) for r in _SUPPORTED[sampler])
        raise ValueError(f"neighboring must be {allowed} for sampler={sampler!r}; got "
                         f"neighboring={relation.value!r}.")
    return relation


def _uses_pld(sampler: str, relation: NeighboringRelation) -> bool:
    """Poisson sampling, and fixed-size sampling under zero-out (Theorem F.8's pair at lambda = 0), use the PLD."""
    return sampler == "poisson" or relation is NeighboringRelation.ZERO_OUT


def _noise_multiplier(noise_multiplier: Any) -> float:
    _check.scalar(noise_multiplier=noise_multiplier)
    _check.non_negative(noise_multiplier=noise_multiplier)
    return float(noise_multiplier)


def _source(sampler: str, relation: NeighboringRelation, method: str) -> str:
    if sampler == "fixed_size" and relation is NeighboringRelation.ZERO_OUT:
        return (f"{_PAPER}, Theorem F.8's dominating pair at lambda = 0 (the Poisson-subsampled Gaussian at rate "
                f"batch_size / n), dp-accounting {method}; fixed-size batches, zero-out neighbours; dp-accounting "
                "noise multiplier = kappa")
    return (f"dp-accounting {method}, lambda = 0 (DP-SGD), {sampler.replace('_', '-')} sampling, "
            f"{relation.value} neighbours; dp-accounting noise multiplier = kappa"
            f"{' / 2' if relation is NeighboringRelation.REPLACE_ONE else ''}")


def rdp_dp_accounting(noise_multiplier: float, *, n: int, batch_size: int, num_steps: int,
                      renyi_orders: Sequence[float] | np.ndarray, sampler: Sampler | str | None = None,
                      neighboring: str | NeighboringRelation | None = None,
                      sampling: str | None = None) -> PrivacyLoss:
    """The RDP curve of T steps of DP-SGD (lambda = 0) from dp-accounting's RDP accountant.

    ``sampler="fixed_size"`` with ``replace_one`` neighbours: Wang, Balle & Kasiviswanathan 2019 (arXiv
    1808.00087) Theorem 27 at integer orders and its Corollary 10 interpolation at fractional ones (both upper
    bounds). ``sampler="poisson"`` (``add_remove`` or ``zero_out``, the same numbers), or ``"fixed_size"`` under
    ``zero_out`` (Theorem F.8's pair at lambda = 0, the Poisson-subsampled Gaussian at rate B/n): Mironov, Talwar
    & Zhang 2019 (arXiv 1908.10530). ``sampling`` is the deprecated spelling of ``sampler``
    (``"without_replacement"`` was ``"fixed_size"``).

    Returns:
        ``PrivacyLoss(value=rdp_epsilons (array over renyi_orders), guarantee="bound", quantity="rdp_epsilon")``.
    """
    sampler, neighboring = _resolve_sampler(sampler, sampling, neighboring)
    kappa = _noise_multiplier(noise_multiplier)
    n, batch_size, num_steps = _sizes(n, batch_size, num_steps)
    relation = _relation(sampler, neighboring)
    orders = np.atleast_1d(np.asarray(renyi_orders, dtype=float))
    _check.finite(renyi_orders=orders)
    if orders.ndim != 1 or np.any(orders <= 1.0):
        raise ValueError(f"renyi_orders must be a 1-D sequence of orders > 1; got renyi_orders={orders!r}.")
    if kappa == 0.0:
        value = np.full(orders.shape, np.inf)
    elif _uses_pld(sampler, relation):
        value = search.poisson_rdp(kappa, batch_size / n, num_steps, orders, relation.to_dp_accounting())
    else:
        value = search.wor_rdp(kappa / 2.0, n, batch_size, num_steps, orders)
    return PrivacyLoss(value=value, guarantee=Guarantee.BOUND, quantity="rdp_epsilon", neighboring=relation,
                       sampler=sampler, source=_source(sampler, relation, "RDP accountant"))


def _epsilon_value(kappa: float, n: int, batch_size: int, num_steps: int, delta: float, sampler: str,
                   relation: NeighboringRelation, renyi_orders: Sequence[float] | None) -> float:
    if kappa == 0.0:
        return math.inf
    if _uses_pld(sampler, relation):
        return search.pld_epsilon(kappa, sampling_prob=batch_size / n, num_steps=num_steps, delta=delta,
                                  relation=relation.to_dp_accounting())
    return search.wor_rdp_epsilon(kappa / 2.0, n=n, batch_size=batch_size, num_steps=num_steps, delta=delta,
                                  orders=renyi_orders)[0]


def epsilon_dp_accounting(noise_multiplier: float, *, n: int, batch_size: int, num_steps: int, delta: float,
                          sampler: Sampler | str | None = None, neighboring: str | NeighboringRelation | None = None,
                          renyi_orders: Sequence[float] | None = None, sampling: str | None = None) -> PrivacyLoss:
    """epsilon of T steps of DP-SGD (lambda = 0) with noise multiplier kappa (relative to the clip).

    ``sampler`` and ``neighboring`` are required (``sampling`` is their deprecated spelling, which defaulted the
    relation):

    * ``"fixed_size"``, ``"replace_one"`` (the kan paper's batches): the RDP curve of :func:`rdp_dp_accounting`
      converted by Balle et al. 2020 (arXiv 1905.09982) Theorem 21 (:func:`privdyn.privacy.conversions.
      rdp_to_epsilon`, rounded up), minimized over ``renyi_orders`` (dp-accounting's default grid if None);
    * ``"fixed_size"``, ``"zero_out"``: Theorem F.8's dominating pair at lambda = 0, the Poisson-subsampled
      Gaussian at rate B/n, by dp-accounting's PLD;
    * ``"poisson"``, ``"add_remove"`` or ``"zero_out"``: dp-accounting's PLD (pessimistic discretization, an upper
      bound).

    Returns:
        ``PrivacyLoss(value=epsilon, guarantee="bound", quantity="epsilon", neighboring=..., sampler=...)``;
        ``inf`` for kappa = 0.
    """
    sampler, neighboring = _resolve_sampler(sampler, sampling, neighboring)
    kappa = _noise_multiplier(noise_multiplier)
    n, batch_size, num_steps = _sizes(n, batch_size, num_steps)
    _check.delta(delta)
    relation = _relation(sampler, neighboring)
    value = _epsilon_value(kappa, n, batch_size, num_steps, float(delta), sampler, relation, renyi_orders)
    method = ("PLD accountant" if _uses_pld(sampler, relation)
              else "RDP accountant (Balle et al. 2020 conversion)")
    return PrivacyLoss(value=value, guarantee=Guarantee.BOUND, quantity="epsilon", neighboring=relation,
                       sampler=sampler, source=_source(sampler, relation, method))


def noise_multiplier_dp_accounting(*, n: int, batch_size: int, num_steps: int, epsilon: float, delta: float,
                                   sampler: Sampler | str | None = None,
                                   neighboring: str | NeighboringRelation | None = None,
                                   rtol: float = 1e-4, sampling: str | None = None) -> PrivacyLoss:
    """The inverse of :func:`epsilon_dp_accounting`: a kappa whose epsilon is <= the target, within ``rtol``.

    The returned kappa was evaluated by a valid accountant and gives epsilon <= the target (``source`` says which
    evaluation). It is within ``rtol`` of the smallest such kappa of :func:`epsilon_dp_accounting`:

    * RDP (fixed-size, replace-one): the search runs on a window of Renyi orders around the optimum (each
      evaluation a valid bound), widened until the optimal order is interior, so the result is the full-grid
      calibration; the bracket ``kappa / (1 + rtol)`` exceeds the target over that window.
    * PLD: a search on a vectorized evaluation of the same pessimistic PLD (Richardson-extrapolated at a coarse
      discretization, then at the coarsest discretization whose excess moves kappa by at most ``rtol / 2``, never
      finer than dp-accounting's default ``1e-4``), then dp-accounting's PLD at that discretization certifies the
      result: its epsilon there (pessimistic, an upper bound) is <= the target, usually at the first evaluation.
      See :mod:`privdyn.privacy._calibration_search`.

    Returns:
        ``PrivacyLoss(value=kappa, guarantee="bound", quantity="noise_multiplier", neighboring=..., sampler=...)``.
    """
    sampler, neighboring = _resolve_sampler(sampler, sampling, neighboring)
    n, batch_size, num_steps = _sizes(n, batch_size, num_steps)
    eps, dlt = _epsilon_delta(epsilon, delta)
    _check.scalar(rtol=rtol)
    _check.in_range(1e-12, 1.0, closed="both", rtol=rtol)
    relation = _relation(sampler, neighboring)
    if _uses_pld(sampler, relation):
        kappa, achieved, interval = search.calibrate_pld(sampling_prob=batch_size / n, num_steps=num_steps,
                                                         epsilon=eps, delta=dlt, relation=relation.to_dp_accounting(),
                                                         rtol=float(rtol))
        method = f"PLD accountant (value discretization {interval:.3g})"
    else:
        z, achieved = search.calibrate_wor_rdp(n=n, batch_size=batch_size, num_steps=num_steps, epsilon=eps,
                                               delta=dlt, rtol=float(rtol))
        kappa, method = 2.0 * z, "RDP accountant"
    return PrivacyLoss(value=kappa, guarantee=Guarantee.BOUND, quantity="noise_multiplier", neighboring=relation,
                       sampler=sampler,
                       source=_source(sampler, relation, method) + f"; calibrated to epsilon={eps!r}, "
                              f"delta={dlt!r} (rtol {float(rtol):g}); epsilon at kappa = {achieved:.6g}")
