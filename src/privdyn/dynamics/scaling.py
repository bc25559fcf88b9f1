"""Rates, scaling-law exponents and lower bounds of the dpgd paper (its closed-form surrogate risks, in
:mod:`privdyn.dynamics.closed_forms`, stay importable from here).

Bombari, Luo, Seroussi, Mondelli, "High-Dimensional Private Linear Regression with Optimal Rates",
arXiv 2505.16329v2 (cited below as "the paper"; equation numbers are the paper's).

Every function says which of three kinds of quantity it returns:

* **rate** -- the expression inside an O(·) or Ω(·) statement of the paper, *constants dropped*. The value is
  meaningful only up to a multiplicative constant and in the limit aspect_ratio γ → 0 (taken after n, d → ∞);
* **exponent** -- the γ → 0 exponent of a rate (Theorem 4, Corollary 6.1), exact as a number;
* **exact** -- an explicit formula: the exact solution of a stated surrogate ODE (eqs. (5.7)-(5.8), (D.54), (D.89),
  Lemma D.5), the explicit constants of Theorem 2's construction (D.105), or the minimax lower-bound curve with the
  constants of the proofs of Theorem 3.

Names follow ``docs/notation.md``: ``power_law_exponent`` φ, ``target_exponent`` ψ, ``schedule_exponent`` α,
``privacy_exponent`` b (ρ = γ^b), ``aspect_ratio`` γ = d/n, ``rho`` ρ (the algorithm is ρ²/2-zCDP), ``clip`` c
(C_clip = c√d), ``label_noise`` ζ, ``harmonic_scale`` β and ``harmonic_offset`` τ (η̃(t) = β/(t + τ)),
``initial_learning_rate`` η̃(0). The surrogate ODE coefficients keep the paper's letters ``a``, ``b1``, ``b2``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn._arrays import scalar_or_array
from privdyn.dynamics.closed_forms import constant_noise_surrogate_risk as constant_noise_surrogate_risk
from privdyn.dynamics.closed_forms import generalized_exponential_integral as generalized_exponential_integral
from privdyn.dynamics.closed_forms import harmonic_surrogate_risk as harmonic_surrogate_risk
from privdyn.dynamics.closed_forms import output_perturbation_surrogate_risk as output_perturbation_surrogate_risk
from privdyn.dynamics.closed_forms import polynomial_surrogate_risk as polynomial_surrogate_risk
from privdyn.schedules import OutsideTheoryWarning

__all__ = [
    "Theorem4Case",
    "scaling_exponent",
    "exponent_terms",
    "theorem4_case",
    "critical_privacy_exponent",
    "privacy_threshold_exponent",
    "limiting_scaling_exponent",
    "log_correction",
    "polynomial_rate",
    "loglog_rate",
    "harmonic_rate",
    "large_clip_rate",
    "theorem2_parameters",
    "minimax_lower_bound",
]

# Relative tolerance used to decide the equality case φ(α+1) = 2 of Theorem 4 (the exponents are continuous across
# it; only the documented o(1) log correction distinguishes it).
_EQUALITY_RTOL = 1e-12


# ----------------------------------------------------------------------------------------------------------------
# Theorem 4 / Lemmas E.4-E.5: scaling-law exponents
# ----------------------------------------------------------------------------------------------------------------


@overload
def _exponents(power_law_exponent: Any, target_exponent: Any, schedule_exponent: Any,
               privacy_exponent: None) -> tuple[float, float, float, None]: ...


@overload
def _exponents(power_law_exponent: Any, target_exponent: Any, schedule_exponent: Any,
               privacy_exponent: float) -> tuple[float, float, float, float]: ...


def _exponents(power_law_exponent: Any, target_exponent: Any, schedule_exponent: Any,
               privacy_exponent: Any | None) -> tuple[float, float, float, float | None]:
    """Validate (φ, ψ, α, b) as in Theorem 4 / Assumption 3 and warn outside Assumption 2."""
    named = {"power_law_exponent": power_law_exponent, "target_exponent": target_exponent,
             "schedule_exponent": schedule_exponent}
    if privacy_exponent is not None:
        named["privacy_exponent"] = privacy_exponent
    _check.scalar(**named)
    _check.finite(**named)
    phi, psi, alpha = float(power_law_exponent), float(target_exponent), float(schedule_exponent)
    _check.less_than(1.0, "1 (Assumption 3 needs power_law_exponent < 1)", power_law_exponent=phi)
    _check.less_than(1.0 - phi, f"1 - power_law_exponent = {1.0 - phi:g} (Assumption 3: finite ||theta*||)",
                     target_exponent=psi)
    _check.non_negative(schedule_exponent=alpha)
    b = None
    if privacy_exponent is not None:
        b = float(privacy_exponent)
        _check.less_than(1.0, "1 (Theorem 4 needs rho = aspect_ratio**b with b < 1)", privacy_exponent=b)
    if 0.0 < alpha < 1.0 and alpha != 0.5:
        warnings.warn(f"schedule_exponent={alpha:g} is outside the theory of arXiv 2505.16329 (Assumption 2 needs "
                      "schedule_exponent in {0, 1/2} or >= 1: the derivative of the squared learning rate is "
                      "unbounded at t = 1); the Theorem 4 formulas are evaluated anyway.",
                      OutsideTheoryWarning, stacklevel=3)
    return phi, psi, alpha, b


def _is_equality(phi: float, alpha: float) -> bool:
    return math.isclose(phi * (alpha + 1.0), 2.0, rel_tol=_EQUALITY_RTOL, abs_tol=0.0)


def _critical_b(phi: float, psi: float, alpha: float) -> float:
    kappa1 = 2.0 - phi - psi
    K = kappa1 * (alpha + 1.0)
    if phi * (alpha + 1.0) < 2.0:
        return K / (2.0 * (K + 1.0))
    return 1.0 - (2.0 - psi) * (alpha + 1.0) / (2.0 * (K + 1.0))


@dataclasses.dataclass(frozen=True)
class Theorem4Case:
    """Which row of Theorem 4's table applies (arXiv 2505.16329, eqs. (6.4)-(6.6)).

    Attributes:
        equation: ``"6.4"`` (privacy for free), ``"6.5"`` (φ(α+1) < 2, privacy costs) or ``"6.6"``
            (φ(α+1) ≥ 2, privacy costs).
        ill_conditioned: φ(α+1) ≥ 2 (the last two rows of the table).
        privacy_free: b ≤ the critical privacy exponent, so h does not depend on b.
        log_corrected: φ(α+1) = 2 in the privacy-cost row, where h carries the o(1) term of :func:`log_correction`.
        critical_privacy_exponent: the critical b of the applicable row.
    """

    equation: str
    ill_conditioned: bool
    privacy_free: bool
    log_corrected: bool
    critical_privacy_exponent: float

    def __post_init__(self) -> None:
        _check.one_of(("6.4", "6.5", "6.6"), equation=self.equation)
        _check.instance(bool, ill_conditioned=self.ill_conditioned, privacy_free=self.privacy_free,
                        log_corrected=self.log_corrected)
        _check.record(self)


def theorem4_case(*, power_law_exponent: float, target_exponent: float, schedule_exponent: float,
                  privacy_exponent: float) -> Theorem4Case:
    """The row of Theorem 4's table (arXiv 2505.16329, Theorem 4 / Lemma E.5) that applies to (φ, ψ, α, b).

    Validation and warnings as in :func:`scaling_exponent`.
    """
    phi, psi, alpha, b = _exponents(power_law_exponent, target_exponent, schedule_exponent, privacy_exponent)
    return _case(phi, psi, alpha, b)


def _case(phi: float, psi: float, alpha: float, b: float) -> Theorem4Case:
    ill = phi * (alpha + 1.0) >= 2.0 or _is_equality(phi, alpha)
    critical = _critical_b(phi, psi, alpha)
    free = b <= critical
    equation = "6.4" if free else ("6.6" if ill else "6.5")
    return Theorem4Case(equation=equation, ill_conditioned=ill, privacy_free=free,
                        log_corrected=(not free) and _is_equality(phi, alpha), critical_privacy_exponent=critical)


def scaling_exponent(*, power_law_exponent: float, target_exponent: float, schedule_exponent: float,
                     privacy_exponent: float) -> tuple[float, float]:
    """Optimal exponent a of cη̃(0) = γ^a and the risk exponent h of Theorem 4 (arXiv 2505.16329, (6.4)-(6.6)).

    **Exponent** (exact as numbers). Under Assumptions 1-3, a polynomial schedule η̃(t) = η̃(0)(1 − t)^α with
    η̃(0) ≤ 2/γ, c = O(1) and ρ = Θ(γ^b), the optimally tuned final private risk is Θ(γ^h), with
    K = (2 − φ − ψ)(α + 1):

    * φ(α+1) < 2, b ≤ K/(2(K+1)): a = −(α+1)/(K+1), h = K/(K+1) (privacy for free, (6.4));
    * φ(α+1) < 2, b > K/(2(K+1)): a = −2(1−b)(α+1)/(K+2), h = 2K(1−b)/(K+2) ((6.5));
    * φ(α+1) ≥ 2, b ≤ 1 − (2−ψ)(α+1)/(2(K+1)): a and h as in (6.4);
    * φ(α+1) ≥ 2, b > 1 − (2−ψ)(α+1)/(2(K+1)): a = −2(1−b)/(2−ψ), h = 2(2−φ−ψ)(1−b)/(2−ψ) ((6.6)).

    The pair (a, h) is the max-min of the three exponents of Lemma E.4
    (:func:`exponent_terms`): h = max_a min(e1, e2, e3), attained at a.

    **Equality case φ(α+1) = 2.** The exponents are continuous across φ(α+1) = 2 (both rows give the same a and h
    there), and this function returns the γ → 0 exponent. In the privacy-cost row, (6.6) adds the term
    ln(a ln γ)/ln γ to h (from the factor v^φ ln v of (E.17) with v = γ^a): an o(1) correction, negative once
    a ln γ > 1, i.e. the risk is larger by the factor ln v = a ln γ. :func:`log_correction` evaluates it at a
    given γ; :func:`theorem4_case` says whether it applies (``log_corrected``). The term is the one at the paper's
    a; re-optimizing a at a fixed finite γ recovers part of it (an o(1) effect that vanishes as γ → 0).

    Args:
        power_law_exponent: φ < 1 (Assumption 3).
        target_exponent: ψ < 1 − φ (Assumption 3).
        schedule_exponent: α ≥ 0; the theory covers α ∈ {0, ½} ∪ [1, ∞). Other α in (0, 1) are evaluated with
            an :class:`~privdyn.schedules.OutsideTheoryWarning` (Assumption 2).
        privacy_exponent: b < 1, with ρ = γ^b (b ≤ 0 allowed: privacy for free).

    Returns:
        ``(a_opt, h)`` as floats; a_opt ∈ (−1, 0).

    Raises:
        ValueError: a parameter outside the ranges above (the message names it).
    """
    phi, psi, alpha, b = _exponents(power_law_exponent, target_exponent, schedule_exponent, privacy_exponent)
    kappa1 = 2.0 - phi - psi
    K = kappa1 * (alpha + 1.0)
    case = _case(phi, psi, alpha, b)
    if case.privacy_free:
        return -(alpha + 1.0) / (K + 1.0), K / (K + 1.0)
    if not case.ill_conditioned:
        return -2.0 * (1.0 - b) * (alpha + 1.0) / (K + 2.0), 2.0 * K * (1.0 - b) / (K + 2.0)
    return -2.0 * (1.0 - b) / (2.0 - psi), 2.0 * kappa1 * (1.0 - b) / (2.0 - psi)


def exponent_terms(a: ArrayLike, *, power_law_exponent: float, target_exponent: float, schedule_exponent: float,
                   privacy_exponent: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three exponents e1, e2, e3 of Lemma E.4 / (E.42), (E.49) as functions of a (Figures 10-13).

    **Exponent.** With v = cη̃(0) = γ^a, the final private risk is ≍ v^{−κ1} + γ v^{1/(α+1)} + (γ²/ρ²) g(v)
    (Lemma E.4, (E.16)-(E.17)), i.e. ≍ γ^{e1} + γ^{e2} + γ^{e3} with κ1 = 2 − φ − ψ and

    * e1 = −a κ1,
    * e2 = a/(α+1) + 1,
    * e3 = 2 − 2b + 2a/(α+1) if φ(α+1) < 2 (E.42), and 2 − 2b + aφ if φ(α+1) ≥ 2 (E.49).

    At φ(α+1) = 2 both forms of e3 agree; the o(1) term −ln(abs(a) ln(1/γ))/ln(1/γ) of (E.55) is dropped (the γ → 0
    limit; see :func:`log_correction`). The risk exponent is h = max_a min(e1, e2, e3) (:func:`scaling_exponent`).

    Shapes: a (...) -> three arrays of shape (...).

    Args:
        a: the exponent of cη̃(0) = γ^a (any finite reals; the lemma's regime is a < 0).
        power_law_exponent, target_exponent, schedule_exponent, privacy_exponent: φ, ψ, α, b as in
            :func:`scaling_exponent` (same validation and warning).
    """
    phi, psi, alpha, b = _exponents(power_law_exponent, target_exponent, schedule_exponent, privacy_exponent)
    _check.finite(a=a)
    x = np.asarray(a, dtype=float)
    kappa1 = 2.0 - phi - psi
    e1 = -x * kappa1
    e2 = x / (alpha + 1.0) + 1.0
    e3 = 2.0 - 2.0 * b + x * max(2.0 / (alpha + 1.0), phi)
    return scalar_or_array(e1), scalar_or_array(e2), scalar_or_array(e3)


