"""The run harness: what runs an experiment and writes its outputs, independent of any paper.

:mod:`~privdyn.runs.base` (the ``Experiment`` and ``Unit`` types), :mod:`~privdyn.runs.config` (configs, overrides,
executor specs), :mod:`~privdyn.runs.results` (series, metrics, checks, tables), :mod:`~privdyn.runs.runner`
(executors, cached unit execution, assembly), :mod:`~privdyn.runs.cache`, :mod:`~privdyn.runs.outputs` (atomic
files, ``result.json``, summaries), :mod:`~privdyn.runs.power` (the quick runs' Monte-Carlo power invariant),
:mod:`~privdyn.runs.progress`, and the helpers experiments share: :mod:`~privdyn.runs.plotting`,
:mod:`~privdyn.runs.naming` and :mod:`~privdyn.runs.labels`. The experiments themselves and their registry live in
:mod:`privdyn.experiments`, which imports this package; this package imports no experiment.
"""
