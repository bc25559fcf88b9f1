"""Writing a plan: ``plan.json`` and ``plan.png`` (the planned risk curve beside the runner-ups; the Pareto front).

Every file is written to a temporary name in the target directory and renamed into place, so a reader never sees a
half-written file. matplotlib (Agg backend) is imported only here, when a figure is drawn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from privdyn.plan._plan import ParetoFront, Plan, Verification
from privdyn.runs.outputs import atomic_path

__all__ = ["write_plan"]


def _atomic_write(path: Path, write: Any) -> None:
    """Call ``write(tmp_path)``, then rename the temporary file to ``path``; the temporary is removed on error.

    The file gets the permissions of any new file (0666 less the umask), like every output of the runner.
    """
    with atomic_path(path) as tmp:
        write(tmp)


def _figure(plan: Plan, pareto: ParetoFront | None, path: Path) -> None:
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    panels = 2 if pareto is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.0 * panels, 4.2), squeeze=False)
    ax = axes[0, 0]
    label = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                      for k, v in list(plan.hyperparameters.items())[:4])  # the leading ones; plan.json has all
    if plan.risk_curve is not None:
        curve = plan.risk_curve
        ax.plot(curve["times"], curve["risk"], color="C0", lw=2, label=f"plan: {label}")
        ax.set_xlabel(curve.get("x_label", "t"))
        ax.set_ylabel(curve.get("y_label", plan.quantity))
        right = float(np.max(curve["times"]))
    else:
        ax.set_xlabel("")
        ax.set_ylabel(plan.quantity)
        right = 1.0
    ax.scatter([right], [plan.predicted_risk], color="C0", zorder=5, marker="o",
               label=f"predicted {plan.quantity}: {plan.predicted_risk:.4g}")
    shown = [plan.predicted_risk]
    for i, alt in enumerate(plan.alternatives[:6]):
        ax.axhline(alt.predicted_risk, color=f"C{i + 1}", ls="--", lw=1,
                   label=f"{alt.name}: {alt.predicted_risk:.4g}")
        shown.append(alt.predicted_risk)
    if plan.risk_curve is not None:
        shown += [float(v) for v in plan.risk_curve["risk"]]
    positive = [v for v in shown if 0 < v < float("inf")]
    if positive and max(positive) > 100.0 * min(positive):  # e.g. dpsgd strategies a factor 300 apart
        ax.set_yscale("log")
    ax.set_title(f"privdyn plan {plan.family}: predicted {plan.quantity}")
    ax.legend(fontsize=7, loc="best")
    if pareto is not None:
        ax2 = axes[0, 1]
        finite = np.isfinite(pareto.predicted)
        ax2.loglog(pareto.budgets[finite], pareto.predicted[finite], "o-", color="C0",
                   label=f"optimized {plan.quantity}")
        here = plan.privacy.epsilon if pareto.budget_name == "epsilon" else plan.privacy.zcdp
        if here is not None:
            ax2.scatter([here], [plan.predicted_risk], color="C3", zorder=5, s=50, label="this plan")
        ax2.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax2.set_xlabel(pareto.budget_name)
        ax2.set_ylabel(plan.quantity)
        ax2.set_title("Pareto front")
        ax2.grid(True, which="both", alpha=0.3)
        ax2.legend(fontsize=7)
    fig.tight_layout()
    try:
        fig.savefig(path, format="png", dpi=120)
    finally:
        plt.close(fig)


def write_plan(plan: Plan, out_dir: Path | str, *, pareto_front: ParetoFront | None = None,
               verification: Verification | None = None) -> list[Path]:
    """Write ``plan.json`` and ``plan.png`` into ``out_dir`` (created if missing); returns the written paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    document = plan.to_json(pareto_front=pareto_front, verification=verification)
    text = json.dumps(document, indent=1, allow_nan=False) + "\n"
    png, js = out / "plan.png", out / "plan.json"
    _atomic_write(png, lambda tmp: _figure(plan, pareto_front, tmp))
    _atomic_write(js, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return [js, png]
