"""Side-by-side speed benchmarks: a candidate and a named reference timed in one process.

A benchmark file ``benchmarks/bench_*.py`` in a checkout defines ``BENCHMARKS``, a tuple of :class:`Benchmark`.
:func:`run_benchmark` builds the inputs once (untimed), checks that candidate and reference agree, warms both up, then
times them alternately (candidate first on even repetitions, reference first on odd ones, so drift and caches hit
both alike) and reports the medians, their ratio and the spread of the per-repetition ratios. Ratios, not absolute
times, are what the issues set as targets: they are measured side by side on the same machine in the same run.
:func:`run_all` runs several and yields each outcome as it finishes; a benchmark that raises (setup, agreement,
either side) becomes a :class:`BenchmarkFailure` and the others still run. :func:`markdown_table` renders the outcomes
with :func:`machine`, the description of the computer they ran on.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.util
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from privdyn import _check

__all__ = ["MAX_REPEATS", "MIN_REPEATS", "Benchmark", "BenchmarkFailure", "BenchmarkResult", "BenchmarkSkipped",
           "Scaling", "missing_requirement",
           "ScalingResult", "discover", "discover_scaling", "machine", "markdown_page", "markdown_table",
           "run_all", "run_benchmark", "run_scaling", "scaling_page"]

MIN_REPEATS = 5
"""The fewest timed repetitions a benchmark declares: enough for a median that one disturbed run cannot move."""
MAX_REPEATS = 1000
"""The most a run may ask for (``--repeats``): more says nothing a thousand do not."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Benchmark:
    """One side-by-side comparison.

    Attributes:
        name: unique name (``privdyn bench NAME``).
        description: what is compared, at which size.
        candidate_name, reference_name: what the two callables are.
        setup: builds the inputs (not timed); its return value is passed to both callables.
        candidate, reference: the two implementations, called with the inputs.
        agree: called once with (candidate output, reference output); raises if they disagree.
        target_ratio: the speed-up (reference time / candidate time) an issue asks for, if any (reported).
        repeats: timed repetitions of each side (at least :data:`MIN_REPEATS`).
        candidate_items, reference_items: how many items (e.g. divergence pairs) each call processes; the ratio
            compares times per item. A slow reference may then run on a subset of the candidate's batch.
        note: called with the inputs after setup; its line is reported with the result (e.g. the tolerances a setup
            chose to match the two sides' accuracy).
        requires: ``(module, extra)`` pairs the benchmark imports beyond privdyn's core (e.g. ``("diffprivlib",
            "compare")``): where one is not installed, :func:`run_all` skips the benchmark with a note naming the
            extra, before running anything.
    """

    name: str
    description: str
    candidate_name: str
    reference_name: str
    setup: Callable[[], Any]
    candidate: Callable[[Any], Any]
    reference: Callable[[Any], Any]
    agree: Callable[[Any, Any], None] | None = None
    target_ratio: float | None = None
    repeats: int = 7
    candidate_items: int = 1
    reference_items: int = 1
    note: Callable[[Any], str] | None = None
    requires: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        _check.integer(minimum=1, candidate_items=self.candidate_items, reference_items=self.reference_items)
        _check.integer(minimum=MIN_REPEATS, repeats=self.repeats)


@dataclasses.dataclass(frozen=True, kw_only=True)
class BenchmarkResult:
    name: str
    description: str
    candidate: str
    reference: str
    repeats: int
    candidate_seconds: tuple[float, ...]
    reference_seconds: tuple[float, ...]
    candidate_median_s: float
    reference_median_s: float
    candidate_items: int
    reference_items: int
    ratio: float
    """reference median per item / candidate median per item: how many times faster the candidate is."""
    ratio_spread: tuple[float, float]
    """The lowest and highest ratio of one repetition's pair of timings (per item): the spread of ``ratio``."""
    target_ratio: float | None
    meets_target: bool | None
    note: str | None = None
    status: str = "ok"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, kw_only=True)
class BenchmarkSkipped:
    """A benchmark not run because a library it needs is not installed: ``reason`` names the extra that brings it."""

    name: str
    description: str
    reason: str
    status: str = "skipped"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def missing_requirement(benchmark: Benchmark | Scaling) -> str | None:
    """None when every module ``benchmark`` requires is installed; else why not, naming the extra to install."""
    for module, extra in benchmark.requires:
        if importlib.util.find_spec(module) is None:
            return f"needs {module}, which is not installed: pip install \"privdyn[{extra}]\""
    return None


