"""The optimization and population risk bounds of Wang, Schuchardt, Kalinin, et al., arXiv 2605.12648: Theorems 4.1,
5.2, D.14, D.16 and E.1, with their conditions."""

from __future__ import annotations

import math
from typing import Any

from privdyn import _check
from privdyn.bounds.kan.common import (
    _PAPER,
    Condition,
    HiddenConstants,
    KanConstants,
    RiskBound,
    _batch,
    _constants,
    _correlation,
    _hidden,
    _int,
    _margin,
    _nonneg,
    _pos,
    _prob,
)
from privdyn.bounds.kan.constants import explicit_constant_conditions, gradient_bound
from privdyn.privacy.labels import Guarantee

__all__ = [
    "a_corr", "a_non", "a_van", "optimization_bound_correlated", "optimization_bound_independent",
    "optimization_bound_nonprivate", "population_bound_correlated", "population_bound_independent",
    "population_bound_nonprivate", "projection_radius_choice"
]


# ---------------------------------------------------------------------------------------------------------------
# rates with hidden constants
# ---------------------------------------------------------------------------------------------------------------


def a_corr(*, d: int, width: int, num_steps: int, step_size: float, batch_size: int, noise_multiplier: float,
           noise_correlation: float, ntk_margin: float, num_basis: int = 1, constant: float = 1.0) -> float:
    """A_corr of Theorem 4.1 (correlated noise), times ``constant``:

        1/(gamma^2 eta T) + 1/(gamma sqrt(B T)) + eta (1/B + 1/T) + (1-lambda) kappa / (B sqrt T)
        * (1/gamma + eta sqrt(m d) / sqrt B) + ((1-lambda)^2 + lambda^2 eta) eta kappa^2 m d / B^2.

    The paper writes ``m d`` where the noise dimension is ``m d p`` (p is treated as a constant): ``num_basis=1`` keeps
    the paper's form, ``num_basis=p`` uses ``m d p``. Theorem C.13 adds a ``polylog(nT/delta)`` factor, absorbed in
    ``constant``. Accepts ``lambda in [0, 1)`` and ``kappa >= 0`` (the formula; the theorem needs both > 0).

    Source: Wang et al., arXiv 2605.12648v1, Theorem 4.1 (= Theorem C.13).
    """
    dd = _int("d", d)
    m = _int("width", width)
    t = _int("num_steps", num_steps)
    eta = _pos("step_size", step_size)
    b = _int("batch_size", batch_size)
    kappa = _nonneg("noise_multiplier", noise_multiplier)
    lam = _correlation(noise_correlation, open_left=False)
    gam = _margin(ntk_margin)
    md = m * dd * _int("num_basis", num_basis)
    cst = _pos("constant", constant)
    return cst * (1.0 / (gam**2 * eta * t) + 1.0 / (gam * math.sqrt(b * t)) + eta * (1.0 / b + 1.0 / t)
                  + (1.0 - lam) * kappa / (b * math.sqrt(t)) * (1.0 / gam + eta * math.sqrt(md) / math.sqrt(b))
                  + ((1.0 - lam) ** 2 + lam**2 * eta) * eta * kappa**2 * md / b**2)


def a_van(*, n: int, d: int, width: int, num_steps: int, step_size: float, batch_size: int, noise_multiplier: float,
          ntk_margin: float, failure_prob: float, num_basis: int = 1, constant: float = 1.0) -> float:
    """A_van of Theorem D.14 (independent noise, lambda = 0), times ``constant``; with ``L = log(1/delta)``,
    ``l_n = log(n/delta)``:

        (log^2 T + l_n)/(gamma^2 eta T) + L (log T + sqrt l_n)/(gamma sqrt(B T))
        + L (log T + sqrt l_n) kappa / (gamma B sqrt T) + eta L (1/B + L/T) + eta m d L^2 kappa^2 / B^2.

    ``delta`` is ``failure_prob``; ``num_basis`` as in :func:`a_corr`.

    Source: Wang et al., arXiv 2605.12648v1, Theorem D.14.
    """
    nn = _int("n", n)
    dd = _int("d", d)
    m = _int("width", width)
    t = _int("num_steps", num_steps)
    eta = _pos("step_size", step_size)
    b = _batch(batch_size, nn)
    kappa = _nonneg("noise_multiplier", noise_multiplier)
    gam = _margin(ntk_margin)
    dl = _prob("failure_prob", failure_prob)
    md = m * dd * _int("num_basis", num_basis)
    cst = _pos("constant", constant)
    big_l, lt, ln = math.log(1.0 / dl), math.log(t), math.log(nn / dl)
    rad = lt + math.sqrt(ln)
    return cst * ((lt**2 + ln) / (gam**2 * eta * t) + big_l * rad / (gam * math.sqrt(b * t))
                  + big_l * rad * kappa / (gam * b * math.sqrt(t)) + eta * big_l * (1.0 / b + big_l / t)
                  + eta * md * big_l**2 * kappa**2 / b**2)


