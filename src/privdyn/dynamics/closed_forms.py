"""Closed-form surrogate risks of the dpgd paper: exact solutions of its surrogate risk ODEs.

Bombari, Luo, Seroussi, Mondelli, "High-Dimensional Private Linear Regression with Optimal Rates",
arXiv 2505.16329v2 (equation numbers are the paper's). The proofs of Propositions 5.1-5.2 and Theorem 2 reduce
the risk ODE (4.7) to scalar surrogates, dR/dt = −a η̃ R + b1 η̃² − b2 dη̃²/dt with the constants collected in a, b1,
b2 (for output perturbation (5.7)), and solve them in closed form. Each function here returns that solution (kind
**exact** for the surrogate; as a model of DP-GD its value is a rate, see :mod:`privdyn.dynamics.scaling`, whose
rates come from minimizing these risks over the schedule's parameters):

* :func:`generalized_exponential_integral`: E_β(x) (Lemma D.2), through the upper incomplete gamma function;
* :func:`polynomial_surrogate_risk` (D.89) and its α = 1/2 case :func:`constant_noise_surrogate_risk` (D.54);
* :func:`harmonic_surrogate_risk` (Lemma D.5);
* :func:`output_perturbation_surrogate_risk` ((5.7)-(5.8)).

Names follow ``docs/notation.md``; the surrogate ODE coefficients keep the paper's letters ``a``, ``b1``, ``b2``.
They stay importable from :mod:`privdyn.dynamics.scaling`, where they were defined before.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from privdyn import _check
from privdyn._arrays import scalar_or_array

__all__ = [
    "generalized_exponential_integral",
    "polynomial_surrogate_risk",
    "constant_noise_surrogate_risk",
    "harmonic_surrogate_risk",
    "output_perturbation_surrogate_risk",
]

# Continued fraction for Γ(s, x): iteration cap and stopping threshold (a few ulps).
_CF_MAX_ITER = 5000
_CF_EPS = 4 * np.finfo(float).eps
_TINY = 1e-300


# ----------------------------------------------------------------------------------------------------------------
# Closed-form surrogates: E_β (Lemma D.2), (D.89)/(D.54), Lemma D.5, (5.7)-(5.8)
# ----------------------------------------------------------------------------------------------------------------


def _upper_gamma_cf(s: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Continued fraction of e^x x^{−s} Γ(s, x) (modified Lentz), for x > s + 1 where it converges fast."""
    b = x + 1.0 - s
    c = np.full_like(x, 1.0 / _TINY)
    d = 1.0 / b
    h = d.copy()
    active = np.ones(x.shape, dtype=bool)
    for i in range(1, _CF_MAX_ITER + 1):
        an = -i * (i - s)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        delta = d * c
        h = np.where(active, h * delta, h)
        active &= np.abs(delta - 1.0) > _CF_EPS
        if not active.any():
            break
    else:
        warnings.warn("the continued fraction for the incomplete gamma function did not converge to machine "
                      f"precision in {_CF_MAX_ITER} terms; results may be inaccurate.", RuntimeWarning, stacklevel=3)
    return h


def _log_scaled_upper_gamma(s: Any, x: Any) -> np.ndarray:
    """log(e^x Γ(s, x)) for s > 0 and x ≥ 0 (broadcast): finite for every finite x, no overflow for large x."""
    s, x = np.broadcast_arrays(np.asarray(s, dtype=float), np.asarray(x, dtype=float))
    out = np.empty(s.shape)
    cf = x > s + 1.0
    low = ~cf
    if np.any(low):
        sl, xl = s[low], x[low]
        out[low] = xl + special.gammaln(sl) + np.log(special.gammaincc(sl, xl))
    if np.any(cf):
        sc, xc = s[cf], x[cf]
        out[cf] = sc * np.log(xc) + np.log(_upper_gamma_cf(sc, xc))
    return out


