"""DP-SGD noise calibration (lambda = 0): privdyn's search against dp-accounting's own calibration.

Reference: ``dp_accounting.calibrate_dp_mechanism`` (Brent's method over fresh accountants, dp-accounting's default
discretization and order grid) with the tolerance set to the same relative precision, 1e-4 of kappa, and the
bracket started at Theorem D.9's closed form (``LowerEndpointAndGuess``, lower endpoint a tenth of it): what a
dp-accounting user would run to calibrate a noise multiplier. (dp-accounting evaluates the lower endpoint first; at a
hundredth of the guess its PLD accountant at q = 0.01, T = 10,000 outgrew 24 GB of memory and the process was
killed, so a user would not pick it. A tenth is still far inside the region where epsilon exceeds the target.)
It is fair: same accountants, same precision, a good starting guess; privdyn's candidate must return the same kappa
to 1e-4 and be on the safe side.

Settings: the kan paper's first reference setting (n = 50,000, B = 500, T = 5,000, epsilon = 1, delta = 1e-5) and an
Opacus-like setting (q = 0.01, T = 10,000, epsilon = 6.19), each with fixed-size sampling (RDP, replace-one) and
Poisson sampling (PLD, add-remove).
"""

from __future__ import annotations

import math

import dp_accounting

from privdyn.benchmarking import Benchmark
from privdyn.privacy import accounting, correlated, correlated_calibration

RTOL = 1e-4
SETTINGS = {
    "kan": dict(n=50_000, batch_size=500, num_steps=5_000, epsilon=1.0, delta=1e-5),
    "opacus": dict(n=10_000, batch_size=100, num_steps=10_000, epsilon=6.19, delta=1e-5),
}
ACCOUNTING = {
    "fixed_size": ("replace_one", dp_accounting.NeighboringRelation.REPLACE_ONE),
    "poisson": ("add_remove", dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE),
}


def _setup(setting: str, sampler: str):
    def build():
        return SETTINGS[setting], sampler
    return build


def _privdyn(inputs) -> float:
    sizes, sampler = inputs
    return float(accounting.dpsgd_noise_multiplier(correlated.Independent(), sampler=sampler,
                                                   neighboring=ACCOUNTING[sampler][0], rtol=RTOL, **sizes).value)


def _dp_accounting(inputs) -> float:
    sizes, sampler = inputs
    n, batch_size, num_steps = sizes["n"], sizes["batch_size"], sizes["num_steps"]
    relation = ACCOUNTING[sampler][1]
    guess = float(correlated_calibration.noise_multiplier_theorem_d9(**sizes).value)

    if sampler == "fixed_size":
        def accountant():
            return dp_accounting.rdp.RdpAccountant(neighboring_relation=relation)

        def event(kappa: float):
            step = dp_accounting.SampledWithoutReplacementDpEvent(n, batch_size,
                                                                 dp_accounting.GaussianDpEvent(kappa / 2.0))
            return dp_accounting.SelfComposedDpEvent(step, num_steps)
    else:
        def accountant():
            return dp_accounting.pld.PLDAccountant(neighboring_relation=relation)

        def event(kappa: float):
            step = dp_accounting.PoissonSampledDpEvent(batch_size / n, dp_accounting.GaussianDpEvent(kappa))
            return dp_accounting.SelfComposedDpEvent(step, num_steps)

    bracket = dp_accounting.LowerEndpointAndGuess(guess / 10.0, guess)
    # tol is absolute in kappa: RTOL of the answer (the D.9 guess is within a factor of a few of it).
    tol = RTOL * guess / 8.0
    return float(dp_accounting.calibrate_dp_mechanism(accountant, event, sizes["epsilon"], sizes["delta"],
                                                      bracket_interval=bracket, tol=tol))


def _agree(candidate: float, reference: float) -> None:
    if not math.isclose(candidate, reference, rel_tol=2 * RTOL):
        raise AssertionError(f"kappa differs: privdyn {candidate!r}, dp-accounting {reference!r}")


BENCHMARKS = tuple(
    Benchmark(
        name=f"calibration-{setting}-{sampler}",
        description=(f"kappa for (epsilon, delta) = ({SETTINGS[setting]['epsilon']}, {SETTINGS[setting]['delta']}), "
                     f"n = {SETTINGS[setting]['n']}, B = {SETTINGS[setting]['batch_size']}, "
                     f"T = {SETTINGS[setting]['num_steps']}, {sampler} sampling, {ACCOUNTING[sampler][0]}"),
        candidate_name="privdyn.privacy.accounting.dpsgd_noise_multiplier",
        reference_name="dp_accounting.calibrate_dp_mechanism (Brent, same accountant and precision)",
        setup=_setup(setting, sampler),
        candidate=_privdyn,
        reference=_dp_accounting,
        agree=_agree,
        target_ratio=10.0,
        repeats=5,
    )
    for setting in SETTINGS for sampler in ACCOUNTING
)
