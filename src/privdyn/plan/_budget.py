"""The privacy budget of a plan and the privacy statement it ends in (one place for every family).

A budget is given as (ε, δ), as the dpgd paper's ρ (the algorithm is ρ²/2-zCDP) or as a zCDP parameter
(``zcdp``, the convention of Bun & Steinke 2016, arXiv 1605.02065, and of dp-accounting). Internally every
Gaussian-based family works in zCDP, where composition is additive: the training mechanism and an optional
planning share (the Gaussian mechanisms that estimate the data's statistics, :mod:`privdyn.plan._data`) add up.

**Calibration (ε, δ) → zCDP.** :func:`zcdp_for_epsilon` returns the largest zCDP parameter whose (ε, δ) is at most
the target by *both* of two independent conversions: privdyn's ``"optimal"`` conversion (Balle et al. 2020,
arXiv 1905.09982, Theorem 21, minimized over all real orders; :func:`privdyn.privacy.conversions.zcdp_to_epsilon`)
and dp-accounting's RDP accountant composed with a ``ZCDpEvent`` (the same conversion on its grid of orders). The
grid's optimum is slightly worse than the continuous one, so the second condition binds by a few parts in 10⁶;
requiring both means the guarantee recomputed from the plan's zCDP by either path never exceeds the request.

**The statement.** :class:`PrivacyStatement` holds what a user needs to publish a guarantee: the unit of privacy,
the neighbouring relation, the sampler, which iterates are released, the accountant and its guarantee label, the
planning share, (ε, δ) with the zCDP or RDP curve it came from, and what an attacker can do: the best membership
test's true-positive rate at false-positive rates 0.001, 0.01 and 0.1 implied by the total zCDP
(:func:`privdyn.privacy.membership.zcdp_tpr`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from privdyn import _check
from privdyn.privacy import conversions
from privdyn.privacy.labels import Guarantee, NeighboringRelation
from privdyn.privacy.statement import Membership, PlanningShare, PrivacyStatement

__all__ = [
    "Budget",
    "PlanningShare",
    "PrivacyStatement",
    "budget",
    "zcdp_for_epsilon",
    "dp_accounting_epsilon",
    "zcdp_epsilon",
    "rho_from_zcdp",
]

DPSGD_NO_MEMBERSHIP = ("not computed: dp-accounting has no privacy-loss distribution of this DP-SGD run (correlated "
                       "noise, random allocation, or fixed-size batches under replace-one, which dp-accounting "
                       "accounts by RDP); the epsilon above bounds every membership test through the (epsilon, "
                       "delta) trade-off")
"""Why a DP-SGD plan's statement has no membership rates. Where the run has a PLD (independent noise under Poisson or
fixed-size zero-out sampling, banded noise under cyclic Poisson) the statement carries the rates of
:meth:`~privdyn.privacy.mechanism.DPSGDMechanism.membership` (0.6-1.1 s at n = 60000, B = 256, T = 100-10^4)."""

_RDP_ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0)
"""The orders at which a zCDP guarantee's RDP curve α ↦ zcdp·α is tabulated in the statement."""


dp_accounting_epsilon = conversions.zcdp_to_epsilon_dp_accounting
"""ε of a zCDP parameter by dp-accounting (:func:`privdyn.privacy.conversions.zcdp_to_epsilon_dp_accounting`)."""
zcdp_for_epsilon = conversions.zcdp_for_epsilon
"""The calibration (ε, δ) → zCDP on the safe side of both conversions
(:func:`privdyn.privacy.conversions.zcdp_for_epsilon`)."""


def zcdp_epsilon(zcdp: float, delta: float) -> float:
    """ε of ``zcdp``-zCDP at ``delta``: privdyn's ``"optimal"`` conversion (an upper bound, rounded up)."""
    return float(conversions.zcdp_to_epsilon(zcdp, delta=delta, method="optimal"))


def rho_from_zcdp(zcdp: float) -> float:
    """The dpgd paper's ρ = √(2·zcdp), rounded down so that ρ²/2 <= zcdp exactly."""
    rho = math.sqrt(2.0 * zcdp)
    while 0.5 * rho * rho > zcdp:
        rho = math.nextafter(rho, 0.0)
    return rho