def critical_privacy_exponent(*, power_law_exponent: float, target_exponent: float,
                              schedule_exponent: float) -> float:
    """The critical b of Theorem 4 (arXiv 2505.16329, (6.4)-(6.6), (E.37)): above it privacy costs accuracy.

    **Exponent.** K/(2(K+1)) if φ(α+1) < 2 (a value in (1/4, 1/2)), and 1 − (2−ψ)(α+1)/(2(K+1)) if φ(α+1) ≥ 2
    (a value in (0, 1/2)); the two agree at φ(α+1) = 2. Validation as in :func:`scaling_exponent`.
    """
    phi, psi, alpha, _ = _exponents(power_law_exponent, target_exponent, schedule_exponent, None)
    return _critical_b(phi, psi, alpha)


def privacy_threshold_exponent(*, power_law_exponent: float, target_exponent: float) -> float:
    """b* of Corollary 6.1 (arXiv 2505.16329, (6.9) / (E.56)): the b above which privacy dominates for large α.

    **Exponent.** For φ > 0, b* = 1/2 − φ/(2(2 − φ − ψ)) < 1/2: with ρ = γ^b and b > b*, the privacy term
    (γ²/ρ²)^{(2−ψ−φ)/(2−ψ)} of (6.8) dominates γ^{1−ε}. It is the α → ∞ limit of
    :func:`critical_privacy_exponent`. For φ ≤ 0 the corollary's rate (6.7) is γ^{1−ε} + (γ²/ρ²)^{1−ε}, whose
    privacy term dominates for b > 1/2; this function returns 1/2 there (the formula (6.9) is stated for φ > 0 and
    equals 1/2 at φ = 0).

    Args:
        power_law_exponent: φ < 1.
        target_exponent: ψ < 1 − φ.
    """
    phi, psi, _, _ = _exponents(power_law_exponent, target_exponent, 0.0, None)
    return 0.5 - max(phi, 0.0) / (2.0 * (2.0 - phi - psi))


