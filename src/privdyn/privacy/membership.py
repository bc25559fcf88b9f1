"""What an attacker can do: the true-positive rate of the best membership test at a given false-positive rate.

A membership-inference attacker sees the released output and tests H0 "the record is out" against H1 "it is in".
For a mechanism whose neighbouring outputs are dominated by a pair (P, Q), every test at false-positive rate α has
true-positive rate at most 1 − f(α), with f the trade-off function of the pair (Dong, Roth & Su 2022, "Gaussian
differential privacy", JRSS-B, arXiv 1905.02383, Definition 2.1). Three routes, each an upper bound on that rate:

* **Gaussian law** (:func:`gaussian_tpr`): a mechanism that is μ-GDP, such as a Gaussian release of sensitivity Δ and
  noise σ (μ = Δ/σ) or an adaptive composition of Gaussian releases (μ² = Σ μ_i², Dong et al. Corollary 3.3; a
  composition of Gaussian mechanisms with total zCDP ρ is √(2ρ)-GDP). The trade-off is G_μ(α) = Φ(Φ⁻¹(1 − α) − μ),
  so the rate is Φ(Φ⁻¹(α) + μ), exact.
* **Privacy profile** (:func:`profile_tpr`): from a function ε ↦ δ(ε) valid for every real ε (the hockey-stick
  divergence of the pair in both directions, e.g. a privacy-loss distribution's), f(α) = sup_ε max{0, 1 − δ(ε) −
  e^ε α, e^(−ε)(1 − δ(ε) − α)} (Dong et al. Proposition 2.12, the supremum over the mechanism's whole profile, which is
  the symmetrized trade-off of the two directions). Any δ(ε) that upper-bounds the true one gives a smaller f and
  so a larger rate: the result stays on the safe side. The supremum over ε is found by bounded scalar search of each
  branch (each branch is unimodal in ε: 1 − δ − γα is concave in γ = e^ε because the hockey-stick divergence is
  convex in γ).
* **Privacy-loss distribution** (:func:`pld_tpr`): the profile of a dp-accounting ``PrivacyLossDistribution``
  (its ``get_delta_for_epsilon``, pessimistic when the PLD was built pessimistically).
* **zCDP bound** (:func:`zcdp_tpr`): a mechanism known only to be ρ-zCDP (noisy GD's last iterate, one-pass DP-GD,
  a planner's total budget) is (ε(δ), δ)-DP for every δ, ε(δ) by the optimal conversion
  (:func:`privdyn.privacy.conversions.zcdp_to_epsilon`), and (ε, δ)-DP is exactly f_{ε,δ}-DP with
  f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^(−ε)(1 − δ − α)} (Dong et al. Proposition 2.5). Every δ gives an upper
  bound on the rate, min{1, δ + e^ε α, 1 − e^(−ε)(1 − δ − α)}; the smallest over δ is reported.

riskcal (Kulynych et al. 2024, arXiv 2407.02191) computes the same trade-off from the PLD's two loss distributions by
the Neyman-Pearson lemma; tests/privacy/test_membership.py checks the two agree to 1e-4.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from privdyn import _check
from privdyn.privacy.statement import Membership

if TYPE_CHECKING:
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

__all__ = ["MEMBERSHIP_FPRS", "gaussian_tpr", "profile_tpr", "pld_tpr", "zcdp_tpr", "membership_table",
           "zcdp_membership"]

MEMBERSHIP_FPRS = (0.001, 0.01, 0.1)
"""The false-positive rates at which a privacy statement reports the best membership test's true-positive rate."""

_SEARCH_BOUNDS = 60.0
"""|ε| searched for the supremum; beyond it e^ε·α or e^(−ε) leaves nothing for rates α >= 1e-12."""
_SEARCH_TOL = 1e-6
"""The search's tolerance in ε; each branch is flat at its maximum, so the rate's error is of order its square."""


