"""kan-fig1-left's calibrated noise multipliers: kappa(lambda) by one accountant, shipped as data.

Every kappa of the calibrated panel comes from :func:`privdyn.privacy.amplification.amplified_noise_multiplier`
(the amplified bound on the Theorem F.8 pair of Wang et al., arXiv 2605.12648v1: at these sampling rates the
spectral bound, docs/amplification.md), with fixed-size batches drawn afresh at every step
and zero-out neighbours, for lambda = 0 as for lambda > 0. At lambda = 0 the F.8 pair is the Poisson-subsampled
Gaussian at rate B / n and the bound is dp-accounting's PLD of that mechanism (no bad event is spent).

One calibration takes seconds (minutes with the conditional composition used before), so the quick config reads
the entries of ``data/fig1_left_kappas.json``; the full config computes them (and the experiment checks that a computed
entry agrees with the shipped one). Regenerate the file with::

    python -m privdyn.experiments.kan_training.kappas [--rtol 0.01] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
from typing import Any

__all__ = ["DATA_PATH", "KAPPA_RTOL", "calibrate", "shipped", "compute_table"]

DATA_PATH = pathlib.Path(__file__).with_name("data") / "fig1_left_kappas.json"
KAPPA_RTOL = 0.01
"""Relative bracket width of every calibration (the kappa is on the safe side, within 1 + rtol of the smallest)."""

_KEYS = ("n", "batch_size", "num_steps", "epsilon", "delta", "noise_correlation")


def calibrate(*, n: int, batch_size: int, num_steps: int, epsilon: float, delta: float, noise_correlation: float,
              rtol: float = KAPPA_RTOL) -> dict[str, Any]:
    """The bound's kappa for one (n, B, T, epsilon, delta, lambda), with its labels and the seconds it took."""
    from privdyn.privacy.amplification import amplified_noise_multiplier
    from privdyn.privacy.correlated import LambdaCGD

    start = time.perf_counter()
    loss = amplified_noise_multiplier(LambdaCGD(noise_correlation), epsilon=epsilon, delta=delta,
                                      sampling_prob=batch_size / n, num_steps=num_steps, sampler="fixed_size",
                                      rtol=rtol)
    return {"n": n, "batch_size": batch_size, "num_steps": num_steps, "epsilon": epsilon, "delta": delta,
            "noise_correlation": noise_correlation, "noise_multiplier": float(loss.value), "rtol": rtol,
            "accountant": "amplified_bound", "sampler": "fixed_size", "neighboring": loss.neighboring.value,
            "guarantee": loss.guarantee.value, "seconds": round(time.perf_counter() - start, 1)}


def shipped(**setting: Any) -> dict[str, Any] | None:
    """The shipped entry for ``setting`` (the keys of :func:`calibrate` but ``rtol``), or None."""
    if not DATA_PATH.exists():
        return None
    rows = json.loads(DATA_PATH.read_text())["rows"]
    found = [r for r in rows if all(r[k] == setting[k] for k in _KEYS)]
    return found[0] if found else None


def compute_table(settings: list[dict[str, Any]], rtol: float, out: pathlib.Path | None) -> list[dict[str, Any]]:
    """Calibrate every setting, writing the JSON after each entry (a partial run keeps what it finished)."""
    rows: list[dict[str, Any]] = []
    for setting in settings:
        rows.append(calibrate(**setting, rtol=rtol))
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"command": "python -m privdyn.experiments.kan_training.kappas", "rows": rows},
                                      indent=1) + "\n")
    return rows


def default_settings() -> list[dict[str, Any]]:
    """Every calibrated (dataset size, epsilon, lambda) of kan-fig1-left's default config."""
    from privdyn.experiments.kan_training.common import Fig1LeftConfig, training_size

    config = Fig1LeftConfig()
    return [{"n": training_size(ds, config.test_fraction), "batch_size": config.batch_size,
             "num_steps": config.num_steps, "epsilon": eps, "delta": config.delta, "noise_correlation": lam}
            for ds in config.datasets for eps in config.calibrated_epsilons for lam in config.noise_correlations]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rtol", type=float, default=KAPPA_RTOL)
    parser.add_argument("--out", type=pathlib.Path, default=DATA_PATH)
    args = parser.parse_args(argv)
    if not 1e-3 <= args.rtol <= 0.1:
        parser.error(f"--rtol must be in [0.001, 0.1]; got {args.rtol}")
    compute_table(default_settings(), args.rtol, args.out)


if __name__ == "__main__":
    main()