def limiting_scaling_exponent(*, power_law_exponent: float, target_exponent: float,
                              privacy_exponent: float) -> float:
    """sup over α of Theorem 4's h, i.e. its α → ∞ limit (Corollary 6.1, arXiv 2505.16329, (6.7)-(6.8)).

    **Exponent.** h is non-decreasing in α; its limit is min(1, 2(1 − b)) for φ ≤ 0 (the proof of Corollary 6.1)
    and min(1, 2(2 − φ − ψ)(1 − b)/(2 − ψ)) for φ > 0. When the limit is 1 it is not attained (h = K/(K+1) < 1 for
    every finite α): this is the γ^{1−ε} of the corollary.
    """
    phi, psi, _, b = _exponents(power_law_exponent, target_exponent, 0.0, privacy_exponent)
    if phi <= 0.0:
        return min(1.0, 2.0 * (1.0 - b))
    return min(1.0, 2.0 * (2.0 - phi - psi) * (1.0 - b) / (2.0 - psi))


def log_correction(a: ArrayLike, *, aspect_ratio: ArrayLike) -> np.float64 | np.ndarray:
    """The o(1) term ln(a ln γ)/ln γ of h in (6.6) / (E.39) at the equality φ(α+1) = 2 (arXiv 2505.16329).

    **Exponent correction** (exact as an identity): γ^{h + correction} = γ^h · ln v with v = γ^a, the log
    factor of g(v) = v^φ ln v in (E.17). Defined for a ln γ > 0 (a < 0 and γ < 1); negative once a ln γ > 1, and
    → 0 as γ → 0.

    Shapes: a and aspect_ratio broadcast.
    """
    _check.finite(a=a)
    _check.in_range(0.0, 1.0, closed="neither", aspect_ratio=aspect_ratio)
    x = np.asarray(a, dtype=float)
    if np.any(x >= 0):
        raise ValueError(f"a must be < 0 (v = aspect_ratio**a must grow as aspect_ratio -> 0); got a={a!r}.")
    log_g = np.log(np.asarray(aspect_ratio, dtype=float))
    return scalar_or_array(np.log(x * log_g) / log_g)


