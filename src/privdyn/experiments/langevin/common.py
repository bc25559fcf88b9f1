"""Experiments of Chourasia, Ye, Shokri 2021 (arXiv 2102.05855): the paper citation and check kinds."""

from __future__ import annotations

from privdyn.runs.results import CheckKind

__all__: list[str] = []


PAPER = "Chourasia, Ye, Shokri 2021 (arXiv 2102.05855)"
INVARIANT = CheckKind.INVARIANT
CLAIM = CheckKind.PAPER_CLAIM
