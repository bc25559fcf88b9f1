"""privdyn's correlated random-allocation bound beside opake's balls-in-bins accountant for lambda-CGD.

Usage (from the repository root, in an environment with privdyn and ``opake-dpftrl==0.16.1``; opake 0.16.1 does
not import on Python 3.11 or 3.12.1, a dataclass-slots error, so use Python 3.13)::

    python tools/opake_balls_in_bins.py

opake's ``balls_in_bins`` accounts balls-in-bins with the bins *fixed across epochs* (a record sits at the same
offset of every epoch) by a Monte-Carlo PLD of Choquette-Choo et al.'s pair (arXiv 2410.06266, Lemma 3.2) with
failure probability 1e-6 (its default). At one epoch that is privdyn's sampler exactly; over several epochs it is
another sampler, which also puts a record in one step per epoch, so privdyn's unamplified bound covers it too (the
spectral route, which reduces to independent noise under fresh allocations, does not). Prints a markdown table at
delta = 1e-5: privdyn's unamplified bound, its row's epsilon (the smaller of the unamplified bound and the spectral
route), and opake's.
"""

from __future__ import annotations

import time

DELTA = 1e-5
SETTINGS = (  # (lambda, steps per epoch t, epochs E, noise multiplier)
    (0.5, 2, 1, 3.0), (0.9, 2, 1, 5.0), (0.5, 10, 1, 2.0), (0.9, 10, 1, 4.0),
    (0.5, 2, 6, 3.5), (0.9, 2, 5, 8.0), (0.5, 10, 5, 4.0), (0.9, 10, 5, 10.0),
)


def main() -> None:
    import opake.dpftrl.accounting as opake_accounting
    from opake.dpftrl.noise import lambda_cgd_strategy

    from privdyn.privacy import correlated, correlated_allocation

    print("| λ | t | E | κ | privdyn unamplified | privdyn row | opake balls-in-bins (MC) | opake time (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for lam, t, epochs, kappa in SETTINGS:
        common = dict(steps_per_epoch=t, num_epochs=epochs, delta=DELTA)
        unamplified = float(correlated_allocation.unamplified_epsilon(correlated.LambdaCGD(lam), kappa,
                                                                      **common).value)
        ours = float(correlated_allocation.epsilon(correlated.LambdaCGD(lam), kappa, **common).value)
        start = time.perf_counter()
        strategy = lambda_cgd_strategy(lambda_=lam, normalized=False)  # C_{s,u} = lambda^(s-u), privdyn's encoder
        process = opake_accounting.balls_in_bins(opake_accounting.mf_gaussian(kappa, strategy), num_bins=t,
                                                 n_steps=t * epochs)
        theirs = float(process.epsilon_at(DELTA))
        seconds = time.perf_counter() - start
        print(f"| {lam} | {t} | {epochs} | {kappa:g} | {unamplified:.4g} | {ours:.4g} | {theirs:.4g} | "
              f"{seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
