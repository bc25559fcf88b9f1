"""The audit row of banded noise under cyclic Poisson sampling: the shipped sampler and noise, no violation, and a
halved noise caught by the law check."""

from privdyn.algorithms import dpsgd as dpsgd_module
from privdyn.audit import audit_mechanism, mechanism


def test_the_row_draws_the_canary_from_the_shipped_sampler_with_the_strategy_parts(monkeypatch):
    original = dpsgd_module.sample_batches
    calls = []

    def counted(sampler, **kwargs):
        calls.append((sampler, kwargs.get("num_partitions")))
        return original(sampler, **kwargs)

    monkeypatch.setattr(dpsgd_module, "sample_batches", counted)
    row = mechanism("dpsgd-banded-cyclic-poisson")
    row.scores(0, "sampler", 200)
    assert len(calls) == 200 and set(calls) == {("cyclic_poisson", 2)}


def test_no_violation_and_a_halved_noise_fails_the_law_check():
    """Seed 3, 2,000 runs: the honest row certifies a lower bound below the reported epsilon and its releases have
    the stated law; with the noise halved (the reported epsilon unchanged) the whitened releases have variance 1/4,
    far outside the law check's threshold."""
    honest = audit_mechanism(mechanism("dpsgd-banded-cyclic-poisson"), runs=2_000, seed=3)
    assert not honest.violation and honest.law_check and honest.guarantee == "bound"
    assert 0.0 <= honest.audited_lower_bound <= honest.epsilon
    planted = audit_mechanism(mechanism("dpsgd-banded-cyclic-poisson", noise_factor=0.5), runs=2_000, seed=3)
    assert planted.epsilon == honest.epsilon
    assert not planted.law_check and planted.law_z > planted.law_threshold
