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
planning share, and (ε, δ) with the zCDP or RDP curve it came from.
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

__all__ = [
    "Budget",
    "PlanningShare",
    "PrivacyStatement",
    "budget",
    "zcdp_for_epsilon",
    "dp_accounting_epsilon",
    "zcdp_epsilon",
    "rho_from_zcdp",
    "SAMPLERS",
]

SAMPLERS = ("fixed_order", "full_batch", "shuffle", "poisson", "fixed_size", "random_allocation", "cyclic_poisson")
"""How records enter the algorithm (``sampler``): one pass in a fixed order (dpgd), the full batch every step
(langevin), one pass in a uniformly random order (hsgd; DP-SGD epochs), Poisson or fixed-size batches (DP-SGD),
random allocation (balls-in-bins: each record in one uniformly drawn step of every DP-SGD epoch), or cyclic Poisson
(DP-SGD: Poisson sampling inside the active part of a fixed partition, :mod:`privdyn.privacy.cyclic_poisson`)."""

_RDP_ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0)
"""The orders at which a zCDP guarantee's RDP curve α ↦ zcdp·α is tabulated in the statement."""


def dp_accounting_epsilon(zcdp: float, delta: float) -> float:
    """ε of ``zcdp``-zCDP at ``delta`` by dp-accounting: an ``RdpAccountant`` composed with ``ZCDpEvent(zcdp)``."""
    import dp_accounting
    from dp_accounting import rdp

    accountant = rdp.RdpAccountant()
    accountant.compose(dp_accounting.ZCDpEvent(float(zcdp)))
    return float(accountant.get_epsilon(float(delta)))


def zcdp_epsilon(zcdp: float, delta: float) -> float:
    """ε of ``zcdp``-zCDP at ``delta``: privdyn's ``"optimal"`` conversion (an upper bound, rounded up)."""
    return float(conversions.zcdp_to_epsilon(zcdp, delta=delta, method="optimal"))


def zcdp_for_epsilon(epsilon: float, delta: float) -> float:
    """The largest zCDP parameter whose ε at ``delta`` is <= ``epsilon`` by both conversions (module docstring).

    Starts from ``epsilon_to_zcdp(method="optimal")`` and, when dp-accounting's grid gives more than ``epsilon``
    there, bisects down towards the Bun-Steinke value (whose Mironov conversion dominates dp-accounting's at every
    order) until both agree; the result is on the safe side of both to about 1e-9 relative.
    """
    high = float(conversions.epsilon_to_zcdp(epsilon, delta=delta, method="optimal"))
    if dp_accounting_epsilon(high, delta) <= epsilon:
        return high
    low = float(conversions.epsilon_to_zcdp(epsilon, delta=delta, method="bun_steinke"))
    while dp_accounting_epsilon(low, delta) > epsilon:  # not expected; halve until safe
        low *= 0.5
    while high - low > 1e-9 * high:
        middle = 0.5 * (low + high)
        if dp_accounting_epsilon(middle, delta) <= epsilon and zcdp_epsilon(middle, delta) <= epsilon:
            low = middle
        else:
            high = middle
    return low


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


def _check_delta(delta: Any) -> float:
    _check.scalar(delta=delta)
    _check.in_range(0.0, 1.0, closed="neither", delta=delta)
    return float(delta)


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
        given_delta = _check_delta(delta)
        eps = float(epsilon)  # type: ignore[arg-type]  # checked above
        return Budget(given=kind, zcdp=zcdp_for_epsilon(eps, given_delta), epsilon=eps, delta=given_delta)
    dlt = None if delta is None else _check_delta(delta)
    if kind == "rho":
        _check.scalar(rho=rho)
        _check.positive(rho=rho)
        return Budget(given=kind, zcdp=0.5 * float(rho) ** 2, epsilon=None, delta=dlt)  # type: ignore[arg-type]
    _check.scalar(zcdp=zcdp)
    _check.positive(zcdp=zcdp)
    return Budget(given=kind, zcdp=float(zcdp), epsilon=None, delta=dlt)  # type: ignore[arg-type]


@dataclasses.dataclass(frozen=True, kw_only=True)
class PlanningShare:
    """The part of the budget spent estimating the data's statistics for planning (zero for public inputs).

    Attributes:
        mode: ``"none"`` (public numbers: n, d, an assumed spectrum, guessed label noise), ``"public_stats"``
            (statistics of a data file computed exactly and treated as public by the user's declaration) or
            ``"dp"`` (Gaussian mechanisms composed with training in zCDP).
        zcdp: the zCDP parameter spent (0 unless ``mode == "dp"``).
        fraction: the share of the total zCDP budget (0 unless ``mode == "dp"``).
        mechanisms: one mapping per Gaussian mechanism: ``statistic``, ``sensitivity``, ``noise_std``, ``zcdp``.
        bounds: the public bounds the data were projected / clipped to (``feature_norm_bound``, ``label_bound``).
        neighboring: the relation the sensitivities refer to.
        source: the file the statistics came from, if any.
    """

    mode: str = "none"
    zcdp: float = 0.0
    fraction: float = 0.0
    mechanisms: tuple[Mapping[str, Any], ...] = ()
    bounds: Mapping[str, float] = dataclasses.field(default_factory=dict)
    neighboring: str | None = None
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "zcdp": self.zcdp, "fraction": self.fraction,
                "mechanisms": [dict(m) for m in self.mechanisms], "bounds": dict(self.bounds),
                "neighboring": self.neighboring, "source": self.source}

    def describe(self) -> str:
        if self.mode == "none":
            return "none: the plan used only public numbers (no data were read)"
        if self.mode == "public_stats":
            return (f"none spent: the statistics of {self.source} were treated as public, as declared by the user "
                    "(--public-stats); they carry no privacy guarantee")
        return (f"{self.fraction:.3g} of the zCDP budget ({self.zcdp:.4g}-zCDP) spent on {len(self.mechanisms)} "
                f"Gaussian mechanisms estimating the data's statistics, composed with training in zCDP")


