"""Mutation testing of the privacy path: plant a noise-scale bug at every site where privacy noise is drawn or scaled,
and check that the audit catches it.

``python -m privdyn.audit.mutants`` (module :func:`main`):

1. **Find the sites** (:func:`find_sites`) by reading the installed package's source (an AST scan; no list of sites is
   kept by hand): every call of a Gaussian sampler (``standard_normal``, ``normal``, ``normal_``, ``randn``,
   ``randn_like``), every ``scale=`` keyword whose value is computed where it is passed (the noise streams' scale;
   a parameter forwarded under its own name is not a new site), and every ``return`` of a function whose name says
   it computes a noise standard deviation (``*noise_std*``). Modules that hold no privacy noise are skipped by path,
   each with its reason (:data:`NOT_PRIVACY_NOISE`); a skip that matches no draw is an error, so the skips cannot
   go stale, and a new draw anywhere else is a site by default.
2. **Coverage**: every audit row runs once (few runs, numba's JIT off so compiled kernels are traced too) under a
   line tracer; a row covers a site when it executes one of the site's lines.
3. **Mutants**: for each site and factor (x 0.6, x 0.9) the package is copied to a temporary folder, the site's
   value is multiplied by the factor there (a draw's result in place, so ``out=`` buffers are scaled as well), and
   the rows covering the site are audited in a fresh interpreter on the copy, at the audit's default runs and seed.
   A row catches the mutant when it reports a violation or a failed law check.
4. **The table**: site (file, function, line, kind), mutant, rows run, caught by, and the runs each row would need
   (:meth:`privdyn.audit.law.LawCheck.runs_needed`: the runs at which the measured effect reaches the law check's
   threshold plus two standard errors; a row without a law check reports none).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["NOT_PRIVACY_NOISE", "Site", "coverage", "find_sites", "main", "mutate", "run_mutant"]

DRAWS = frozenset({"standard_normal", "normal", "normal_", "randn", "randn_like"})
"""Names of Gaussian samplers (numpy Generator, torch)."""

NOT_PRIVACY_NOISE: dict[str, str] = {
    "audit/": "the auditor itself (its reference implementations draw the stated noise)",
    "experiments/": "figure drivers: they run the simulators and estimators, whose sites are scanned",
    "data/": "data generation (synthetic designs and substitutes), not privacy noise",
    "models/": "random initialization of model parameters, not privacy noise",
    "torch/kan.py": "random initialization of the torch KAN's first layer, not privacy noise",
    "privacy/amplification/": "the amplified accountant's Monte Carlo estimate (an accountant, not a mechanism)",
    "algorithms/homogenized_sde.py": "the homogenized SDE, a theory's diffusion approximation, not a private "
                                     "mechanism",
    "plan/_langevin.py::LangevinPlan.simulate": "draws the plan's verification dataset (its noise is noisy_gd's)",
    "plan/_dpsgd.py::DPSGDPlan.simulate": "the plan's utility check runs DPSGD with the plan's noise scale (the "
                                          "noise is DPSGD's own stream, audited through DPSGD)",
    "algorithms/homogenized_sgd.py": "the homogenized-SGD diffusion (a theory's approximation), not a private "
                                     "mechanism",
    "plan/_dpgd.py::_prediction": "parametric redraws around the planning share's already released sums, for the "
                                  "prediction's interval: post-processing of a release (the release's own noise is "
                                  "release_statistics', a site)",
    "dynamics/ssp.py::ssp_prediction": "parametric redraws around an SSP fit's already released sums, for the "
                                       "prediction's interval: post-processing of a release (AdaSSP's and "
                                       "DPLinearRegression's release noise are their own sites)",
}
"""Package paths (prefixes, or ``path::function``) whose Gaussian draws or noise scales are not privacy noise, each
with the reason."""


@dataclasses.dataclass(frozen=True)
class Site:
    """One place where privacy noise is drawn or scaled.

    Attributes:
        path: the module's path inside the package (``algorithms/dpgd.py``).
        function: the enclosing function (``Class.method``; ``<module>`` at top level).
        line, col, end_line, end_col: the source span of the value the mutant multiplies.
        kind: ``draw`` (a sampler call), ``scale`` (a ``scale=`` keyword) or ``std`` (a noise-std function's return).
        text: the source of that value.
    """

    path: str
    function: str
    line: int
    col: int
    end_line: int
    end_col: int
    kind: str
    text: str

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"

    def label(self) -> str:
        return f"{self.path} {self.function} l.{self.line} ({self.kind})"


def _package_root() -> Path:
    from privdyn._version import package_dir

    return package_dir().resolve()


class _Scanner(ast.NodeVisitor):
    def __init__(self, path: str, source: str) -> None:
        self.path, self.source = path, source
        self.stack: list[str] = []
        self.parameters: list[set[str]] = []
        self.sites: list[Site] = []
        self.draws = 0

    def _site(self, node: ast.expr, kind: str) -> None:
        text = ast.get_source_segment(self.source, node) or ""
        assert node.end_lineno is not None and node.end_col_offset is not None
        self.sites.append(Site(path=self.path, function=".".join(self.stack) or "<module>", line=node.lineno,
                               col=node.col_offset, end_line=node.end_lineno, end_col=node.end_col_offset, kind=kind,
                               text=text))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.stack.append(node.name)
        self.generic_visit(node)
        self.stack.pop()

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.stack.append(node.name)
        args = node.args
        self.parameters.append({a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)})
        if "noise_std" in node.name:
            for child in ast.walk(node):
                if isinstance(child, ast.Return) and child.value is not None:
                    self._site(child.value, "std")
        self.generic_visit(node)
        self.parameters.pop()
        self.stack.pop()

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else "")
        if name in DRAWS:
            self.draws += 1
            self._site(node, "draw")
        for keyword in node.keywords:
            if keyword.arg != "scale" or isinstance(keyword.value, ast.Constant):
                continue
            forwarded = isinstance(keyword.value, ast.Name) and self.parameters and \
                keyword.value.id in self.parameters[-1]
            if not forwarded:
                self._site(keyword.value, "scale")
        self.generic_visit(node)


def _skipped(path: str, function: str = "") -> str | None:
    for entry in NOT_PRIVACY_NOISE:
        prefix, _, name = entry.partition("::")
        if (path == prefix or path.startswith(prefix)) and (not name or function == name
                                                              or function.startswith(name + ".")):
            return entry
    return None


def find_sites(root: Path | None = None) -> list[Site]:
    """Every site of the package at ``root`` (default: the installed privdyn) where privacy noise is drawn or
    scaled (module docstring), in path and line order.

    Raises:
        RuntimeError: an entry of :data:`NOT_PRIVACY_NOISE` matches no Gaussian draw or noise scale (stale).
    """
    root = _package_root() if root is None else Path(root)
    sites: list[Site] = []
    used: set[str] = set()
    for file in sorted(root.rglob("*.py")):
        path = file.relative_to(root).as_posix()
        source = file.read_text(encoding="utf-8")
        scanner = _Scanner(path, source)
        scanner.visit(ast.parse(source, filename=str(file)))
        whole = _skipped(path)
        if whole is not None and "::" not in whole:
            if scanner.draws:
                used.add(whole)
            continue
        for site in scanner.sites:
            entry = _skipped(path, site.function)
            if entry is None:
                sites.append(site)
            else:
                used.add(entry)
    stale = sorted(set(NOT_PRIVACY_NOISE) - used)
    if stale:
        raise RuntimeError(f"NOT_PRIVACY_NOISE entries that match no Gaussian draw (remove them): {stale}")
    return sites


def mutate(source: str, site: Site, factor: float) -> str:
    """``source`` with the value at ``site`` multiplied by ``factor`` (a draw's result in place: arrays and tensors
    are scaled where they are, so a sampler's ``out=`` buffer is scaled too; a Python float is multiplied)."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    # ast columns are UTF-8 byte offsets
    def offset(line: int, col: int) -> int:
        text = lines[line - 1].encode("utf-8")[:col].decode("utf-8")
        return starts[line - 1] + len(text)

    begin, end = offset(site.line, site.col), offset(site.end_line, site.end_col)
    value = source[begin:end]
    if site.kind == "draw":
        replaced = (f"(lambda _v: _v * {factor!r} if isinstance(_v, (int, float)) or not hasattr(_v, '__imul__') "
                    f"else _v.__imul__({factor!r}))({value})")
    else:
        replaced = f"(({value}) * {factor!r})"
    return source[:begin] + replaced + source[end:]


# ---------------------------------------------------------------------------------------------------------------
# coverage and mutant runs (each in a fresh interpreter)
# ---------------------------------------------------------------------------------------------------------------


def _rows(include_slow: bool) -> list[str]:
    from privdyn.audit.mechanisms import MECHANISMS
    from privdyn.audit.table import available_mechanisms

    return [name for name in available_mechanisms() if include_slow or not MECHANISMS[name].slow_accountant]


def _tracer(wanted: dict[str, int], seen: set[tuple[int, int]]) -> Any:
    """A ``sys.settrace`` function adding (file index, line) to ``seen`` for every line run in a ``wanted`` file."""

    def line_tracer(index: int) -> Any:
        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                seen.add((index, frame.f_lineno))
            return local
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        index = wanted.get(frame.f_code.co_filename)
        if index is None:
            return None
        seen.add((index, frame.f_lineno))
        return line_tracer(index)

    return tracer


def _coverage_worker(rows: Sequence[str], files: Sequence[str], runs: int) -> dict[str, list[list[int]]]:
    """Run each row's audit runs under a line tracer restricted to ``files``; {row: [[file index, line], ...]}."""
    from privdyn.audit.mechanisms import mechanism

    root = _package_root()
    wanted = {str((root / f).resolve()): i for i, f in enumerate(files)}
    out: dict[str, list[list[int]]] = {}
    for row in rows:
        seen: set[tuple[int, int]] = set()
        sys.settrace(_tracer(wanted, seen))
        try:
            mechanism(row).run(0, f"coverage/{row}", runs)
        finally:
            sys.settrace(None)
        out[row] = sorted([list(item) for item in seen])
    return out


def coverage(sites: Sequence[Site], rows: Sequence[str], *, runs: int = 40) -> dict[str, list[str]]:
    """{site key: the rows that execute it}, from one traced run of every row (numba's JIT off)."""
    files = sorted({site.path for site in sites})
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    command = [sys.executable, "-m", "privdyn.audit.mutants", "--coverage-worker", "--rows", ",".join(rows),
               "--files", ",".join(files), "--runs", str(runs)]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"the coverage run failed: {result.stderr.strip()[-2000:]}")
    traced = json.loads(result.stdout.strip().splitlines()[-1])
    covered: dict[str, list[str]] = {site.key: [] for site in sites}
    for row, pairs in traced.items():
        lines = {(files[i], line) for i, line in pairs}
        for site in sites:
            if any((site.path, line) in lines for line in range(site.line, site.end_line + 1)):
                covered[site.key].append(row)
    return covered


def _mutant_worker(rows: Sequence[str], runs: int, seed: int) -> list[dict[str, Any]]:
    from privdyn.audit.core import audit_mechanism
    from privdyn.audit.law import POWER_MARGIN
    from privdyn.audit.mechanisms import mechanism

    out = []
    for row in rows:
        try:
            result = audit_mechanism(mechanism(row), runs=runs, seed=seed)
        except Exception as error:  # reported, not counted as a catch: the table shows the error
            out.append({"row": row, "caught": False, "error": f"{type(error).__name__}: {error}"[:300]})
            continue
        needed = None
        if result.law_z is not None and result.law_threshold is not None:
            needed = (float("inf") if result.law_z <= 0 else
                      result.runs * ((result.law_threshold + POWER_MARGIN) / result.law_z) ** 2)
        out.append({"row": row, "caught": result.caught, "violation": result.violation,
                    "law_check": result.law_check, "law_z": result.law_z, "runs": result.runs,
                    "runs_needed": needed, "audited": result.audited_lower_bound, "epsilon": result.epsilon})
    return out


def run_mutant(site: Site, factor: float, rows: Sequence[str], *, runs: int, seed: int = 0) -> list[dict[str, object]]:
    """Audit ``rows`` on a temporary copy of the package with ``site`` multiplied by ``factor``; one dict per row
    (``caught``, ``law_z``, ``runs``, ``runs_needed``, ...)."""
    root = _package_root()
    with tempfile.TemporaryDirectory(prefix="privdyn-mutant-") as folder:
        copy = Path(folder) / "privdyn"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
        target = copy / site.path
        target.write_text(mutate(target.read_text(encoding="utf-8"), site, factor), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": folder + os.pathsep + os.environ.get("PYTHONPATH", "")}
        command = [sys.executable, "-m", "privdyn.audit.mutants", "--mutant-worker", "--rows", ",".join(rows),
                   "--runs", str(runs), "--seed", str(seed), "--expect-root", str(copy)]
        result = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"the mutant run failed ({site.label()} x {factor}): {result.stderr.strip()[-2000:]}")
        rows_out: list[dict[str, Any]] = json.loads(result.stdout.strip().splitlines()[-1])
        return rows_out


def _fmt_runs(value: Any) -> str:
    if value is None:
        return "-"
    if value == float("inf"):
        return "inf"
    return f"{value:.3g}"


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (module docstring); ``--help`` lists the options."""
    parser = argparse.ArgumentParser(prog="python -m privdyn.audit.mutants", description=__doc__.split("\n\n")[0])
    parser.add_argument("--factors", type=float, nargs="+", default=[0.6, 0.9])
    parser.add_argument("--runs", type=int, default=None, help="audit runs per dataset (default: the audit's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default=None, help="audit only sites whose label contains this text")
    parser.add_argument("--list", action="store_true", help="list the sites and their covering rows, run nothing")
    parser.add_argument("--slow", action="store_true", help="also run the slow-accountant rows on every site")
    parser.add_argument("--use-rows", default=None,
                        help="comma-separated rows: trace and run only these (default: every row)")
    parser.add_argument("--json", default=None, help="also write the table to this JSON file")
    parser.add_argument("--coverage-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mutant-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rows", default="", help=argparse.SUPPRESS)
    parser.add_argument("--files", default="", help=argparse.SUPPRESS)
    parser.add_argument("--expect-root", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.coverage_worker:
        print(json.dumps(_coverage_worker(args.rows.split(","), args.files.split(","), args.runs)))
        return 0
    if args.mutant_worker:
        if args.expect_root is not None and _package_root() != Path(args.expect_root).resolve():
            raise RuntimeError(f"the mutant worker imported privdyn from {_package_root()}, not the mutated copy")
        print(json.dumps(_mutant_worker(args.rows.split(","), args.runs, args.seed)))
        return 0

    from privdyn.audit.core import DEFAULT_RUNS
    from privdyn.audit.mechanisms import MECHANISMS

    runs = DEFAULT_RUNS if args.runs is None else args.runs
    sites = find_sites()
    if args.only:
        sites = [site for site in sites if args.only in site.label()]
    candidates = args.use_rows.split(",") if args.use_rows else _rows(include_slow=True)
    covered = coverage(sites, candidates)
    table: list[dict[str, Any]] = []
    print(f"{len(sites)} sites; factors {args.factors}; {runs} runs per dataset; seed {args.seed}", flush=True)
    for site in sites:
        rows = covered[site.key]
        fast = [row for row in rows if not MECHANISMS[row].slow_accountant]
        chosen = rows if args.slow or not fast else fast
        if args.list or not chosen:
            table.append({"site": site.label(), "text": site.text, "factor": None, "rows": rows, "caught_by": [],
                          "results": []})
            print(f"{site.label():60s} rows: {', '.join(rows) or 'NONE'}", flush=True)
            continue
        for factor in args.factors:
            results = run_mutant(site, factor, chosen, runs=runs, seed=args.seed)
            caught = [str(r["row"]) for r in results if r["caught"]]
            needed = {r["row"]: r.get("runs_needed") for r in results}
            table.append({"site": site.label(), "text": site.text, "factor": factor, "rows": chosen,
                          "caught_by": caught, "results": results})
            print(f"{site.label():60s} x{factor:<4g} {'CAUGHT' if caught else 'MISSED':6s} "
                  f"by {', '.join(caught) or '-'}; rows run: {', '.join(chosen)}; runs needed: "
                  f"{', '.join(f'{k} {_fmt_runs(v)}' for k, v in needed.items())}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=2), encoding="utf-8")
    if args.list:
        return 0
    strongest = min(args.factors)
    missed = [entry["site"] for entry in table if entry["factor"] == strongest and not entry["caught_by"]]
    uncovered = [entry["site"] for entry in table if entry["factor"] is None]
    print(f"x{strongest:g} mutants missed: {len(missed)}; sites no row covers: {len(uncovered)}")
    return 1 if missed or uncovered else 0


if __name__ == "__main__":
    sys.exit(main())