# ----------------------------------------------------------------------------------------------------------------
# Rates (constants dropped): Propositions 5.1, 5.2, (5.17), Theorem 2, (5.12)
# ----------------------------------------------------------------------------------------------------------------


def _rate_inputs(aspect_ratio: Any, rho: Any, *, below: float = 1.0, below_text: str = "1") -> tuple[Any, Any]:
    _check.positive(aspect_ratio=aspect_ratio, rho=rho)
    _check.broadcastable(aspect_ratio=aspect_ratio, rho=rho)
    _check.less_than(below, below_text, aspect_ratio=aspect_ratio)
    return np.asarray(aspect_ratio, dtype=float), np.asarray(rho, dtype=float)


def _spectrum_bounds(lambda_min: Any, lambda_max: Any) -> tuple[np.ndarray, np.ndarray]:
    _check.positive(lambda_min=lambda_min, lambda_max=lambda_max)
    _check.broadcastable(lambda_min=lambda_min, lambda_max=lambda_max)
    lo, hi = np.asarray(lambda_min, dtype=float), np.asarray(lambda_max, dtype=float)
    if np.any(lo > hi):
        raise ValueError(f"lambda_min must be <= lambda_max; got lambda_min={lambda_min!r}, lambda_max={lambda_max!r}.")
    return lo, hi


