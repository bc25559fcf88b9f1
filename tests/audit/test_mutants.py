"""Mutation testing of the privacy path: the sites are found from the code, a mutant scales one site's noise, and
the audit rows covering the site catch it. The default suite runs two mutants; the whole table is behind -m slow."""

import ast
from pathlib import Path

import numpy as np
import pytest

from privdyn.audit import mutants
from privdyn.audit.mutants import Site, find_sites, mutate, run_mutant


def _site(sites, path, function, kind):
    found = [s for s in sites if s.path == path and s.function == function and s.kind == kind]
    assert found, (path, function, kind)
    return found[0]


def test_the_scan_finds_the_known_sites():
    sites = find_sites()
    _site(sites, "algorithms/dpgd.py", "dpgd", "draw")
    _site(sites, "algorithms/dpgd.py", "_noise_std", "std")
    _site(sites, "torch/optimizer.py", "PrivateOptimizer.__init__", "scale")
    _site(sites, "algorithms/dpsgd.py", "DPSGD.__init__", "scale")
    assert len([s for s in sites if s.path == "sklearn/_adassp.py"]) == 3
    assert len([s for s in sites if s.path == "sklearn/_dpgd.py"]) == 2  # the release solution's second release
    assert not [s for s in sites if s.path.startswith(("experiments/", "audit/", "data/"))]


def test_a_new_draw_is_a_site_and_a_stale_skip_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "mech.py").write_text("def release(rng, x, noise_multiplier):\n"
                                      "    return x + rng.standard_normal(3)\n\n"
                                      "def stream(s, shape, scale):\n"
                                      "    return s.stream(shape, scale=scale)\n\n"
                                      "def build(s, clip, noise_multiplier):\n"
                                      "    return s.stream(1, scale=clip * noise_multiplier)\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "gen.py").write_text("def sample(rng):\n    return rng.normal(size=3)\n")
    monkeypatch.setattr(mutants, "NOT_PRIVACY_NOISE", {"data/": "data"})
    sites = find_sites(tmp_path)
    assert [(s.function, s.kind) for s in sites] == [("release", "draw"), ("build", "scale")]
    monkeypatch.setattr(mutants, "NOT_PRIVACY_NOISE", {"data/": "data", "nothing/": "stale"})
    with pytest.raises(RuntimeError, match="nothing/"):
        find_sites(tmp_path)


def test_a_mutant_scales_the_value_in_place():
    source = ("import numpy as np\n"
              "def f(rng, out):\n"
              "    rng.standard_normal(out=out)\n"
              "    return rng.standard_normal(2), float(rng.standard_normal())\n")
    sites = [Site("m.py", "f", n.lineno, n.col_offset, n.end_lineno, n.end_col_offset, "draw", "")
             for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
             and getattr(n.func, "attr", "") == "standard_normal"]
    assert len(sites) == 3
    mutated = source
    for site in sorted(sites, key=lambda s: (s.line, s.col), reverse=True):
        mutated = mutate(mutated, site, 0.6)
    honest, planted = {}, {}
    exec(compile(source, "m.py", "exec"), honest)  # noqa: S102 - the test's own snippet
    exec(compile(mutated, "m.py", "exec"), planted)  # noqa: S102
    out_h, out_p = np.empty(4), np.empty(4)
    h = honest["f"](np.random.default_rng(0), out_h)
    p = planted["f"](np.random.default_rng(0), out_p)
    np.testing.assert_allclose(out_p, 0.6 * out_h)
    np.testing.assert_allclose(p[0], 0.6 * h[0])
    assert p[1] == pytest.approx(0.6 * h[1])


def _one(path, function, kind):
    return _site(find_sites(), path, function, kind)


def test_ci_mutant_in_the_dpgd_draw_is_caught_by_the_estimator_row():
    """x 0.6 on the normals algorithms.dpgd.dpgd draws (what DPLinearRegression.fit runs): the estimator row's law
    check fails (the issue's first planted bug)."""
    site = _one("algorithms/dpgd.py", "dpgd", "draw")
    (result,) = run_mutant(site, 0.6, ["sklearn-dplinearregression"], runs=4000, seed=0)
    assert result["caught"] and result["law_check"] is False, result


def test_ci_mutant_in_the_release_solution_draw_is_caught():
    """x 0.6 on the normals of DPLinearRegression's second release (its release solution): the release-solution
    row's law check fails."""
    site = [s for s in find_sites() if s.path == "sklearn/_dpgd.py" and s.text == "rng.standard_normal(width)"][0]
    (result,) = run_mutant(site, 0.6, ["sklearn-dplinearregression-release-solution"], runs=10_000, seed=0)
    assert result["caught"] and result["law_check"] is False, result


def test_ci_mutant_in_the_private_optimizer_scale_is_caught():
    """x 0.6 on PrivateOptimizer's noise scale (the issue's second planted bug): torch-dpsgd-poisson's law check."""
    pytest.importorskip("torch")
    site = _one("torch/optimizer.py", "PrivateOptimizer.__init__", "scale")
    (result,) = run_mutant(site, 0.6, ["torch-dpsgd-poisson"], runs=2000, seed=0)
    assert result["caught"] and result["law_check"] is False, result


@pytest.mark.slow
def test_every_covered_x06_mutant_is_caught(tmp_path):
    """The whole table at the audit's default runs: every site that a row covers, x 0.6, caught by a row."""
    table = tmp_path / "table.json"
    mutants.main(["--factors", "0.6", "--json", str(table)])
    import json

    entries = json.loads(Path(table).read_text())
    missed = [e["site"] for e in entries if e["factor"] == 0.6 and not e["caught_by"]]
    assert not missed, missed
