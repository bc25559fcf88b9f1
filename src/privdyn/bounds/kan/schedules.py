"""The schedules of Corollaries 5.3, 5.5 and 5.6 of Wang, Schuchardt, Kalinin, et al., arXiv 2605.12648."""

from __future__ import annotations

import math
from collections.abc import Callable

from privdyn import _check
from privdyn.bounds.kan.common import (
    _PAPER,
    Condition,
    HiddenConstants,
    KanConstants,
    RiskBound,
    Schedule,
    _batch,
    _constants,
    _correlation,
    _hidden,
    _int,
    _margin,
    _pos,
    _prob,
)
from privdyn.bounds.kan.constants import gradient_bound
from privdyn.bounds.kan.rates import (
    _ntk_width,
    _stability_width_correlated,
    _stability_width_plain,
    a_corr,
    a_non,
    a_van,
    population_bound_correlated,
    population_bound_independent,
    population_bound_nonprivate,
    projection_radius_choice,
)
from privdyn.privacy.labels import Guarantee

__all__ = ["schedule_corollary_5_3", "schedule_corollary_5_5", "schedule_corollary_5_6"]


# ---------------------------------------------------------------------------------------------------------------
# corollary schedules
# ---------------------------------------------------------------------------------------------------------------

_MAX_WIDTH = 10**15


def _smallest_width(required: Callable[[int], float], what: str) -> int:
    """The smallest integer m >= 1 with ``m >= required(m)``, for ``required`` non-decreasing in m.

    The iteration ``m <- ceil(required(m))`` from m = 1 is non-decreasing and stops at the smallest fixed point.
    """
    m = 1
    for _ in range(10_000):
        need = required(m)
        if not math.isfinite(need) or need > _MAX_WIDTH:
            break
        if need <= m:
            return m
        m = max(m + 1, math.ceil(need))
    raise ValueError(f"no width up to {_MAX_WIDTH:.0e} satisfies {what}; the schedule's parameters leave no "
                     "admissible width (take a larger n or smaller hidden constants).")


def _schedule_conditions(corollary: tuple[Condition, ...], bound: RiskBound) -> tuple[Condition, ...]:
    return corollary + bound.conditions


