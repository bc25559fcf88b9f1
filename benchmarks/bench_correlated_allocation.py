"""Correlated noise under random allocation: the allow-list's ``allocation_bound`` at T = 10,000 steps.

The issue's target is absolute: at most 10 s per accountant at T = 10,000 steps. Beside each epsilon runs privdyn's
independent-noise random-allocation PLD (:mod:`privdyn.privacy.random_allocation`) at the same noise multiplier,
steps per epoch and epochs: the accountant of the same participation without correlation. ``agree`` checks the
correlated row is not below it (the unamplified bound is the Gaussian mechanism at a sensitivity of at least
sqrt(E); the spectral route is the same PLD at kappa / a, a >= 1). The row evaluates the spectral route, i.e. the
independent-noise PLD at kappa / a, so its cost is at least that PLD's at the smaller noise multiplier. The
calibration row times ``dpsgd_noise_multiplier`` beside dp-accounting's Poisson calibration at the same rate and T
(what a user of Poisson sampling runs); ``agree`` checks the calibrated kappa's epsilon is at most the target.
"""

from __future__ import annotations

from privdyn.benchmarking import Benchmark
from privdyn.privacy import accounting, correlated, random_allocation

DELTA = 1e-5
STRATEGIES = {
    "cgd09": correlated.LambdaCGD(0.9),
    "cgd05": correlated.LambdaCGD(0.5),
    "blt": correlated.BufferedToeplitz([0.9, 0.5], [0.3, 0.2]),
}
SETTINGS = {  # name: (strategy, kappa, steps per epoch t, epochs); T = t * epochs = 10,000
    "cgd09-t100-e100": ("cgd09", 20.0, 100, 100),
    "blt-t100-e100": ("blt", 8.0, 100, 100),
    "cgd05-t10-e1000": ("cgd05", 30.0, 10, 1_000),
    "cgd09-t1000-e10": ("cgd09", 8.0, 1_000, 10),
    "cgd09-t5000-e2": ("cgd09", 4.0, 5_000, 2),
}


def _setup(strategy: str, kappa: float, t: int, epochs: int):
    def build():
        return STRATEGIES[strategy], kappa, t, epochs
    return build


def _privdyn(inputs) -> float:
    strategy, kappa, t, epochs = inputs
    return float(accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa, n=100 * t, batch_size=100,
                                          num_steps=t * epochs, delta=DELTA, sampler="random_allocation",
                                          neighboring="add_remove").value)


def _independent(inputs) -> float:
    _, kappa, t, epochs = inputs
    return float(random_allocation.epsilon(kappa, steps_per_epoch=t, num_epochs=epochs, delta=DELTA).value)


def _not_below(candidate: float, reference: float) -> None:
    if not candidate >= reference:
        raise AssertionError(f"the correlated bound {candidate!r} is below independent noise's {reference!r}")


TARGET = 4.0
CALIBRATION = dict(epsilon=TARGET, delta=DELTA, n=10_000, batch_size=100, num_steps=10_000)


def _calibrate(inputs) -> float:
    return float(accounting.dpsgd_noise_multiplier(inputs, sampler="random_allocation", neighboring="add_remove",
                                                   **CALIBRATION).value)


def _calibrate_poisson(inputs) -> float:
    return float(accounting.dpsgd_noise_multiplier(correlated.Independent(), sampler="poisson",
                                                   neighboring="add_remove", **CALIBRATION).value)


def _certified(candidate: float, reference: float) -> None:
    sizes = {key: CALIBRATION[key] for key in ("n", "batch_size", "num_steps", "delta")}
    epsilon = float(accounting.dpsgd_epsilon(STRATEGIES["cgd09"], noise_multiplier=candidate,
                                             sampler="random_allocation", neighboring="add_remove", **sizes).value)
    if not epsilon <= TARGET:
        raise AssertionError(f"the calibrated kappa {candidate!r} gives epsilon {epsilon!r} > {TARGET}")


BENCHMARKS = (
    *(Benchmark(
        name=f"correlated-allocation-{name}",
        description=(f"epsilon at delta = {DELTA}, {strategy} noise, kappa = {kappa}, {epochs} epoch(s) of t = {t} "
                     f"steps (T = {t * epochs}); target: at most 10 s"),
        candidate_name="privdyn.privacy.accounting.dpsgd_epsilon (random_allocation, allocation_bound)",
        reference_name="privdyn.privacy.random_allocation.epsilon (independent noise, same kappa, t, epochs)",
        setup=_setup(strategy, kappa, t, epochs),
        candidate=_privdyn,
        reference=_independent,
        agree=_not_below,
        repeats=5,
    ) for name, (strategy, kappa, t, epochs) in SETTINGS.items()),
    Benchmark(
        name="correlated-allocation-calibration",
        description=(f"noise multiplier for epsilon = {TARGET}, delta = {DELTA}, lambda-CGD (0.9), 100 epochs of "
                     f"t = 100 steps (T = 10,000); reported beside the 10 s target of an evaluation of epsilon, not "
                     f"bound by it"),
        candidate_name="privdyn.privacy.accounting.dpsgd_noise_multiplier (random_allocation)",
        reference_name="privdyn.privacy.accounting.dpsgd_noise_multiplier (independent noise, Poisson, rate 1/t)",
        setup=lambda: STRATEGIES["cgd09"],
        candidate=_calibrate,
        reference=_calibrate_poisson,
        agree=_certified,
        repeats=5,
    ),
)