def a_non(*, num_steps: int, step_size: float, batch_size: int, ntk_margin: float, constant: float = 1.0) -> float:
    """A_non = 1/(gamma^2 eta T) + 1/(gamma sqrt(B T)) + eta / B of Theorem E.1 (non-private), times ``constant``.

    Source: Wang et al., arXiv 2605.12648v1, Theorem E.1.
    """
    t = _int("num_steps", num_steps)
    eta = _pos("step_size", step_size)
    b = _int("batch_size", batch_size)
    gam = _margin(ntk_margin)
    cst = _pos("constant", constant)
    return cst * (1.0 / (gam**2 * eta * t) + 1.0 / (gam * math.sqrt(b * t)) + eta / b)


def projection_radius_choice(*, num_steps: int, n: int, ntk_margin: float, failure_prob: float,
                             constant: float = 1.0) -> float:
    """``R* = constant * (log T + sqrt(log(n / delta))) / gamma`` (Theorems 4.1, D.14: ``R* ≍ ...``).

    Source: Wang et al., arXiv 2605.12648v1, Theorems 4.1 and D.14.
    """
    t = _int("num_steps", num_steps)
    nn = _int("n", n)
    gam = _margin(ntk_margin)
    dl = _prob("failure_prob", failure_prob)
    return _pos("constant", constant) * (math.log(t) + math.sqrt(math.log(nn / dl))) / gam


def _stability_width_correlated(m: int, *, n: int, num_steps: int, step_size: float, batch_size: int,
                                optimization: float, projection_radius: float, failure_prob: float,
                                constant: float) -> float:
    # Theorem 5.2: m ≳ R*^2 log(m/delta) eta^2 (T A + (log(n/delta) + R*)(sqrt(T log(1/delta)/B) + log(1/delta)))^2
    lg = math.log(1.0 / failure_prob)
    inner = (num_steps * optimization + (math.log(n / failure_prob) + projection_radius)
             * (math.sqrt(num_steps * lg / batch_size) + lg))
    return (constant * projection_radius**2 * math.log(m / failure_prob) * step_size**2 * inner**2)


def _stability_width_plain(m: int, *, n: int, num_steps: int, step_size: float, batch_size: int,
                           optimization: float, failure_prob: float, constant: float) -> float:
    # Theorems D.15/D.16 and E.1: m ≳ log(m/delta) eta^2 (T^2 A^2 + log(n/delta) log^2(1/delta) (T/B + 1))
    lg = math.log(1.0 / failure_prob)
    return constant * math.log(m / failure_prob) * step_size**2 * (
        (num_steps * optimization) ** 2 + math.log(n / failure_prob) * lg**2 * (num_steps / batch_size + 1.0))


def _ntk_width(m: int, *, n: int, num_steps: int, ntk_margin: float, failure_prob: float, constant: float) -> float:
    # Theorems D.14 / E.1 (Lemma C.12 with R* ≍ tau): m ≳ log(m/delta) (log^4 T + log^2(n/delta)) / gamma^4
    return constant * math.log(m / failure_prob) * (math.log(num_steps) ** 4 + math.log(n / failure_prob) ** 2) \
        / ntk_margin**4


def _common(constants: Any, n: Any, num_steps: Any, step_size: Any, batch_size: Any, ntk_margin: Any,
            failure_prob: Any, width: Any) -> tuple[KanConstants, int, int, float, int, float, float, int]:
    k = _constants(constants)
    nn = _int("n", n)
    return (k, nn, _int("num_steps", num_steps), _pos("step_size", step_size), _batch(batch_size, nn),
            _margin(ntk_margin), _prob("failure_prob", failure_prob), _int("width", width))


def _clip_condition(k: KanConstants, clip: Any, m: int, dl: float) -> tuple[Condition, ...]:
    if clip is None:
        return ()
    g = gradient_bound(k, width=m, failure_prob=dl)
    return (Condition.at_most("clipping_inactive", g, _pos("clip", clip), f"{_PAPER}, eq. (5): clip >= G_delta"),)


