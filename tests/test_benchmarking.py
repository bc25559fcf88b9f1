"""The benchmark harness: discovery, interleaved timing, ratios, agreement checks, CLI output."""

import json
import textwrap
from pathlib import Path

import pytest

from privdyn import benchmarking
from privdyn.cli import main

REPO_BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def write_bench(directory, body):
    directory.mkdir(exist_ok=True)
    (directory / "bench_example.py").write_text(textwrap.dedent(body))


SLOW_AND_FAST = """
    from privdyn.benchmarking import Benchmark

    ORDER = []

    def fast(n):
        ORDER.append("c")
        return sum(range(n))

    def slow(n):
        ORDER.append("r")
        for _ in range(30):
            total = sum(range(n))
        return total

    BENCHMARKS = (
        Benchmark(name="sum", description="d", candidate_name="fast", reference_name="slow",
                  setup=lambda: 20_000, candidate=fast, reference=slow, target_ratio=2.0, repeats=5,
                  agree=lambda a, b: None if a == b else (_ for _ in ()).throw(AssertionError("disagree"))),
    )
"""


def test_discover_and_run(tmp_path):
    write_bench(tmp_path, SLOW_AND_FAST)
    (bench,) = benchmarking.discover(tmp_path)
    result = benchmarking.run_benchmark(bench)
    assert result.repeats == 5 and len(result.candidate_seconds) == len(result.reference_seconds) == 5
    assert result.ratio > 2.0 and result.meets_target is True
    assert result.ratio == pytest.approx(result.reference_median_s / result.candidate_median_s)
    paired = [r / c for r, c in zip(result.reference_seconds, result.candidate_seconds, strict=True)]
    assert result.ratio_spread == (min(paired), max(paired))
    assert result.ratio_spread[0] <= result.ratio <= result.ratio_spread[1]


def test_timing_is_interleaved(tmp_path):
    write_bench(tmp_path, SLOW_AND_FAST)
    (bench,) = benchmarking.discover(tmp_path)
    module_order = bench.candidate.__globals__["ORDER"]
    benchmarking.run_benchmark(bench, repeats=4)
    assert module_order == ["c", "r", "c", "r", "r", "c", "c", "r", "r", "c"]  # warm-up, then alternating


def test_disagreement_stops_the_benchmark(tmp_path):
    write_bench(tmp_path, SLOW_AND_FAST.replace("return sum(range(n))\n\n    def slow",
                                                "return sum(range(n)) + 1\n\n    def slow"))
    (bench,) = benchmarking.discover(tmp_path)
    with pytest.raises(AssertionError, match="disagree"):
        benchmarking.run_benchmark(bench)


def test_ratio_compares_times_per_item():
    def slow(items):
        return sum(sum(range(2000)) for _ in range(items))

    bench = benchmarking.Benchmark(name="items", description="d", candidate_name="c", reference_name="r",
                                   setup=lambda: None, candidate=lambda _: slow(50), reference=lambda _: slow(5),
                                   repeats=5, candidate_items=50, reference_items=5)
    result = benchmarking.run_benchmark(bench)
    per_item = (result.reference_median_s / 5) / (result.candidate_median_s / 50)
    assert result.ratio == pytest.approx(per_item)
    assert (result.candidate_items, result.reference_items) == (50, 5)
    with pytest.raises(ValueError, match="candidate_items"):
        benchmarking.Benchmark(name="x", description="d", candidate_name="c", reference_name="r", setup=lambda: None,
                               candidate=len, reference=len, candidate_items=0)
    with pytest.raises(ValueError, match="repeats"):
        benchmarking.Benchmark(name="x", description="d", candidate_name="c", reference_name="r", setup=lambda: None,
                               candidate=len, reference=len, repeats=benchmarking.MIN_REPEATS - 1)


def test_discover_errors(tmp_path):
    with pytest.raises(ValueError, match="no benchmark directory"):
        benchmarking.discover(tmp_path / "missing")
    with pytest.raises(ValueError, match="no benchmarks in"):
        benchmarking.discover(tmp_path)
    write_bench(tmp_path, SLOW_AND_FAST)
    with pytest.raises(ValueError, match="unknown benchmark 'x'; available: sum"):
        benchmarking.discover(tmp_path, ["x"])


