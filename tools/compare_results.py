"""Compare the ``result.json`` files of two output folders, number by number.

Usage::

    python tools/compare_results.py REFERENCE_DIR CANDIDATE_DIR [--atol A] [--rtol R] [--max-report N]

Both folders are ``privdyn reproduce`` (or ``privdyn run``) output directories: one sub-folder per experiment, each
holding a ``result.json``. For every experiment present in either folder, the two files are walked side by side over
every field except the ones that legitimately differ between runs (``environment``, ``elapsed_s``, ``outputs_s`` and
any other key whose name says it is a duration). Floats are compared numerically (the non-finite values that
``result.json`` spells as ``"inf"``, ``"-inf"`` and ``"nan"`` count as floats and must match exactly); every other
value (strings, integers, booleans, ``null``, list lengths, key sets) must be equal.

The report gives the number of floats compared, the worst absolute and the worst relative difference with where they
occur, every structural or other non-float difference, and apart from these the text differences (a string that is
not a number on either side, e.g. a reworded claim or note), each list up to ``--max-report`` lines. The exit status
is 0 when every float is within ``atol + rtol * |reference|`` (both 0 by default: identical numbers) and nothing else
differs (text differences are allowed with ``--allow-text``), 1 otherwise, 2 on bad arguments.

A refactor that is meant to change no number is checked with the defaults::

    privdyn reproduce --quick --out before     # on the reference commit
    privdyn reproduce --quick --out after      # on the candidate
    python tools/compare_results.py before after
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["IGNORED_KEYS", "Comparison", "compare_values", "compare_dirs", "main"]

IGNORED_KEYS = frozenset({"environment", "elapsed_s", "outputs_s", "compute_s"})
"""Top-level and nested keys that describe the run, not its results."""

_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _ignored(key: str) -> bool:
    return key in IGNORED_KEYS or key.startswith("elapsed") or key.endswith(("_seconds", "_time_s", "_wall_s"))


def _as_float(value: object) -> float | None:
    """``value`` as a float when it is a JSON float (or a non-finite float's string spelling); else None."""
    if isinstance(value, float):
        return value
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    return None


@dataclasses.dataclass
class Comparison:
    """The outcome of comparing two JSON values (accumulated over every file of two folders)."""

    atol: float = 0.0
    rtol: float = 0.0
    files: int = 0
    floats: int = 0
    worst_abs: float = 0.0
    worst_abs_at: str = ""
    worst_rel: float = 0.0
    worst_rel_at: str = ""
    floats_out_of_tolerance: int = 0
    differences: list[str] = dataclasses.field(default_factory=list)
    text_differences: list[str] = dataclasses.field(default_factory=list)

    @property
    def identical(self) -> bool:
        """True when every float is within tolerance and nothing else differs, text included."""
        return self.same_numbers and not self.text_differences

    @property
    def same_numbers(self) -> bool:
        """True when every float is within tolerance and the structure and non-text values agree."""
        return self.floats_out_of_tolerance == 0 and not self.differences

    def _float(self, ref: float, cand: float, where: str) -> None:
        self.floats += 1
        if math.isnan(ref) or math.isnan(cand) or math.isinf(ref) or math.isinf(cand):
            same = (math.isnan(ref) and math.isnan(cand)) or ref == cand
            if not same:
                self.floats_out_of_tolerance += 1
                self.differences.append(f"{where}: {ref!r} != {cand!r}")
            return
        diff = abs(ref - cand)
        rel = diff / abs(ref) if ref != 0 else (0.0 if diff == 0 else math.inf)
        if diff > self.worst_abs:
            self.worst_abs, self.worst_abs_at = diff, where
        if rel > self.worst_rel:
            self.worst_rel, self.worst_rel_at = rel, where
        if diff > self.atol + self.rtol * abs(ref):
            self.floats_out_of_tolerance += 1

    def walk(self, ref: object, cand: object, where: str) -> None:
        """Compare ``ref`` with ``cand`` recursively; ``where`` names the position for the report."""
        ref_float, cand_float = _as_float(ref), _as_float(cand)
        if ref_float is not None and cand_float is not None:
            self._float(ref_float, cand_float, where)
        elif isinstance(ref, dict) and isinstance(cand, dict):
            keys = [k for k in ref if not _ignored(k)]
            extra = sorted(k for k in cand if k not in ref and not _ignored(k))
            for key in keys:
                if key not in cand:
                    self.differences.append(f"{where}.{key}: missing in the candidate")
                else:
                    self.walk(ref[key], cand[key], f"{where}.{key}")
            for key in extra:
                self.differences.append(f"{where}.{key}: only in the candidate")
        elif isinstance(ref, list) and isinstance(cand, list):
            if len(ref) != len(cand):
                self.differences.append(f"{where}: length {len(ref)} != {len(cand)}")
            for i, (r, c) in enumerate(zip(ref, cand, strict=False)):
                self.walk(r, c, f"{where}[{_label(r, i)}]")
        elif isinstance(ref, str) and isinstance(cand, str):
            if ref != cand:
                self.text_differences.append(f"{where}: {_short(ref)} != {_short(cand)}")
        elif type(ref) is not type(cand) or ref != cand:
            self.differences.append(f"{where}: {_short(ref)} != {_short(cand)}")


def _label(item: object, index: int) -> str:
    """A readable position for a list item: its ``name`` when it has one (series, metrics, checks, tables)."""
    if isinstance(item, dict) and isinstance(item.get("name"), str):
        return f"{index}:{item['name']}"
    return str(index)


def _short(value: object, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def compare_values(ref: object, cand: object, *, atol: float = 0.0, rtol: float = 0.0,
                   where: str = "") -> Comparison:
    """Compare two parsed ``result.json`` documents (or any JSON values)."""
    comparison = Comparison(atol=atol, rtol=rtol)
    comparison.walk(ref, cand, where)
    return comparison


def compare_dirs(reference: Path, candidate: Path, *, atol: float = 0.0, rtol: float = 0.0) -> Comparison:
    """Compare every ``*/result.json`` of two output folders (an experiment missing on either side is a difference)."""
    comparison = Comparison(atol=atol, rtol=rtol)
    ref_names = {p.parent.name for p in reference.glob("*/result.json")}
    cand_names = {p.parent.name for p in candidate.glob("*/result.json")}
    for name in sorted(ref_names ^ cand_names):
        side = "the candidate" if name in ref_names else "the reference"
        comparison.differences.append(f"{name}: no result.json in {side}")
    for name in sorted(ref_names & cand_names):
        ref = json.loads((reference / name / "result.json").read_text())
        cand = json.loads((candidate / name / "result.json").read_text())
        comparison.files += 1
        comparison.walk(ref, cand, name)
    return comparison


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status (0 identical within tolerance, 1 different, 2 bad arguments)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", type=Path, help="the reference output folder")
    parser.add_argument("candidate", type=Path, help="the candidate output folder")
    parser.add_argument("--atol", type=float, default=0.0, help="absolute tolerance per float (default 0)")
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance per float (default 0)")
    parser.add_argument("--max-report", type=int, default=20, help="differences listed at most (default 20)")
    parser.add_argument("--allow-text", action="store_true",
                        help="exit 0 when only text (reworded claims, notes, labels) differs")
    args = parser.parse_args(argv)
    for folder in (args.reference, args.candidate):
        if not folder.is_dir():
            parser.error(f"{folder} is not a directory")
    if args.atol < 0 or args.rtol < 0:
        parser.error("--atol and --rtol must be >= 0")
    result = compare_dirs(args.reference, args.candidate, atol=args.atol, rtol=args.rtol)
    print(f"files compared: {result.files}")
    print(f"floats compared: {result.floats}")
    print(f"worst absolute difference: {result.worst_abs:.3e}" + (f" at {result.worst_abs_at}" if result.worst_abs
                                                                    else ""))
    print(f"worst relative difference: {result.worst_rel:.3e}" + (f" at {result.worst_rel_at}" if result.worst_rel
                                                                    else ""))
    print(f"floats outside atol={args.atol:g}, rtol={args.rtol:g}: {result.floats_out_of_tolerance}")
    for title, lines in (("other differences", result.differences), ("text differences", result.text_differences)):
        print(f"{title}: {len(lines)}")
        for line in lines[: args.max_report]:
            print(f"  {line}")
        if len(lines) > args.max_report:
            print(f"  ... and {len(lines) - args.max_report} more")
    return 0 if result.identical or (args.allow_text and result.same_numbers) else 1


if __name__ == "__main__":
    sys.exit(main())