def _theorem_4_1_conditions(k: KanConstants, *, d: int, m: int, t: int, eta: float, b: int, kappa: float,
                            lam: float, gam: float, p_noise: int, hc: HiddenConstants) -> tuple[Condition, ...]:
    src = f"{_PAPER}, Theorem 4.1"
    step_lhs = (eta * gam * math.sqrt(t) * (1.0 / math.sqrt(b) + kappa * (1.0 - lam) / b)
                + eta**2 * gam**2 * (t / b + 1.0))
    upper = hc.width_upper * b**2 / (eta**2 * kappa**2 * gam**2 * d * p_noise) * min(
        1.0, 1.0 / (t * ((1.0 - lam) ** 2 + lam**2 * eta)))
    return (
        Condition.at_most("step_size", eta, k.max_step_size, f"{src}: eta <= 1/(12 C p^3)"),
        Condition.at_most("step_size_theorem_4_1", step_lhs, hc.step_size, src),
        Condition.at_most("width_lower", hc.width_lower / gam**4, m, src),
        Condition.at_most("width_upper", m, upper, src),
    )


def _optimization_bound(k: KanConstants, *, value: float, own: tuple[Condition, ...], clip: Any, m: int, dl: float,
                        source: str) -> RiskBound:
    """The skeleton of Theorems 4.1, D.14 and E.1 (first part): the averaged optimization risk ``value`` with the
    theorem's ``own`` conditions, then ``clipping_inactive`` (when ``clip`` is given) and the explicit-constant
    conditions; label ``surrogate``."""
    conditions = (*own, *_clip_condition(k, clip, m, dl), *explicit_constant_conditions(width=m, failure_prob=dl))
    return RiskBound(value=value, quantity="optimization_risk", conditions=conditions, failure_prob=dl,
                     guarantee=Guarantee.SURROGATE, terms={"optimization": value}, source=source)


def _population_bound(optimization: RiskBound, *, own: int, value: float, stability_width: float, m: int,
                      dl: float, terms: dict[str, float], theorem: str, source: str) -> RiskBound:
    """The skeleton of Theorems 5.2, D.16 and E.1 (last part): the population risk ``value`` with the conditions of
    the ``optimization`` bound, the stability width condition ``m >= stability_width`` (from ``theorem``) placed
    after its ``own`` first conditions; label ``surrogate``."""
    conditions = (*optimization.conditions[:own],
                  Condition.at_most("stability_width", stability_width, m, f"{_PAPER}, {theorem}"),
                  *optimization.conditions[own:])
    return RiskBound(value=value, quantity="population_risk", conditions=conditions, failure_prob=dl,
                     guarantee=Guarantee.SURROGATE, terms=terms, source=source)


def optimization_bound_correlated(constants: KanConstants, *, d: int, width: int, num_steps: int,
                                  step_size: float, batch_size: int, noise_multiplier: float,
                                  noise_correlation: float, ntk_margin: float, failure_prob: float,
                                  clip: float | None = None, include_num_basis: bool = False,
                                  hidden_constants: HiddenConstants | None = None) -> RiskBound:
    """Theorem 4.1 (averaged optimization risk, correlated noise, 0 < lambda < 1, kappa > 0) with its conditions.

    Wang et al. (arXiv 2605.12648v1), Theorem 4.1: with probability ``>= 1 - failure_prob`` over the initialization
    and the algorithm, ``(1/T) sum_{t<T} L_S(W_t) ≲ A_corr`` (:func:`a_corr`, times ``hidden.risk``). Conditions
    (``≲``, ``Õ``, ``Ω̃`` with :class:`HiddenConstants`, polylogs absorbed):

    * ``step_size``: ``eta <= 1/(12 C p^3)``;
    * ``step_size_theorem_4_1``: ``eta gamma sqrt T (1/sqrt B + kappa (1-lambda)/B) + eta^2 gamma^2 (T/B + 1)
      <= hidden.step_size``;
    * the two-sided width range: ``width_lower``: ``m >= hidden.width_lower / gamma^4`` and ``width_upper``:
      ``m <= hidden.width_upper B^2 / (eta^2 kappa^2 gamma^2 d) min{1, 1/(T ((1-lambda)^2 + lambda^2 eta))}``;
    * ``clipping_inactive`` (when ``clip`` is given): ``clip >= G_delta``;
    * the explicit-constant conditions of :func:`explicit_constant_conditions`.

    With ``include_num_basis`` the noise dimension is ``m d p`` instead of the paper's ``m d`` (also in the upper
    width bound). Label ``surrogate``.
    """
    k = _constants(constants)
    dd, m = _int("d", d), _int("width", width)
    t, eta, b = _int("num_steps", num_steps), _pos("step_size", step_size), _int("batch_size", batch_size)
    kappa = _pos("noise_multiplier", noise_multiplier)
    lam = _correlation(noise_correlation, open_left=True)
    gam, dl = _margin(ntk_margin), _prob("failure_prob", failure_prob)
    hc = _hidden(hidden_constants)
    p_noise = k.num_basis if include_num_basis else 1
    opt = a_corr(d=dd, width=m, num_steps=t, step_size=eta, batch_size=b, noise_multiplier=kappa,
                 noise_correlation=lam, ntk_margin=gam, num_basis=p_noise, constant=hc.risk)
    own = _theorem_4_1_conditions(k, d=dd, m=m, t=t, eta=eta, b=b, kappa=kappa, lam=lam, gam=gam, p_noise=p_noise,
                                  hc=hc)
    return _optimization_bound(k, value=opt, own=own, clip=clip, m=m, dl=dl, source=f"{_PAPER}, Theorem 4.1")