@dataclasses.dataclass(frozen=True, kw_only=True)
class BenchmarkFailure:
    """A benchmark that raised (in its setup, its agreement check or either side): ``error`` is one line."""

    name: str
    description: str
    error: str
    status: str = "failed"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _timed(fn: Callable[[Any], Any], inputs: Any) -> float:
    start = time.perf_counter()
    fn(inputs)
    return time.perf_counter() - start


def run_benchmark(benchmark: Benchmark, *, repeats: int | None = None) -> BenchmarkResult:
    """Time ``benchmark`` (see the module docstring); ``repeats`` overrides the benchmark's own count."""
    repeats = benchmark.repeats if repeats is None else repeats
    _check.integer(minimum=1, repeats=repeats)
    inputs = benchmark.setup()
    candidate_out, reference_out = benchmark.candidate(inputs), benchmark.reference(inputs)  # also a warm-up
    if benchmark.agree is not None:
        benchmark.agree(candidate_out, reference_out)
    cand: list[float] = []
    ref: list[float] = []
    for r in range(repeats):
        if r % 2 == 0:
            cand.append(_timed(benchmark.candidate, inputs))
            ref.append(_timed(benchmark.reference, inputs))
        else:
            ref.append(_timed(benchmark.reference, inputs))
            cand.append(_timed(benchmark.candidate, inputs))
    cand_median, ref_median = statistics.median(cand), statistics.median(ref)
    ratio = _ratio(ref_median, cand_median, benchmark)
    paired = [_ratio(r, c, benchmark) for r, c in zip(ref, cand, strict=True)]
    target = benchmark.target_ratio
    return BenchmarkResult(
        name=benchmark.name, description=benchmark.description, candidate=benchmark.candidate_name,
        reference=benchmark.reference_name, repeats=repeats, candidate_seconds=tuple(cand),
        reference_seconds=tuple(ref), candidate_median_s=cand_median, reference_median_s=ref_median,
        candidate_items=benchmark.candidate_items, reference_items=benchmark.reference_items, ratio=ratio,
        ratio_spread=(min(paired), max(paired)), target_ratio=target,
        meets_target=None if target is None else ratio >= target,
        note=None if benchmark.note is None else benchmark.note(inputs))


def _ratio(reference_s: float, candidate_s: float, benchmark: Benchmark) -> float:
    candidate_per_item = candidate_s / benchmark.candidate_items
    return reference_s / benchmark.reference_items / candidate_per_item if candidate_per_item > 0 else float("inf")


def run_all(benchmarks: Iterable[Benchmark | Scaling], *, repeats: int | None = None
            ) -> Iterator[BenchmarkResult | ScalingResult | BenchmarkFailure | BenchmarkSkipped]:
    """Run each benchmark (or scaling study) in turn and yield its outcome as soon as it is known; a failure does not
    stop the rest. One whose required modules are not installed is skipped (:class:`BenchmarkSkipped`) first."""
    if repeats is not None:
        _check.integer(minimum=1, repeats=repeats)
        _check.in_range(1, MAX_REPEATS, repeats=repeats)
    for benchmark in benchmarks:
        if (reason := missing_requirement(benchmark)) is not None:
            yield BenchmarkSkipped(name=benchmark.name, description=benchmark.description, reason=reason)
            continue
        try:
            if isinstance(benchmark, Scaling):
                yield run_scaling(benchmark, repeats=repeats)
            else:
                yield run_benchmark(benchmark, repeats=repeats)
        except Exception as exc:  # noqa: BLE001 - reported as this benchmark's outcome; the others still run
            message = " ".join(str(exc).split()) or "(no message)"
            yield BenchmarkFailure(name=benchmark.name, description=benchmark.description,
                                   error=f"{type(exc).__name__}: {message}")


def machine() -> dict[str, Any]:
    """The computer a run is on: processor, logical cores, load average at the call, OS, Python and numpy/scipy."""
    import numpy
    import scipy

    processor = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            processor = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")),
                             processor)
    except OSError:
        pass
    try:
        load: list[float] | None = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"processor": processor, "logical_cores": os.cpu_count(), "load_average_1_5_15_min": load,
            "system": f"{platform.system()} {platform.release()}",
            "python": sys.version.split()[0], "numpy": numpy.__version__, "scipy": scipy.__version__,
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")}


def _seconds(value: float) -> str:
    return f"{value * 1e3:.3g} ms" if value < 1.0 else f"{value:.3g} s"


