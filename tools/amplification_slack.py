"""The slack of the amplification bounds for lambda-CGD over a grid, against the Monte-Carlo estimate of the pair.

Usage (from the repository root)::

    python tools/amplification_slack.py compute ROUTE OUT.json   # spectral, blocks, conditional, bound, estimate
    python tools/amplification_slack.py report OUT_DIR A.json B.json ...   # table (stdout), merged JSON, figure

``report`` also reads a merged JSON it wrote before (one record per point, a field per route), so a new route can be
added to a finished grid: ``compute bound NEW.json`` then ``report OUT_DIR docs/figures/amplification-slack.json
NEW.json``.

``compute`` evaluates one route at every grid point (Poisson sampling, delta = 1e-5) and writes one JSON record per
point with its wall time; the conditional composition gets ``--timeout`` seconds per point (a point that does not
finish is recorded as such). ``report`` merges the files, prints the markdown slack table of
``docs/amplification.md`` and draws ``amplification-slack.png`` in OUT_DIR.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing
import sys
import time
from typing import Any

import numpy as np

DELTA = 1e-5
LAMBDAS = (0.0, 0.1, 0.3, 0.5, 0.7)
RATES = (0.01, 0.05, 0.3)
KAPPAS = (1.0, 3.0, 10.0)
STEPS = (100, 1000)
MAX_INDEPENDENT_EPSILON = 10.0
"""Points whose lambda = 0 epsilon exceeds this are left out (no meaningful guarantee; 5 of the 18 (r, kappa, T))."""
MC_SAMPLES = 8000
MC_CONFIDENCE = 0.999
SEED = 20261127
ROUTE_WORDS = {"spectral": "spectral bound", "blocks": "two-step block bound", "conditional": "conditional composition"}
"""How each bound route names itself in a ``PrivacyLoss.source`` (``method="bound"`` records the one it used)."""


def grid() -> list[dict[str, float]]:
    """The grid points, lambda = 0 included; (r, kappa, T) whose lambda = 0 epsilon is too large are dropped."""
    from privdyn.privacy import amplified_epsilon
    from privdyn.privacy.correlated import LambdaCGD

    points = []
    for rate, kappa, steps in itertools.product(RATES, KAPPAS, STEPS):
        base = amplified_epsilon(LambdaCGD(0.0), noise_multiplier=kappa, sampling_prob=rate, num_steps=steps,
                                 delta=DELTA, sampler="poisson", method="spectral")
        if float(base.value) > MAX_INDEPENDENT_EPSILON:
            continue
        points.extend({"lam": lam, "rate": rate, "kappa": kappa, "steps": steps} for lam in LAMBDAS)
    return points


def _evaluate(route: str, point: dict[str, float], queue: Any) -> None:
    from privdyn.privacy import amplified_epsilon
    from privdyn.privacy.amplification import BoundSettings
    from privdyn.privacy.amplification.monte_carlo import monte_carlo_epsilon
    from privdyn.privacy.amplification.pair import dominating_pair
    from privdyn.privacy.correlated import LambdaCGD

    start = time.perf_counter()
    kwargs: dict[str, Any] = {"noise_multiplier": point["kappa"], "sampling_prob": point["rate"],
                              "num_steps": int(point["steps"]), "delta": DELTA, "sampler": "poisson"}
    if route == "estimate":
        pair = dominating_pair(LambdaCGD(point["lam"]), noise_multiplier=point["kappa"], sampling_prob=point["rate"],
                               num_steps=int(point["steps"]))
        estimate = monte_carlo_epsilon(pair, delta=DELTA, num_samples=MC_SAMPLES, confidence=MC_CONFIDENCE,
                                       rng=np.random.default_rng(SEED))
        queue.put({"upper": estimate.epsilon_upper, "lower": estimate.epsilon_lower,
                   "grid_allowance": estimate.grid_allowance, "seconds": time.perf_counter() - start})
        return
    # the conditional composition at the discretization the allow-list used (1e-3); the other bounds at 1e-4
    interval = 1e-3 if route == "conditional" else 1e-4
    loss = amplified_epsilon(LambdaCGD(point["lam"]), method=route,
                             settings=BoundSettings(value_discretization_interval=interval), **kwargs)
    winner = next((name for name, words in ROUTE_WORDS.items() if words in loss.source), route)
    queue.put({"value": float(loss.value), "winner": winner, "seconds": time.perf_counter() - start})


def compute(route: str, out: str, timeout: float) -> None:
    records = []
    for point in grid():
        queue: Any = multiprocessing.Queue()
        process = multiprocessing.Process(target=_evaluate, args=(route, point, queue))
        process.start()
        process.join(timeout)
        if process.is_alive():
            process.terminate()
            process.join()
            result: dict[str, Any] = {"timeout": timeout}
        else:
            result = queue.get() if not queue.empty() else {"error": process.exitcode}
        records.append({**point, "route": route, **result})
        print(json.dumps(records[-1]), flush=True)
        with open(out, "w") as handle:
            json.dump(records, handle, indent=1)


def _merged(paths: list[str]) -> dict[tuple[float, float, float, int], dict[str, Any]]:
    rows: dict[tuple[float, float, float, int], dict[str, Any]] = {}
    for path in paths:
        with open(path) as handle:
            for record in json.load(handle):
                key = (record["lam"], record["rate"], record["kappa"], int(record["steps"]))
                if "route" in record:  # a file of compute
                    rows.setdefault(key, {})[record["route"]] = record
                else:  # a merged file of report
                    for route, value in record.items():
                        if isinstance(value, dict):
                            rows.setdefault(key, {})[route] = value
    return rows


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.{digits}g}"


def report(out_dir: str, paths: list[str]) -> None:
    rows = _merged(paths)
    print("| λ | r | κ | T | MC ε [lower, upper] | before (conditional) | spectral | after (bound) | route | "
          "after / MC upper | after / MC lower | ≤ 1.5 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    figure_points = []
    counts: dict[str, int] = {}
    for key in sorted(rows, key=lambda k: (k[3], k[1], k[2], k[0])):
        lam, rate, kappa, steps = key
        row = rows[key]
        mc = row.get("estimate", {})
        cond = row.get("conditional", {})
        spec = row.get("spectral", {})
        cond_value = cond.get("value")
        spec_value = spec.get("value")
        values = [v for v in (cond_value, spec_value) if v is not None]
        bound = min(values) if values else None
        winner = None if bound is None else ("spectral" if bound == spec_value else "conditional")
        if "bound" in row and "value" in row["bound"]:  # method="bound" itself, with the route it used
            bound, winner = row["bound"]["value"], row["bound"]["winner"]
        lower, upper = mc.get("lower"), mc.get("upper")
        cond_text = _fmt(cond_value) if cond_value is not None else (
            f"> {cond['timeout']:.0f} s" if "timeout" in cond else "-")
        ratio_hi = bound / lower if bound is not None and lower else None
        ratio_lo = bound / upper if bound is not None and upper and math.isfinite(upper) else None
        verdict = "-" if ratio_hi is None else ("yes" if ratio_hi <= 1.5 else
                                                ("no" if ratio_lo is not None and ratio_lo > 1.5 else "undecided"))
        if lam > 0:
            counts[verdict] = counts.get(verdict, 0) + 1
        print(f"| {lam:g} | {rate:g} | {kappa:g} | {steps} | [{_fmt(lower)}, {_fmt(upper)}] | {cond_text} | "
              f"{_fmt(spec_value)} | {_fmt(bound)} | {winner or '-'} | {_fmt(ratio_lo)} | {_fmt(ratio_hi)} | "
              f"{verdict} |")
        if bound is not None and upper and lower and math.isfinite(upper) and lam > 0:
            figure_points.append((lam, rate, kappa, steps, bound / upper, bound / lower, winner, cond_value,
                                  spec_value, upper))
    print(f"\nlambda > 0: bound / true epsilon <= 1.5 {counts}")
    with open(f"{out_dir}/amplification-slack.json", "w") as handle:
        merged = [{**dict(zip(("lam", "rate", "kappa", "steps"), key, strict=True)), **rows[key]}
                  for key in sorted(rows)]
        json.dump(merged, handle, indent=1)
    _figure(out_dir, figure_points)


def _figure(out_dir: str, points: list[tuple[Any, ...]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(STEPS), figsize=(11, 4.2), sharey=True)
    markers = {0.01: "o", 0.05: "s", 0.3: "^"}
    colors = {1.0: "tab:red", 3.0: "tab:blue", 10.0: "tab:green"}
    for ax, steps in zip(np.atleast_1d(axes), STEPS, strict=True):
        for lam, rate, kappa, t, lo, hi, winner, cond, _, upper in points:
            if t != steps:
                continue
            x = lam + {0.01: -0.02, 0.05: 0.0, 0.3: 0.02}[rate]
            face = {"spectral": colors[kappa], "blocks": "none"}.get(winner, "lightgrey")
            ax.plot([x, x], [lo, hi], color=colors[kappa], lw=1.2)
            ax.plot(x, math.sqrt(lo * hi), marker=markers[rate], color=colors[kappa], mfc=face, ms=6)
            if cond is not None and upper:
                ax.plot(x, cond / upper, marker="_", color=colors[kappa], ms=8, alpha=0.6)
        ax.axhline(1.5, color="grey", ls="--", lw=1)
        ax.set_yscale("log")
        ax.set_xlabel("λ")
        ax.set_title(f"T = {steps}, δ = {DELTA:g}, Poisson")
    np.atleast_1d(axes)[0].set_ylabel("bound / Monte-Carlo ε (interval)")
    handles = [plt.Line2D([], [], color=c, marker="o", ls="", label=f"κ = {k:g}") for k, c in colors.items()]
    handles += [plt.Line2D([], [], color="k", marker=m, ls="", mfc="none", label=f"r = {r:g}")
                for r, m in markers.items()]
    handles += [plt.Line2D([], [], color="k", marker="o", ls="", label="filled: spectral bound"),
                plt.Line2D([], [], color="k", marker="o", mfc="none", ls="", label="open: two-step blocks"),
                plt.Line2D([], [], color="k", marker="_", ls="", ms=8, label="old bound (conditional)")]
    fig.legend(handles=handles, loc="center right", fontsize=8)
    fig.tight_layout(rect=(0, 0, 0.84, 1))
    fig.savefig(f"{out_dir}/amplification-slack.png", dpi=110)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    comp = sub.add_parser("compute")
    comp.add_argument("route", choices=("spectral", "blocks", "conditional", "bound", "estimate"))
    comp.add_argument("out")
    comp.add_argument("--timeout", type=float, default=240.0)
    rep = sub.add_parser("report")
    rep.add_argument("out_dir")
    rep.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "compute":
        compute(args.route, args.out, args.timeout)
    else:
        report(args.out_dir, args.paths)


if __name__ == "__main__":
    main(sys.argv[1:])