def generalized_exponential_integral(beta: ArrayLike, x: ArrayLike) -> np.float64 | np.ndarray:
    """E_β(x) = ∫₁^∞ e^{−xt} t^{−β} dt = x^{β−1} Γ(1 − β, x) for β < 1 (Lemma D.2 of arXiv 2505.16329, (D.9)).

    **Exact.** Evaluated in log space through e^x Γ(1 − β, x) (scipy's regularized incomplete gamma for
    x ≤ 2 − β, a continued fraction beyond), so it neither overflows for very negative β nor loses accuracy for
    large x (it underflows to 0 like e^{−x}/x; it is +inf only where the value exceeds the float range).
    E_β(0) = +inf for β < 1. Limits and bounds (D.10)-(D.13):
    x^{1−β}E_β(x) → Γ(1−β) as x → 0+, E_β(x) ≤ Γ(1−β)x^{β−1}, and E_β(x) ≤ 2e^{−x}/x if β ≥ 0 or x ≥ −2β.

    Shapes: beta and x broadcast.

    Args:
        beta: β < 1.
        x: x ≥ 0.
    """
    _check.finite(beta=beta)
    _check.less_than(1.0, "1 (the Gamma form needs beta < 1)", beta=beta)
    _check.non_negative(x=x)
    _check.broadcastable(beta=beta, x=x)
    bb, xx = np.broadcast_arrays(np.asarray(beta, dtype=float), np.asarray(x, dtype=float))
    out = np.full(bb.shape, np.inf)
    pos = xx > 0
    if np.any(pos):
        bp, xp = bb[pos], xx[pos]
        with np.errstate(over="ignore"):  # +inf is the correctly rounded value beyond the float range
            out[pos] = np.exp((bp - 1.0) * np.log(xp) - xp + _log_scaled_upper_gamma(1.0 - bp, xp))
    return scalar_or_array(out)


def _surrogate_times(t: Any, *, upper: float | None) -> np.ndarray:
    _check.finite(t=t)
    ts = np.asarray(t, dtype=float)
    if np.any(ts < 0) or (upper is not None and np.any(ts > upper)):
        text = f"[0, {upper:g}]" if upper is not None else "[0, inf)"
        raise ValueError(f"t must be in {text}; got t={t!r}.")
    return ts