def _fpr(fpr: float) -> float:
    _check.scalar(fpr=fpr)
    _check.in_range(0.0, 1.0, closed="both", fpr=fpr)
    return float(fpr)


def gaussian_tpr(mu: float, fpr: float) -> float:
    """Φ(Φ⁻¹(α) + μ): the best test's true-positive rate at false-positive rate α under μ-GDP (exact for a Gaussian
    mechanism of sensitivity-to-noise ratio μ; Dong, Roth & Su, Definition 2.7)."""
    from scipy import stats

    _check.scalar(mu=mu)
    _check.non_negative(mu=mu)
    alpha = _fpr(fpr)
    if alpha in (0.0, 1.0):
        return alpha if math.isfinite(mu) else 1.0
    if math.isinf(mu):
        return 1.0
    return float(stats.norm.cdf(stats.norm.ppf(alpha) + float(mu)))


def profile_tpr(delta_for_epsilon: Callable[[float], float], fpr: float, *, min_epsilon: float = -_SEARCH_BOUNDS,
                ) -> float:
    """1 − f(α) from a privacy profile ε ↦ δ(ε) valid at every real ε (module docstring): an upper bound on the best
    membership test's true-positive rate at false-positive rate α. ``min_epsilon``: the smallest ε at which
    ``delta_for_epsilon`` is valid (0 for a profile known only at ε >= 0, such as a zCDP bound's: the supremum over
    ε >= 0 is still an upper bound, Dong, Roth & Su, Proposition 2.12)."""
    from scipy import optimize

    if not callable(delta_for_epsilon):
        raise TypeError("delta_for_epsilon must be a function of epsilon; got "
                        f"delta_for_epsilon={delta_for_epsilon!r}.")
    _check.scalar(min_epsilon=min_epsilon)
    _check.in_range(-_SEARCH_BOUNDS, _SEARCH_BOUNDS, closed="both", min_epsilon=min_epsilon)
    alpha = _fpr(fpr)
    if alpha == 1.0:
        return 1.0

    def first(eps: float) -> float:  # −(1 − δ(ε) − e^ε α)
        return -(1.0 - float(delta_for_epsilon(eps)) - math.exp(eps) * alpha)

    def second(eps: float) -> float:  # −e^(−ε)(1 − δ(ε) − α)
        return -math.exp(-eps) * (1.0 - float(delta_for_epsilon(eps)) - alpha)

    best = 0.0
    for branch in (first, second):
        found = optimize.minimize_scalar(branch, bounds=(min_epsilon, _SEARCH_BOUNDS), method="bounded",
                                         options={"xatol": _SEARCH_TOL})
        best = max(best, -float(found.fun), -branch(max(0.0, min_epsilon)))
    return float(min(1.0, max(alpha, 1.0 - min(best, 1.0))))


def pld_tpr(pld: PrivacyLossDistribution, fpr: float) -> float:
    """:func:`profile_tpr` of a dp-accounting ``PrivacyLossDistribution`` (both directions: its
    ``get_delta_for_epsilon`` is the larger hockey-stick divergence of the two)."""
    if not callable(getattr(pld, "get_delta_for_epsilon", None)):
        raise TypeError(f"pld must be a dp-accounting PrivacyLossDistribution; got pld={pld!r}.")
    return profile_tpr(lambda eps: float(pld.get_delta_for_epsilon(eps)), fpr)


_LOG_DELTAS = tuple(-46.0 * (1e-9 / 46.0) ** (k / 119.0) for k in range(120))
"""log δ at which :func:`zcdp_tpr` evaluates ε(δ) before refining around the best: δ from 1e-20 to 1 − 1e-9,
geometric in −log δ (dense both at small δ, where small false-positive rates look, and near δ = 1)."""
_ALLOWANCE = 1e-12
"""Added to a rate computed from (ε, δ) in floating point (a few roundings of numbers at most 1): stays above."""


