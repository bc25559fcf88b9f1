"""The registry lists every experiment by module and loads a module only when one of its experiments is used."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from privdyn.experiments import registry
from privdyn.runs.base import Experiment


def test_each_module_defines_exactly_the_experiments_listed_for_it() -> None:
    for module, names in registry.MODULES.items():
        defined = importlib.import_module(f"privdyn.experiments.{module}").EXPERIMENTS
        assert tuple(sorted(e.name for e in defined)) == tuple(sorted(names)), module
        assert all(isinstance(e, Experiment) for e in defined)
    assert sorted(registry.NAMES + registry.OPT_IN) == sorted(n for names in registry.MODULES.values() for n in names)
    assert not set(registry.OPT_IN) & set(registry.NAMES)
    assert len(set(registry.NAMES)) == len(registry.NAMES)


def test_paper_order() -> None:
    """Papers in the order of ARCHITECTURE.md; a paper's figures in figure order, then the experiments beyond it."""
    keys = [name.split("-")[0] for name in registry.NAMES]
    assert list(dict.fromkeys(keys)) == ["langevin", "hsgd", "dpgd", "kan"]

    def figure(name: str) -> int:
        tail = name.rpartition("-fig")[2] if "-fig" in name else ""
        digits = "".join(ch for ch in tail.split("-")[0] if ch.isdigit())
        return int(digits) if digits else 10**6

    for key in ("langevin", "hsgd", "dpgd", "kan"):
        numbers = [figure(n) for n in registry.NAMES if n.startswith(key + "-")]
        assert numbers == sorted(numbers), key
    assert list(registry.EXPERIMENTS) == list(registry.NAMES)


def test_get_and_select() -> None:
    assert registry.get("dpgd-fig10").name == "dpgd-fig10"
    assert [e.name for e in registry.select(["dpgd-fig1"])] == ["dpgd-fig1"]
    assert [e.name for e in registry.select(["langevin-*"])] == ["langevin-fig1", "langevin-tightness",
                                                               "langevin-table1"]
    with pytest.raises(ValueError, match="unknown experiment 'nope'"):
        registry.get("nope")
    with pytest.raises(ValueError, match="matches no experiment"):
        registry.select(["nope-*"])
    assert [e.name for e in registry.select(["sklearn-regression"])] == ["sklearn-regression"]  # opt-in: by name
    assert "sklearn-regression" not in [e.name for e in registry.select(["*"])]


def test_one_experiment_loads_one_module() -> None:
    script = ("import sys\nfrom privdyn.experiments import registry\nregistry.get('langevin-fig1')\n"
              "print(' '.join(m for m in sys.modules if m.startswith('privdyn.experiments.')))")
    loaded = set(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                                text=True).stdout.split())
    assert "privdyn.experiments.langevin" in loaded
    assert not loaded & {f"privdyn.experiments.{m}" for m in registry.MODULES if m != "langevin"}
