"""The comparison tables of docs/accounting.md for correlated noise under random allocation.

Usage (from the repository root)::

    python tools/correlated_allocation_table.py

Prints two markdown tables (delta = 1e-5, add-remove neighbours): epsilon at a fixed noise multiplier, and the
noise multiplier calibrated for epsilon = 2, for lambda-CGD (lambda = 0.5, 0.9) and a two-buffer BLT under random
allocation (the allow-list's row: the smaller of the unamplified bound and the spectral route, both also printed)
beside the same strategy under Poisson sampling at the same rate 1/t (the allow-list's amplified bound), and
independent noise under both samplers.
"""

from __future__ import annotations

from privdyn.privacy import accounting, correlated, correlated_allocation

DELTA = 1e-5
STRATEGIES = {
    "λ-CGD, λ = 0.5": correlated.LambdaCGD(0.5),
    "λ-CGD, λ = 0.9": correlated.LambdaCGD(0.9),
    "BLT (θ = 0.9, 0.5; ω = 0.3, 0.2)": correlated.BufferedToeplitz([0.9, 0.5], [0.3, 0.2]),
    "independent": correlated.Independent(),
}
SIZES = (  # (n, batch size, steps, kappa): t = n / B steps per epoch, E = T / t epochs
    (200, 100, 200, 10.0),
    (1_000, 100, 1_000, 10.0),
    (10_000, 100, 10_000, 10.0),
)


def _epsilon(strategy: correlated.Strategy, sampler: str, n: int, batch: int, steps: int, kappa: float) -> float:
    return float(accounting.dpsgd_epsilon(strategy, noise_multiplier=kappa, n=n, batch_size=batch, num_steps=steps,
                                          delta=DELTA, sampler=sampler, neighboring="add_remove").value)


def _kappa(strategy: correlated.Strategy, sampler: str, n: int, batch: int, steps: int) -> float:
    return float(accounting.dpsgd_noise_multiplier(strategy, epsilon=2.0, delta=DELTA, n=n, batch_size=batch,
                                                   num_steps=steps, sampler=sampler, neighboring="add_remove",
                                                   rtol=1e-3).value)


def main() -> None:
    print("| noise | t | E | κ | unamplified | spectral | ε, random allocation (the row) | ε, Poisson at rate 1/t "
          "| ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, batch, steps, kappa in SIZES:
        t = n // batch
        for name, strategy in STRATEGIES.items():
            ours = _epsilon(strategy, "random_allocation", n, batch, steps, kappa)
            poisson = _epsilon(strategy, "poisson", n, batch, steps, kappa)
            routes = "— | —"
            if name != "independent":
                common = dict(steps_per_epoch=t, num_epochs=steps // t, delta=DELTA)
                routes = (f"{float(correlated_allocation.unamplified_epsilon(strategy, kappa, **common).value):.4g} | "
                          f"{float(correlated_allocation.spectral_epsilon(strategy, kappa, **common).value):.4g}")
            print(f"| {name} | {t} | {steps // t} | {kappa:g} | {routes} | {ours:.4g} | {poisson:.4g} | "
                  f"{ours / poisson:.3g} |", flush=True)
    print()
    print("| noise | t | E | κ for ε = 2, random allocation | κ for ε = 2, Poisson at rate 1/t | ratio |")
    print("|---|---|---|---|---|---|")
    for n, batch, steps, _ in SIZES:
        t = n // batch
        for name, strategy in STRATEGIES.items():
            ours = _kappa(strategy, "random_allocation", n, batch, steps)
            poisson = _kappa(strategy, "poisson", n, batch, steps)
            print(f"| {name} | {t} | {steps // t} | {ours:.4g} | {poisson:.4g} | {ours / poisson:.3g} |", flush=True)


if __name__ == "__main__":
    main()