def schedule_corollary_5_3(constants: KanConstants, *, n: int, d: int, epsilon: float, delta: float,
                           ntk_margin: float, noise_correlation: float, failure_prob: float,
                           batch_fraction: float = 0.5, step_size: float | None = None,
                           num_steps_constant: float = 1.0, privacy_constant: float = 8.0,
                           include_num_basis: bool = False,
                           hidden_constants: HiddenConstants | None = None) -> Schedule:
    """The parameters of Corollary 5.3 (correlated noise, 0 < lambda < 1) and the Theorem 5.2 bound they give.

    Wang et al. (arXiv 2605.12648v1), Corollary 5.3 (= C.24):

    * ``B = round(rho n)`` with ``rho = batch_fraction``;
    * ``T = max(1, round(num_steps_constant * min{sqrt n / gamma, n eps gamma^2 / sqrt d}))``;
    * ``kappa`` from Theorem 5.1 = F.12 (:func:`privdyn.privacy.correlated_calibration.noise_multiplier_theorem_f12`
      with ``privacy_constant`` 8 as stated or 2 as proved; needs ``epsilon <= 1`` and ``r T >= 3 ln(2/delta)``);
    * ``eta ≍ 1``: ``step_size`` if given, else the largest step the theorem allows, ``1/(12 C p^3)`` (the paper's
      ``eta ≍ 1`` and ``eta <= 1/(12 C p^3)`` agree only once the constants are absorbed);
    * ``m ≍ polylog(n/delta) / gamma^6``: the smallest width that satisfies the lower width conditions of Theorems
      4.1 and 5.2 (``width_lower`` and ``stability_width``) with the given hidden constants;
    * ``clip = G_delta`` (``C_clip ≍ G_delta``, the smallest clip that is never active);
    * ``R*`` from :func:`projection_radius_choice`.

    The rate is ``1/(gamma sqrt n) + sqrt d / (gamma^4 n eps)``. Conditions: the corollary's
    ``failure_prob_corollary`` (``delta_fail <= min{1/(n sqrt m), gamma/n}``) and every condition of Theorem 5.2.
    ``delta`` is the DP parameter, ``failure_prob`` the failure probability of the risk bound.
    """
    from privdyn.privacy.correlated_calibration import noise_multiplier_theorem_f12

    k = _constants(constants)
    nn, dd = _int("n", n), _int("d", d)
    eps = _pos("epsilon", epsilon)
    dp_delta = _check.delta(delta)
    gam = _margin(ntk_margin)
    lam = _correlation(noise_correlation, open_left=True)
    dl = _prob("failure_prob", failure_prob)
    _check.scalar(batch_fraction=batch_fraction)
    _check.in_range(0.0, 1.0, closed="neither", batch_fraction=batch_fraction)
    ct = _pos("num_steps_constant", num_steps_constant)
    hc = _hidden(hidden_constants)
    eta = k.max_step_size if step_size is None else _pos("step_size", step_size)
    b = min(nn, max(1, round(float(batch_fraction) * nn)))
    t = max(1, round(ct * min(math.sqrt(nn) / gam, nn * eps * gam**2 / math.sqrt(dd))))
    noise = noise_multiplier_theorem_f12(lam, n=nn, batch_size=b, num_steps=t, epsilon=eps, delta=dp_delta,
                                         constant=privacy_constant)
    kappa = float(noise)
    r_star = projection_radius_choice(num_steps=t, n=nn, ntk_margin=gam, failure_prob=dl,
                                      constant=hc.projection_radius)
    p_noise = k.num_basis if include_num_basis else 1

    def required(m: int) -> float:
        opt = a_corr(d=dd, width=m, num_steps=t, step_size=eta, batch_size=b, noise_multiplier=kappa,
                     noise_correlation=lam, ntk_margin=gam, num_basis=p_noise, constant=hc.risk)
        stab = _stability_width_correlated(m, n=nn, num_steps=t, step_size=eta, batch_size=b, optimization=opt,
                                           projection_radius=r_star, failure_prob=dl, constant=hc.stability_width)
        return max(hc.width_lower / gam**4, stab)

    m = _smallest_width(required, "the width conditions of Theorems 4.1 and 5.2")
    clip = gradient_bound(k, width=m, failure_prob=dl)
    bound = population_bound_correlated(k, n=nn, d=dd, width=m, num_steps=t, step_size=eta, batch_size=b,
                                        noise_multiplier=kappa, noise_correlation=lam, ntk_margin=gam,
                                        failure_prob=dl, projection_radius=r_star, clip=clip,
                                        include_num_basis=include_num_basis, hidden_constants=hc)
    src = f"{_PAPER}, Corollary 5.3"
    own = (Condition.at_most("failure_prob_corollary", dl, min(1.0 / (nn * math.sqrt(m)), gam / nn), src),)
    rate = 1.0 / (gam * math.sqrt(nn)) + math.sqrt(dd) / (gam**4 * nn * eps)
    return Schedule(batch_size=b, num_steps=t, step_size=eta, width=m, noise_multiplier=kappa, clip=clip,
                    projection_radius=r_star, noise_guarantee=noise.guarantee, rate=rate, bound=bound,
                    conditions=_schedule_conditions(own, bound), source=src)


