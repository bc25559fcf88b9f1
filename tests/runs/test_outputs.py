"""Output writing: the source revision recorded in every result, figures as PNG and SVG, file permissions."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from privdyn.runs import outputs, plotting

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git work tree laid out as privdyn's (src/privdyn), with one commit."""
    package = tmp_path / "repo" / "src" / "privdyn"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    _git(tmp_path / "repo", "init", "-q")
    _git(tmp_path / "repo", "add", ".")
    _git(tmp_path / "repo", "commit", "-q", "-m", "initial")
    return tmp_path / "repo"


@needs_git
def test_checkout_records_head_and_uncommitted_changes(checkout):
    head = _git(checkout, "rev-parse", "HEAD")
    package = checkout / "src" / "privdyn"
    assert outputs.source_revision(package, version="1.0") == {"git_commit": head, "git_dirty": False,
                                                               "git_commit_reason": None}
    (package / "__init__.py").write_text("x = 1\n")
    assert outputs.source_revision(package, version="1.0")["git_dirty"] is True


@needs_git
def test_installed_package_inside_some_repository_is_not_that_checkout(checkout):
    # e.g. a virtual environment created inside a clone: site-packages/privdyn is not the clone's src/privdyn
    installed = checkout / "venv" / "lib" / "site-packages" / "privdyn"
    installed.mkdir(parents=True)
    revision = outputs.source_revision(installed, version="1.0")
    assert revision["git_commit"] is None and "installed package privdyn 1.0" in revision["git_commit_reason"]


def test_installed_package_records_the_version_as_the_reason(tmp_path):
    revision = outputs.source_revision(tmp_path, version="2.3.4")
    assert revision == {"git_commit": None, "git_dirty": None, "git_commit_reason":
                        "installed package privdyn 2.3.4, not a git checkout: the version identifies the code"}


def test_package_installed_from_a_git_url_records_its_commit(tmp_path):
    commit = "0123456789abcdef0123456789abcdef01234567"
    direct_url = json.dumps({"url": "https://example.org/privdyn.git",
                             "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": "main"}})
    assert outputs.source_revision(tmp_path, version="1.0", direct_url=direct_url)["git_commit"] == commit
    local = json.dumps({"url": "file:///somewhere", "dir_info": {}})
    assert outputs.source_revision(tmp_path, version="1.0", direct_url=local)["git_commit"] is None


def test_environment_never_has_a_commit_without_a_reason():
    env = outputs.environment()
    assert (env["git_commit"] is None) == (env["git_commit_reason"] is not None)
    assert env["git_commit"] is None or len(env["git_commit"]) == 40


def test_figures_are_written_as_png_and_reproducible_svg(tmp_path):
    plt = plotting.pyplot()
    saved = []
    for folder in ("a", "b"):
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([0, 1, 2], [1, 0, 2], label="a curve")
        ax.legend()
        saved.append(plotting.save_figure(fig, tmp_path / folder, "panel.png", paper="Figure 1"))
    assert saved == ["panel.png", "panel.png"] and plotting.figure_files("panel.png") == ["panel.png", "panel.svg"]
    assert (tmp_path / "a" / "panel.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "a" / "panel.svg").read_bytes() == (tmp_path / "b" / "panel.svg").read_bytes()
    assert b"<dc:date>" not in (tmp_path / "a" / "panel.svg").read_bytes()
    with pytest.raises(ValueError, match="filename must end with .png; got 'panel.svg'"):
        plotting.figure_files("panel.svg")


def test_every_figure_names_the_paper_figure_it_reproduces(tmp_path, monkeypatch):
    plt = plotting.pyplot()
    captions = []
    monkeypatch.setattr(plt.Figure, "savefig", lambda fig, *a, **k: captions.append([t.get_text() for t in fig.texts]))
    fig, _ = plt.subplots()
    plotting.save_figure(fig, tmp_path, paper="Chourasia et al. 2021, arXiv 2102.05855, Figure 1")
    assert captions[0] == ["Reproduces: Chourasia et al. 2021, arXiv 2102.05855, Figure 1"] == captions[1]
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match="paper must name the paper figure"):
        plotting.save_figure(fig, tmp_path, paper=" ")
    assert plt.rcParams["axes.prop_cycle"].by_key()["color"][:2] == list(plotting.COLORBLIND_SAFE[:2])


def test_atomic_files_get_the_umask_permissions(tmp_path):
    previous = os.umask(0o022)
    try:
        outputs.atomic_write_text(tmp_path / "x.txt", "hello")
    finally:
        os.umask(previous)
    assert (tmp_path / "x.txt").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]