def polynomial_surrogate_risk(t: ArrayLike, *, a: float, b1: float, b2: float, schedule_exponent: float,
                              initial_risk: float) -> np.float64 | np.ndarray:
    """Exact solution (D.89) of the polynomial-schedule surrogate ODE (D.83) of arXiv 2505.16329.

    **Exact** solution of dR/dt = −a(1−t)^α R + b1 (1−t)^{2α} + b2 (1−t)^{2α−1}, R(0) = ``initial_risk``.
    With p = 1 + α, A = a/p, u = 1 − t and X = A u^p, (D.89) is

        R(t) = (1/p) e^{−A(1−u^p)} [ R(0) p − b1 e^A E_{−1+1/p}(A) + b1 e^A u^{1+2α} E_{−1+1/p}(X)
                                     + b2 e^A ( u^{2α} E_{(1−α)/p}(X) − E_{(1−α)/p}(A) ) ].

    privdyn evaluates the equivalent form (derived with E_β(x) = x^{β−1}Γ(1−β, x))

        R(t) = R(0) e^{X−A} + (1/p) Σ_j b_j A^{−s_j} e^X (Γ(s_j, X) − Γ(s_j, A)),  s_1 = 2 − 1/p, s_2 = 2α/p,

    with scaled incomplete gamma functions, which is finite at t = 1 (where (D.89) reads 0·∞) and does not
    overflow for large a. In the proofs (Proposition 5.2, D.82) a = C₁vcλ_min, b1 = C₂γ(vc)²λ_max and
    b2 = C₃(vc)²αγ²/ρ² with unspecified constants: as a model of DP-GD the output is a rate, not a value.
    α = ½ is (D.54) (:func:`constant_noise_surrogate_risk`). For α = 0 the private noise is zero (σ̃ = 0; privacy
    enters through the final jump), so b2 must be 0.

    Shapes: t (...) -> (...); the other arguments are scalars.

    Args:
        t: times in [0, 1].
        a: decay coefficient, > 0.
        b1, b2: forcing coefficients, ≥ 0 (b2 = 0 when α = 0).
        schedule_exponent: α ≥ 0.
        initial_risk: R(0) ≥ 0.
    """
    _check.scalar(a=a, b1=b1, b2=b2, schedule_exponent=schedule_exponent, initial_risk=initial_risk)
    _check.positive(a=a)
    _check.non_negative(b1=b1, b2=b2, schedule_exponent=schedule_exponent, initial_risk=initial_risk)
    ts = _surrogate_times(t, upper=1.0)
    alpha = float(schedule_exponent)
    if alpha == 0.0 and b2 != 0.0:
        raise ValueError("b2 must be 0 when schedule_exponent = 0 (the private-noise term (1-t)^(2*alpha-1) of "
                         f"(D.83) vanishes with sigma = 0 for output perturbation); got b2={b2!r}.")
    p = 1.0 + alpha
    A = float(a) / p
    with np.errstate(divide="ignore"):
        log_u = np.log1p(-ts)
    X = A * np.exp(p * log_u)
    X_minus_A = A * np.expm1(p * log_u)  # = −A(1 − u^p), accurate for small t
    decay = np.exp(X_minus_A)
    log_scaled_A = {}

    def bracket(s: float) -> np.ndarray:
        """e^X (Γ(s, X) − Γ(s, A)) = e^X Γ(s, X) − e^{X−A} e^A Γ(s, A)."""
        if s not in log_scaled_A:
            log_scaled_A[s] = float(_log_scaled_upper_gamma(s, A))
        return np.exp(_log_scaled_upper_gamma(s, X)) - decay * math.exp(log_scaled_A[s])

    risk = float(initial_risk) * decay
    if b1 != 0.0:
        s1 = 2.0 - 1.0 / p
        risk = risk + float(b1) * A ** (-s1) * bracket(s1) / p
    if b2 != 0.0:
        s2 = 2.0 * alpha / p
        risk = risk + float(b2) * A ** (-s2) * bracket(s2) / p
    return scalar_or_array(np.asarray(risk))


def constant_noise_surrogate_risk(t: ArrayLike, *, a: float, b1: float, b2: float,
                                  initial_risk: float) -> np.float64 | np.ndarray:
    """Exact solution (D.54) of the α = ½ surrogate dR = −a√(1−t) R + b1 (1−t) + b2 (arXiv 2505.16329).

    **Exact.** The special case α = ½ of :func:`polynomial_surrogate_risk` (D.89): (D.54) with E_{−1/3} and E_{1/3}.
    The main-text surrogate (5.11) is a = v, b1 = v²γ, b2 = v²γ²/ρ² with v = η̃(0)c (constants dropped).
    Shapes: t (...) -> (...).
    """
    return polynomial_surrogate_risk(t, a=a, b1=b1, b2=b2, schedule_exponent=0.5, initial_risk=initial_risk)


def _shifted_decay(x: Any, log_ratio: np.ndarray) -> np.ndarray:
    """(1 − e^{−x L})/x with its limit L at x = 0 (L = log_ratio ≥ 0), evaluated with expm1."""
    if x == 0.0:
        return log_ratio
    return -np.expm1(-x * log_ratio) / x