def markdown_table(outcomes: Sequence[BenchmarkResult | BenchmarkFailure | BenchmarkSkipped],
                   machine_info: dict[str, Any]) -> str:
    """One Markdown table of the outcomes (medians, ratio and its spread, target) and the machine they ran on."""
    lines = ["| benchmark | candidate | reference | candidate median | reference median | ratio (min-max) "
             "| repeats | target | note |",
             "|---|---|---|---|---|---|---|---|---|"]
    for o in outcomes:
        if isinstance(o, BenchmarkFailure):
            lines.append(f"| {o.name} | failed: {o.error.replace('|', '/')} | | | | | | | |")
            continue
        if isinstance(o, BenchmarkSkipped):
            lines.append(f"| {o.name} | skipped: {o.reason} | | | | | | | |")
            continue
        items = "" if o.candidate_items == o.reference_items == 1 else (
            f" ({o.candidate_items} vs {o.reference_items} items; per item)")
        target = "" if o.target_ratio is None else f"{o.target_ratio:g}x {'met' if o.meets_target else 'NOT met'}"
        lines.append(f"| {o.name} | {o.candidate} | {o.reference} | {_seconds(o.candidate_median_s)} "
                     f"| {_seconds(o.reference_median_s)} | {o.ratio:.3g}x ({o.ratio_spread[0]:.3g}-"
                     f"{o.ratio_spread[1]:.3g}){items} | {o.repeats} | {target} | {o.note or ''} |")
    described = ", ".join(f"{key} {value}" for key, value in machine_info.items())
    return "\n".join(lines) + f"\n\nMachine: {described}.\n"


def markdown_page(outcomes: Sequence[BenchmarkResult | BenchmarkFailure | BenchmarkSkipped],
                  machine_info: dict[str, Any],
                  command: str = "privdyn bench --table docs/benchmarks.md") -> str:
    """The page ``privdyn bench --table docs/benchmarks.md`` writes: how it was made, then :func:`markdown_table`."""
    return ("# Speed benchmarks\n\n"
            f"Written by `{command}` from a checkout (run it again to regenerate this page). Each row times a "
            "candidate and a named reference alternately in one process; the ratio is the "
            "reference median over the candidate median (per item), with the lowest and highest ratio of a single "
            "repetition's pair. The benchmark files in `benchmarks/` name each reference and why it is fair. "
            "Timings from a machine shared with other work are noisy; ratios measured side by side are less so.\n\n"
            + markdown_table(outcomes, machine_info))