def test_cli_bench_on_the_repository_benchmarks(capsys):
    # one cheap benchmark by name: the others take minutes and are run by `privdyn bench`, not by the tests
    status = main(["bench", "--dir", str(REPO_BENCHMARKS), "langevin-accountant", "--json", "--repeats", "2"])
    out, _ = capsys.readouterr()
    assert status == 0
    rows = [json.loads(line) for line in out.splitlines()]  # JSON Lines: one object per benchmark
    assert {r["name"] for r in rows} == {"langevin-accountant"}
    assert all(r["status"] == "ok" and r["ratio"] > 0 and r["repeats"] == 2 for r in rows)


def test_every_repository_benchmark_declares_enough_repeats():
    benchmarks = benchmarking.discover(REPO_BENCHMARKS)
    assert benchmarks and all(b.repeats >= benchmarking.MIN_REPEATS for b in benchmarks)


FAILING_THEN_PASSING = """
    from privdyn.benchmarking import Benchmark

    def broken(_):
        raise RuntimeError("the reference\\nbroke")

    BENCHMARKS = (
        Benchmark(name="broken", description="d", candidate_name="c", reference_name="r", setup=lambda: 1,
                  candidate=abs, reference=broken),
        Benchmark(name="fine", description="d", candidate_name="c", reference_name="r", setup=lambda: 1,
                  candidate=abs, reference=abs),
    )
"""


def test_a_failing_benchmark_is_reported_and_the_rest_run(tmp_path, capsys):
    write_bench(tmp_path, FAILING_THEN_PASSING)
    outcomes = list(benchmarking.run_all(benchmarking.discover(tmp_path), repeats=2))
    assert [o.name for o in outcomes] == ["broken", "fine"]
    assert isinstance(outcomes[0], benchmarking.BenchmarkFailure)
    assert outcomes[0].error == "RuntimeError: the reference broke"
    assert isinstance(outcomes[1], benchmarking.BenchmarkResult) and outcomes[1].status == "ok"

    assert main(["bench", "--dir", str(tmp_path), "--repeats", "2"]) == 1
    out, _ = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "broken: FAILED: RuntimeError: the reference broke" and lines[1].startswith("fine: ")
    assert main(["bench", "--dir", str(tmp_path), "--repeats", "2", "--json"]) == 1
    out, _ = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["name"], r["status"]) for r in rows] == [("broken", "failed"), ("fine", "ok")]


def test_results_are_printed_as_each_benchmark_finishes(tmp_path):
    write_bench(tmp_path, FAILING_THEN_PASSING)
    outcomes = benchmarking.run_all(benchmarking.discover(tmp_path), repeats=2)
    assert next(outcomes).name == "broken"  # a generator: the first outcome exists before the second is run


def test_cli_bench_writes_the_table_with_the_machine(tmp_path, capsys):
    write_bench(tmp_path / "b", SLOW_AND_FAST)
    page = tmp_path / "benchmarks.md"
    assert main(["bench", "--dir", str(tmp_path / "b"), "--repeats", "3", "--table", str(page)]) == 0
    text = page.read_text()
    assert f"`privdyn bench --repeats 3 --table {page.as_posix()}`" in text and "| sum | fast | slow |" in text
    assert "Machine: processor " in text and "logical_cores" in text and "load_average" in text


@pytest.mark.parametrize("args", [["--repeats", "0"], ["--repeats", "-3"], ["--repeats", "1001"],
                                  ["--repeats", "many"], ["nope"], ["--table", "{missing}/x.md"],
                                  ["--device", "tpu"], ["--device", "cuda:x"], ["--device", "cuda:99"]])
