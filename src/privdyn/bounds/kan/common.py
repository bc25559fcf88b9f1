"""Types and argument checks of the kan paper's bounds (Wang, Schuchardt, Kalinin, et al., arXiv 2605.12648):
conditions, bounds, constants, schedules."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from privdyn import _check
from privdyn.privacy.labels import Guarantee

__all__ = ["ACTIVATIONS", "Condition", "HiddenConstants", "KanConstants", "RiskBound", "Schedule"]


_PAPER = "Wang et al., arXiv 2605.12648v1"

ACTIVATIONS = ("sigmoid", "tanh")
"""Activations with known bounds (Assumption 3.2): ``sigmoid`` and ``tanh``."""

_ACTIVATION_BOUNDS = {
    # (sup |s|, sup |s'|, sup |s''|): sigmoid'' = s(1-s)(1-2s) peaks at 1/(6 sqrt 3); tanh'' = -2 tanh sech^2 peaks at
    # 4/(3 sqrt 3).
    "sigmoid": (1.0, 0.25, 1.0 / (6.0 * math.sqrt(3.0))),
    "tanh": (1.0, 1.0, 4.0 / (3.0 * math.sqrt(3.0))),
}

_EXPLICIT_FAILURE_PROB_MAX = 2.0 ** (-1.0 / 3.0)


# ---------------------------------------------------------------------------------------------------------------
# result types
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Condition:
    """A condition ``lhs <= rhs`` of a theorem, with ``margin = rhs - lhs`` (``>= 0`` exactly when it holds).

    Attributes:
        name: short identifier, e.g. ``"step_size"``, ``"width_lower"``, ``"stability_width"``.
        lhs, rhs: the two sides (``rhs`` may be ``inf``).
        margin: ``rhs - lhs`` (``inf`` when ``rhs`` is infinite and ``lhs`` finite).
        source: the paper statement the condition comes from.
    """

    name: str
    lhs: float
    rhs: float
    margin: float
    source: str = ""

    @classmethod
    def at_most(cls, name: str, lhs: float, rhs: float, source: str) -> Condition:
        """The condition ``lhs <= rhs``."""
        lhs, rhs = float(lhs), float(rhs)
        if math.isinf(rhs) and rhs > 0 and math.isfinite(lhs):
            margin = math.inf
        else:
            margin = rhs - lhs
        return cls(name=name, lhs=lhs, rhs=rhs, margin=margin, source=source)

    @property
    def holds(self) -> bool:
        """Whether the condition holds (``margin >= 0``)."""
        return bool(self.margin >= 0.0)


class _Conditions:
    """Look-ups shared by results that carry a tuple of :class:`Condition` s."""

    conditions: tuple[Condition, ...]

    @property
    def satisfied(self) -> bool:
        """Whether every condition holds."""
        return all(c.holds for c in self.conditions)

    def condition(self, name: str) -> Condition:
        """The condition called ``name``."""
        for c in self.conditions:
            if c.name == name:
                return c
        names = ", ".join(c.name for c in self.conditions)
        raise KeyError(f"no condition {name!r}; the conditions are {names}.")


@dataclasses.dataclass(frozen=True)
class RiskBound(_Conditions):
    """A risk bound with its conditions.

    Attributes:
        value: the bound.
        quantity: ``"optimization_risk"`` (averaged empirical risk over the iterates ``t = 0..T-1``) or
            ``"population_risk"`` (averaged expected population risk).
        conditions: every checkable condition of the statement.
        failure_prob: the total probability of the bad event the bound excludes.
        guarantee: ``bound`` (explicit constants, a formal bound once the conditions hold) or ``surrogate`` (a rate
            with hidden constants set by :class:`HiddenConstants`).
        terms: the named terms (and intermediate quantities) that make up ``value``.
        source: the paper statement.
    """

    value: float
    quantity: str
    conditions: tuple[Condition, ...]
    failure_prob: float
    guarantee: Guarantee
    terms: dict[str, float]
    source: str

    def __post_init__(self) -> None:
        _check.record(self)


@dataclasses.dataclass(frozen=True)
class HiddenConstants:
    """The absolute constants the paper hides in ``≲``, ``≍``, ``Õ`` and ``Ω̃`` (all default to 1).

    Attributes:
        risk: multiplies the rate ``A_*`` and the population bound (``≲`` in Theorems 4.1, 5.2, D.14, D.16, E.1).
        step_size: the right-hand side of Theorem 4.1's step-size condition ``... ≲ 1``.
        width_lower: multiplies the lower width bounds (``Ω̃(gamma^-4)`` of Theorem 4.1; the ``m ≳`` of Theorems
            D.14 and E.1).
        width_upper: multiplies the upper width bound ``Õ(...)`` of Theorem 4.1.
        stability_width: multiplies the stability width conditions of Theorems 5.2, D.16 and E.1.
        projection_radius: ``R* = projection_radius * (log T + sqrt(log(n / failure_prob))) / gamma`` when no
            radius is given (``R* ≍ ...`` in Theorems 4.1, D.14).
    """

    risk: float = 1.0
    step_size: float = 1.0
    width_lower: float = 1.0
    width_upper: float = 1.0
    stability_width: float = 1.0
    projection_radius: float = 1.0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            _check.scalar(**{field.name: value})
            _check.positive(**{field.name: value})


@dataclasses.dataclass(frozen=True)
class KanConstants:
    """The constants of Assumption 3.2 for one basis and activation, and the explicit ``C_{sigma,b}``.

    Attributes:
        activation: ``"sigmoid"`` or ``"tanh"``.
        grid_size, spline_order, interval: the B-spline basis (see :mod:`privdyn.models.bspline`).
        num_basis: p.
        basis_value_bound, basis_first_derivative_bound, basis_second_derivative_bound: B_b, B'_b, B''_b.
        activation_value_bound, activation_first_derivative_bound, activation_second_derivative_bound: B_s, B'_s,
            B''_s.
        gradient_constant: ``B'_s B_b B'_b`` (eq. (3)).
        hessian_constant: ``B_b^2 (B''_s B'_b + B'_s^2 B''_b)`` (eq. (4)).
        c_sigma_b: the explicit ``C_{sigma,b}`` (module docstring).
    """

    activation: str
    grid_size: int
    spline_order: int
    interval: tuple[float, float]
    num_basis: int
    basis_value_bound: float
    basis_first_derivative_bound: float
    basis_second_derivative_bound: float
    activation_value_bound: float
    activation_first_derivative_bound: float
    activation_second_derivative_bound: float
    gradient_constant: float
    hessian_constant: float
    c_sigma_b: float

    def __post_init__(self) -> None:
        _check.record(self)

    @property
    def smoothness(self) -> float:
        """beta = C_{sigma,b} p^3, the smoothness of the per-example loss (Lemma B.7)."""
        return self.c_sigma_b * self.num_basis**3

    @property
    def max_step_size(self) -> float:
        """1 / (12 beta), the largest step size Theorems 4.1, 5.2, D.13-D.16 and E.1 allow."""
        return 1.0 / (12.0 * self.smoothness)


@dataclasses.dataclass(frozen=True)
class Schedule(_Conditions):
    """The parameters a corollary prescribes, the bound they give and the conditions it needs.

    Attributes:
        batch_size, num_steps, step_size, width, noise_multiplier, clip, projection_radius: the parameters.
        noise_guarantee: the label of the calibration that gave ``noise_multiplier`` (``bound`` for Theorem F.12,
            ``heuristic`` for Theorem D.9, ``exact`` for the non-private kappa = 0).
        rate: the corollary's rate (without its polylog factor), e.g. ``1/(gamma sqrt n) + sqrt d/(gamma^4 n eps)``.
        bound: the theorem's bound evaluated at these parameters.
        conditions: the corollary's own conditions followed by the theorem's.
        source: the corollary.
    """

    batch_size: int
    num_steps: int
    step_size: float
    width: int
    noise_multiplier: float
    clip: float
    projection_radius: float
    noise_guarantee: Guarantee
    rate: float
    bound: RiskBound
    conditions: tuple[Condition, ...]
    source: str

    def __post_init__(self) -> None:
        _check.record(self)


# ---------------------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------------------


def _int(name: str, value: Any, minimum: int = 1) -> int:
    _check.scalar(**{name: value})
    _check.integer(minimum=minimum, **{name: value})
    return int(value)


def _pos(name: str, value: Any) -> float:
    _check.scalar(**{name: value})
    _check.positive(**{name: value})
    return float(value)


def _nonneg(name: str, value: Any) -> float:
    _check.scalar(**{name: value})
    _check.non_negative(**{name: value})
    return float(value)


def _prob(name: str, value: Any) -> float:
    _check.scalar(**{name: value})
    _check.finite(**{name: value})
    _check.in_range(0.0, 1.0, closed="neither", **{name: value})
    return float(value)


def _margin(ntk_margin: Any) -> float:
    _check.scalar(ntk_margin=ntk_margin)
    _check.finite(ntk_margin=ntk_margin)
    _check.in_range(0.0, 1.0, closed="right", ntk_margin=ntk_margin)
    return float(ntk_margin)


def _correlation(noise_correlation: Any, *, open_left: bool) -> float:
    _check.scalar(noise_correlation=noise_correlation)
    _check.finite(noise_correlation=noise_correlation)
    _check.in_range(0.0, 1.0, closed="neither" if open_left else "left", noise_correlation=noise_correlation)
    return float(noise_correlation)


def _constants(constants: Any) -> KanConstants:
    if not isinstance(constants, KanConstants):
        raise TypeError(f"constants must be a KanConstants (from kan_constants); got constants={constants!r}.")
    return constants


def _hidden(hidden_constants: Any) -> HiddenConstants:
    if hidden_constants is None:
        return HiddenConstants()
    if not isinstance(hidden_constants, HiddenConstants):
        raise TypeError(f"hidden_constants must be a HiddenConstants; got hidden_constants={hidden_constants!r}.")
    return hidden_constants


def _batch(batch_size: Any, n: int | None) -> int:
    b = _int("batch_size", batch_size)
    if n is not None and b > n:
        raise ValueError(f"batch_size must be <= n = {n}; got batch_size={batch_size!r}.")
    return b