def polynomial_rate(*, aspect_ratio: ArrayLike, rho: ArrayLike, schedule_exponent: float, lambda_min: ArrayLike = 1.0,
                    lambda_max: ArrayLike = 1.0) -> np.float64 | np.ndarray:
    """Upper-bound rate of the tuned polynomial schedule η̃(t) = η̃(0)(1 − t)^α (arXiv 2505.16329).

    **Rate** (constants dropped), with L = ln(1/γ):

    * α = 0 (output perturbation), Proposition 5.1 / D.3 (5.3): (λ_max/λ_min²) γ L + (1/λ_min²) γ² L²/ρ²;
    * α = ½ (constant private noise), Proposition 5.1 / D.4 (5.3): (λ_max/λ_min²) γ L^{2/3}
      + (1/λ_min²) γ² L^{4/3}/ρ²;
    * α ≥ 1 (decaying noise), Proposition 5.2 / (5.16), (D.81): (λ_max/λ_min²) α γ L^{1/(1+α)}
      + (1/λ_min²) α² γ² L^{2/(1+α)}/ρ².

    These are upper bounds reached with c = O(1) and cη̃(0) = C ln(1/γ)/λ_min (α ∈ {0, ½}) or Cα ln(1/γ)/λ_min
    (α ≥ 1). For α ∈ {0, ½} and a well-conditioned Σ, (5.4) gives matching lower bounds for every (c, η̃(0))
    (with factors 1/λ_max² instead). Conditions (5.14)/(D.22)/(D.48)/(D.79) (e.g. ρ = Ω(γ^{1−h})) are asymptotic and
    not checked.

    Shapes: aspect_ratio, rho, lambda_min, lambda_max broadcast.

    Args:
        aspect_ratio: γ = d/n in (0, 1).
        rho: ρ > 0.
        schedule_exponent: α ∈ {0, ½} ∪ [1, ∞) (other values: ValueError, no rate is stated).
        lambda_min, lambda_max: extreme eigenvalues of Σ (0 < λ_min ≤ λ_max); 1 for Σ = I.
    """
    _check.broadcastable(aspect_ratio=aspect_ratio, rho=rho, lambda_min=lambda_min, lambda_max=lambda_max)
    gamma, r = _rate_inputs(aspect_ratio, rho)
    lo, hi = _spectrum_bounds(lambda_min, lambda_max)
    _check.scalar(schedule_exponent=schedule_exponent)
    _check.non_negative(schedule_exponent=schedule_exponent)
    alpha = float(schedule_exponent)
    if 0.0 < alpha < 1.0 and alpha != 0.5:
        raise ValueError("schedule_exponent must be 0, 0.5 or >= 1 (Propositions 5.1-5.2 of arXiv 2505.16329 state "
                         f"no rate for other values); got schedule_exponent={schedule_exponent!r}.")
    L = np.log(1.0 / gamma)
    with np.errstate(over="ignore"):  # (γ/ρ)², not γ²/ρ²: both squares underflow to 0 for tiny γ and ρ
        ratio2 = (gamma / r) ** 2
        if alpha == 0.0:
            first, second = gamma * L, ratio2 * L**2
        elif alpha == 0.5:
            first, second = gamma * L ** (2.0 / 3.0), ratio2 * L ** (4.0 / 3.0)
        else:
            first = alpha * gamma * L ** (1.0 / (1.0 + alpha))
            second = alpha**2 * ratio2 * L ** (2.0 / (1.0 + alpha))
        rate = np.asarray(hi / lo**2 * first + second / lo**2)
    _check.representable(rate, "the rate", aspect_ratio=aspect_ratio, rho=rho, lambda_min=lambda_min,
                         lambda_max=lambda_max)
    return scalar_or_array(rate)