def schedule_corollary_5_5(constants: KanConstants, *, n: int, d: int, epsilon: float, delta: float,
                           ntk_margin: float, failure_prob: float, batch_size_constant: float = 1.0,
                           num_steps_constant: float = 1.0, max_step_size: float | None = None,
                           include_num_basis: bool = False,
                           hidden_constants: HiddenConstants | None = None) -> Schedule:
    """The parameters of Corollary 5.5 (independent noise, lambda = 0) and the Theorem D.16 bound they give.

    Wang et al. (arXiv 2605.12648v1), Corollary 5.5:

    * ``B = round(batch_size_constant * gamma sqrt n)`` (clamped to ``[1, n]``);
    * ``eta = eta_max * min{1, gamma^2 sqrt n eps / sqrt d}`` with ``eta_max = max_step_size`` or, by default,
      ``1/(12 C p^3)`` (the paper's ``eta ≍ min{1, ...}`` under ``eta <= 1/(12 C p^3)``);
    * ``T = max(1, round(num_steps_constant * sqrt n / gamma))``;
    * ``kappa`` from Theorem 5.4 = D.9 (:func:`privdyn.privacy.correlated_calibration.noise_multiplier_theorem_d9`,
      label ``heuristic``: its constant is not a rigorous bound, see that function);
    * ``m ≍ polylog(n/delta) / gamma^4``: the smallest width satisfying the width conditions of Theorems D.14 and
      D.16 with the given hidden constants; ``clip = G_delta``.

    The rate is ``1/(gamma sqrt n) + sqrt d / (gamma^3 n eps)``. Conditions: ``failure_prob_corollary``
    (``delta_fail <= gamma / n``) and every condition of Theorem D.16.
    """
    from privdyn.privacy.correlated_calibration import noise_multiplier_theorem_d9

    k = _constants(constants)
    nn, dd = _int("n", n), _int("d", d)
    eps = _pos("epsilon", epsilon)
    dp_delta = _check.delta(delta)
    gam = _margin(ntk_margin)
    dl = _prob("failure_prob", failure_prob)
    cb = _pos("batch_size_constant", batch_size_constant)
    ct = _pos("num_steps_constant", num_steps_constant)
    eta_max = k.max_step_size if max_step_size is None else _pos("max_step_size", max_step_size)
    hc = _hidden(hidden_constants)
    b = min(nn, max(1, round(cb * gam * math.sqrt(nn))))
    eta = eta_max * min(1.0, gam**2 * math.sqrt(nn) * eps / math.sqrt(dd))
    t = max(1, round(ct * math.sqrt(nn) / gam))
    noise = noise_multiplier_theorem_d9(n=nn, batch_size=b, num_steps=t, epsilon=eps, delta=dp_delta)
    kappa = float(noise)
    p_noise = k.num_basis if include_num_basis else 1

    def required(m: int) -> float:
        opt = a_van(n=nn, d=dd, width=m, num_steps=t, step_size=eta, batch_size=b, noise_multiplier=kappa,
                    ntk_margin=gam, failure_prob=dl, num_basis=p_noise, constant=hc.risk)
        d14 = hc.width_lower * max(_ntk_width(m, n=nn, num_steps=t, ntk_margin=gam, failure_prob=dl, constant=1.0),
                                   math.log(nn * t / dl) / (t * dd))
        stab = _stability_width_plain(m, n=nn, num_steps=t, step_size=eta, batch_size=b, optimization=opt,
                                      failure_prob=dl, constant=hc.stability_width)
        return max(d14, stab)

    m = _smallest_width(required, "the width conditions of Theorems D.14 and D.16")
    clip = gradient_bound(k, width=m, failure_prob=dl)
    bound = population_bound_independent(k, n=nn, d=dd, width=m, num_steps=t, step_size=eta, batch_size=b,
                                         noise_multiplier=kappa, ntk_margin=gam, failure_prob=dl, clip=clip,
                                         include_num_basis=include_num_basis, hidden_constants=hc)
    src = f"{_PAPER}, Corollary 5.5"
    own = (Condition.at_most("failure_prob_corollary", dl, gam / nn, src),)
    rate = 1.0 / (gam * math.sqrt(nn)) + math.sqrt(dd) / (gam**3 * nn * eps)
    r_star = projection_radius_choice(num_steps=t, n=nn, ntk_margin=gam, failure_prob=dl,
                                      constant=hc.projection_radius)
    return Schedule(batch_size=b, num_steps=t, step_size=eta, width=m, noise_multiplier=kappa, clip=clip,
                    projection_radius=r_star, noise_guarantee=noise.guarantee, rate=rate, bound=bound,
                    conditions=_schedule_conditions(own, bound), source=src)