def population_bound_correlated(constants: KanConstants, *, n: int, d: int, width: int, num_steps: int,
                                step_size: float, batch_size: int, noise_multiplier: float, noise_correlation: float,
                                ntk_margin: float, failure_prob: float, projection_radius: float | None = None,
                                clip: float | None = None, form: str = "main", include_num_basis: bool = False,
                                hidden_constants: HiddenConstants | None = None) -> RiskBound:
    """Theorem 5.2 (population risk, correlated noise, 0 < lambda < 1), with the conditions of Theorems 4.1, 5.2.

    Wang et al. (arXiv 2605.12648v1), Theorem 5.2 (``form="main"``):

        (1/T) sum_t E L(W_t) ≲ (1 + eta T / n) (A_corr + (sqrt m + R*) delta),

    or its appendix restatement Theorem C.23 (``form="appendix"``):
    ``(1 + eta T log(1/delta) / n) (A_corr + log(n/delta) (sqrt m + R*) delta)``; ``delta`` is ``failure_prob``.
    ``A_corr`` (:func:`a_corr`) is in ``terms["optimization"]``. Conditions: those of
    :func:`optimization_bound_correlated` and the stability width condition ``stability_width``: ``m >=
    hidden.stability_width R*^2 log(m/delta) eta^2 (T A_corr + (log(n/delta) + R*) (sqrt(T log(1/delta)/B)
    + log(1/delta)))^2``. ``projection_radius`` defaults to :func:`projection_radius_choice` with
    ``hidden.projection_radius``. Label ``surrogate``.
    """
    _check.one_of(("main", "appendix"), form=form)
    nn = _int("n", n)
    b = _batch(batch_size, nn)
    hc = _hidden(hidden_constants)
    opt_bound = optimization_bound_correlated(
        constants, d=d, width=width, num_steps=num_steps, step_size=step_size, batch_size=b,
        noise_multiplier=noise_multiplier, noise_correlation=noise_correlation, ntk_margin=ntk_margin,
        failure_prob=failure_prob, clip=clip, include_num_basis=include_num_basis, hidden_constants=hc)
    m, t, eta = int(width), int(num_steps), float(step_size)
    gam, dl = float(ntk_margin), float(failure_prob)
    r_star = (projection_radius_choice(num_steps=t, n=nn, ntk_margin=gam, failure_prob=dl,
                                       constant=hc.projection_radius)
              if projection_radius is None else _pos("projection_radius", projection_radius))
    opt = opt_bound.value
    if form == "main":
        factor, tail = 1.0 + eta * t / nn, (math.sqrt(m) + r_star) * dl
    else:
        factor = 1.0 + eta * t * math.log(1.0 / dl) / nn
        tail = math.log(nn / dl) * (math.sqrt(m) + r_star) * dl
    value = factor * (opt + hc.risk * tail)
    stab = _stability_width_correlated(m, n=nn, num_steps=t, step_size=eta, batch_size=b, optimization=opt,
                                       projection_radius=r_star, failure_prob=dl, constant=hc.stability_width)
    terms = {"optimization": opt, "generalization_factor": factor, "failure_tail": tail,
             "projection_radius": r_star}
    source = f"{_PAPER}, Theorem 5.2" if form == "main" else f"{_PAPER}, Theorem C.23 (= Theorem 5.2)"
    return _population_bound(opt_bound, own=4, value=value, stability_width=stab, m=m, dl=dl, terms=terms,
                             theorem="Theorem 5.2", source=source)


