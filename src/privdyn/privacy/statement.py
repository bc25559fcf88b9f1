"""The privacy statement: the one published result of a private run, and the planning share it includes.

:class:`PrivacyStatement` holds what a user needs to publish a guarantee: the unit of privacy, the neighbouring
relation, the sampler, which iterates are released, the accountant and its guarantee label, the planning share
(:class:`PlanningShare`), (ε, δ) with the zCDP or RDP curve it came from, and what an attacker can do: the true-positive
rate of the best membership test at false-positive rates 0.001, 0.01 and 0.1 (:mod:`privdyn.privacy.membership`),
where the mechanism's privacy-loss distribution or Gaussian law gives it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, KeysView, Mapping, Sequence
from typing import Any, TypedDict

from privdyn import _check
from privdyn.privacy.labels import STATEMENT_SAMPLERS, Guarantee, NeighboringRelation, Sampler, as_sampler

__all__ = ["STATEMENT_SAMPLERS", "Membership", "PlanningShare", "PrivacyStatement"]


class Membership(TypedDict):
    """The best membership test's true-positive rate (an upper bound) at each false-positive rate, and how."""

    fpr: list[float]
    tpr: list[float]
    method: str


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


_FIELD_KEYS = frozenset({"unit", "neighboring", "sampler", "released", "accountant", "guarantee", "is_dp_guarantee",
                         "planning_share", "epsilon", "delta", "zcdp", "training_zcdp", "rdp_curve", "conversion",
                         "assumptions", "cross_checks", "membership", "membership_reason", "text"})
"""The keys of :meth:`PrivacyStatement.to_json` that are the statement's own (``extra`` may not repeat them)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class PrivacyStatement:
    """What a user can publish about a training run: a plan's, a mechanism record's or a fitted estimator's
    (``privacy_`` of :mod:`privdyn.sklearn`).

    Attributes:
        unit: the unit of privacy (e.g. ``"one example (a row (x, y))"``).
        neighboring: the neighbouring relation (``replace_one``, ``add_remove``, ``zero_out``).
        sampler: how records enter the algorithm, one of :data:`STATEMENT_SAMPLERS` (every :class:`Sampler`; a member
            or its string value, kept as the value).
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
        membership: what an attacker can do, or None where privdyn has no privacy-loss distribution, Gaussian law
            or zCDP bound for the mechanism: ``{"fpr": [...], "tpr": [...], "method": ...}``, the best membership
            test's true-positive rate (an upper bound) at each false-positive rate
            (:mod:`privdyn.privacy.membership`).
        membership_reason: why ``membership`` is None (None when it is given).

    Reading it as a mapping (``statement["epsilon"]``, ``statement.get("rho")``, ``"zcdp" in statement``,
    ``statement.keys()``, ``dict(statement)``) reads :meth:`to_json`: the fields above, ``extra``'s keys beside them,
    and ``text``. The estimators' ``privacy_`` keep their family's numbers in ``extra`` (e.g. ``shares``,
    ``requested_epsilon``), so ``model.privacy_["shares"]`` reads as it did when ``privacy_`` was a dict.
    """

    unit: str
    neighboring: NeighboringRelation
    sampler: Sampler | str
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
    membership: Membership | None = None
    membership_reason: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "guarantee", _check.member(Guarantee, guarantee=self.guarantee))
        object.__setattr__(self, "neighboring", _check.member(NeighboringRelation, neighboring=self.neighboring))
        object.__setattr__(self, "sampler", as_sampler(self.sampler, STATEMENT_SAMPLERS).value)
        _check.instance(str, unit=self.unit, released=self.released, accountant=self.accountant)
        _check.instance(PlanningShare, planning=self.planning)
        for name in ("epsilon", "delta", "zcdp", "training_zcdp"):
            value = getattr(self, name)
            if value is not None:
                _check.scalar(**{name: value})
                _check.non_negative(**{name: value})
        if self.delta is not None:
            _check.delta(self.delta)
        if self.conversion is not None:
            _check.instance(str, conversion=self.conversion)
        if self.rdp_curve is not None:
            _check.instance(Mapping, rdp_curve=self.rdp_curve)
        _check.instance(Mapping, cross_checks=self.cross_checks, extra=self.extra)
        if not isinstance(self.assumptions, Sequence) or isinstance(self.assumptions, str) or not all(
                isinstance(a, str) for a in self.assumptions):
            raise TypeError(f"assumptions must be a sequence of strings; got assumptions={self.assumptions!r}.")
        object.__setattr__(self, "assumptions", tuple(self.assumptions))
        if self.membership is not None:
            _check.instance(Mapping, membership=self.membership)
            if set(self.membership) != {"fpr", "tpr", "method"}:
                raise ValueError("membership must have the keys 'fpr', 'tpr' and 'method'; got "
                                 f"membership={dict(self.membership)!r}.")
            if self.membership_reason is not None:
                raise ValueError("membership_reason must be None when membership is given; got "
                                 f"membership_reason={self.membership_reason!r}.")
        elif self.membership_reason is not None:
            _check.instance(str, membership_reason=self.membership_reason)
        clash = sorted(set(self.extra) & _FIELD_KEYS)
        if clash:
            raise ValueError(f"extra must not repeat the statement's own keys; got extra with {clash}.")

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
                "cross_checks": dict(self.cross_checks), **dict(self.extra),
                **({} if self.membership is None else {"membership": {"fpr": list(self.membership["fpr"]),
                                                                      "tpr": list(self.membership["tpr"]),
                                                                      "method": self.membership["method"]}}),
                **({} if self.membership_reason is None else {"membership_reason": self.membership_reason}),
                "text": self.text()}

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.to_json()

    def get(self, key: str, default: Any = None) -> Any:
        """``statement[key]``, or ``default`` where the statement has no such key."""
        return self.to_json().get(key, default)

    def keys(self) -> KeysView[str]:
        """The keys of :meth:`to_json` (``dict(statement)`` is the JSON record)."""
        return self.to_json().keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())

    def membership_text(self) -> str:
        """The membership-inference sentence, or "" without one."""
        if self.membership is None:
            return ("" if self.membership_reason is None
                    else f" Membership inference: no rate stated ({self.membership_reason}).")
        pairs = ", ".join(f"{tpr:.3g} at {fpr:g}" for fpr, tpr in zip(self.membership["fpr"], self.membership["tpr"],
                                                                          strict=True))
        return (" Membership inference: the best test's true-positive rate is at most " + pairs
                + f" false-positive rate ({self.membership['method']}).")

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
                + (" Assumptions: " + "; ".join(self.assumptions) + "." if self.assumptions else "")
                + self.membership_text())