def _modules(directory: Path) -> list[Any]:
    """The modules ``directory/bench_*.py``, loaded."""
    if not directory.is_dir():
        raise ValueError(f"no benchmark directory {str(directory)!r}: run `privdyn bench` from a privdyn checkout.")
    modules = []
    for path in sorted(directory.glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location(f"privdyn_benchmarks_{path.stem}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    return modules


def discover(directory: Path, names: Sequence[str] = ()) -> list[Benchmark]:
    """The benchmarks defined in ``directory/bench_*.py`` (all, or those named), in file then definition order."""
    found: list[Benchmark] = []
    for module in _modules(Path(directory)):
        for benchmark in getattr(module, "BENCHMARKS", ()):
            if not isinstance(benchmark, Benchmark):
                raise TypeError(f"{module.__name__}: BENCHMARKS must hold privdyn.benchmarking.Benchmark objects.")
            found.append(benchmark)
    if not found:
        raise ValueError(f"no benchmarks in {str(directory)!r}: it has no bench_*.py file defining BENCHMARKS.")
    all_names = [b.name for b in found]
    if len(set(all_names)) != len(all_names):
        raise ValueError(f"duplicate benchmark names in {directory}: {all_names}.")
    unknown = [n for n in names if n not in all_names]
    if unknown:
        raise ValueError(f"unknown benchmark {unknown[0]!r}; available: {', '.join(all_names) or 'none'}.")
    return [b for b in found if not names or b.name in names]


# ---------------------------------------------------------------------------------------------------------------
# Scaling studies: time and peak memory of one engine against a size
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Scaling:
    """How one engine's time and peak memory grow with a size (``privdyn bench --scaling``).

    Attributes:
        name, description: as for :class:`Benchmark`.
        size_name: what the size counts (e.g. ``"eigenvalues m"``).
        sizes: the sizes, increasing.
        setup: builds the inputs at one size (not timed).
        run: the engine, called with the inputs.
        repeats: timed calls per size (the median is reported).
        requires: as for :class:`Benchmark`.
    """

    name: str
    description: str
    size_name: str
    sizes: tuple[int, ...]
    setup: Callable[[int], Any]
    run: Callable[[Any], Any]
    repeats: int = MIN_REPEATS
    requires: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        _check.integer(minimum=1, repeats=self.repeats)
        if len(self.sizes) < 2 or list(self.sizes) != sorted(set(self.sizes)):
            raise ValueError(f"sizes must hold at least two increasing sizes; got sizes={self.sizes!r}.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScalingResult:
    name: str
    description: str
    size_name: str
    sizes: tuple[int, ...]
    median_s: tuple[float, ...]
    spread_s: tuple[tuple[float, float], ...]
    """The fastest and slowest call at each size."""
    peak_bytes: tuple[int, ...]
    """Peak of the memory Python allocated during one call (tracemalloc), above what it held before the call."""
    time_exponent: float
    """The least-squares slope of log(median time) against log(size)."""
    memory_exponent: float
    repeats: int
    status: str = "ok"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _slope(sizes: Sequence[int], values: Sequence[float]) -> float:
    import numpy

    return float(numpy.polyfit(numpy.log(sizes), numpy.log(numpy.maximum(values, 1e-300)), 1)[0])


def run_scaling(scaling: Scaling, *, repeats: int | None = None) -> ScalingResult:
    """Time ``scaling.run`` at each size (median of ``repeats`` calls after a warm-up) and measure its peak memory."""
    import tracemalloc

    repeats = scaling.repeats if repeats is None else repeats
    _check.integer(minimum=1, repeats=repeats)
    medians, spreads, peaks = [], [], []
    for size in scaling.sizes:
        inputs = scaling.setup(size)
        scaling.run(inputs)  # warm-up (compilation, caches)
        times = [_timed(scaling.run, inputs) for _ in range(repeats)]
        medians.append(statistics.median(times))
        spreads.append((min(times), max(times)))
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            scaling.run(inputs)
            peaks.append(max(tracemalloc.get_traced_memory()[1] - before, 0))
        finally:
            tracemalloc.stop()
    return ScalingResult(name=scaling.name, description=scaling.description, size_name=scaling.size_name,
                         sizes=scaling.sizes, median_s=tuple(medians), spread_s=tuple(spreads),
                         peak_bytes=tuple(peaks), time_exponent=_slope(scaling.sizes, medians),
                         memory_exponent=_slope(scaling.sizes, [float(p) for p in peaks]), repeats=repeats)


def discover_scaling(directory: Path, names: Sequence[str] = ()) -> list[Scaling]:
    """The scaling studies (``SCALING`` tuples) of ``directory/bench_*.py``: all, or those named."""
    found: list[Scaling] = []
    for module in _modules(Path(directory)):
        for scaling in getattr(module, "SCALING", ()):
            if not isinstance(scaling, Scaling):
                raise TypeError("SCALING must hold privdyn.benchmarking.Scaling objects.")
            found.append(scaling)
    if not found:
        raise ValueError(f"no scaling studies in {str(directory)!r}: no bench_*.py file defines SCALING.")
    all_names = [s.name for s in found]
    unknown = [n for n in names if n not in all_names]
    if unknown:
        raise ValueError(f"unknown scaling study {unknown[0]!r}; available: {', '.join(all_names)}.")
    return [s for s in found if not names or s.name in names]


def scaling_page(outcomes: Sequence[ScalingResult | BenchmarkFailure | BenchmarkSkipped], machine_info: dict[str, Any],
                 command: str = "privdyn bench --scaling --table docs/scaling.md") -> str:
    """The page ``privdyn bench --scaling --table docs/scaling.md`` writes: one table per study, fitted exponents."""
    parts = [f"# Scaling\n\nWritten by `{command}` from a checkout (run it again to regenerate this page). "
             "Time: median of the timed calls at each size (fastest-slowest in brackets). "
             "Peak memory: the most Python allocated during one call, above what it held before (tracemalloc). The "
             "exponents are least-squares slopes of log time and log memory against log size.\n"]
    for o in outcomes:
        if isinstance(o, BenchmarkFailure):
            parts.append(f"## {o.name}\n\nFailed: {o.error}\n")
            continue
        if isinstance(o, BenchmarkSkipped):
            parts.append(f"## {o.name}\n\nSkipped: {o.reason}\n")
            continue
        rows = [f"| {o.size_name} | time | peak memory |", "|---|---|---|"]
        for size, median, (low, high), peak in zip(o.sizes, o.median_s, o.spread_s, o.peak_bytes, strict=True):
            rows.append(f"| {size:,} | {_seconds(median)} ({_seconds(low)}-{_seconds(high)}) "
                        f"| {peak / 2**20:.3g} MiB |")
        parts.append(f"## {o.name}\n\n{o.description}. Median of {o.repeats} calls per size.\n\n"
                     + "\n".join(rows) + f"\n\nFitted exponents: time ~ size^{o.time_exponent:.2f}, "
                     f"memory ~ size^{o.memory_exponent:.2f}.\n")
    described = ", ".join(f"{key} {value}" for key, value in machine_info.items())
    return "\n".join(parts) + f"\nMachine: {described}.\n"
