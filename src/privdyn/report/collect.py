"""Reading an output folder's ``result.json`` files into what the report shows (ARCHITECTURE.md, "Outputs").

Only the files are read: no experiment, registry or engine is imported, so a report can be made from any output
folder (copied from another machine, or made by another privdyn version that keeps the layout). Every problem with
the folder raises :class:`ReportError` with a one-line message naming the file and what is wrong with it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from privdyn.report.full_runs import full_run_outcome, full_run_summary
from privdyn.runs.results import CheckKind, fails_strict

__all__ = [
    "ReportError",
    "CheckRow",
    "Curve",
    "Figure",
    "ExperimentView",
    "PaperView",
    "Report",
    "collect",
    "format_value",
]

RESULT_FILE = "result.json"
SUMMARY_FILE = "summary.json"

PRIVACY_QUANTITIES = frozenset({"epsilon", "rdp_epsilon", "zcdp", "rho", "delta", "privacy_loss"})
"""``y_label`` values of privacy curves (ARCHITECTURE.md's vocabulary); such a curve must carry a guarantee label."""

GUARANTEES = ("exact", "bound", "estimate", "surrogate", "lower_bound", "heuristic")

_REQUIRED = {"experiment": str, "title": str, "paper": str, "config": dict, "seed": int, "quick": bool,
             "series": list, "tables": list, "metrics": list, "checks": list, "artifacts": list,
             "environment": dict, "elapsed_s": float}
_JSON_TYPES = {str: "string", dict: "object", int: "integer", bool: "boolean", list: "array", float: "number"}
_CHECK_KEYS = ("name", "kind", "claim", "expected", "measured", "tolerance", "standard_error", "passed", "note")
_CITATION = re.compile(r"^(?P<paper>.*?\(arXiv (?P<arxiv>[^)\s]+)\))(?:,\s*(?P<part>.+))?$", re.DOTALL)


class ReportError(ValueError):
    """An output folder that cannot be reported; the message is one line."""


@dataclasses.dataclass(frozen=True)
class CheckRow:
    """One check as shown: display strings, and ``status`` one of passed, failed, not_applicable, finding."""

    experiment: str
    name: str
    kind: str
    claim: str
    status: str
    expected: str
    measured: str
    tolerance: str
    standard_error: str
    margin: str
    """The margin (tolerance minus the deviation it bounds; < 0 fails), or words saying why there is none."""
    expected_words: str
    """``expected`` for the failure cards: the value, or words saying why there is none."""
    full_values: str
    """Expected and measured written out in full (for a tooltip where the cells are cut)."""
    note: str
    unexplained: bool
    """A failed invariant, or a failed paper claim without a note: what ``--strict`` fails on."""
    full_run: str = ""
    """Where this is a quick run and the full configuration's recorded outcome differs: what the full run gave."""


@dataclasses.dataclass(frozen=True)
class Curve:
    """A privacy curve (a series of a privacy quantity, or one that carries a guarantee label)."""

    name: str
    quantity: str
    guarantee: str | None
    params: str

    @property
    def labelled(self) -> bool:
        """Whether the curve carries one of the guarantee labels of ARCHITECTURE.md (:data:`GUARANTEES`)."""
        return self.guarantee in GUARANTEES


@dataclasses.dataclass(frozen=True)
class Figure:
    png: str
    """Path of the PNG relative to the report file."""
    svg: str | None
    """Path of the SVG beside it, when there is one."""
    name: str


@dataclasses.dataclass(frozen=True)
class ExperimentView:
    name: str
    title: str
    paper_key: str
    reproduces: str
    """The part of the paper reproduced (``Figure 1``), or the whole citation when it names no part."""
    folder: str
    """The experiment's folder relative to the report file (``""`` when the report sits in it)."""
    seed: int
    quick: bool
    elapsed_s: float
    compute_s: float | None
    """What computing the result cost (its units' times as recorded when computed; survives a cached rerun)."""
    paper_url: str | None
    """The paper (arXiv PDF) that holds the reproduced figure, when the citation names an arXiv id."""
    full_run: str | None
    """For a quick run: the recorded full run's outcome in one sentence, where one is recorded."""
    environment: Mapping[str, Any]
    config: list[tuple[str, str]]
    figures: list[Figure]
    files: list[str]
    curves: list[Curve]
    checks: list[CheckRow]
    tables: Sequence[Mapping[str, Any]]
    metrics: list[tuple[str, str, str]]

    def count(self, kind: str, status: str | None = None) -> int:
        return sum(c.kind == kind and (status is None or c.status == status) for c in self.checks)

    @property
    def cost_s(self) -> float:
        """The recorded compute cost, or this run's elapsed time where none is recorded."""
        return self.elapsed_s if self.compute_s is None else self.compute_s

    @property
    def full_run_differs(self) -> list[CheckRow]:
        return [c for c in self.checks if c.full_run]

    @property
    def failed(self) -> int:
        return sum(c.status == "failed" for c in self.checks)

    @property
    def guarantee_counts(self) -> list[tuple[str | None, int, bool]]:
        """Each guarantee label of the privacy curves (None: no label), how many curves carry it, and whether it is
        a known label; in order of first appearance."""
        counts: dict[str | None, int] = {}
        for curve in self.curves:
            counts[curve.guarantee] = counts.get(curve.guarantee, 0) + 1
        return [(label, count, label in GUARANTEES) for label, count in counts.items()]

    @property
    def anchor(self) -> str:
        return f"exp-{self.name}"


@dataclasses.dataclass(frozen=True)
class PaperView:
    key: str
    citation: str
    arxiv: str | None
    experiments: list[ExperimentView]

    def count(self, kind: str, status: str | None = None) -> int:
        return sum(e.count(kind, status) for e in self.experiments)


@dataclasses.dataclass(frozen=True)
class Report:
    directory: str
    papers: list[PaperView]
    experiments: list[ExperimentView]
    environments: list[tuple[Mapping[str, Any], list[str]]]
    """Each distinct environment and the experiments run in it."""

    @property
    def checks(self) -> list[CheckRow]:
        return [c for e in self.experiments for c in e.checks]

    def failed(self, kind: str) -> list[CheckRow]:
        return [c for c in self.checks if c.kind == kind and c.status == "failed"]

    def count(self, status: str) -> int:
        return sum(c.status == status for c in self.checks)

    @property
    def elapsed_s(self) -> float:
        return sum(e.elapsed_s for e in self.experiments)

    @property
    def cost_s(self) -> float:
        return sum(e.cost_s for e in self.experiments)

    @property
    def quick(self) -> str:
        modes = {e.quick for e in self.experiments}
        return "quick" if modes == {True} else "full" if modes == {False} else "mixed quick and full"

    @property
    def seeds(self) -> list[int]:
        return sorted({e.seed for e in self.experiments})


def format_value(value: Any, *, limit: int = 80) -> str:
    """A JSON value as a short string: 6 significant digits, non-finite floats as symbols, long lists cut."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        if value in ("inf", "-inf", "nan"):
            return _number(float(value))
        return value if len(value) <= limit else value[:limit - 1] + "…"
    if isinstance(value, list) and all(isinstance(v, int | float | str) and not isinstance(v, bool) for v in value):
        parts = [format_value(v) for v in value]
        text = "[" + ", ".join(parts) + "]"
        if len(text) <= limit:
            return text
        shown = parts[:1]  # the first and last values always, as many between as fit
        for part in parts[1:-1]:
            if len(", ".join([*shown, part, parts[-1]])) > limit - 16:
                break
            shown.append(part)
        return "[" + ", ".join([*shown, "…", parts[-1]]) + f"] ({len(value)} values)"
    text = json.dumps(value, separators=(", ", ": "))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.6g}".replace("-", "−")


def _status(check: Mapping[str, Any]) -> str:
    if check["passed"] is True:
        return "passed"
    if check["passed"] is False:
        return "failed"
    return "finding" if check["kind"] == CheckKind.FINDING else "not_applicable"


def _read(path: Path, display: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"cannot read {display}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError:
        raise ReportError(f"{display} is not UTF-8 text.") from None
    except json.JSONDecodeError as exc:
        raise ReportError(f"{display} is not valid JSON (line {exc.lineno}: {exc.msg}).") from None
    if not isinstance(data, dict):
        raise ReportError(f"{display} is not a privdyn result: a JSON object is expected.")
    return data


def _validate(data: Mapping[str, Any], display: str) -> None:
    for key, kind in _REQUIRED.items():
        if key not in data:
            raise ReportError(f"{display} is not a privdyn result: the key {key!r} is missing.")
        value = data[key]
        ok = isinstance(value, int | float) and not isinstance(value, bool) if kind is float else (
            isinstance(value, kind) and not (kind is int and isinstance(value, bool)))
        if not ok:
            raise ReportError(f"{display} is not a privdyn result: {key!r} must be a JSON {_JSON_TYPES[kind]}.")
    for i, check in enumerate(data["checks"]):
        if not isinstance(check, dict) or any(k not in check for k in _CHECK_KEYS):
            raise ReportError(f"{display} is not a privdyn result: check {i} lacks one of {', '.join(_CHECK_KEYS)}.")
        if check["kind"] not in {k.value for k in CheckKind}:
            raise ReportError(f"{display}: check {check['name']!r} has the unknown kind {check['kind']!r}.")
    for i, series in enumerate(data["series"]):
        if not isinstance(series, dict) or not isinstance(series.get("params"), dict):
            raise ReportError(f"{display} is not a privdyn result: series {i} has no params object.")


def _find_results(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise ReportError(f"{directory} is not a directory; give an output folder of privdyn run or reproduce.")
    if (directory / RESULT_FILE).is_file():
        return [directory / RESULT_FILE]
    found = sorted(p for p in directory.glob(f"*/{RESULT_FILE}") if p.is_file())
    if not found:
        raise ReportError(f"no {RESULT_FILE} in {directory} or its subfolders; write one with privdyn run or "
                          "reproduce --out DIR first.")
    return found


def _natural_key(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _order(directory: Path, names: Sequence[str]) -> list[str]:
    """Run order of ``reproduce`` (``summary.json``) first, then any other experiment in natural name order."""
    listed: list[str] = []
    summary = directory / SUMMARY_FILE
    if summary.is_file():
        data = _read(summary, str(summary))
        rows = data.get("experiments")
        if isinstance(rows, list):
            listed = [r["experiment"] for r in rows if isinstance(r, dict) and r.get("experiment") in names]
    rest = sorted((n for n in names if n not in listed), key=_natural_key)
    return [*dict.fromkeys(listed), *rest]


def _flatten(config: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for key, value in config.items():
        if isinstance(value, dict):
            rows.extend(_flatten(value, f"{prefix}{key}."))
        else:
            rows.append((prefix + key, format_value(value, limit=160)))
    return rows


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {format_value(v)}" for k, v in params.items() if k != "guarantee")


def _curves(series: Sequence[Mapping[str, Any]]) -> list[Curve]:
    curves = []
    for s in series:
        guarantee = s["params"].get("guarantee")
        quantity = str(s.get("y_label", ""))
        if guarantee is None and quantity not in PRIVACY_QUANTITIES:
            continue
        curves.append(Curve(name=str(s.get("name", "")), quantity=quantity,
                            guarantee=None if guarantee is None else str(guarantee), params=_params_text(s["params"])))
    return curves


def _expected_words(check: Mapping[str, Any], shown: str) -> str:
    """``expected`` as shown on a failure card: where there is no value, why."""
    if check["expected"] is not None:
        return shown
    if check["kind"] == CheckKind.FINDING:
        return "none (a finding has no expected outcome)"
    if check["passed"] is None:
        return "none (not applicable to this config)"
    return "none (an ordering or a condition: see the claim)"


def _margin_words(check: Mapping[str, Any]) -> str:
    margin = check.get("margin")
    if margin is not None:
        return format_value(margin)
    if check["kind"] == CheckKind.FINDING or check["passed"] is None:
        return "—"
    return "not recorded"


def _check_rows(experiment: str, checks: Sequence[Mapping[str, Any]], quick: bool) -> list[CheckRow]:
    rows = []
    for c in checks:
        expected, measured = format_value(c["expected"], limit=30), format_value(c["measured"], limit=30)
        full = (f"expected {format_value(c['expected'], limit=600)}; measured {format_value(c['measured'], limit=600)}"
                if "…" in expected + measured else "")
        status = _status(c)
        full_run = ""
        if quick:
            recorded = full_run_outcome(experiment, str(c["name"]))
            if recorded is not None and recorded.status != status and "failed" in (recorded.status, status):
                full_run = f"{recorded.status_words} in the full configuration ({recorded.source})"
        rows.append(CheckRow(experiment=experiment, name=str(c["name"]), kind=str(c["kind"]), claim=str(c["claim"]),
                             status=status, expected=expected, measured=measured,
                             tolerance=format_value(c["tolerance"]), standard_error=format_value(c["standard_error"]),
                             margin=_margin_words(c), expected_words=_expected_words(c, expected),
                             full_values=full, note=str(c["note"] or ""), unexplained=fails_strict(c),
                             full_run=full_run))
    return rows


def _relative(path: Path, start: Path) -> str:
    """A relative URL path (forward slashes, percent-encoded) from the report's folder."""
    from urllib.parse import quote

    return quote(path.relative_to(start).as_posix())


def _figures(folder: Path, report_dir: Path, artifacts: Sequence[Any]) -> tuple[list[Figure], list[str]]:
    figures, files = [], []
    names = [a for a in artifacts if isinstance(a, str)]
    for name in names:
        if name.endswith(".png") and (folder / name).is_file():
            svg = name.removesuffix(".png") + ".svg"
            figures.append(Figure(png=_relative(folder / name, report_dir), name=name,
                                  svg=_relative(folder / svg, report_dir) if (folder / svg).is_file() else None))
    for name in ("result.json", *(n for n in names if not n.endswith((".png", ".svg")))):
        if (folder / name).is_file():
            files.append(_relative(folder / name, report_dir))
    return figures, files


def _split_citation(paper: str) -> tuple[str, str | None, str]:
    """``"A, B 2021 (arXiv 2102.05855), Figure 1"`` -> (``"A, B 2021 (arXiv 2102.05855)"``, ``"2102.05855"``,
    ``"Figure 1"``); a citation without an arXiv id is kept whole."""
    match = _CITATION.match(paper.strip())
    if match is None:
        return paper, None, paper
    return match["paper"], match["arxiv"], match["part"] or match["paper"]


def _experiment(data: Mapping[str, Any], folder: Path, report_dir: Path) -> ExperimentView:
    name = data["experiment"]
    _, _, part = _split_citation(data["paper"])
    figures, files = _figures(folder, report_dir, data["artifacts"])
    metrics = [(str(m.get("name", "")), _params_text(m.get("params") or {}), format_value(m.get("value")))
               for m in data["metrics"] if isinstance(m, dict)]
    tables = [{"name": str(t.get("name", "")), "columns": [str(c) for c in t.get("columns", [])],
               "rows": [[format_value(v, limit=60) for v in row] for row in t.get("rows", [])]}
              for t in data["tables"] if isinstance(t, dict)]
    folder_url = "" if folder == report_dir else _relative(folder, report_dir) + "/"
    _, arxiv, _ = _split_citation(data["paper"])
    compute = data.get("compute_s")
    return ExperimentView(
        name=name, title=data["title"], paper_key=name.split("-", 1)[0], reproduces=part, folder=folder_url,
        seed=data["seed"], quick=data["quick"], elapsed_s=float(data["elapsed_s"]),
        compute_s=float(compute) if isinstance(compute, int | float) and not isinstance(compute, bool) else None,
        paper_url=f"https://arxiv.org/pdf/{arxiv}" if arxiv else None,
        full_run=full_run_summary(name) if data["quick"] else None, environment=data["environment"],
        config=_flatten(data["config"]), figures=figures, files=files, curves=_curves(data["series"]),
        checks=_check_rows(name, data["checks"], bool(data["quick"])), tables=tables, metrics=metrics)


def collect(directory: Path) -> Report:
    """Read every ``result.json`` of ``directory`` (an output folder, or one experiment's folder).

    Raises :class:`ReportError` when there is none, or when one cannot be read or is not a privdyn result.
    """
    directory = Path(directory)
    paths = _find_results(directory)
    loaded: dict[str, tuple[dict[str, Any], Path]] = {}
    for path in paths:
        display = str(path)
        data = _read(path, display)
        _validate(data, display)
        if data["experiment"] in loaded:
            raise ReportError(f"{display}: experiment {data['experiment']!r} appears twice in {directory}.")
        loaded[data["experiment"]] = (data, path.parent)
    experiments = [_experiment(*loaded[name], directory) for name in _order(directory, list(loaded))]
    papers: dict[str, PaperView] = {}
    for exp in experiments:
        if exp.paper_key not in papers:
            citation, arxiv, _ = _split_citation(loaded[exp.name][0]["paper"])
            papers[exp.paper_key] = PaperView(key=exp.paper_key, citation=citation, arxiv=arxiv, experiments=[])
        papers[exp.paper_key].experiments.append(exp)
    environments: list[tuple[Mapping[str, Any], list[str]]] = []
    for exp in experiments:
        for env, names in environments:
            if env == exp.environment:
                names.append(exp.name)
                break
        else:
            environments.append((exp.environment, [exp.name]))
    return Report(directory=directory.resolve().name, papers=list(papers.values()), experiments=experiments,
                  environments=environments)
