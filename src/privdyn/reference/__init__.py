"""Independent reference solvers that the experiments' invariants compare privdyn's engines against.

Each module computes the same quantity as an engine by a different route (a smaller exact subspace, dense matrices,
another integrator), so that an invariant's ``expected`` never comes from the engine it checks. They are tested like
engines, and are slow by design: they are oracles, not the production path.
"""
