"""Record the check outcomes of full runs into ``privdyn/report/data/full_runs.json``.

Usage::

    privdyn run dpgd-fig3 --out OUT          # a full run (no --quick), as many experiments as you record
    python tools/record_full_runs.py OUT

Each ``OUT/NAME/result.json`` of a full run replaces the experiment's entry: the status of each of its checks
(``passed``, ``failed``, ``not_applicable``, ``finding``) and where it came from (the command, the privdyn version and
the day of the run). Quick results are refused. Entries of experiments not in ``OUT`` are kept.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "src" / "privdyn" / "report" / "data" / "full_runs.json"
ABOUT = ("Check outcomes of full (not --quick) runs, written by tools/record_full_runs.py from each run's result.json; "
         "the report shows them beside a quick run's checks where they differ.")


def _status(check: dict) -> str:
    if check["passed"] is not None:
        return "passed" if check["passed"] else "failed"
    return "finding" if check["kind"] == "finding" else "not_applicable"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="an output folder of full runs")
    args = parser.parse_args(argv)
    data = json.loads(TARGET.read_text(encoding="utf-8")) if TARGET.is_file() else {}
    experiments = dict(data.get("experiments", {}))
    for path in sorted(args.out.glob("*/result.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        if result["quick"]:
            print(f"{path}: a quick run, not recorded", file=sys.stderr)
            continue
        day = datetime.datetime.fromtimestamp(path.stat().st_mtime, tz=datetime.UTC).date().isoformat()
        version = result["environment"].get("privdyn", "?")
        commit = result["environment"].get("git_commit")
        built = f"privdyn {version}" + (f" at {commit[:10]}" if commit else "")
        experiments[result["experiment"]] = {
            "source": f"privdyn run {result['experiment']}, seed {result['seed']}, {built}, {day}",
            "checks": {c["name"]: _status(c) for c in result["checks"]},
        }
        counts = {s: sum(v == s for v in experiments[result["experiment"]]["checks"].values())
                  for s in ("passed", "failed", "not_applicable", "finding")}
        print(f"{result['experiment']}: {counts}")
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"about": ABOUT, "experiments": dict(sorted(experiments.items()))}, indent=1, sort_keys=False)
    TARGET.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