def loglog_rate(*, aspect_ratio: ArrayLike, rho: ArrayLike) -> np.float64 | np.ndarray:
    """Rate (5.17) of arXiv 2505.16329: γ ln ln(1/γ) + (γ²/ρ²)(ln ln(1/γ))².

    **Rate** (constants dropped): Proposition 5.2 with α = ln ln(1/γ) (proof (D.99): the (5.16) expression is at
    most e² times this one). Needs γ < 1/e so that ln ln(1/γ) > 0. Shapes: aspect_ratio and rho broadcast.
    """
    gamma, r = _rate_inputs(aspect_ratio, rho, below=math.exp(-1.0), below_text="1/e (ln ln(1/aspect_ratio) > 0)")
    ll = np.log(np.log(1.0 / gamma))
    with np.errstate(over="ignore"):  # (γ/ρ)², not γ²/ρ²: both squares underflow to 0 for tiny γ and ρ
        rate = np.asarray(gamma * ll + (gamma / r) ** 2 * ll**2)
    _check.representable(rate, "the rate", aspect_ratio=aspect_ratio, rho=rho)
    return scalar_or_array(rate)


def harmonic_rate(*, aspect_ratio: ArrayLike, rho: ArrayLike, lambda_min: ArrayLike = 1.0,
                  lambda_max: ArrayLike = 1.0) -> np.float64 | np.ndarray:
    """Rate of the harmonic schedule, Theorem 2 (arXiv 2505.16329, (5.19) and general form (D.106)).

    **Rate** (constants dropped): (λ_max/λ_min⁴) γ + (1/λ_min⁴) γ²/ρ², an upper bound reached by the construction
    of :func:`theorem2_parameters` under (D.104). For λ_min, λ_max = Θ(1) it matches the minimax lower bound
    Ω(γ + γ²/ρ²) of Theorem 3 (:func:`minimax_lower_bound`). Shapes: all arguments broadcast.
    """
    _check.positive(aspect_ratio=aspect_ratio, rho=rho)
    _check.broadcastable(aspect_ratio=aspect_ratio, rho=rho, lambda_min=lambda_min, lambda_max=lambda_max)
    gamma, r = np.asarray(aspect_ratio, dtype=float), np.asarray(rho, dtype=float)
    lo, hi = _spectrum_bounds(lambda_min, lambda_max)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        rate = np.asarray(hi / lo**4 * gamma + gamma**2 / (lo**4 * r**2))
    _check.representable(rate, "the rate", aspect_ratio=aspect_ratio, rho=rho, lambda_min=lambda_min,
                         lambda_max=lambda_max)
    return scalar_or_array(rate)


