"""Every experiment's figure, rendered from a stored quick run, is readable.

The results in ``figure_results/`` are quick runs of every experiment, curves thinned to at most 120 points
(``tools/figure_fixtures.py`` writes them). Each is drawn by the experiment's own ``plot`` exactly as
``privdyn run`` draws it (same layout, same crop); only the final rasterisation is skipped, which is where the time
goes. On the laid-out figure :func:`privdyn.runs.plotting.layout_problems` checks that every axis has finite
limits (a log axis at most 12 decades) and that no two text boxes (titles, axis and tick labels, legends, free text)
overlap.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from privdyn.experiments import registry
from privdyn.runs import plotting

FIXTURES = Path(__file__).with_name("figure_results")
ALL = registry.NAMES + registry.OPT_IN


def _load(name: str) -> dict:
    return json.loads(gzip.decompress((FIXTURES / f"{name}.json.gz").read_bytes()))


@pytest.fixture
def laid_out(monkeypatch):
    """Collect the layout problems of each figure ``save_figure`` lays out, and skip writing its pixels."""
    found: list[tuple[str, list[str]]] = []
    freeze = plotting._freeze_layout

    def checked(fig, dpi):
        bbox = freeze(fig, dpi)
        found.append((fig.texts[-1].get_text(), plotting.layout_problems(fig)))
        monkeypatch.setattr(fig, "savefig", lambda *args, **kwargs: None)
        return bbox

    monkeypatch.setattr(plotting, "_freeze_layout", checked)
    return found


def test_every_experiment_has_a_stored_quick_result():
    stored = sorted(p.name.removesuffix(".json.gz") for p in FIXTURES.glob("*.json.gz"))
    assert stored == sorted(ALL)
    for name in ALL:
        result = _load(name)
        assert result["experiment"] == name and result["quick"] is True


@pytest.mark.parametrize("name", ALL)
def test_figure_is_readable(name, laid_out, tmp_path):
    experiment = registry.get(name)
    result = _load(name)
    figures = experiment.plot(result, tmp_path)
    assert figures and len(laid_out) == len(figures)
    problems = [f"{name}: {p}" for _, found in laid_out for p in found]
    assert not problems, "\n".join(problems)


def test_layout_problems_catch_collisions_and_unreadable_axes():
    plt = plotting.pyplot()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(4, 2.2))
    top.semilogy([1, 2], [1e-30, 1e10])
    top.set_xlabel("a long x label that sits where the next title is", fontsize=12)
    bottom.plot([0, 1], [0, 1])
    bottom.set_title("the title of the next row", fontsize=12)
    problems = plotting.layout_problems(fig)
    plt.close(fig)
    assert any("decades" in p for p in problems)
    assert any("x " in p and "overlaps axes 2 ('the title of the next row'): title" in p for p in problems)
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    ax.plot([0, 1], [0, 1])
    ax.set_title("fine")
    ax.set_xlabel("x")
    assert plotting.layout_problems(fig) == []
    plt.close(fig)
