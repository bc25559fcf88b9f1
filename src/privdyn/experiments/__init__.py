"""Experiments that regenerate the papers' figures and check their claims, and their registry.

Import :mod:`privdyn.experiments.registry` for the experiments and :mod:`privdyn.runs.runner` to run them.
"""