def large_clip_rate(*, aspect_ratio: ArrayLike, rho: ArrayLike, clip: ArrayLike) -> np.float64 | np.ndarray:
    """Lower-bound rate (5.12) of arXiv 2505.16329: γ + max(1, c²) γ²/ρ² (the large-clipping penalty).

    **Rate** (constants and poly-log factors dropped: an Ω̃ statement). For α ∈ {0, ½}, if in addition
    ρ/c = Ω(γ^{1−h}) for some h > 0, every tuning has risk Ω̃(γ + max(1, c²)γ²/ρ²): a clipping constant c = ω(1)
    inflates the privacy term by c² (proof at the end of Appendix D.1, (D.78)). Shapes: all arguments broadcast.
    """
    _check.positive(aspect_ratio=aspect_ratio, rho=rho, clip=clip)
    _check.broadcastable(aspect_ratio=aspect_ratio, rho=rho, clip=clip)
    gamma, r, c = (np.asarray(v, dtype=float) for v in (aspect_ratio, rho, clip))
    return scalar_or_array(np.asarray(gamma + np.maximum(1.0, c**2) * gamma**2 / r**2))


# ----------------------------------------------------------------------------------------------------------------
# Theorem 2's explicit construction and Theorem 3's lower-bound curve
# ----------------------------------------------------------------------------------------------------------------


def theorem2_parameters(*, initial_risk: float, label_noise: float, lambda_min: float, lambda_max: float,
                        aspect_ratio: float, rho: float) -> tuple[float, float, float]:
    """Theorem 2's explicit (β, τ, c) for η̃(t) = β/(t + τ) (arXiv 2505.16329, (D.105); exact formula).

    With A = R(0) + ζ²/2 (the smallest constant allowed by "R(0) + ζ²/2 ≤ A"):

    * β = 3√(A + 90)/λ_min (the appendix calls it α),
    * τ = max(9(A + 90)λ_max γ/λ_min², 12√(2(A + 90)) γ/(λ_min ρ)),
    * c = 3√(2(A + 90))/λ_min.

    Under (D.104) these give R(θ^p) = O((λ_max/λ_min⁴)γ + (1/λ_min⁴)γ²/ρ²) (D.106). The proof uses aβ = 3 with
    a = λ_min/√(A + 90), and η̃ ≤ β/τ ≤ 1/(3√90 γ) < 2/γ. The main text says τ scales with max(γ, γ²/ρ²); the
    appendix formula (D.105) used here scales with max(γ, γ/ρ), and names the numerator α instead of β.

    Note: c ≈ 40 for Σ = I (c′ = c/√(2R + ζ²) ≫ 1, μ_c ≈ 1): clipping is essentially *inactive* in this
    construction. It proves the rate with c = O(1), not a benefit of small clipping.

    Worked example (Σ = I, R(0) = 0.5, ζ = 0.3): A = 0.545, β = 28.55, c = 40.37, τ = 1.615 at γ = 1e-3, ρ = 0.1.

    Args:
        initial_risk: R(0) = ½‖Σ^{1/2}θ*‖² ≥ 0.
        label_noise: ζ > 0.
        lambda_min, lambda_max: 0 < λ_min ≤ λ_max (extreme eigenvalues of Σ).
        aspect_ratio: γ > 0.
        rho: ρ > 0.

    Returns:
        ``(harmonic_scale, harmonic_offset, clip)`` = (β, τ, c), floats.
    """
    _check.scalar(initial_risk=initial_risk, label_noise=label_noise, lambda_min=lambda_min, lambda_max=lambda_max,
                  aspect_ratio=aspect_ratio, rho=rho)
    _check.non_negative(initial_risk=initial_risk)
    _check.positive(label_noise=label_noise, aspect_ratio=aspect_ratio, rho=rho)
    lo, hi = (float(v) for v in _spectrum_bounds(lambda_min, lambda_max))
    A = float(initial_risk) + float(label_noise) ** 2 / 2.0
    gamma, r = float(aspect_ratio), float(rho)
    scale = 3.0 * math.sqrt(A + 90.0) / lo
    offset = max(9.0 * (A + 90.0) * hi * gamma / lo**2, 12.0 * math.sqrt(2.0 * (A + 90.0)) * gamma / (lo * r))
    clip = 3.0 * math.sqrt(2.0 * (A + 90.0)) / lo
    return scale, offset, clip


