"""Random allocation (balls-in-bins) with Gaussian noise: privdyn's accountant at T = 10,000 steps.

The issue's target is absolute: at most 10 s per epsilon at T = 10,000 steps. Two references run beside it:

* ``random-allocation-*``: dp-accounting's PLD of Poisson sampling at the same rate 1/t over the same T steps and
  the same discretization (1e-4): the accountant a user of Poisson sampling runs, and an upper bound on random
  allocation's epsilon at these settings (Feldman & Shenfeld), which ``agree`` checks;
* ``random-allocation-vs-pld-accounting``: pld-accounting 2.0 (Feldman & Shenfeld's implementation, default
  configuration) at one epoch of 100 steps (seconds there; one epoch of 1,000 steps takes it about a minute on a
  2-core machine, and its default discretization is loose by 2% there); ``agree`` checks the two epsilons agree
  within 1%. Needs the ``compare`` extra.
"""

from __future__ import annotations

from privdyn.benchmarking import Benchmark
from privdyn.privacy import random_allocation

DELTA = 1e-5
SETTINGS = {  # name: (sigma, steps per epoch t, epochs); T = t * epochs = 10,000
    "t10000-e1": (1.0, 10_000, 1),
    "t100-e100": (1.0, 100, 100),
    "t1000-e10": (0.8, 1_000, 10),
    "t10-e1000": (2.0, 10, 1_000),
}


def _setup(sigma: float, t: int, epochs: int):
    def build():
        return sigma, t, epochs
    return build


def _privdyn(inputs) -> float:
    sigma, t, epochs = inputs
    return float(random_allocation.epsilon(sigma, steps_per_epoch=t, num_epochs=epochs, delta=DELTA).value)


def _poisson(inputs) -> float:
    from dp_accounting.pld import privacy_loss_distribution

    sigma, t, epochs = inputs
    pld = privacy_loss_distribution.from_gaussian_mechanism(sigma, sampling_prob=1.0 / t,
                                                            value_discretization_interval=1e-4)
    return float(pld.self_compose(t * epochs).get_epsilon_for_delta(DELTA))


def _pld_accounting(inputs) -> float:
    import PLD_accounting

    sigma, t, epochs = inputs
    params = PLD_accounting.PrivacyParams(sigma=sigma, num_steps=t, num_epochs=epochs, delta=DELTA)
    return float(PLD_accounting.gaussian_allocation_epsilon_configurable(
        params=params, config=PLD_accounting.AllocationSchemeConfig()))


def _at_most_poisson(candidate: float, reference: float) -> None:
    if not candidate <= reference:
        raise AssertionError(f"random allocation's epsilon {candidate!r} exceeds Poisson's {reference!r}")


def _within_one_percent(candidate: float, reference: float) -> None:
    if abs(candidate - reference) > 0.01 * reference:
        raise AssertionError(f"epsilon differs by more than 1%: privdyn {candidate!r}, pld-accounting {reference!r}")


BENCHMARKS = (
    *(Benchmark(
        name=f"random-allocation-{name}",
        description=(f"epsilon at delta = {DELTA}, sigma = {sigma}, {epochs} epoch(s) of t = {t} steps (T = "
                     f"{t * epochs}); target: at most 10 s"),
        candidate_name="privdyn.privacy.random_allocation.epsilon",
        reference_name="dp_accounting PLD of Poisson sampling at rate 1/t, same T and discretization",
        setup=_setup(sigma, t, epochs),
        candidate=_privdyn,
        reference=_poisson,
        agree=_at_most_poisson,
        repeats=5,
    ) for name, (sigma, t, epochs) in SETTINGS.items()),
    Benchmark(
        name="random-allocation-vs-pld-accounting",
        description=f"epsilon at delta = {DELTA}, sigma = 1, one epoch of t = 100 steps",
        candidate_name="privdyn.privacy.random_allocation.epsilon",
        reference_name="PLD_accounting.gaussian_allocation_epsilon_configurable (default configuration)",
        setup=_setup(1.0, 100, 1),
        candidate=_privdyn,
        reference=_pld_accounting,
        agree=_within_one_percent,
        repeats=5,
    ),
)
