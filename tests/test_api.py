"""The public API: flat lazy re-exports per subpackage, a cheap ``import privdyn``, a fast ``privdyn --help``."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
import types
import warnings
from pathlib import Path

import pytest

import privdyn
from privdyn._deprecation import renamed_arguments

PACKAGES = ("privdyn", "privdyn.privacy", "privdyn.dynamics", "privdyn.algorithms", "privdyn.bounds",
            "privdyn.models", "privdyn.data", "privdyn.tuning")
HEAVY = ("scipy", "numba", "matplotlib", "sklearn", "dp_accounting", "torch")


def _type_checking_imports(package: str) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """The names imported under ``if TYPE_CHECKING:`` in a package's ``__init__``: {public: (module, attribute)}."""
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") ==
                 "TYPE_CHECKING")
    objects: dict[str, tuple[str, str]] = {}
    submodules: set[str] = set()
    for node in block.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            if node.module == package:
                submodules.add(alias.asname or alias.name)
            else:
                objects[alias.asname or alias.name] = (node.module, alias.name)
    return objects, submodules


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves_to_what_the_type_checker_sees(package: str) -> None:
    module = importlib.import_module(package)
    objects, submodules = _type_checking_imports(package)
    public = [name for name in module.__all__ if name != "__version__"]
    assert public == sorted(public), "__all__ is sorted"
    assert set(public) == set(objects), "the TYPE_CHECKING imports list exactly the re-exported names"
    for name in public:
        source, attribute = objects[name]
        assert getattr(module, name) is getattr(importlib.import_module(source), attribute), name
    for name in submodules:
        if name == "torch" and importlib.util.find_spec("torch") is None:
            continue  # the optional extra: test_torch_extra_is_a_lazy_submodule checks it without PyTorch
        assert isinstance(getattr(module, name), types.ModuleType), name
        assert name not in public
    assert set(public) <= set(dir(module))


def test_curated_sizes_and_the_examples_of_the_issue() -> None:
    from privdyn.privacy import LambdaCGD, noise_multiplier_theorem_f12, renyi_gaussian

    assert LambdaCGD.__module__.startswith("privdyn.privacy.correlated")
    assert callable(noise_multiplier_theorem_f12) and callable(renyi_gaussian)
    for package in PACKAGES[1:]:
        assert len(importlib.import_module(package).__all__) >= 10, package
    for name in ("Guarantee", "NeighboringRelation", "PrivacyLoss", "Spectrum", "LearningRate", "Constant",
                 "Polynomial", "Harmonic", "Custom", "__version__"):
        assert name in privdyn.__all__
        assert getattr(privdyn, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        privdyn.privacy.not_a_name  # noqa: B018


def test_functions_named_like_their_module_do_not_shadow_the_module() -> None:
    from privdyn.algorithms import run_dpgd, simulate_noisy_gd
    from privdyn.bounds import compute_ntk_margin

    dpgd_module = importlib.import_module("privdyn.algorithms.dpgd")  # imported after the flat names on purpose
    assert isinstance(dpgd_module, types.ModuleType) and dpgd_module.dpgd is run_dpgd
    assert isinstance(privdyn.algorithms.noisy_gd, types.ModuleType)
    assert privdyn.algorithms.noisy_gd.noisy_gd is simulate_noisy_gd
    assert isinstance(privdyn.bounds.ntk_margin, types.ModuleType)
    assert privdyn.bounds.ntk_margin.ntk_margin is compute_ntk_margin
    assert privdyn.privacy.hsgd_rdp_epsilon is privdyn.privacy.hsgd.rdp_epsilon


def _loaded_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
    return set(out.split())


@pytest.mark.parametrize("code", [
    "import privdyn",
    "import privdyn; privdyn.Guarantee; privdyn.PrivacyLoss; privdyn.Spectrum; privdyn.Constant; privdyn.__version__",
    *(f"import {package}" for package in PACKAGES[1:]),
    "from privdyn.privacy import Guarantee, NeighboringRelation",
    "import privdyn.rng, privdyn.schedules, privdyn.spectra",
])
def test_cheap_imports_load_no_heavy_library(code: str) -> None:
    loaded = _loaded_after(code)
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    if code == "import privdyn":
        assert "numpy" not in loaded and "privdyn.privacy" not in loaded


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["run", "--help"]])
def test_help_and_version_import_no_experiment_module(argv: list[str]) -> None:
    loaded = _loaded_after(f"from privdyn.cli import main\nassert main({argv!r}) == 0")
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    assert not {m for m in loaded if m.startswith("privdyn.experiments")}
    harness = {m for m in loaded if m.startswith("privdyn.runs")}
    assert harness <= {"privdyn.runs", "privdyn.runs.config", "privdyn.runs.progress"}


def test_version_option(capsys: pytest.CaptureFixture[str]) -> None:
    from privdyn.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"privdyn {privdyn.__version__}"


def test_renamed_arguments_warn_and_forward() -> None:
    @renamed_arguments(dim="d")
    def size(d: int, *, scale: float = 1.0) -> float:
        return d * scale

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert size(3) == 3 and size(d=3, scale=2.0) == 6
    with pytest.warns(DeprecationWarning, match="'dim' is deprecated; use 'd'"):
        assert size(dim=4) == 4
    with pytest.raises(TypeError, match="both 'd' and its deprecated name 'dim'"):
        size(d=1, dim=2)


def test_vocabulary_renames_keep_the_old_spelling() -> None:
    from privdyn.algorithms import sgd_step_sizes
    from privdyn.data import num_samples

    with pytest.warns(DeprecationWarning, match="use 'd'"):
        assert num_samples(dim=100, aspect_ratio=0.5) == num_samples(100, aspect_ratio=0.5) == 200
    with pytest.warns(DeprecationWarning, match="use 'd'"):
        old = sgd_step_sizes(5, dim=10, step_size=0.1)
    assert (old == sgd_step_sizes(5, d=10, step_size=0.1)).all()


def test_torch_extra_is_a_lazy_submodule() -> None:
    import privdyn

    assert "torch" in dir(privdyn) and "torch" not in privdyn.__all__  # a star import never needs PyTorch
    assert "torch" not in _loaded_after("import privdyn; dir(privdyn)")
    code = ("import privdyn\ntry:\n    print(sorted(privdyn.torch.__all__))\n"
            "except ImportError as error:\n    print('ImportError', error)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    if importlib.util.find_spec("torch") is None:
        assert out.startswith("ImportError") and "privdyn[torch]" in out
    else:
        assert "PrivateOptimizer" in out and "noise_stream" in out