def minimax_lower_bound(*, d: ArrayLike, n: ArrayLike, rho: ArrayLike, label_noise: ArrayLike, lambda_min: ArrayLike,
                        lambda_max: ArrayLike) -> np.float64 | np.ndarray:
    """Minimax lower-bound curve of Theorem 3 with the explicit constants of its proof (arXiv 2505.16329, App. D.4).

    **Lower bound** (label ``lower_bound``; never a privacy guarantee):

        LB = max{ ζ²d/(4λ_max n),  min( ζ²d²/(8n²(e^{ρ²} − 1)),  λ_min/80 ) }.

    * ζ²d/(4λ_max n): the Bayes risk of Lemma D.8 / (D.158) (prior N(0, ζ²/(2λ_max n) I) truncated to the unit
      ball), with its exponentially small correction −4λ_max e^{−c₁d/2} dropped (c₁ is not given). The lemma
      assumes d < n = O(d²).
    * min(...): the tracing-attack bound of Lemmas D.6-D.7 ((D.140), (D.144)-(D.146), with α = 2 in the zCDP
      moment bound): either E‖M − θ*‖² > 1/40, hence E R > λ_min/80, or E R ≥ ζ²d²/(8n²(e^{ρ²} − 1)).

    Every ρ²/2-zCDP estimator has worst-case (over ‖θ*‖ < 1) expected excess risk ≳ LB; the curve is
    Θ(γ + γ²/ρ²) for ρ ≤ 1 and γ²/ρ² = O(1) (5.25), which Theorem 2 attains (:func:`harmonic_rate`).

    Shapes: all arguments broadcast.

    Args:
        d, n: dimension and sample size (positive reals, d < n).
        rho: ρ > 0.
        label_noise: ζ > 0.
        lambda_min, lambda_max: 0 < λ_min ≤ λ_max.
    """
    _check.positive(d=d, n=n, rho=rho, label_noise=label_noise)
    lo, hi = _spectrum_bounds(lambda_min, lambda_max)
    dd, nn, r, z = (np.asarray(v, dtype=float) for v in (d, n, rho, label_noise))
    if np.any(dd >= nn):
        raise ValueError(f"d must be < n (Lemma D.8 of arXiv 2505.16329 assumes d < n); got d={d!r}, n={n!r}.")
    bayes = z**2 * dd / (4.0 * hi * nn)
    with np.errstate(over="ignore"):  # e^{ρ²} − 1 overflows to ∞ for ρ > 26.6: the privacy term is then exactly 0
        privacy = z**2 * dd**2 / (8.0 * nn**2 * np.expm1(r**2))
    return scalar_or_array(np.asarray(np.maximum(bayes, np.minimum(privacy, lo / 80.0))))