def optimization_bound_independent(constants: KanConstants, *, n: int, d: int, width: int, num_steps: int,
                                   step_size: float, batch_size: int, noise_multiplier: float, ntk_margin: float,
                                   failure_prob: float, clip: float | None = None, include_num_basis: bool = False,
                                   hidden_constants: HiddenConstants | None = None) -> RiskBound:
    """Theorem D.14 (averaged optimization risk, independent noise, lambda = 0) with its conditions.

    Wang et al. (arXiv 2605.12648v1), Theorem D.14: ``(1/T) sum_{t<T} L_S(W_t) ≲ A_van`` (:func:`a_van`, times
    ``hidden.risk``), ``delta = failure_prob``. Conditions: ``step_size`` (``eta <= 1/(12 C p^3)``);
    ``width_theorem_d14``: ``m >= hidden.width_lower max{log(m/delta) (log^4 T + log^2(n/delta)) / gamma^4,
    log(nT/delta) / (T d)}``; optional ``clipping_inactive``; the explicit-constant conditions. Label ``surrogate``.
    """
    k, nn, t, eta, b, gam, dl, m = _common(constants, n, num_steps, step_size, batch_size, ntk_margin,
                                           failure_prob, width)
    dd = _int("d", d)
    kappa = _nonneg("noise_multiplier", noise_multiplier)
    hc = _hidden(hidden_constants)
    p_noise = k.num_basis if include_num_basis else 1
    opt = a_van(n=nn, d=dd, width=m, num_steps=t, step_size=eta, batch_size=b, noise_multiplier=kappa,
                ntk_margin=gam, failure_prob=dl, num_basis=p_noise, constant=hc.risk)
    d14 = hc.width_lower * max(_ntk_width(m, n=nn, num_steps=t, ntk_margin=gam, failure_prob=dl, constant=1.0),
                               math.log(nn * t / dl) / (t * dd))
    own = (Condition.at_most("step_size", eta, k.max_step_size, f"{_PAPER}, Theorem D.14: eta <= 1/(12 C p^3)"),
           Condition.at_most("width_theorem_d14", d14, m, f"{_PAPER}, Theorem D.14"))
    return _optimization_bound(k, value=opt, own=own, clip=clip, m=m, dl=dl, source=f"{_PAPER}, Theorem D.14")


def population_bound_independent(constants: KanConstants, *, n: int, d: int, width: int, num_steps: int,
                                 step_size: float, batch_size: int, noise_multiplier: float, ntk_margin: float,
                                 failure_prob: float, clip: float | None = None, include_num_basis: bool = False,
                                 hidden_constants: HiddenConstants | None = None) -> RiskBound:
    """Theorem D.16 (population risk, independent noise, lambda = 0), with the conditions of Theorems D.14, D.16.

    Wang et al. (arXiv 2605.12648v1), Theorem D.16, with ``delta = failure_prob``:

        (1/T) sum_t E L(W_t) ≲ (1 + eta T log(1/delta) / n) (A_van + delta sqrt(log(n/delta)))
                                + sqrt(log(1/delta)) (log T + sqrt(log(n/delta))) delta / gamma.

    Conditions: those of :func:`optimization_bound_independent` and ``stability_width``: ``m >=
    hidden.stability_width log(m/delta) eta^2 (T^2 A_van^2 + log(n/delta) log^2(1/delta) (T/B + 1))``
    (Theorems D.15/D.16). Label ``surrogate``.
    """
    hc = _hidden(hidden_constants)
    opt_bound = optimization_bound_independent(
        constants, n=n, d=d, width=width, num_steps=num_steps, step_size=step_size, batch_size=batch_size,
        noise_multiplier=noise_multiplier, ntk_margin=ntk_margin, failure_prob=failure_prob, clip=clip,
        include_num_basis=include_num_basis, hidden_constants=hc)
    nn, m, t, eta, b = int(n), int(width), int(num_steps), float(step_size), int(batch_size)
    gam, dl = float(ntk_margin), float(failure_prob)
    opt = opt_bound.value
    lg, ln = math.log(1.0 / dl), math.log(nn / dl)
    factor = 1.0 + eta * t * lg / nn
    tail = math.sqrt(lg) * (math.log(t) + math.sqrt(ln)) * dl / gam
    value = factor * (opt + hc.risk * dl * math.sqrt(ln)) + hc.risk * tail
    stab = _stability_width_plain(m, n=nn, num_steps=t, step_size=eta, batch_size=b, optimization=opt,
                                  failure_prob=dl, constant=hc.stability_width)
    terms = {"optimization": opt, "generalization_factor": factor, "failure_tail": tail}
    return _population_bound(opt_bound, own=2, value=value, stability_width=stab, m=m, dl=dl, terms=terms,
                             theorem="Theorem D.16", source=f"{_PAPER}, Theorem D.16")