def test_cli_bench_usage_errors(capsys, tmp_path, args):
    write_bench(tmp_path, SLOW_AND_FAST)
    args = [a.format(missing=tmp_path / "missing") for a in args]
    assert main(["bench", "--dir", str(tmp_path), *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("privdyn: error:")


def test_cli_bench_directory_errors(capsys, tmp_path):
    assert main(["bench", "--dir", str(tmp_path / "none")]) == 2
    assert main(["bench", "--dir", str(tmp_path)]) == 2  # exists, but holds no benchmarks
    _, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 2 and "no benchmarks in" in err


SCALING_STUDY = """
    from privdyn.benchmarking import Scaling

    def quadratic(n):
        return len(bytearray(n * n * 64))

    SCALING = (
        Scaling(name="square", description="n^2 bytes", size_name="n", sizes=(40, 80, 160),
                setup=lambda n: n, run=quadratic, repeats=3),
        Scaling(name="broken", description="d", size_name="n", sizes=(1, 2), setup=lambda n: n,
                run=lambda n: 1 / (n - n)),
    )
"""


def test_scaling_study_fits_the_exponent_and_measures_memory(tmp_path):
    write_bench(tmp_path, SCALING_STUDY)
    square, broken = benchmarking.discover_scaling(tmp_path)
    result = benchmarking.run_scaling(square)
    assert result.sizes == (40, 80, 160) and len(result.median_s) == len(result.peak_bytes) == 3
    assert result.memory_exponent == pytest.approx(2.0, abs=0.05)  # n^2 bytes (timings are too noisy to test)
    assert all(peak >= 64 * n * n for peak, n in zip(result.peak_bytes, result.sizes, strict=True))
    assert all(low <= median <= high for median, (low, high) in zip(result.median_s, result.spread_s, strict=True))
    outcomes = list(benchmarking.run_all([broken, square], repeats=1))
    assert [o.status for o in outcomes] == ["failed", "ok"]
    with pytest.raises(ValueError, match="sizes"):
        benchmarking.Scaling(name="x", description="d", size_name="n", sizes=(2, 1), setup=int, run=int)
    with pytest.raises(ValueError, match="no scaling studies"):
        benchmarking.discover_scaling(REPO_BENCHMARKS.parent / "docs")


def test_cli_bench_scaling_writes_its_page(tmp_path, capsys):
    write_bench(tmp_path / "b", SCALING_STUDY)
    page = tmp_path / "scaling.md"
    assert main(["bench", "--scaling", "--dir", str(tmp_path / "b"), "square", "--repeats", "1",
                 "--table", str(page)]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("square (n; median time / peak memory) 40: ") and "time ~ size^" in out
    text = page.read_text()
    assert f"`privdyn bench --scaling square --repeats 1 --table {page.as_posix()}`" in text
    assert "| n | time | peak memory |" in text
    assert "Fitted exponents: time ~ size^" in text and "Machine: processor " in text
    assert main(["bench", "--scaling", "--dir", str(tmp_path / "b"), "nope"]) == 2


MISSING_EXTRA = """
    from pathlib import Path

    from privdyn.benchmarking import Benchmark

    MARK = Path(__file__).with_name("ran.txt")

    def never(inputs=None):
        MARK.write_text("ran")
        return inputs

    BENCHMARKS = (
        Benchmark(name="needs-extra", description="d", candidate_name="c", reference_name="r",
                  setup=never, candidate=never, reference=never, repeats=5,
                  requires=(("privdyn_no_such_module_xyz", "compare"),)),
        Benchmark(name="core", description="d", candidate_name="c", reference_name="r", setup=lambda: 1,
                  candidate=lambda x: x, reference=lambda x: x, repeats=5),
    )
"""


def test_a_benchmark_whose_reference_is_missing_is_skipped_with_the_extra_named(tmp_path, capsys):
    write_bench(tmp_path, MISSING_EXTRA)
    assert main(["bench", "--dir", str(tmp_path)]) == 0  # a skip is not a failure
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ('needs-extra: skipped: needs privdyn_no_such_module_xyz, which is not installed: '
                      'pip install "privdyn[compare]"')
    assert out[1].startswith("core: ")
    assert not (tmp_path / "ran.txt").exists()  # nothing of it ran, not even its setup
    assert main(["bench", "--dir", str(tmp_path), "--json", "needs-extra"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "skipped"


def test_the_repository_benchmarks_declare_their_reference_extras():
    declared = {b.name: dict(b.requires) for b in benchmarking.discover(REPO_BENCHMARKS)}
    assert declared["sklearn-dplinearregression-fit"] == {"diffprivlib": "compare"}
    assert declared["sklearn-dplogisticregression-fit"] == {"opendp": "compare"}
    assert declared["torch-kan-closed-form"] == {"torch": "torch", "opacus": "torch"}
    assert declared["kan-per-example-gradients-torch-func"] == {"torch": "torch"}
