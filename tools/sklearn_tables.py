"""Print the tables of docs/sklearn.md from a ``privdyn run sklearn-regression`` result, as Markdown.

Usage::

    privdyn run sklearn-regression --out OUT
    python tools/sklearn_tables.py OUT/sklearn-regression/result.json

Prints, from the result's own tables (nothing is recomputed): the relative test MSE per dataset and ε (default
DPLinearRegression, AdaSSP, diffprivlib) with the paired difference to AdaSSP; the default fit's ε sweep with the
paired change between consecutive budgets, and how many splits it solved by the release solution; and the
prediction tables (``--public-stats``, the planning share and AdaSSP's: predicted and measured excess test MSE,
their ratio and how many splits carried the ``heuristic`` label).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _num(v: float) -> str:
    a = abs(v)
    if a >= 1e4 or (0 < a < 1e-3):
        return f"{v:.2g}"
    return f"{v:.3g}" if a < 10 else f"{v:.1f}"


def _ci(mean: float, low: float, high: float) -> str:
    return f"{_num(mean)} [{_num(low)}, {_num(high)}]"


def _signed(values: list[float]) -> str:
    mean, low, high = values
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


def render(result: dict[str, Any]) -> str:
    tables = {t["name"]: t["rows"] for t in result["tables"]}
    out: list[str] = []
    rel = {(r[0], r[3], r[4]): r[5:8] for r in tables["relative_mse"]}
    paired = {(r[0], r[1]): r[3:6] for r in tables["paired_difference"]}
    datasets = list(dict.fromkeys(r[0] for r in tables["relative_mse"]))
    epsilons = sorted({r[1] for r in tables["paired_difference"]})
    out += ["| dataset | ε | DPLinearRegression (default) | AdaSSPRegression | diffprivlib | default − AdaSSP "
            "(paired) |", "|---|---|---|---|---|---|"]
    for name in datasets:
        for e in epsilons:
            dp = rel[(name, e, "diffprivlib")]
            out.append(f"| {name} | {e:g} | {_ci(*rel[(name, e, 'DPLinearRegression')])} | "
                       f"{_ci(*rel[(name, e, 'AdaSSPRegression')])} | {_num(dp[0])} | "
                       f"{_signed(paired[(name, e)])} |")
    out += ["", "| dataset | " + " | ".join(f"ε = {e:g}" for e in sorted({k[1] for k in rel
                                                                          if k[2] == "DPLinearRegression"})) + " |"]
    sweep = sorted({k[1] for k in rel if k[2] == "DPLinearRegression"})
    out.append("|---|" + "---|" * len(sweep))
    for name in datasets:
        out.append(f"| {name} | " + " | ".join(_ci(*rel[(name, e, 'DPLinearRegression')]) for e in sweep) + " |")
    out += ["", "| dataset | ε → ε′ | change in relative MSE (paired 95% CI) |", "|---|---|---|"]
    for r in tables["monotonicity"]:
        out.append(f"| {r[0]} | {r[1]:g} → {r[2]:g} | {_signed(r[3:6])} |")
    if "solver" in tables:
        solver = {(r[0], r[1]): r[2:4] for r in tables["solver"]}
        out += ["", "| dataset | " + " | ".join(f"ε = {e:g}" for e in sweep) + " |", "|---|" + "---|" * len(sweep)]
        for name in datasets:
            out.append(f"| {name} | " + " | ".join("{}/{}".format(*solver[(name, e)]) for e in sweep) + " |")
    for key, title in (("public_stats_prediction", "--public-stats"), ("share_prediction", "planning share 0.1"),
                       ("adassp_prediction", "AdaSSPRegression's prediction_ (excess over least squares)")):
        if key not in tables:
            continue
        out += ["", f"{title}:", "", "| dataset | ε | predicted | measured [95% CI] | measured / predicted | "
                "heuristic splits | reasons |", "|---|---|---|---|---|---|---|"]
        for r in tables[key]:
            out.append(f"| {r[0]} | {r[1]:g} | {_num(r[2])} | {_ci(*r[3:6])} | {_num(r[6])} | {r[7]}/{r[8]} | "
                       f"{r[9] or '—'} |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tools/sklearn_tables.py RESULT_JSON", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        print(render(json.load(handle)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
