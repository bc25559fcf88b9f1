"""The recorded outcomes of full (not ``--quick``) runs, which the report sets beside a quick run's checks.

A quick run is a smoke test at reduced sizes: a paper claim that fails there may pass in the full configuration and the
other way round. ``data/full_runs.json`` records, per experiment, the status of every check of a full run that was
actually made (``tools/record_full_runs.py`` writes it from the run's ``result.json``, with the privdyn version and
the date), and nothing for experiments no full run has been recorded for. The report shows the recorded status where
a quick run's differs; it never infers an outcome that was not recorded.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from importlib import resources
from typing import Any

__all__ = ["FullRunOutcome", "full_run_outcome", "full_run_summary", "recorded_experiments"]

_WORDS = {"passed": "passed", "failed": "failed", "not_applicable": "not applicable", "finding": "a finding"}


@dataclasses.dataclass(frozen=True)
class FullRunOutcome:
    status: str
    """``passed``, ``failed``, ``not_applicable`` or ``finding``."""
    source: str
    """Which run it was: the command, the privdyn version and the date."""

    @property
    def status_words(self) -> str:
        return _WORDS.get(self.status, self.status)


@functools.cache
def _records() -> dict[str, Any]:
    text = resources.files("privdyn.report").joinpath("data/full_runs.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return dict(data.get("experiments", {}))


def recorded_experiments() -> list[str]:
    """The experiments a full run is recorded for."""
    return sorted(_records())


def full_run_summary(experiment: str) -> str | None:
    """One sentence on the recorded full run of ``experiment`` (its counts and failed checks), or None."""
    record = _records().get(experiment)
    if record is None:
        return None
    statuses = list(record["checks"].values())
    counts = ", ".join(f"{statuses.count(s)} {_WORDS[s] if s != 'finding' else 'findings'}"
                       for s in ("passed", "failed", "not_applicable", "finding") if statuses.count(s))
    failed = [name for name, status in record["checks"].items() if status == "failed"]
    text = f"The recorded full run ({record['source']}): {counts}"
    return text + (f"; failed: {', '.join(failed)}." if failed else ".")


def full_run_outcome(experiment: str, check: str) -> FullRunOutcome | None:
    """The recorded full-run status of ``check`` of ``experiment``, or None when no full run recorded it."""
    record = _records().get(experiment)
    if record is None or check not in record["checks"]:
        return None
    return FullRunOutcome(status=record["checks"][check], source=record["source"])