def optimization_bound_nonprivate(constants: KanConstants, *, n: int, width: int, num_steps: int, step_size: float,
                                  batch_size: int, ntk_margin: float, failure_prob: float, clip: float | None = None,
                                  hidden_constants: HiddenConstants | None = None) -> RiskBound:
    """Theorem E.1, first part (averaged optimization risk, non-private mini-batch SGD) with its conditions.

    Wang et al. (arXiv 2605.12648v1), Theorem E.1: ``(1/T) sum_{t<T} L_S(W_t) ≲ A_non`` (:func:`a_non`, times
    ``hidden.risk``). Conditions: ``step_size`` (``eta <= 1/(12 C p^3)``); ``width_theorem_e1``: ``m >=
    hidden.width_lower log(m/delta) (log^4 T + log^2(n/delta)) / gamma^4``; optional ``clipping_inactive``; the
    explicit-constant conditions. ``n`` enters the width condition only. Label ``surrogate``.
    """
    k, nn, t, eta, b, gam, dl, m = _common(constants, n, num_steps, step_size, batch_size, ntk_margin,
                                           failure_prob, width)
    hc = _hidden(hidden_constants)
    opt = a_non(num_steps=t, step_size=eta, batch_size=b, ntk_margin=gam, constant=hc.risk)
    e1 = _ntk_width(m, n=nn, num_steps=t, ntk_margin=gam, failure_prob=dl, constant=hc.width_lower)
    own = (Condition.at_most("step_size", eta, k.max_step_size, f"{_PAPER}, Theorem E.1: eta <= 1/(12 C p^3)"),
           Condition.at_most("width_theorem_e1", e1, m, f"{_PAPER}, Theorem E.1"))
    return _optimization_bound(k, value=opt, own=own, clip=clip, m=m, dl=dl, source=f"{_PAPER}, Theorem E.1")


def population_bound_nonprivate(constants: KanConstants, *, n: int, width: int, num_steps: int, step_size: float,
                                batch_size: int, ntk_margin: float, failure_prob: float, clip: float | None = None,
                                hidden_constants: HiddenConstants | None = None) -> RiskBound:
    """Theorem E.1, last part (population risk, non-private mini-batch SGD, kappa = 0), with its conditions.

    Wang et al. (arXiv 2605.12648v1), Theorem E.1, with ``delta = failure_prob``:

        (1/T) sum_t E L(W_t) ≲ (1 + eta T / n) (A_non + delta) + delta / gamma.

    Conditions: those of :func:`optimization_bound_nonprivate` and ``stability_width``: ``m >=
    hidden.stability_width log(m/delta) eta^2 (T^2 A_non^2 + log(n/delta) log^2(1/delta) (T/B + 1))``. Label
    ``surrogate``.
    """
    hc = _hidden(hidden_constants)
    opt_bound = optimization_bound_nonprivate(constants, n=n, width=width, num_steps=num_steps, step_size=step_size,
                                              batch_size=batch_size, ntk_margin=ntk_margin,
                                              failure_prob=failure_prob, clip=clip, hidden_constants=hc)
    nn, m, t, eta, b = int(n), int(width), int(num_steps), float(step_size), int(batch_size)
    gam, dl = float(ntk_margin), float(failure_prob)
    opt = opt_bound.value
    factor = 1.0 + eta * t / nn
    value = factor * (opt + hc.risk * dl) + hc.risk * dl / gam
    stab = _stability_width_plain(m, n=nn, num_steps=t, step_size=eta, batch_size=b, optimization=opt,
                                  failure_prob=dl, constant=hc.stability_width)
    terms = {"optimization": opt, "generalization_factor": factor, "failure_tail": dl / gam}
    return _population_bound(opt_bound, own=2, value=value, stability_width=stab, m=m, dl=dl, terms=terms,
                             theorem="Theorem E.1", source=f"{_PAPER}, Theorem E.1")
