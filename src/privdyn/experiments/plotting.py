"""Figure helpers shared by the experiments (matplotlib's Agg backend; no display needed).

Plot functions read the result dictionary only (never the engines), so a figure can be redrawn from
``result.json`` alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from privdyn.experiments.outputs import atomic_path

__all__ = ["pyplot", "save_figure", "select_series", "as_floats"]


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, imported on first use (it costs ~0.3 s at startup)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, out_dir: Path, filename: str = "figure.png", *, dpi: int = 130) -> str:
    """Save atomically as PNG, close the figure, return the file name."""
    with atomic_path(out_dir / filename) as tmp:
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format="png")
    pyplot().close(fig)
    return filename


def select_series(result: Mapping[str, Any], **params: Any) -> list[Mapping[str, Any]]:
    """The series whose ``params`` contain every given key with the given value."""
    return [s for s in result["series"] if all(s["params"].get(k) == v for k, v in params.items())]


def as_floats(values: Iterable[Any]) -> list[float]:
    """JSON values back to floats (``"inf"`` strings and ``None`` included)."""
    return [float("nan") if v is None else float(v) for v in values]