@dataclasses.dataclass(frozen=True, kw_only=True)
class PrivacyStatement:
    """What a user can publish about a planned training run.

    Attributes:
        unit: the unit of privacy (e.g. ``"one example (a row (x, y))"``).
        neighboring: the neighbouring relation (``replace_one``, ``add_remove``, ``zero_out``).
        sampler: how records enter the algorithm (:data:`SAMPLERS`).
        released: which iterates are released.
        accountant: the result that bounds the privacy loss, with its reference.
        guarantee: the :class:`~privdyn.privacy.labels.Guarantee` label of the numbers below.
        planning: the planning share.
        epsilon, delta: the (ε, δ) of the total guarantee (training plus planning), or None.
        zcdp: the total zCDP parameter, when the guarantee is zCDP; ``training_zcdp`` the training part alone.
        rdp_curve: ``{"renyi_orders": [...], "rdp_epsilons": [...]}`` of the total guarantee, when one exists.
        conversion: how (ε, δ) was obtained from the curve.
        assumptions: what the guarantee needs (bounded data, one pass, only the final iterate released, ...).
        cross_checks: independent recomputations (e.g. dp-accounting's ε of the same zCDP).
        extra: family-specific numbers (e.g. ``rho``; the Rényi target of a surrogate).
    """

    unit: str
    neighboring: NeighboringRelation
    sampler: str
    released: str
    accountant: str
    guarantee: Guarantee
    planning: PlanningShare
    epsilon: float | None
    delta: float | None
    zcdp: float | None
    training_zcdp: float | None
    rdp_curve: Mapping[str, Sequence[float]] | None
    conversion: str | None
    assumptions: tuple[str, ...]
    cross_checks: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "guarantee", Guarantee(self.guarantee))
        object.__setattr__(self, "neighboring", NeighboringRelation(self.neighboring))
        _check.one_of(SAMPLERS, sampler=self.sampler)

    @property
    def is_dp_guarantee(self) -> bool:
        """Whether the numbers may be published as a differential-privacy guarantee."""
        return self.guarantee.is_guarantee

    def to_json(self) -> dict[str, Any]:
        return {"unit": self.unit, "neighboring": self.neighboring.value, "sampler": self.sampler,
                "released": self.released, "accountant": self.accountant, "guarantee": self.guarantee.value,
                "is_dp_guarantee": self.is_dp_guarantee, "planning_share": self.planning.to_json(),
                "epsilon": self.epsilon, "delta": self.delta, "zcdp": self.zcdp, "training_zcdp": self.training_zcdp,
                "rdp_curve": None if self.rdp_curve is None else {k: list(v) for k, v in self.rdp_curve.items()},
                "conversion": self.conversion, "assumptions": list(self.assumptions),
                "cross_checks": dict(self.cross_checks), **dict(self.extra), "text": self.text()}

    def text(self) -> str:
        """The statement as a paragraph."""
        parts = []
        if self.is_dp_guarantee:
            if self.epsilon is not None:
                parts.append(f"({self.epsilon:.4g}, {self.delta:.3g})-differential privacy")
            if self.zcdp is not None:
                parts.append(f"{self.zcdp:.4g}-zCDP")
            claim = " and ".join(parts) if parts else "the privacy loss below"
            head = f"The trained model satisfies {claim} (guarantee label '{self.guarantee.value}')"
        else:
            head = (f"The privacy number below is a '{self.guarantee.value}', NOT a differential-privacy guarantee: "
                    + ", ".join(f"{k} = {v:.4g}" if isinstance(v, float) else f"{k} = {v}"
                                for k, v in self.extra.items() if v is not None))
        return (f"{head}. Unit of privacy: {self.unit}; neighbouring datasets: {self.neighboring.value}; "
                f"sampler: {self.sampler}; released: {self.released}. Accountant: {self.accountant}. "
                f"Planning share: {self.planning.describe()}."
                + (f" Conversion: {self.conversion}." if self.conversion else "")
                + (" Assumptions: " + "; ".join(self.assumptions) + "." if self.assumptions else ""))


def zcdp_statement(*, total_zcdp: float, training_zcdp: float, delta: float | None, unit: str,
                   neighboring: NeighboringRelation, sampler: str, released: str, accountant: str,
                   planning: PlanningShare, assumptions: Sequence[str],
                   extra: Mapping[str, Any] | None = None) -> PrivacyStatement:
    """The statement of a zCDP guarantee (label ``bound``): ε by the optimal conversion, cross-checked by dp-accounting.

    The RDP curve is α ↦ total_zcdp·α (Bun & Steinke 2016, Definition 1.1), tabulated at a few orders.
    """
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
        assumptions=tuple(assumptions), cross_checks=checks, extra=dict(extra or {}))
