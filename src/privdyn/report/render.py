"""Rendering the report: one static HTML file from the Jinja2 templates of ``privdyn/report/templates``.

The page needs no server and loads nothing from the network: the style sheet and the few lines of JavaScript that
sort the check tables are inlined, and figures are linked by relative paths to the PNG and SVG files that sit in the
output folder beside ``report.html`` (so the report adds a few hundred kilobytes, not a second copy of every figure;
copy or move the folder as a whole).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from privdyn.report.collect import Report, collect
from privdyn.runs.outputs import atomic_write_text

__all__ = ["REPORT_FILE", "render", "write_report"]

REPORT_FILE = "report.html"
"""The file name of the HTML report in the output folder."""

_STATUS_LABELS = {"passed": "passed", "failed": "failed", "not_applicable": "n/a", "finding": "finding"}
_STATUS_RANK = {"failed": 0, "passed": 1, "finding": 2, "not_applicable": 3}
_KIND_LABELS = {"invariant": "invariant", "paper_claim": "paper claim", "finding": "finding"}


def _duration(seconds: float) -> str:
    """``0.42 s``, ``12.3 s``, ``2 min 45 s``, ``1 h 02 min``."""
    if seconds < 10:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _plural(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def _commit(environment: Any) -> str:
    """The source of a result in a few words: ``abc1234``, ``abc1234 + uncommitted changes`` or the reason."""
    commit = environment.get("git_commit")
    if isinstance(commit, str) and commit:
        return commit[:10] + (" + uncommitted changes" if environment.get("git_dirty") else "")
    reason = environment.get("git_commit_reason")
    return str(reason) if reason else "not recorded"


def _breakable(text: str) -> Markup:
    """Escaped text that may wrap after an underscore or a space (long check names in narrow columns)."""
    return Markup("_<wbr>").join(escape(part) for part in str(text).split("_"))


@functools.cache
def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("privdyn.report", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters.update(duration=_duration, plural=_plural, commit=_commit, breakable=_breakable)
    env.globals.update(status_labels=_STATUS_LABELS, status_rank=_STATUS_RANK, kind_labels=_KIND_LABELS)
    return env


def render(report: Report) -> str:
    """The report as one HTML document."""
    from privdyn._version import version

    return str(_environment().get_template("report.html.j2").render(report=report, version=version()))


def write_report(directory: Path) -> Path:
    """Write ``DIR/report.html`` for the output folder ``directory``; return its path.

    Everything is read and rendered before the file is written (atomically), so bad input writes nothing: it raises
    :class:`~privdyn.report.collect.ReportError`.
    """
    directory = Path(directory)
    html = render(collect(directory))
    target = directory / REPORT_FILE
    atomic_write_text(target, html)
    return target
