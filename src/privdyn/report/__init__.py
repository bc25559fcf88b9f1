"""The HTML report of an output folder: ``privdyn report DIR`` and ``privdyn reproduce --report``.

:func:`write_report` reads the folder's ``result.json`` files (and nothing else of privdyn's: no experiment or
engine is imported) and writes ``DIR/report.html``, a static page that opens from disk: papers and their
experiments with the counts of invariants, paper claims and findings, the failed claims first, then per experiment
its figures, config, sortable checks and the guarantee label of every privacy curve, and the environment and timing.
"""

from privdyn.report.collect import ReportError, collect
from privdyn.report.render import REPORT_FILE, render, write_report

__all__ = ["REPORT_FILE", "ReportError", "collect", "render", "write_report"]
