"""Writing an experiment's outputs: atomic files, ``result.json``, ``series.csv``, figures and summaries.

Every file is written to a temporary file in the target directory and renamed into place, so a reader never sees a
half-written file and a killed run leaves either the old file or the new one.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import platform
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_write_text",
    "atomic_path",
    "write_json",
    "series_csv",
    "environment",
    "summary_rows",
    "summary_markdown",
]


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it onto ``path``, on failure remove it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def atomic_write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: Path, data: Any) -> None:
    """Write strict JSON (no NaN/Infinity tokens; see ``results.to_jsonable``)."""
    atomic_write_text(path, json.dumps(data, indent=2, allow_nan=False) + "\n")


def series_csv(series: Sequence[Mapping[str, Any]]) -> str:
    """Long-format CSV of the series: one column per ``params`` key, then x, y, bands and z where present."""
    param_keys: list[str] = []
    for s in series:
        for key in s["params"]:
            if key not in param_keys:
                param_keys.append(key)
    extra = [k for k in ("y_low", "y_high", "standard_error") if any(k in s for s in series)]
    has_z = any("z" in s for s in series)
    columns = ["series", *param_keys, "x", "y", *extra, *(["z"] if has_z else [])]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for s in series:
        head = [s["name"], *(s["params"].get(k, "") for k in param_keys)]
        if "z" in s:
            for i, y in enumerate(s["y"]):
                for j, x in enumerate(s["x"]):
                    writer.writerow([*head, x, y, *([""] * len(extra)), s["z"][i][j]])
            continue
        for i, (x, y) in enumerate(zip(s["x"], s["y"], strict=True)):
            row = [*head, x, y, *(s[k][i] if k in s else "" for k in extra)]
            if has_z:
                row.append("")
            writer.writerow(row)
    return buffer.getvalue()


def _git_commit() -> str | None:
    source_dir = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source_dir, capture_output=True, text=True,
                             timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and len(commit) == 40 else None


def environment() -> dict[str, Any]:
    """Versions recorded in every result (the git commit only as metadata, when the source is a checkout)."""
    import numpy
    import scipy

    import privdyn

    return {
        "privdyn": privdyn.__version__,
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
    }


SUMMARY_COLUMNS = ("experiment", "check", "kind", "passed", "expected", "measured", "note")


def summary_rows(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per check of every experiment."""
    rows = []
    for result in results:
        for check in result["checks"]:
            rows.append({
                "experiment": result["experiment"],
                "check": check["name"],
                "kind": check["kind"],
                "passed": check["passed"],
                "expected": check["expected"],
                "measured": check["measured"],
                "note": check["note"],
            })
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        text = json.dumps(value)
        return text if len(text) <= 60 else text[:57] + "…"
    return str(value).replace("|", "\\|").replace("\n", " ")


def summary_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """``summary.md``: per-experiment counts and elapsed times, then one row per check."""
    lines = ["# privdyn reproduce: summary", "", "| experiment | passed | failed | not applicable / finding |"
             " elapsed (s) |", "|---|---|---|---|---|"]
    for r in results:
        passed = sum(c["passed"] is True for c in r["checks"])
        failed = sum(c["passed"] is False for c in r["checks"])
        other = sum(c["passed"] is None for c in r["checks"])
        lines.append(f"| {r['experiment']} | {passed} | {failed} | {other} | {r['elapsed_s']:.2f} |")
    lines += ["", "## Checks", "", "| " + " | ".join(SUMMARY_COLUMNS) + " |",
              "|" + "---|" * len(SUMMARY_COLUMNS)]
    for row in summary_rows(results):
        lines.append("| " + " | ".join(_cell(row[c]) for c in SUMMARY_COLUMNS) + " |")
    return "\n".join(lines) + "\n"
