"""The :class:`Plan` every family returns: chosen hyper-parameters, predicted utility, runner-ups, privacy statement.

A plan is a frozen record plus three actions that every family implements:

* :meth:`Plan.simulate` (``--verify N``): run the planned algorithm ``num_runs`` times on data drawn from the assumed
  model and compare the measured utility with the prediction (:class:`Verification`, with the Monte-Carlo standard
  error);
* :meth:`Plan.pareto_front`: the predicted utility against ε (or the family's budget) over a range, re-optimizing the
  chosen family's hyper-parameters at every budget (:class:`ParetoFront`);
* :meth:`Plan.to_json` / :meth:`Plan.summary`: the plan in ARCHITECTURE.md's vocabulary, and as a readable table.
"""

from __future__ import annotations

import abc
import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from privdyn import _check
from privdyn.plan._budget import PrivacyStatement
from privdyn.plan.families import FAMILIES

__all__ = ["Alternative", "Verification", "ParetoFront", "Plan", "FAMILIES", "json_ready"]


def json_ready(value: Any) -> Any:
    """A value as plain JSON types: arrays become lists, NumPy scalars Python numbers, non-finite floats strings."""
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [json_ready(v) for v in value.tolist()]
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if isinstance(value, np.generic):
        return json_ready(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    if hasattr(value, "value") and isinstance(value.value, str):  # enums
        return value.value
    return value


@dataclasses.dataclass(frozen=True, kw_only=True)
class Alternative:
    """A runner-up: another schedule family (or strategy) with its own optimized hyper-parameters.

    Attributes:
        name: e.g. ``"polynomial (schedule_exponent 1)"``, ``"harmonic"``.
        hyperparameters: its optimized hyper-parameters (vocabulary of the family's JSON).
        predicted_risk: its predicted utility, in the plan's ``quantity``; ``inf`` when the alternative does not
            apply (its note says why).
        note: anything the user should know (an optimum on the search box's bound, a refused combination).
    """

    name: str
    hyperparameters: Mapping[str, float | str]
    predicted_risk: float
    note: str = ""

    def __post_init__(self) -> None:
        _check.instance(str, name=self.name, note=self.note)
        _check.instance(Mapping, hyperparameters=self.hyperparameters)
        _check.record(self, infinite=("predicted_risk",))

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, **json_ready(dict(self.hyperparameters)),
                "predicted_risk": json_ready(self.predicted_risk), "note": self.note}


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class Verification:
    """The planned algorithm run ``num_runs`` times against the plan's prediction.

    Attributes:
        num_runs, seed: the runs.
        quantity: what was measured (the plan's ``quantity``).
        predicted: the plan's prediction.
        measured: (num_runs,) the measured value of every run.
        mean, standard_deviation, standard_error: their mean, sd (ddof 1) and SE = sd/√num_runs.
        z: the standard errors the comparison allows (5).
        within: ``abs(mean - predicted) <= z * SE`` (a deterministic equivalent also has a finite-size bias, see
            ``note``).
        note: how to read the comparison.

    At least two runs (for a standard error); every number is finite.
    """

    num_runs: int
    seed: int
    quantity: str
    predicted: float
    measured: np.ndarray
    mean: float
    standard_deviation: float
    standard_error: float
    z: float
    within: bool
    note: str

    def __post_init__(self) -> None:
        _check.integer(minimum=2, num_runs=self.num_runs)
        _check.record(self)

    @classmethod
    def from_runs(cls, runs: ArrayLike, *, predicted: float, quantity: str, seed: int, note: str,
                  one_sided: bool = False) -> Verification:
        """Summary statistics of ``runs``; ``one_sided``: the prediction is an upper bound (mean <= bound + z·SE)."""
        x = np.asarray(runs, dtype=float).ravel()
        if x.size < 2:
            raise ValueError(f"runs must hold at least 2 values (for a standard error); got {x.size}.")
        sd = float(np.std(x, ddof=1))
        se = sd / math.sqrt(x.size)
        mean = float(np.mean(x))
        z = 5.0
        if one_sided:
            within = bool(mean <= predicted + z * se)
        else:
            within = bool(abs(mean - predicted) <= z * se)
        return cls(num_runs=int(x.size), seed=int(seed), quantity=quantity, predicted=float(predicted), measured=x,
                   mean=mean, standard_deviation=sd, standard_error=se, z=z, within=within, note=note)

    def to_json(self) -> dict[str, object]:
        return json_ready({"num_runs": self.num_runs, "seed": self.seed, "quantity": self.quantity,
                           "predicted": self.predicted, "mean": self.mean,
                           "standard_deviation": self.standard_deviation, "standard_error": self.standard_error,
                           "z": self.z, "within_z_standard_errors": self.within, "note": self.note,
                           "measured": self.measured})

    def text(self) -> str:
        verdict = "within" if self.within else "NOT within"
        return (f"verification ({self.num_runs} runs, seed {self.seed}): predicted {self.predicted:.6g}, measured "
                f"{self.mean:.6g} ± {self.standard_error:.3g} (SE); {verdict} {self.z:g} SE. {self.note}")


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class ParetoFront:
    """Predicted utility against the privacy budget, the chosen family re-optimized at every budget.

    Attributes:
        budget_name: the x quantity (``"epsilon"``, ``"zcdp"``, ``"rdp_epsilon"``).
        budgets: (P,) the budgets, increasing.
        predicted: (P,) the predicted utility at each (``inf`` where no setting meets the budget).
        quantity: what ``predicted`` is.
        hyperparameters: the optimized hyper-parameters at each budget.
        note: how the front was computed.
    """

    budget_name: str
    budgets: np.ndarray
    predicted: np.ndarray
    quantity: str
    hyperparameters: tuple[Mapping[str, float | str], ...]
    note: str = ""

    def to_json(self) -> dict[str, object]:
        return json_ready({"budget_name": self.budget_name, "budgets": self.budgets, "predicted": self.predicted,
                           "quantity": self.quantity, "hyperparameters": [dict(h) for h in self.hyperparameters],
                           "note": self.note})


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class Plan(abc.ABC):
    """Hyper-parameters for a privacy budget, their predicted utility and the certified (or labelled) privacy.

    Attributes:
        family: one of :data:`FAMILIES`.
        inputs: what the plan was computed from (sizes, the assumed data model, the budget as given).
        hyperparameters: the chosen hyper-parameters, keyed by ARCHITECTURE.md's vocabulary (top-level JSON keys).
        per_step: per-step arrays (``step_sizes``, ``noise_stds``), top-level JSON keys too.
        predicted_risk: the predicted utility of the released model, in ``quantity``.
        quantity: what ``predicted_risk`` measures (e.g. ``"excess_risk"``).
        method: how it was predicted (``"ode"``, ``"volterra"``, ``"theory"``, ``"closed_form"``).
        risk_curve: ``{"times": [...], "risk": [...]}`` along training, when the predictor gives one.
        alternatives: the runner-ups, best first.
        privacy: the :class:`PrivacyStatement`.
        notes: what the user should know about this plan.
        search: how the plan was found (evaluations, bounds hit, elapsed seconds).
    """

    family: str
    inputs: Mapping[str, object]
    hyperparameters: Mapping[str, float | str]
    per_step: Mapping[str, np.ndarray]
    predicted_risk: float
    quantity: str
    method: str
    risk_curve: Mapping[str, Any] | None
    alternatives: tuple[Alternative, ...]
    privacy: PrivacyStatement
    notes: tuple[str, ...] = ()
    search: Mapping[str, object] = dataclasses.field(default_factory=dict)

    # --- family-specific actions ------------------------------------------------------------------------------

    @abc.abstractmethod
    def simulate(self, num_runs: int, seed: int = 0) -> Verification:
        """Run the planned algorithm ``num_runs`` times on data from the assumed model (``--verify N``)."""

    @abc.abstractmethod
    def pareto_front(self, budgets: Sequence[float] | None = None, *, num_points: int = 7) -> ParetoFront:
        """The predicted utility against the budget, re-optimizing the chosen family at every budget."""

    def privacy_fields(self) -> dict[str, object]:
        """The top-level privacy keys of the JSON (``epsilon``, ``delta``, ``zcdp``, ``guarantee``, ...)."""
        p = self.privacy
        return {"epsilon": p.epsilon, "delta": p.delta, "zcdp": p.zcdp, "guarantee": p.guarantee.value,
                "neighboring": p.neighboring.value, "sampler": p.sampler, **dict(p.extra)}

    # --- output -------------------------------------------------------------------------------------------------

    def to_json(self, *, pareto_front: ParetoFront | None = None,
                verification: Verification | None = None) -> dict[str, object]:
        """The plan as one JSON-ready dictionary (ARCHITECTURE.md vocabulary; arrays as lists)."""
        from privdyn._version import version

        out: dict[str, Any] = {"family": self.family, **dict(self.hyperparameters),
                               "predicted_risk": self.predicted_risk, "quantity": self.quantity,
                               "method": self.method, **self.privacy_fields()}
        out.update({name: values for name, values in self.per_step.items()})
        out["alternatives"] = [a.to_json() for a in self.alternatives]
        out["risk_curve"] = None if self.risk_curve is None else dict(self.risk_curve)
        out["privacy_statement"] = self.privacy.to_json()
        out["inputs"] = dict(self.inputs)
        out["notes"] = list(self.notes)
        out["search"] = dict(self.search)
        prediction = getattr(self, "prediction", None)
        if prediction:
            out["predicted_excess_mse"] = prediction["excess_mse"]
            out["prediction"] = dict(prediction)
        out["pareto_front"] = None if pareto_front is None else pareto_front.to_json()
        out["verification"] = None if verification is None else verification.to_json()
        out["privdyn_version"] = version()
        return json_ready(out)

    def summary(self) -> str:
        """A readable table of the plan (what the CLI prints without ``--json``)."""
        lines = [f"privdyn plan: {self.family}", ""]
        width = max([len(k) for k in self.hyperparameters] + [len("predicted_risk")]) + 2
        lines.append("chosen hyper-parameters")
        for key, value in self.hyperparameters.items():
            lines.append(f"  {key:<{width}} {_fmt(value)}")
        for key, values in self.per_step.items():
            arr = np.asarray(values, dtype=float)
            lines.append(f"  {key:<{width}} {arr.size} values, first {_fmt(arr[0])}, last {_fmt(arr[-1])}")
        lines.append(f"  {'predicted_risk':<{width}} {_fmt(self.predicted_risk)} ({self.quantity}, {self.method})")
        prediction = getattr(self, "prediction", None)
        if prediction:
            low, high = prediction["interval"]
            lines.append(f"  {'predicted_excess_mse':<{width}} {_fmt(prediction['excess_mse'])} "
                         f"[{_fmt(low)}, {_fmt(high)}] (label {prediction['label']}; excess over the best linear "
                         f"predictor, label units squared)")
        if self.alternatives:
            lines += ["", "runner-ups (predicted_risk)"]
            for alt in self.alternatives:
                params = ", ".join(f"{k}={_fmt(v)}" for k, v in alt.hyperparameters.items())
                lines.append(f"  {alt.name:<36} {_fmt(alt.predicted_risk):>12}   {params}"
                             + (f"   [{alt.note}]" if alt.note else ""))
        lines += ["", "privacy statement", "  " + self.privacy.text()]
        if self.notes:
            lines += ["", "notes"] + [f"  - {note}" for note in self.notes]
        return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return f"{float(value):.6g}"
    return str(value)
