"""Experiments that regenerate the papers' figures and check their claims; the registry and the runner.

Import :mod:`privdyn.experiments.registry` for the experiments and :mod:`privdyn.experiments.runner` to run them.
"""
