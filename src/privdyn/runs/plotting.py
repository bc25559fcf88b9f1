"""Figure helpers shared by the experiments (matplotlib's Agg backend; no display needed).

Plot functions read the result dictionary only (never the engines), so a figure can be redrawn from
``result.json`` alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from privdyn.runs.outputs import atomic_path

__all__ = ["COLORBLIND_SAFE", "FIGURE_FORMATS", "MAX_LOG_DECADES", "pyplot", "figure_files", "save_figure",
           "layout_problems", "coincident_lines", "mark_coincident", "select_series", "as_floats"]


COLORBLIND_SAFE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
"""The Okabe-Ito palette (Okabe and Ito, *Color Universal Design*, 2008), distinguishable under the common colour
vision deficiencies; the experiments' categorical colours (``"C0"``, ``"C1"``, ...) come from it. Sequential data use
``viridis`` or ``cividis``, which are perceptually uniform and colour-blind safe too."""


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, imported on first use (it costs ~0.3 s at startup), with the
    :data:`COLORBLIND_SAFE` colour cycle and matplotlib's mathtext for symbols."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from cycler import cycler

    matplotlib.rcParams["axes.prop_cycle"] = cycler(color=list(COLORBLIND_SAFE))
    return plt


FIGURE_FORMATS = ("png", "svg")
"""Every figure is written in each of these formats, under the same stem (``figure.png`` and ``figure.svg``)."""

_SVG_HASH_SALT = "privdyn"
"""A fixed salt for the ids matplotlib writes into SVG files, so a redrawn figure gives the same bytes."""


def figure_files(filename: str) -> list[str]:
    """The files :func:`save_figure` writes for ``filename``: ``figure.png`` -> ``["figure.png", "figure.svg"]``."""
    if not filename.endswith(".png"):
        raise ValueError(f"filename must end with .png; got {filename!r}.")
    stem = filename.removesuffix(".png")
    return [f"{stem}.{fmt}" for fmt in FIGURE_FORMATS]


def save_figure(fig: Any, out_dir: Path, filename: str = "figure.png", *, paper: str, dpi: int = 130) -> str:
    """Save atomically as PNG and as SVG beside it (see :func:`figure_files`), close the figure, return the PNG name.

    ``paper`` is the citation of the paper figure or table the figure reproduces (an experiment's ``paper``); it is
    written under the figure, so a figure seen on its own still says what it reproduces. The SVG carries no creation
    date and a fixed id salt, so an equal figure gives an equal file.
    """
    import matplotlib

    if not isinstance(paper, str) or not paper.strip():
        raise ValueError(f"paper must name the paper figure the figure reproduces; got {paper!r}.")
    fig.text(0.5, 0.0, f"Reproduces: {paper}", ha="center", va="top", fontsize=7, color="0.3")
    png, svg = figure_files(filename)
    try:
        bbox = _freeze_layout(fig, dpi)
        with atomic_path(out_dir / png) as tmp:
            fig.savefig(tmp, dpi=dpi, bbox_inches=bbox, format="png")
        with matplotlib.rc_context({"svg.hashsalt": _SVG_HASH_SALT}), atomic_path(out_dir / svg) as tmp:
            fig.savefig(tmp, bbox_inches=bbox, format="svg", metadata={"Date": None})
    finally:
        pyplot().close(fig)
    return png


def _freeze_layout(fig: Any, dpi: int) -> Any:
    """Lay ``fig`` out once and return its tight bounding box (in inches, padded by ``savefig.pad_inches``).

    ``savefig(bbox_inches="tight")`` draws the figure an extra time per format to measure it, and a layout engine
    (constrained layout) runs again at every draw. Here the figure is measured once, at the PNG's resolution, on its
    Agg canvas without rendering; the layout engine's result is then kept (the engine is removed), so each format costs
    exactly one draw and both formats share the same layout and crop.
    """
    import matplotlib

    fig.set_dpi(dpi)
    renderer = fig.canvas.get_renderer()
    with renderer._draw_disabled():
        fig.draw(renderer)
    bbox = fig.get_tightbbox(renderer)
    # No engine at all (``"none"`` would leave a placeholder engine, and savefig pre-draws any figure that has one).
    with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)
    pad = matplotlib.rcParams["savefig.pad_inches"]
    return bbox.padded(pad, pad)


MAX_LOG_DECADES = 12.0
"""The widest span a log axis of a figure may show (in decades); wider, the curves are squeezed into a line."""


def layout_problems(fig: Any) -> list[str]:
    """What makes ``fig`` unreadable, one sentence each (empty when nothing does).

    Checked on the figure as laid out for saving (call it after :func:`save_figure`'s layout, or after a draw):

    - every axis that shows data has finite limits with a non-empty span, and a log axis spans at most
      :data:`MAX_LOG_DECADES` decades;
    - no two labelled curves of one axes lie exactly on top of each other unless the legend says so (see
      :func:`mark_coincident`);
    - no two text boxes overlap: titles (of axes and of the figure), axis labels, tick labels, legends (each legend
      as one box) and free text. Tick labels of one axis may not overlap each other either. Text inside an axes'
      data area (annotations) is compared with the other texts, not with the curves.

    The boxes are those of the figure before :func:`save_figure`'s tight crop; a figure legend anchored to the
    figure's bottom edge moves with that crop (onto the citation line), so figure legends go on the right.
    """
    import math

    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    problems: list[str] = []
    boxes: list[tuple[str, Any]] = []
    for i, ax in enumerate(fig.axes):
        name = _axes_name(ax, i)
        has_data = bool(ax.lines or ax.collections or ax.images or ax.patches)
        if has_data and ax.get_visible() and ax.axison:
            for axis_name, limits, scale in (("x", ax.get_xlim(), ax.get_xscale()),
                                             ("y", ax.get_ylim(), ax.get_yscale())):
                lo, hi = sorted(float(v) for v in limits)
                if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
                    problems.append(f"{name}: the {axis_name} axis runs from {lo:g} to {hi:g}.")
                elif scale == "log":
                    if lo <= 0:
                        problems.append(f"{name}: the log {axis_name} axis starts at {lo:g}.")
                    elif math.log10(hi / lo) > MAX_LOG_DECADES:
                        problems.append(f"{name}: the log {axis_name} axis spans {math.log10(hi / lo):.0f} decades "
                                        f"({lo:.3g} to {hi:.3g}); at most {MAX_LOG_DECADES:g} are readable.")
        for first, second in coincident_lines(ax):
            if _ON_TOP not in second.get_label():
                problems.append(f"{name}: the curves {first.get_label()!r} and {second.get_label()!r} lie on top of "
                                "each other and the legend does not say so.")
        texts = [("title", t) for t in (ax.title, ax._left_title, ax._right_title)]
        axes_shown = (("x", ax.xaxis), ("y", ax.yaxis)) if ax.axison else ()  # axis("off") hides ticks and labels
        texts += [(f"{axis_name} label", axis.label) for axis_name, axis in axes_shown]
        for axis_name, axis in axes_shown:
            drawn = axis._update_ticks()  # the ticks a draw shows (others keep stale labels, never drawn)
            shown = [label for tick in drawn for label in (tick.label1, tick.label2)
                     if label.get_visible() and label.get_text()]
            texts += [(f"{axis_name} tick label {t.get_text()!r}", t) for t in shown]
        texts += [(f"text {t.get_text()!r}", t) for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            boxes.append((f"{name}: legend", legend.get_window_extent(renderer)))
        for label, text in texts:
            if text.get_visible() and text.get_text().strip():
                boxes.append((f"{name}: {label}", text.get_window_extent(renderer)))
    if fig._suptitle is not None and fig._suptitle.get_text().strip():
        boxes.append(("figure title", fig._suptitle.get_window_extent(renderer)))
    for text in fig.texts:
        if text is not fig._suptitle and text.get_visible() and text.get_text().strip():
            boxes.append((f"figure text {text.get_text()[:40]!r}", text.get_window_extent(renderer)))
    for legend in fig.legends:
        boxes.append(("figure legend", legend.get_window_extent(renderer)))
    boxes = [(label, box) for label, box in boxes if box.width > 0 and box.height > 0]
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            (la, ba), (lb, bb) = boxes[a], boxes[b]
            overlap_w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
            overlap_h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
            if overlap_w > 0.5 and overlap_h > 0.5:  # pixels: touching edges are not a collision
                problems.append(f"{la} overlaps {lb}.")
    return problems


_ON_TOP = "drawn on top of"


def coincident_lines(ax: Any, rtol: float = 1e-6) -> list[tuple[Any, Any]]:
    """Pairs of labelled curves of ``ax`` (earlier, later) with the same points to ``rtol`` (relative to the earlier
    curve's largest abs(y)): the later one hides the earlier one."""
    import numpy as np

    lines = [line for line in ax.get_lines() if line.get_visible() and not line.get_label().startswith("_")
             and len(line.get_xdata()) >= 2]
    data = [(np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float)) for line in lines]
    pairs = []
    for j in range(len(lines)):
        for i in range(j):
            (xi, yi), (xj, yj) = data[i], data[j]
            if xi.shape != xj.shape or yi.shape != yj.shape:
                continue
            finite = np.abs(yi[np.isfinite(yi)])
            scale = max(float(finite.max()) if finite.size else 0.0, np.finfo(float).tiny)
            if np.allclose(xi, xj, rtol=rtol, atol=0.0) and np.allclose(yi, yj, rtol=rtol, atol=rtol * scale,
                                                                          equal_nan=True):
                pairs.append((lines[i], lines[j]))
                break
    return pairs


def mark_coincident(ax: Any) -> None:
    """Say in the legend which curves of ``ax`` lie exactly on top of others: the later curve's label gets
    ``(drawn on top of <the earlier one>)``. Call before ``ax.legend()``."""
    for first, second in coincident_lines(ax):
        second.set_label(f"{second.get_label()} ({_ON_TOP} {first.get_label()})")


def _axes_name(ax: Any, index: int) -> str:
    title = ax.get_title() or ax.get_title("left")
    return f"axes {index + 1}" + (f" ({title[:40]!r})" if title else "")


def select_series(result: Mapping[str, Any], **params: Any) -> list[Mapping[str, Any]]:
    """The series whose ``params`` contain every given key with the given value."""
    return [s for s in result["series"] if all(s["params"].get(k) == v for k, v in params.items())]


def as_floats(values: Iterable[Any]) -> list[float]:
    """JSON values back to floats (``"inf"`` strings and ``None`` included)."""
    return [float("nan") if v is None else float(v) for v in values]
