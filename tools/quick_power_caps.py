"""Print the quick-run SE calibration table (``privdyn.runs.power.QUICK_SE_CALIBRATION``) from runs at seeds.

Usage::

    for s in $(seq 100 109); do privdyn reproduce --quick --seed $s --out quick-$s; done
    python tools/quick_power_caps.py quick-1* [--runs EXPERIMENT=N ...] [--check]

Each folder is the output of an unmodified ``privdyn reproduce --quick`` (or ``privdyn run NAME --quick``) at one of
the calibration seeds (``privdyn.runs.power.CALIBRATION_SEEDS``). For every Monte-Carlo check (a check with a
``standard_error``) of every experiment present in all the folders, the SEs over the folders are reduced to a
:class:`~privdyn.runs.power.Calibration` (:func:`~privdyn.runs.power.calibrate`) and printed as a line
of the table, with the cap and the factor cap / s as a comment. ``N``, the runs behind an experiment's SEs, is taken
from the entries already in the table; ``--runs EXPERIMENT=N`` gives it for an experiment that has none (or
overrides it), ``--runs EXPERIMENT=formula`` for SEs computed from a formula. A check whose SE was 0 at every seed
(no sampling variation seen) is printed with a warning: its cap is stated by hand, with the reason.

With ``--check`` nothing is printed but, per check, the largest SE / cap over the folders; the exit status is 1 when
any SE exceeds its cap (use it on out-of-sample seeds, e.g. 0–4, to confirm the caps).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from privdyn.runs.power import CALIBRATION_SEEDS, QUICK_SE_CALIBRATION, calibrate, quick_se_cap


def _standard_errors(folders: list[Path]) -> tuple[dict[tuple[str, str], list[float]], list[int]]:
    found: dict[tuple[str, str], list[float]] = {}
    seeds = []
    for folder in folders:
        for path in sorted(folder.glob("*/result.json")):
            result = json.loads(path.read_text())
            if not result["quick"]:
                raise SystemExit(f"{path}: not a --quick run")
            seeds.append(int(result["seed"]))
            for check in result["checks"]:
                se = check["standard_error"]
                if se is None:
                    continue
                values = [float(v) for v in (se if isinstance(se, list) else [se])]
                finite = [v for v in values if math.isfinite(v)]
                found.setdefault((result["experiment"], check["name"]), []).append(max(finite) if finite else math.inf)
    return found, seeds


def _rounded(x: float, digits: int, up: bool) -> str:
    """``x`` to ``digits`` significant digits, rounded up (the SE scale) or down (the degrees of freedom): the printed
    table never states a smaller cap than the calibration gives."""
    if x == 0 or math.isinf(x):
        return "math.inf" if math.isinf(x) else "0.0"
    unit = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    scaled = x / unit
    steps = math.ceil(scaled - 1e-9) if up else math.floor(scaled + 1e-9)
    return f"{steps * unit:.{digits}g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--runs", action="append", default=[], metavar="EXPERIMENT=N")
    parser.add_argument("--check", action="store_true", help="compare the SEs with the stated caps instead")
    args = parser.parse_args(argv)
    found, seeds = _standard_errors(args.folders)
    if args.check:
        bad = 0
        for (experiment, name), values in sorted(found.items()):
            cap = quick_se_cap(experiment, name)
            ratio = math.inf if cap is None else max(v / cap if cap > 0 else (0.0 if v == 0 else math.inf)
                                                     for v in values)
            bad += not ratio <= 1.0
            print(f"{experiment:22s} {name:70s} worst SE / cap {ratio:.3g} over {len(values)} runs")
        print(f"{bad} check(s) above their cap", file=sys.stderr)
        return 1 if bad else 0
    outside = sorted(set(seeds) - set(CALIBRATION_SEEDS))
    if outside:
        print(f"warning: seeds {outside} are not calibration seeds", file=sys.stderr)
    runs: dict[str, int | None] = {key[0]: value.runs for key, value in QUICK_SE_CALIBRATION.items()}
    for item in args.runs:
        experiment, _, count = item.partition("=")
        runs[experiment] = None if count == "formula" else int(count)
    current = None
    for (experiment, name), values in sorted(found.items()):
        if experiment not in runs:
            raise SystemExit(f"no run count for {experiment}: pass --runs {experiment}=N")
        if len(values) != len(args.folders):
            raise SystemExit(f"{experiment} / {name}: found in {len(values)} of {len(args.folders)} folders")
        c = calibrate(values, runs=runs[experiment])
        if experiment != current:
            print(f"    # {experiment} (N = {runs[experiment] or 'none: SEs from a formula'})")
            current = experiment
        factor = c.cap / c.standard_error if c.standard_error > 0 else 1.0
        key = f"    ({experiment!r}, {name!r}):"
        value = (f"Calibration({_rounded(c.standard_error, 4, up=True)}, {_rounded(c.dof, 3, up=False)}, {c.runs}),"
                 f"  # cap {c.cap:.3g} (x{factor:.2f})")
        print(f"{key} {value}" if len(key) + len(value) < 120 else f"{key}\n        {value}")
        if c.standard_error == 0:
            print(f"warning: {experiment} / {name}: SE 0 at every seed; state its cap by hand", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
