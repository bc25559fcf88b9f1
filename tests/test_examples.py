"""The Python examples of the README and the guides in docs/ run, and print what their comments say.

Each Markdown file's ```python blocks run in order in one namespace (a later block may use an earlier one's names).
A line ``expression  # 0.0915...`` (a comment that starts with a number) is also checked: the expression's value
(``.value`` of a labelled privacy loss) must agree with the number to the digits written (``...`` marks a truncation,
otherwise the last digit is rounded). A statement followed by a comment line ``# SomeError: ...`` documents a refusal:
it must raise that exception.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
_NUMBER_COMMENT = re.compile(r"^(?P<code>[^#]+?)\s+#\s+(?P<number>-?\d[\d_]*\.?\d*(?:e-?\d+)?)(?P<cut>\.\.\.)?"
                             r"(?=[\s,;:]|$)")


def _blocks(path: Path) -> list[str]:
    return [m.group(1) for m in _BLOCK.finditer(path.read_text(encoding="utf-8"))]


def _expected(line: str) -> tuple[str, float, float] | None:
    """``(expression, value, tolerance)`` for a checked line, else None."""
    m = _NUMBER_COMMENT.match(line)
    if m is None:
        return None
    code, text = m.group("code").strip(), m.group("number").replace("_", "")
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return None  # an assignment or a call statement with a comment: run, not checked
    del tree
    mantissa = text.split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(text.split("e")[1]) if "e" in text else 0
    unit = 10.0 ** (exponent - decimals)
    return code, float(text), (unit if m.group("cut") else unit / 2)


def _number(value: Any) -> float:
    value = getattr(value, "value", value)
    return float(np.asarray(value).reshape(-1)[0]) if np.ndim(value) else float(value)


_DOCUMENTED_ERROR = re.compile(r"^\s*#\s*(\w+(?:Error|Exception))\b")


def _run_block(block: str, name: str, namespace: dict[str, Any]) -> None:
    """Run a block statement by statement; a statement documented as raising (see the module docstring) must raise."""
    lines = block.splitlines()
    for statement in ast.parse(block).body:
        following = lines[statement.end_lineno] if statement.end_lineno is not None and statement.end_lineno < len(
            lines) else ""
        code = compile(ast.Module(body=[statement], type_ignores=[]), name, "exec")
        documented = _DOCUMENTED_ERROR.match(following)
        if documented is None:
            exec(code, namespace)  # noqa: S102 - the documented examples themselves
            continue
        with pytest.raises(Exception) as raised:  # noqa: B017 - the class is checked by name below
            exec(code, namespace)  # noqa: S102
        assert type(raised.value).__name__ == documented.group(1), (name, following, raised.value)


@pytest.mark.parametrize("path", [p for p in FILES if _blocks(p)], ids=lambda p: p.name)
def test_examples_run_and_match_their_comments(path: Path) -> None:
    namespace: dict[str, Any] = {"__name__": f"example_{path.stem}"}
    for block in _blocks(path):
        _run_block(block, path.name, namespace)
        for line in block.splitlines():
            expected = _expected(line)
            if expected is None:
                continue
            code, value, tolerance = expected
            measured = _number(eval(code, namespace))  # noqa: S307 - an expression of the example
            truncated = line.partition("#")[2].split()[0].rstrip(",").endswith("...")
            if truncated:  # the written digits are a prefix of the value
                ok = 0 <= (abs(measured) - abs(value)) * (1 if value >= 0 else 1) < tolerance and (measured >= 0) == (
                    value >= 0)
            else:
                ok = abs(measured - value) <= tolerance
            assert ok or math.isclose(measured, value, rel_tol=1e-12), (
                f"{path.name}: {code} = {measured!r}, the comment says {line.partition('#')[2].strip()!r}")