def _dp_tpr(epsilon: float, delta: float, alpha: float) -> float:
    """min{δ + e^ε α, 1 − e^(−ε)(1 − δ − α)}: the rate (ε, δ)-DP allows at false-positive rate α (Dong et al.
    Proposition 2.5), the smaller of the two branches of f_{ε,δ}."""
    first = delta + math.exp(epsilon) * alpha if epsilon < 700.0 else math.inf
    second = 1.0 - math.exp(-epsilon) * max(0.0, 1.0 - delta - alpha)
    return min(first, second)


@functools.lru_cache(maxsize=64)
def _zcdp_epsilons(zcdp: float) -> tuple[float, ...]:
    """ε(δ) of ``zcdp``-zCDP by the optimal conversion at every δ of :data:`_LOG_DELTAS` (shared by the rates)."""
    from privdyn.privacy.conversions import _optimal_epsilon_scalar

    return tuple(_optimal_epsilon_scalar(zcdp, math.exp(t)) for t in _LOG_DELTAS)


def zcdp_tpr(zcdp: float, fpr: float) -> float:
    """An upper bound on the best membership test's true-positive rate at false-positive rate α for a
    ``zcdp``-zCDP mechanism (module docstring): the smallest over δ of the rate (ε(δ), δ)-DP allows, ε(δ) by the
    optimal zCDP conversion (:func:`privdyn.privacy.conversions.zcdp_to_epsilon`, rounded up). Every δ gives a
    valid bound, so the search over δ (a grid in log δ, then a bounded scalar search between the grid's neighbours
    of its best point) only makes it tighter."""
    from scipy import optimize

    from privdyn.privacy.conversions import _optimal_epsilon_scalar

    _check.scalar(zcdp=zcdp)
    _check.finite(zcdp=zcdp)
    _check.non_negative(zcdp=zcdp)
    alpha = _fpr(fpr)
    if alpha == 1.0:
        return 1.0
    rho = float(zcdp)
    grid = [_dp_tpr(eps, math.exp(t), alpha) for eps, t in zip(_zcdp_epsilons(rho), _LOG_DELTAS, strict=True)]
    best = min(range(len(grid)), key=grid.__getitem__)
    low = _LOG_DELTAS[max(best - 1, 0)]
    high = _LOG_DELTAS[min(best + 1, len(_LOG_DELTAS) - 1)]

    def rate(log_delta: float) -> float:
        delta = math.exp(log_delta)
        return _dp_tpr(_optimal_epsilon_scalar(rho, delta), delta, alpha)

    found = optimize.minimize_scalar(rate, bounds=(low, high), method="bounded", options={"xatol": 1e-6})
    value = min(grid[best], float(found.fun))
    return float(min(1.0, max(alpha, value + _ALLOWANCE)))


def membership_table(tpr_at: Callable[[float], float], method: str,
                     fprs: Sequence[float] = MEMBERSHIP_FPRS) -> Membership:
    """The statement's ``membership`` entry: ``{"fpr": [...], "tpr": [...], "method": ...}``."""
    rates = [_fpr(a) for a in fprs]
    return {"fpr": rates, "tpr": [float(tpr_at(a)) for a in rates], "method": method}


ZCDP_METHOD = "the (epsilon, delta) curve of the zCDP bound (optimal conversion at every delta; an upper bound)"
"""The ``method`` of a membership table from a zCDP bound."""


@functools.lru_cache(maxsize=256)
def _zcdp_rates(zcdp: float) -> tuple[float, ...]:
    return tuple(zcdp_tpr(zcdp, a) for a in MEMBERSHIP_FPRS)


def zcdp_membership(zcdp: float) -> Membership:
    """The statement's ``membership`` entry for a mechanism known only to be ``zcdp``-zCDP (:func:`zcdp_tpr` at
    :data:`MEMBERSHIP_FPRS`; cached by ``zcdp``: a planner's searches state the same budget many times)."""
    _check.scalar(zcdp=zcdp)
    return {"fpr": list(MEMBERSHIP_FPRS), "tpr": list(_zcdp_rates(float(zcdp))), "method": ZCDP_METHOD}
