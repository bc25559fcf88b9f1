"""Figure helpers shared by the experiments (matplotlib's Agg backend; no display needed).

Plot functions read the result dictionary only (never the engines), so a figure can be redrawn from
``result.json`` alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from privdyn.experiments.outputs import atomic_path

__all__ = ["COLORBLIND_SAFE", "FIGURE_FORMATS", "pyplot", "figure_files", "save_figure", "select_series", "as_floats"]


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


def select_series(result: Mapping[str, Any], **params: Any) -> list[Mapping[str, Any]]:
    """The series whose ``params`` contain every given key with the given value."""
    return [s for s in result["series"] if all(s["params"].get(k) == v for k, v in params.items())]


def as_floats(values: Iterable[Any]) -> list[float]:
    """JSON values back to floats (``"inf"`` strings and ``None`` included)."""
    return [float("nan") if v is None else float(v) for v in values]
