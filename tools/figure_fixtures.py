"""Write the small result files that ``tests/experiments/test_figures.py`` renders every figure from.

Usage::

    privdyn reproduce --quick --out OUT
    privdyn reproduce --quick --only sklearn-regression --only sklearn-classification --out OUT
    python tools/figure_fixtures.py OUT

For every experiment folder of ``OUT`` this writes ``tests/experiments/figure_results/NAME.json.gz``: the quick run's
``result.json`` without its environment, timing and artifact list, each curve thinned to at most
:data:`MAX_POINTS` points (evenly spaced indices, both ends kept; the band, standard-error and x arrays of a curve are
thinned alike; heatmaps are kept whole). The files are gzip-compressed with a zero timestamp, so equal results give
equal bytes. Rerun it when an experiment changes what its plot reads.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["MAX_POINTS", "FIXTURE_DIR", "thin", "main"]

MAX_POINTS = 120
FIXTURE_DIR = Path(__file__).resolve().parent.parent / "tests" / "experiments" / "figure_results"
_DROPPED = ("environment", "elapsed_s", "outputs_s", "compute_s", "artifacts")
_PER_POINT = ("x", "y", "y_low", "y_high", "standard_error")


def thin(result: dict[str, Any], max_points: int = MAX_POINTS) -> dict[str, Any]:
    """``result`` without run metadata and with every curve of more than ``max_points`` points thinned."""
    out = {k: v for k, v in result.items() if k not in _DROPPED}
    series = []
    for s in result["series"]:
        n = len(s["x"])
        if "z" in s or n <= max_points or any(isinstance(s.get(k), list) and len(s[k]) != n for k in _PER_POINT):
            series.append(s)
            continue
        step = (n - 1) / (max_points - 1)
        keep = sorted({round(i * step) for i in range(max_points)})
        series.append({k: [v[i] for i in keep] if k in _PER_POINT and isinstance(v, list) else v
                       for k, v in s.items()})
    out["series"] = series
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="a privdyn reproduce output folder")
    args = parser.parse_args(argv)
    FIXTURE_DIR.mkdir(parents=True, exist_ok=True)
    for path in sorted(args.out.glob("*/result.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        text = json.dumps(thin(result), sort_keys=True, separators=(",", ":"))
        target = FIXTURE_DIR / f"{result['experiment']}.json.gz"
        target.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))
        print(f"{target.name}: {target.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
