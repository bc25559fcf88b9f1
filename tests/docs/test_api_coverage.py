"""docs/_ext/api_coverage.py: an API page that documents none (or not all) of its package's public names fails
``sphinx-build -W``; a complete page passes.

Each test builds a tiny Sphinx project (the ``dummy`` builder: reading, resolving and the consistency checks, no HTML)
in a subprocess, so that its throw-away packages never enter this interpreter's ``sys.modules``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("sphinx", reason="the docs extra (pip install -e '.[docs]') is not installed")

_EXT = Path(__file__).resolve().parents[2] / "docs" / "_ext"

_COMPLETE = '''
    """A package with a class and a function, both with docstrings."""
    __all__ = ["Thing", "helper"]

    class Thing:
        """A documented class."""

    def helper() -> int:
        """A documented function."""
        return 1
'''

_PARTIAL = '''
    """A package with a public constant that has no doc comment."""
    __all__ = ["documented", "FORGOTTEN"]

    def documented() -> None:
        """Here."""

    FORGOTTEN = (1, 2)
'''

_PACKAGES = {
    "goodpkg": _COMPLETE,
    "orphanpkg": _COMPLETE,
    # The failure this check exists for: a lazily re-exported name whose optional dependency is missing. autodoc
    # skips it without a word, and the page builds empty.
    "lazypkg": '''
        """A package that re-exports an estimator from a dependency that is not installed."""
        __all__ = ["Estimator"]

        def __getattr__(name):
            if name == "Estimator":
                raise ImportError("Estimator needs a dependency that is not installed")
            raise AttributeError(name)
    ''',
    # One public constant without a doc comment: autodoc (undoc-members off) leaves it out.
    "partpkg": _PARTIAL,
    "exclpkg": _PARTIAL,
}


def _build(tmp_path: Path, pages: dict[str, str]) -> subprocess.CompletedProcess[str]:
    src = tmp_path / "src"
    src.mkdir()
    for name, code in _PACKAGES.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(textwrap.dedent(code))
    (src / "conf.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(tmp_path)!r}, {str(_EXT)!r}]
        extensions = ["sphinx.ext.autodoc", "api_coverage"]
        autodoc_default_options = {{"members": True, "imported-members": True, "undoc-members": False}}
    """))
    toctree = "\n".join(f"   {page}" for page in pages)
    (src / "index.rst").write_text(f"Index\n=====\n\n.. toctree::\n\n{toctree}\n")
    for page, body in pages.items():
        (src / f"{page}.rst").write_text(f"{page}\n{'=' * len(page)}\n\n{textwrap.dedent(body)}")
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E", "-b", "dummy",
                           str(src), str(tmp_path / "out")], capture_output=True, text=True, timeout=120, check=False)


def test_pages_that_leave_out_public_names_fail_the_build_and_complete_pages_pass(tmp_path: Path) -> None:
    # One build (a few seconds): three pages that must fail and three that must not.
    result = _build(tmp_path, {
        "good": ".. automodule:: goodpkg\n",
        # complete: its names are documented on another page, as the same objects
        "overview": ".. automodule:: goodpkg\n   :no-members:\n   :noindex:\n",
        # complete: the undocumented constant is excluded on purpose
        "excluded": ".. automodule:: exclpkg\n   :exclude-members: FORGOTTEN\n",
        "lazy": ".. automodule:: lazypkg\n",
        "part": ".. automodule:: partpkg\n",
        # its names are left to other pages, and no page documents them
        "orphan": ".. automodule:: orphanpkg\n   :no-members:\n",
    })
    assert result.returncode != 0, result.stderr
    warnings = sorted(line for line in result.stderr.splitlines() if "api_coverage" in line)
    assert len(warnings) == 4, result.stderr
    lazy, orphan_thing, orphan_helper, part = warnings  # sorted: "T" before "h"
    assert "lazy.rst" in lazy and "documents none of the 1 public names of lazypkg" in lazy
    assert "Estimator cannot be imported (ImportError: Estimator needs a dependency" in lazy
    assert "orphan.rst" in orphan_helper and "helper is documented on no page" in orphan_helper
    assert "orphan.rst" in orphan_thing and "Thing is documented on no page" in orphan_thing
    assert "part.rst" in part and "FORGOTTEN is documented on no page" in part
    assert not any(page in result.stderr for page in ("good.rst", "overview.rst", "excluded.rst"))