def harmonic_surrogate_risk(t: ArrayLike, *, a: float, b1: float, b2: float, harmonic_scale: float,
                            harmonic_offset: float, initial_risk: float) -> np.float64 | np.ndarray:
    """Exact solution of Lemma D.5's ODE for η̃(t) = β/(t + τ) (arXiv 2505.16329, (D.100)-(D.101)).

    **Exact** solution of dR/dt = −a η̃ R + b1 η̃² − b2 dη̃²/dt, R(0) = ``initial_risk``. With k = aβ and
    r = (t + τ)/τ, the proof of Theorem 2 gives, for k > 2,

        R(t) = (τ/(t+τ))^k [ R(0) + b1β²((t+τ)^{k−1} − τ^{k−1})/(τ^k(k−1)) + 2b2β²((t+τ)^{k−2} − τ^{k−2})/(τ^k(k−2)) ],

    i.e. R(t) = R(0) r^{−k} + (b1β²/τ)(r^{−1} − r^{−k})/(k − 1) + (2b2β²/τ²)(r^{−2} − r^{−k})/(k − 2). privdyn
    evaluates this last form as r^{−j}(1 − r^{−(k−j)})/(k − j) with expm1, which is the exact solution of the ODE for
    *every* k ≥ 0 [derived: it satisfies the ODE termwise], with the removable singularities k = 1, 2 (limits
    r^{−j} ln r) handled exactly. No quadrature is needed; the tests check k ≤ 2 against quadrature of (D.101).
    In the proof (D.110), a = λ_min/√(A + 90), b1 = λ_max c²γ/2 and b2 = 4c²γ²/ρ², so that k = aβ = 3.

    Shapes: t (...) -> (...); the other arguments are scalars.

    Args:
        t: times ≥ 0.
        a: ≥ 0.
        b1, b2: ≥ 0.
        harmonic_scale: β > 0.
        harmonic_offset: τ > 0.
        initial_risk: R(0) ≥ 0.
    """
    _check.scalar(a=a, b1=b1, b2=b2, harmonic_scale=harmonic_scale, harmonic_offset=harmonic_offset,
                  initial_risk=initial_risk)
    _check.non_negative(a=a, b1=b1, b2=b2, initial_risk=initial_risk)
    _check.positive(harmonic_scale=harmonic_scale, harmonic_offset=harmonic_offset)
    ts = _surrogate_times(t, upper=None)
    beta, tau = float(harmonic_scale), float(harmonic_offset)
    k = float(a) * beta
    L = np.log1p(ts / tau)  # ln r
    risk = float(initial_risk) * np.exp(-k * L)
    risk = risk + float(b1) * beta**2 / tau * np.exp(-L) * _shifted_decay(k - 1.0, L)
    risk = risk + 2.0 * float(b2) * beta**2 / tau**2 * np.exp(-2.0 * L) * _shifted_decay(k - 2.0, L)
    return scalar_or_array(np.asarray(risk))


def output_perturbation_surrogate_risk(*, initial_risk: ArrayLike, initial_learning_rate: ArrayLike, clip: ArrayLike,
                                       aspect_ratio: ArrayLike, rho: ArrayLike) -> np.float64 | np.ndarray:
    """Surrogate final private risk of output perturbation (α = 0), (5.7)-(5.8) of arXiv 2505.16329.

    **Exact** for the surrogate: with v = η̃(0)c, (5.7) dR = −vR dt + v²γ dt has R(1) = (R(0) − γv)e^{−v} + γv, and
    the final-step noise adds v²γ²/ρ² (Proposition 4.4 with constants dropped), so the value is

        (R(0) − γv) e^{−v} + γv + v²γ²/ρ².

    As a model of DP-GD it is a **rate** (constants dropped, c = O(1)); minimizing over v gives v ≈ ln(1/γ) and the
    rate of Proposition 5.1. Shapes: all arguments broadcast.
    """
    _check.non_negative(initial_risk=initial_risk)
    _check.positive(initial_learning_rate=initial_learning_rate, clip=clip, aspect_ratio=aspect_ratio, rho=rho)
    _check.broadcastable(initial_risk=initial_risk, initial_learning_rate=initial_learning_rate, clip=clip,
                         aspect_ratio=aspect_ratio, rho=rho)
    r0, eta0, c, gamma, r = (np.asarray(x, dtype=float) for x in
                             (initial_risk, initial_learning_rate, clip, aspect_ratio, rho))
    v = eta0 * c
    return scalar_or_array(np.asarray((r0 - gamma * v) * np.exp(-v) + gamma * v + v**2 * gamma**2 / r**2))
