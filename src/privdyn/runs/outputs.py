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
import secrets
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_write_text",
    "atomic_path",
    "write_json",
    "series_csv",
    "environment",
    "source_revision",
    "summary_rows",
    "summary_markdown",
]


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it onto ``path``, on failure remove it.

    The file gets the permissions of any new file (0666 less the umask), not the owner-only mode of ``mkstemp``, so
    an output folder can be shared or served as it is.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp_path = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
        try:
            fd = os.open(tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:  # pragma: no cover - a 64-bit random name collided
            continue
        os.close(fd)
        break
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


def _git(args: Sequence[str], cwd: Path) -> str | None:
    """``git ARGS`` in ``cwd``: its stripped output, or None when git is missing or fails."""
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _installed_vcs_commit(direct_url: str | None) -> str | None:
    """The commit recorded by pip for a package installed from a git URL (PEP 610 ``direct_url.json``), else None."""
    if not direct_url:
        return None
    try:
        info = json.loads(direct_url)
    except json.JSONDecodeError:
        return None
    vcs = info.get("vcs_info") if isinstance(info, dict) else None
    commit = vcs.get("commit_id") if isinstance(vcs, dict) and vcs.get("vcs") == "git" else None
    return commit if isinstance(commit, str) and len(commit) == 40 else None


def source_revision(source_dir: Path, *, version: str, direct_url: str | None = None) -> dict[str, Any]:
    """Which code produced a result: ``git_commit``, ``git_dirty`` and, when there is no commit, ``git_commit_reason``.

    ``source_dir`` is the directory of the imported ``privdyn`` package. It is a checkout when it is ``src/privdyn``
    of a git work tree (an editable install or a run from the source tree); then the commit is ``HEAD`` and
    ``git_dirty`` says whether tracked files under ``src/`` differ from it. A package installed from a git URL records
    the commit pip installed (``direct_url``, the package's PEP 610 record). Any other installed package has no
    commit: the version identifies the code, and ``git_commit_reason`` says so.
    """
    source_dir = source_dir.resolve()
    toplevel = _git(["rev-parse", "--show-toplevel"], source_dir)
    if toplevel is not None and (Path(toplevel) / "src" / "privdyn").resolve() == source_dir:
        commit = _git(["rev-parse", "HEAD"], source_dir)
        if commit is not None and len(commit) == 40:
            status = _git(["status", "--porcelain", "--untracked-files=no", "--", "src"], Path(toplevel))
            return {"git_commit": commit, "git_dirty": None if status is None else bool(status),
                    "git_commit_reason": None}
        return {"git_commit": None, "git_dirty": None,
                "git_commit_reason": f"a git checkout without a readable HEAD commit; privdyn {version}"}
    commit = _installed_vcs_commit(direct_url)
    if commit is not None:
        return {"git_commit": commit, "git_dirty": False, "git_commit_reason": None}
    if toplevel is None and any((parent / ".git").exists() for parent in (source_dir, *source_dir.parents)):
        reason = f"a git checkout, but the git command is unavailable; privdyn {version}"
    else:
        reason = f"installed package privdyn {version}, not a git checkout: the version identifies the code"
    return {"git_commit": None, "git_dirty": None, "git_commit_reason": reason}


def _direct_url() -> str | None:
    from importlib import metadata

    try:
        return metadata.distribution("privdyn").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None


def environment() -> dict[str, Any]:
    """Versions recorded in every result, and the git commit of the source (see :func:`source_revision`)."""
    import numpy
    import scipy

    from privdyn._version import package_dir, version

    return {
        "privdyn": version(),
        **source_revision(package_dir(), version=version(), direct_url=_direct_url()),
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
    """``summary.md``: per-experiment counts, elapsed and output-writing times, then one row per check."""
    lines = ["# privdyn reproduce: summary", "", "| experiment | passed | failed | not applicable / finding |"
             " elapsed (s) | writing outputs (s) |", "|---|---|---|---|---|---|"]
    for r in results:
        passed = sum(c["passed"] is True for c in r["checks"])
        failed = sum(c["passed"] is False for c in r["checks"])
        other = sum(c["passed"] is None for c in r["checks"])
        writing = "—" if r.get("outputs_s") is None else f"{r['outputs_s']:.2f}"
        lines.append(f"| {r['experiment']} | {passed} | {failed} | {other} | {r['elapsed_s']:.2f} | {writing} |")
    lines += ["", "## Checks", "", "| " + " | ".join(SUMMARY_COLUMNS) + " |",
              "|" + "---|" * len(SUMMARY_COLUMNS)]
    for row in summary_rows(results):
        lines.append("| " + " | ".join(_cell(row[c]) for c in SUMMARY_COLUMNS) + " |")
    return "\n".join(lines) + "\n"
