"""tools/structure.py: each measured quantity found in a planted repository, and the report of this one well formed."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("structure", _REPO / "tools" / "structure.py")
assert _spec is not None and _spec.loader is not None
structure = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = structure  # dataclasses look their module up
_spec.loader.exec_module(structure)

_FILES = {
    "src/privdyn/__init__.py": '"""Root."""\n',
    "src/privdyn/a/__init__.py": "",
    "src/privdyn/a/_secret.py": "def hidden():\n    return 1\n",
    # inside package a, taking a's private module is fine; b imports c.user at module level: half a circle
    "src/privdyn/a/b.py": """
        from privdyn.a._secret import hidden
        from privdyn.c import user

        def _helper():
            return hidden()
    """,
    # c's __init__ calls its private helper (not a re-export) and re-exports one private name of its module
    "src/privdyn/c/__init__.py": """
        from privdyn import _check
        from privdyn.c.user import _late as _late

        THING = 1
        _check.in_range(0.0, 2.0, value=THING)
    """,
    # the planted private imports (one at module level, one lazy) and the other half of the circle
    "src/privdyn/c/user.py": """
        from privdyn.a import b
        from privdyn.a._secret import hidden

        def late():
            from privdyn.a.b import _helper
            return _helper() + hidden() + b.__name__.count("a")

        _late = late
    """,
    # upward: a file of c's subpackage takes a name of c's __init__
    "src/privdyn/c/sub/__init__.py": "",
    "src/privdyn/c/sub/x.py": """
        from typing import TYPE_CHECKING

        from privdyn.c import THING

        if TYPE_CHECKING:
            from privdyn.c import THING as OTHER  # type-only: not upward

        SAMPLERS = ("poisson", "fixed_size")

        def check(delta):
            if not 0 < delta < 1:
                raise ValueError(delta)
            if delta != 0.0:  # not a range check
                return THING
    """,
    # a paper package re-exporting two private names, one of them used by a test through the package
    "src/privdyn/dpgd/__init__.py": """
        from privdyn.dpgd.core import _used as _used
        from privdyn.dpgd.core import _unused as _unused
    """,
    "src/privdyn/dpgd/core.py": """
        from privdyn import _check

        SAMPLERS = ("poisson",)

        def _used(delta):
            _check.in_range(0.0, 1.0, closed="neither", delta=delta)

        def _unused():
            return 0
    """,
    "src/privdyn/_check.py": "def in_range(low, high, closed='both', **named):\n    return None\n",
    "tests/test_core.py": "from privdyn.dpgd import _used\n\n\ndef test_used():\n    _used(0.5)\n",
}


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    for name, text in _FILES.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_a_planted_repository_is_measured_exactly(planted: Path) -> None:
    report = structure.build_report(planted)
    counts = report.counts
    assert counts["modules"] == 11
    # (a) the two imports of a's private parts from outside a (a name from its private module, a private name of
    # its module b); a/b.py's own import of a._secret does not count
    assert [(p["file"], p["line"], p["names"], p["level"]) for p in report.private_imports] == [
        ("src/privdyn/c/user.py", 3, ["hidden"], "module"),
        ("src/privdyn/c/user.py", 6, ["_helper"], "function"),
    ]
    assert counts["private_cross_package_imports"] == 2 and counts["private_cross_package_names"] == 2
    # (b) only the run-time import of c's __init__ from c/sub
    assert [(u["file"], u["line"], u["names"]) for u in report.upward_imports] == [
        ("src/privdyn/c/sub/x.py", 4, ["THING"])]
    # (c) a/b.py <-> c/user.py at module level, in two folders
    assert report.circles_module_level == [["privdyn.a.b", "privdyn.c.user"]]
    assert report.circles_with_lazy_imports == [["privdyn.a.b", "privdyn.c.user"]]
    assert [c["folders"] for c in report.folder_circles_module_level] == [["src/privdyn/a", "src/privdyn/c"]]
    # (d) the paper package's two private re-exports, one taken from the package by a test, one named nowhere else;
    # c's one (named nowhere else), not its own helper _check; a has none and is not a paper package: no row
    assert report.private_reexports == [{
        "package": "privdyn.c", "paper": False, "private_reexports": 1, "used_through_package": 0,
        "used_outside_package": 0, "used_nowhere_else": 1, "taken_from_package": [], "used_outside": [],
        "unused": ["_late"]}, {
        "package": "privdyn.dpgd", "paper": True, "private_reexports": 2, "used_through_package": 1,
        "used_outside_package": 1, "used_nowhere_else": 1, "taken_from_package": ["_used"], "used_outside": ["_used"],
        "unused": ["_unused"]}]
    assert counts["private_reexports"] == 3 and counts["paper_private_reexports"] == 2
    assert counts["private_reexports_used_through_package"] == 1 and counts["private_reexports_used_nowhere_else"] == 2
    # (e) two SAMPLERS, two delta range checks (the call and the chained comparison; not "delta != 0.0")
    assert [(s["file"], s["contents"]) for s in report.samplers] == [
        ("src/privdyn/c/sub/x.py", ["poisson", "fixed_size"]), ("src/privdyn/dpgd/core.py", ["poisson"])]
    assert [(c["file"], c["line"]) for c in report.delta_checks] == [
        ("src/privdyn/c/sub/x.py", 12), ("src/privdyn/dpgd/core.py", 7)]


def test_without_the_planted_imports_nothing_is_found(planted: Path) -> None:
    # The control: the same repository with c/user.py taking only public names.
    (planted / "src/privdyn/c/user.py").write_text("from privdyn.a import b\n")
    report = structure.build_report(planted)
    assert report.private_imports == []
    assert report.counts["private_cross_package_imports"] == 0


def test_the_command_prints_json_and_a_table(planted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert structure.main(["--root", str(planted), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["counts"]["private_cross_package_imports"] == 2
    assert structure.main(["--root", str(planted)]) == 0
    table = capsys.readouterr().out
    assert "(a) imports of another package's underscore names (statements)" in table
    assert "src/privdyn/c/user.py:3 [module] privdyn.a._secret: hidden" in table
    with pytest.raises(SystemExit):
        structure.main(["--root", str(planted / "src")])


def test_the_report_of_this_repository_is_well_formed() -> None:
    report = structure.build_report(_REPO)
    document = json.loads(json.dumps(dataclasses.asdict(report)))
    assert set(document) == {field.name for field in dataclasses.fields(report)}
    assert set(report.counts) == set(structure._LABELS)
    assert all(isinstance(value, int) and value >= 0 for value in report.counts.values())
    assert report.counts["modules"] > 100 and report.counts["samplers_definitions"] >= 1
    for row in [*report.private_imports, *report.upward_imports, *report.samplers, *report.delta_checks]:
        assert (_REPO / str(row["file"])).is_file() and int(str(row["line"])) > 0
    assert report.counts["private_cross_package_imports"] == len(report.private_imports)
    assert report.counts["delta_range_checks"] == len(report.delta_checks)
    assert all(row["paper"] == (row["package"].rpartition(".")[2] in structure.PAPER_KEYS)
               for row in report.private_reexports)
    assert all(row["paper"] or row["private_reexports"] > 0 for row in report.private_reexports)
