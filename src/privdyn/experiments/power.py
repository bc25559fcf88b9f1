"""Monte-Carlo power under ``--quick``: every Monte-Carlo check of a quick run keeps a standard error below a cap.

The quick configs make ``privdyn reproduce --quick`` fast; they must not get there by weakening a Monte-Carlo check.
A check's smallest detectable error is z·SE plus its derived bias allowance (the ``tolerance`` it records), with z
and the allowance fixed by the check's design, so its power is set by its standard error SE. :data:`QUICK_SE_CAPS`
states, for each Monte-Carlo check of each quick config, the largest SE it may have.

How the caps were set: 1.25 × the SE each check had in the quick configs as they stood before the quick run was
made faster (the speed came from compiled kernels and cheaper figure output; every quick SE was unchanged), rounded
up to two significant digits. The factor leaves room for the SE's own sampling noise when the random numbers change
(relative sd about 1/√(2(N − 1)) for N runs: 16% at N = 20), while a config that cut a check's runs by a third or
more (SE × 1/√(2/3) ≈ 1.22, plus that noise) is caught. Raise a cap only with the reason, never to make a run pass.

The runner adds one invariant per quick run (:func:`quick_power_check`), so ``privdyn reproduce --quick --strict``
fails if a check lost power or a new Monte-Carlo check has no stated cap. Runs with ``--set`` overrides are not the
quick config and get no such check.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from privdyn.experiments.results import Check, CheckKind

__all__ = ["QUICK_SE_CAPS", "quick_power_check"]

QUICK_SE_CAPS: Mapping[tuple[str, str], float] = {
    # dpgd-fig1
    ('dpgd-fig1', 'simulation_matches_ode panel=1 d=500'): 0.0011,
    ('dpgd-fig1', 'simulation_matches_ode panel=2 d=500'): 0.0017,
    ('dpgd-fig1', 'simulation_matches_ode panel=3 d=500'): 0.002,
    ('dpgd-fig1', 'simulation_matches_ode panel=4 d=500'): 0.0011,
    ('dpgd-fig1', 'final_jump panel=1 d=100'): 0.0063,
    ('dpgd-fig1', 'final_jump panel=1 d=500'): 0.0026,
    ('dpgd-fig1', 'final_jump panel=2 d=100'): 0.0052,
    ('dpgd-fig1', 'final_jump panel=2 d=500'): 0.0028,
    ('dpgd-fig1', 'sd_shrinks_like_inverse_sqrt_d panel=1'): 0.099,
    ('dpgd-fig1', 'sd_shrinks_like_inverse_sqrt_d panel=2'): 0.15,
    ('dpgd-fig1', 'sd_shrinks_like_inverse_sqrt_d panel=3'): 0.11,
    ('dpgd-fig1', 'sd_shrinks_like_inverse_sqrt_d panel=4'): 0.14,
    # dpgd-fig4
    ('dpgd-fig4', 'final_noise_jump panel=1'): 0.0059,
    ('dpgd-fig4', 'final_noise_jump panel=2'): 0.00017,
    # dpgd-fig5
    ('dpgd-fig5', 'final_noise_jump panel=1'): 1.1,
    ('dpgd-fig5', 'final_noise_jump panel=2'): 4.1,
    # dpgd-fig6
    ('dpgd-fig6', 'final_noise_jump panel=1'): 0.0012,
    ('dpgd-fig6', 'final_noise_jump panel=2'): 2.4,
    # dpgd-fig7
    ('dpgd-fig7', 'output_perturbation_best panel=1 n=100 method=simulation'): 0.0021,
    ('dpgd-fig7', 'output_perturbation_best panel=1 n=1000 method=simulation'): 0.00053,
    ('dpgd-fig7', 'harmonic_best_or_tied panel=1 n=100 method=simulation'): 0.0021,
    ('dpgd-fig7', 'harmonic_best_or_tied panel=1 n=1000 method=simulation'): 0.00053,
    ('dpgd-fig7', 'output_perturbation_best panel=2 n=100 method=simulation'): 9.1e-05,
    ('dpgd-fig7', 'output_perturbation_best panel=2 n=1000 method=simulation'): 0.00057,
    ('dpgd-fig7', 'harmonic_optimal_small_n panel=2 n=100 method=simulation'): 0.0025,
    ('dpgd-fig7', 'harmonic_optimal_small_n panel=2 n=1000 method=simulation'): 0.00057,
    # dpgd-fig8
    ('dpgd-fig8', 'harmonic_remains_optimal dataset=digits_1_vs_7 n=24'): 0.02,
    ('dpgd-fig8', 'harmonic_remains_optimal dataset=digits_1_vs_7 n=49'): 0.0056,
    ('dpgd-fig8', 'harmonic_remains_optimal dataset=digits_1_vs_7 n=99'): 0.0021,
    ('dpgd-fig8', 'harmonic_remains_optimal dataset=digits_1_vs_7 n=199'): 0.0024,
    ('dpgd-fig8', 'harmonic_remains_optimal dataset=diabetes n=30'): 0.011,
    ('dpgd-fig8', 'harmonic_remains_optimal dataset=diabetes n=60'): 0.022,
    ('dpgd-fig8', 'harmonic_remains_optimal dataset=diabetes n=121'): 0.036,
    ('dpgd-fig8', 'harmonic_remains_optimal dataset=diabetes n=243'): 0.0073,
    # hsgd-fig1a
    ('hsgd-fig1a', 'mahalanobis_mean'): 1.8,
    # hsgd-fig2a
    ('hsgd-fig2a', 'simulation_matches_volterra noise_std=1'): 0.0024,
    ('hsgd-fig2a', 'simulation_matches_volterra noise_std=1.25'): 0.0036,
    ('hsgd-fig2a', 'simulation_matches_volterra noise_std=1.5'): 0.0049,
    # hsgd-fig3a
    ('hsgd-fig3a', 'unclipped_attains_lowest_risk clip=3'): 3.1e-05,
    ('hsgd-fig3a', 'unclipped_attains_lowest_risk clip=5'): 0.0,
    ('hsgd-fig3a', 'unclipped_attains_lowest_risk clip=7'): 0.0,
    # hsgd-validation
    ('hsgd-validation', 'gap_decays'): 0.042,
    ('hsgd-validation', 'gap_exponent_is_minus_half'): 0.042,
    # kan-fig1-right
    ('kan-fig1-right', 'cumulative_variance_matches_closed_form noise_correlation=0'): 0.064,
    ('kan-fig1-right', 'cumulative_variance_matches_closed_form noise_correlation=0.3'): 0.036,
    ('kan-fig1-right', 'partial_cancellation_slows_growth noise_correlation=0.3'): 0.45,
    ('kan-fig1-right', 'cumulative_variance_matches_closed_form noise_correlation=0.5'): 0.021,
    ('kan-fig1-right', 'partial_cancellation_slows_growth noise_correlation=0.5'): 0.23,
    ('kan-fig1-right', 'cumulative_variance_matches_closed_form noise_correlation=0.7'): 0.014,
    ('kan-fig1-right', 'partial_cancellation_slows_growth noise_correlation=0.7'): 0.089,
    ('kan-fig1-right', 'cumulative_variance_matches_closed_form noise_correlation=0.9'): 0.012,
    ('kan-fig1-right', 'partial_cancellation_slows_growth noise_correlation=0.9'): 0.018,
    ('kan-fig1-right', 'spec_cumulative_variance_values'): 0.029,
    # kan-identities
    ('kan-identities', 'fixed_size_sampler_inclusion'): 0.0043,
    # kan-stability
    ('kan-stability', 'stability_within_theorem_c22 lambda=0'): 0.00056,
    ('kan-stability', 'stability_within_theorem_c22 lambda=0.5'): 0.00056,
    # langevin-tightness
    ('langevin-tightness', 'simulation_mean dataset=D'): 0.0033,
    ('langevin-tightness', 'simulation_variance dataset=D'): 0.0024,
    ('langevin-tightness', 'simulation_mean dataset=D_prime'): 0.0033,
    ('langevin-tightness', 'simulation_variance dataset=D_prime'): 0.0024,
    ('langevin-tightness', 'simulation_renyi'): 0.014,
}
"""(experiment, check name) → the largest standard error the check may have under the unmodified quick config."""


def _largest_standard_error(value: Any) -> float:
    """The largest finite SE of a check (a scalar, or one per point of a curve)."""
    values = [float(v) for v in (value if isinstance(value, list | tuple) else [value])]
    finite = [v for v in values if math.isfinite(v)]
    return max(finite) if finite else math.inf


def quick_power_check(experiment: str, checks: Iterable[Mapping[str, Any]]) -> Check | None:
    """The invariant that each Monte-Carlo check of a quick run keeps its SE within :data:`QUICK_SE_CAPS`.

    Args:
        experiment: the experiment's registered name.
        checks: its serialised checks (``Check.to_json()``); those with a ``standard_error`` are the Monte-Carlo ones.

    Returns:
        None when no check is a Monte-Carlo one; otherwise an invariant :class:`Check` named
        ``quick_monte_carlo_power``: ``measured`` is the largest ratio SE / cap (1 means at the cap), ``tolerance``
        1. It fails when a check's SE exceeds its cap, is not finite, or has no stated cap; the note names those
        checks.
    """
    over: list[str] = []
    unstated: list[str] = []
    worst_ratio = 0.0
    count = 0
    for check in checks:
        if check.get("standard_error") is None:
            continue
        count += 1
        name = str(check["name"])
        cap = QUICK_SE_CAPS.get((experiment, name))
        if cap is None:
            unstated.append(name)
            continue
        se = _largest_standard_error(check["standard_error"])
        ratio = se / cap if cap > 0 else (0.0 if se == 0 else math.inf)
        worst_ratio = max(worst_ratio, ratio)
        if not ratio <= 1.0:
            over.append(f"{name} (SE {se:.3g} > cap {cap:.3g})")
    if count == 0:
        return None
    problems = ([f"SE above its cap: {'; '.join(over)}"] if over else []) + (
        [f"no stated cap (add one to privdyn.experiments.power.QUICK_SE_CAPS): {'; '.join(unstated)}"]
        if unstated else [])
    note = (" ".join(problems) if problems
            else f"{count} Monte-Carlo check(s), each within its stated SE cap (privdyn.experiments.power).")
    return Check(name="quick_monte_carlo_power", kind=CheckKind.INVARIANT,
                 claim="under --quick every Monte-Carlo check keeps its power: SE ≤ its stated cap",
                 expected=None, measured=worst_ratio if not unstated else math.inf, tolerance=1.0,
                 passed=not problems, note=note)