@dataclasses.dataclass(frozen=True, kw_only=True)
class Budget:
    """A privacy budget in zCDP, with the (ε, δ) it was given as (or will be reported at).

    Attributes:
        given: ``"epsilon"`` ((ε, δ) given), ``"rho"`` or ``"zcdp"``.
        zcdp: the total zCDP parameter available (training plus planning).
        epsilon: the requested ε (``given == "epsilon"``), else None.
        delta: δ in (0, 1), or None when a zCDP budget was given without δ (then no (ε, δ) is reported).
    """

    given: str
    zcdp: float
    epsilon: float | None
    delta: float | None



def budget(*, epsilon: float | None = None, delta: float | None = None, rho: float | None = None,
           zcdp: float | None = None) -> Budget:
    """A :class:`Budget` from exactly one of (``epsilon`` with ``delta``), ``rho`` or ``zcdp``.

    ``delta`` is required with ``epsilon`` and optional with ``rho`` / ``zcdp`` (it then sets the (ε, δ) reported).

    Raises:
        ValueError: none or several budgets; epsilon <= 0; delta outside (0, 1); rho or zcdp <= 0.
    """
    given = [name for name, value in (("epsilon", epsilon), ("rho", rho), ("zcdp", zcdp)) if value is not None]
    if len(given) != 1:
        raise ValueError("give the privacy budget as exactly one of epsilon (with delta), rho or zcdp; got "
                         f"{', '.join(given) if given else 'none'}.")
    kind = given[0]
    if kind == "epsilon":
        _check.scalar(epsilon=epsilon)
        _check.positive(epsilon=epsilon)
        if delta is None:
            raise ValueError("delta is required with epsilon: give delta in (0, 1), e.g. delta=1e-5.")
        given_delta = _check.delta(delta)
        eps = float(epsilon)  # type: ignore[arg-type]  # checked above
        return Budget(given=kind, zcdp=zcdp_for_epsilon(eps, given_delta), epsilon=eps, delta=given_delta)
    dlt = None if delta is None else _check.delta(delta)
    if kind == "rho":
        _check.scalar(rho=rho)
        _check.positive(rho=rho)
        return Budget(given=kind, zcdp=0.5 * float(rho) ** 2, epsilon=None, delta=dlt)  # type: ignore[arg-type]
    _check.scalar(zcdp=zcdp)
    _check.positive(zcdp=zcdp)
    return Budget(given=kind, zcdp=float(zcdp), epsilon=None, delta=dlt)  # type: ignore[arg-type]


def zcdp_statement(*, total_zcdp: float, training_zcdp: float, delta: float | None, unit: str,
                   neighboring: NeighboringRelation, sampler: str, released: str, accountant: str,
                   planning: PlanningShare, assumptions: Sequence[str],
                   extra: Mapping[str, Any] | None = None, membership: Membership | None = None) -> PrivacyStatement:
    """The statement of a zCDP guarantee (label ``bound``): ε by the optimal conversion, cross-checked by dp-accounting.

    The RDP curve is α ↦ total_zcdp·α (Bun & Steinke 2016, Definition 1.1), tabulated at a few orders. The membership
    rates are those total_zcdp-zCDP implies (:func:`privdyn.privacy.membership.zcdp_membership`): training and the
    planning share together; ``membership`` replaces them where the mechanism has a tighter law (AdaSSP's Gaussian
    releases: exactly Gaussian).
    """
    from privdyn.privacy.membership import zcdp_membership

    epsilon = None if delta is None else zcdp_epsilon(total_zcdp, delta)
    checks: dict[str, Any] = {}
    if delta is not None:
        checks["epsilon_dp_accounting_zcdp_event"] = dp_accounting_epsilon(total_zcdp, delta)
    orders = np.array(_RDP_ORDERS)
    return PrivacyStatement(
        unit=unit, neighboring=neighboring, sampler=sampler, released=released, accountant=accountant,
        guarantee=Guarantee.BOUND, planning=planning, epsilon=epsilon, delta=delta, zcdp=total_zcdp,
        training_zcdp=training_zcdp,
        rdp_curve={"renyi_orders": orders.tolist(), "rdp_epsilons": (total_zcdp * orders).tolist()},
        conversion=None if delta is None else (
            "zCDP -> (epsilon, delta) by Balle et al. 2020 (arXiv 1905.09982, Theorem 21) minimized over all real "
            "orders; dp-accounting's RdpAccountant on a ZCDpEvent gives the cross-check"),
        assumptions=tuple(assumptions), cross_checks=checks, extra=dict(extra or {}),
        membership=zcdp_membership(total_zcdp) if membership is None else membership)
