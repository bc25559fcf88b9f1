"""tools/compare_results.py: floats counted and compared, timing ignored, structure and text differences reported."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "tools" / "compare_results.py"
_spec = importlib.util.spec_from_file_location("compare_results", _PATH)
assert _spec is not None and _spec.loader is not None
compare_results = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = compare_results  # dataclasses look their module up
_spec.loader.exec_module(compare_results)


def _result(y: list[object], *, elapsed: float = 1.0, note: str = "") -> dict[str, object]:
    return {
        "experiment": "toy",
        "series": [{"name": "s", "params": {"renyi_order": 2}, "x": [1, 2, 3], "y": y}],
        "metrics": [{"name": "m", "params": {}, "value": 0.5}],
        "checks": [{"name": "c", "kind": "invariant", "measured": 1.25, "passed": True, "note": note}],
        "environment": {"privdyn": "0.1.0", "git_commit": "abc"},
        "elapsed_s": elapsed,
    }


def test_identical_documents_count_every_float_and_ignore_timing() -> None:
    ref = _result([0.1, 0.2, "inf"], elapsed=1.0)
    cand = _result([0.1, 0.2, "inf"], elapsed=9.0)
    cand["environment"] = {"privdyn": "0.2.0"}
    out = compare_results.compare_values(ref, cand)
    assert out.identical
    assert out.floats == 5  # three y values (one non-finite), the metric, the check's measured value
    assert out.worst_abs == 0.0 and out.worst_rel == 0.0


def test_worst_differences_and_tolerances() -> None:
    ref, cand = _result([0.1, 0.2, 4.0]), _result([0.1, 0.2 + 1e-9, 4.0 + 1e-6])
    exact = compare_results.compare_values(ref, cand)
    assert not exact.identical and exact.floats_out_of_tolerance == 2
    assert exact.worst_abs == pytest.approx(1e-6) and "series[0:s].y[2]" in exact.worst_abs_at
    assert exact.worst_rel == pytest.approx(2.5e-7) and "y[2]" in exact.worst_rel_at
    assert compare_results.compare_values(ref, cand, rtol=1e-6).identical
    assert not compare_results.compare_values(ref, cand, atol=1e-7).identical


def test_non_float_and_structural_differences_are_reported() -> None:
    assert not compare_results.compare_values(_result([0.1]), _result([0.1, 0.2])).identical  # length
    reworded = compare_results.compare_values(_result([0.1], note="a"), _result([0.1], note="b"))
    assert not reworded.identical and reworded.same_numbers
    assert reworded.text_differences == [".checks[0:c].note: \"a\" != \"b\""]
    assert not compare_results.compare_values(_result(["nan"]), _result([0.0])).identical
    assert compare_results.compare_values(_result(["nan"]), _result(["nan"])).identical
    assert not compare_results.compare_values(_result([1]), _result([1.0])).identical  # int vs float


def test_folders_and_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for side, y in (("ref", [0.1, 0.3]), ("cand", [0.1, 0.3 * (1 + 1e-12)])):
        (tmp_path / side / "toy").mkdir(parents=True)
        (tmp_path / side / "toy" / "result.json").write_text(json.dumps(_result(y)))
    (tmp_path / "cand" / "extra").mkdir()
    (tmp_path / "cand" / "extra" / "result.json").write_text(json.dumps(_result([1.0])))
    out = compare_results.compare_dirs(tmp_path / "ref", tmp_path / "cand", rtol=1e-9)
    assert out.files == 1 and out.floats == 4 and math.isclose(out.worst_rel, 1e-12, rel_tol=1e-3)
    assert out.differences == ["extra: no result.json in the reference"]
    assert compare_results.main([str(tmp_path / "ref"), str(tmp_path / "cand"), "--rtol", "1e-9"]) == 1
    printed = capsys.readouterr().out
    assert "floats compared: 4" in printed and "extra: no result.json in the reference" in printed
    (tmp_path / "cand" / "extra" / "result.json").unlink()
    (tmp_path / "cand" / "extra").rmdir()
    assert compare_results.main([str(tmp_path / "ref"), str(tmp_path / "cand"), "--rtol", "1e-9"]) == 0
    (tmp_path / "cand" / "toy" / "result.json").write_text(json.dumps(_result([0.1, 0.3], note="reworded")))
    assert compare_results.main([str(tmp_path / "ref"), str(tmp_path / "cand")]) == 1
    assert compare_results.main([str(tmp_path / "ref"), str(tmp_path / "cand"), "--allow-text"]) == 0
    with pytest.raises(SystemExit) as exc:
        compare_results.main([str(tmp_path / "missing"), str(tmp_path / "cand")])
    assert exc.value.code == 2
