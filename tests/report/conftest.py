"""A small real reproduction shared by the report tests: the langevin experiments and hsgd-fig1b (whose paper claim
on the norm proxy fails with a note, so the report has a failed claim to put first)."""

from pathlib import Path

import pytest

from privdyn.cli import main

REPRODUCTION = ("langevin-*", "hsgd-fig1b")


@pytest.fixture(scope="session")
def reproduction(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An output folder written by ``privdyn reproduce --quick --report`` (run once per test session)."""
    out = tmp_path_factory.mktemp("reproduction")
    only = [arg for pattern in REPRODUCTION for arg in ("--only", pattern)]
    status = main(["reproduce", "--quick", *only, "--out", str(out), "--executor", "serial", "--report"])
    assert status == 0
    return out