def schedule_corollary_5_6(constants: KanConstants, *, n: int, ntk_margin: float, failure_prob: float,
                           batch_size: int | None = None, step_size_constant: float = 1.0,
                           num_steps_constant: float = 1.0,
                           hidden_constants: HiddenConstants | None = None) -> Schedule:
    """The parameters of Corollary 5.6 (non-private mini-batch SGD) and the Theorem E.1 bound they give.

    Wang et al. (arXiv 2605.12648v1), Corollary 5.6:

    * ``B``: ``batch_size`` if given, else ``max(1, floor(gamma sqrt n))`` (``B ≲ gamma sqrt n``);
    * ``eta = step_size_constant * B / n``;
    * ``T = ceil(num_steps_constant * n^2 / (gamma^2 B))`` (``T ≳ n^2 / (gamma^2 B)``: about ``n / gamma^2``
      epochs, which cannot be run literally at realistic n);
    * ``kappa = 0``; ``m``: the smallest width satisfying both width conditions of Theorem E.1;
      ``clip = G_delta``.

    With all constants 1, ``A_non = 1/(gamma^2 eta T) + 1/(gamma sqrt(B T)) + eta/B <= 3/n``: the optimization rate
    ``1/n`` of the corollary; its population rate is ``1/(gamma^2 n)`` (``rate``). Conditions:
    ``batch_size_corollary`` (``B <= gamma sqrt n``), ``failure_prob_corollary`` (``delta_fail <= 1/(gamma n)``) and
    every condition of Theorem E.1, among them ``step_size`` (``B/n <= 1/(12 C p^3)``, which needs a large n).
    """
    k = _constants(constants)
    nn = _int("n", n)
    gam = _margin(ntk_margin)
    dl = _prob("failure_prob", failure_prob)
    ce = _pos("step_size_constant", step_size_constant)
    ct = _pos("num_steps_constant", num_steps_constant)
    hc = _hidden(hidden_constants)
    b = max(1, math.floor(gam * math.sqrt(nn))) if batch_size is None else _batch(batch_size, nn)
    eta = ce * b / nn
    t = max(1, math.ceil(ct * nn**2 / (gam**2 * b)))

    def required(m: int) -> float:
        opt = a_non(num_steps=t, step_size=eta, batch_size=b, ntk_margin=gam, constant=hc.risk)
        e1 = _ntk_width(m, n=nn, num_steps=t, ntk_margin=gam, failure_prob=dl, constant=hc.width_lower)
        stab = _stability_width_plain(m, n=nn, num_steps=t, step_size=eta, batch_size=b, optimization=opt,
                                      failure_prob=dl, constant=hc.stability_width)
        return max(e1, stab)

    m = _smallest_width(required, "the width conditions of Theorem E.1")
    clip = gradient_bound(k, width=m, failure_prob=dl)
    bound = population_bound_nonprivate(k, n=nn, width=m, num_steps=t, step_size=eta, batch_size=b,
                                        ntk_margin=gam, failure_prob=dl, clip=clip, hidden_constants=hc)
    src = f"{_PAPER}, Corollary 5.6"
    own = (Condition.at_most("batch_size_corollary", b, gam * math.sqrt(nn), src),
           Condition.at_most("failure_prob_corollary", dl, 1.0 / (gam * nn), src))
    r_star = projection_radius_choice(num_steps=t, n=nn, ntk_margin=gam, failure_prob=dl,
                                      constant=hc.projection_radius)
    return Schedule(batch_size=b, num_steps=t, step_size=eta, width=m, noise_multiplier=0.0, clip=clip,
                    projection_radius=r_star, noise_guarantee=Guarantee.EXACT, rate=1.0 / (gam**2 * nn),
                    bound=bound, conditions=_schedule_conditions(own, bound), source=src)
