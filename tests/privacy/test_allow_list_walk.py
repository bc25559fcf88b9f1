"""Every (noise strategy, sampler, neighbouring relation) triple privdyn knows is either accounted, with a guarantee
label, or refused, with a named reason: nothing falls through."""

from __future__ import annotations

import itertools

import pytest

from privdyn.privacy import accounting, correlated
from privdyn.privacy.labels import SAMPLERS, Guarantee, NeighboringRelation

STRATEGIES = {
    "independent": correlated.Independent(),
    "lambda_cgd": correlated.LambdaCGD(0.5),
    "banded_inverse": correlated.BandedInverse([1.0, -0.5]),
    "toeplitz": correlated.Toeplitz([1.0, 0.5, 0.25]),
    "blt": correlated.BufferedToeplitz([0.9, 0.5], [0.1, 0.2]),
    "square_root": correlated.SquareRoot(),
}
TRIPLES = list(itertools.product(accounting.NOISE_KINDS, SAMPLERS, NeighboringRelation))
SIZES = dict(n=200, batch_size=20, num_steps=20, delta=1e-5)


def test_the_walk_covers_every_kind_sampler_and_relation():
    assert set(STRATEGIES) == set(accounting.NOISE_KINDS)
    assert {accounting.noise_kind(s) for s in STRATEGIES.values()} == set(accounting.NOISE_KINDS)
    assert len(TRIPLES) == len(accounting.NOISE_KINDS) * len(SAMPLERS) * len(NeighboringRelation)
    listed = {(row.noise, row.sampler, row.neighboring) for row in accounting.ALLOW_LIST}
    assert len(listed) == len(accounting.ALLOW_LIST)  # no triple has two rows
    assert listed <= set(TRIPLES)


@pytest.mark.parametrize(("kind", "sampler", "relation"), TRIPLES, ids=lambda v: getattr(v, "value", v))
def test_each_triple_is_accounted_with_a_label_or_refused_with_a_named_reason(kind, sampler, relation):
    strategy = STRATEGIES[kind]
    listed = [row for row in accounting.ALLOW_LIST if (row.noise, row.sampler, row.neighboring) ==
              (kind, sampler, relation)]
    if listed:
        row = accounting.accountant_for(strategy, sampler=sampler, neighboring=relation)
        assert row is listed[0] and row.accountant and isinstance(row.guarantee, Guarantee)
        assert row.guarantee.is_guarantee
        loss = accounting.dpsgd_epsilon(strategy, noise_multiplier=3.0, sampler=sampler, neighboring=relation,
                                        **SIZES)
        assert loss.guarantee is row.guarantee and loss.quantity == "epsilon"
        assert (loss.sampler, loss.neighboring) == (sampler, relation)
        assert 0.0 < float(loss.value) < float("inf") and loss.source
        return
    with pytest.raises(accounting.NotAccountableError) as caught:
        accounting.accountant_for(strategy, sampler=sampler, neighboring=relation)
    reason = caught.value.reason
    assert reason == accounting.refusal_reason(kind, sampler, relation)
    assert reason in accounting.REFUSAL_REASONS
    message = str(caught.value)
    assert reason in message and f"sampler={sampler.value!r}" in message and repr(relation.value) in message
    with pytest.raises(accounting.NotAccountableError) as calibrating:
        accounting.dpsgd_noise_multiplier(strategy, epsilon=1.0, sampler=sampler, neighboring=relation, **SIZES)
    assert calibrating.value.reason == reason


def test_shuffled_epochs_print_the_poisson_number_beside_a_valid_lower_bound():
    """Replace-one, kappa = 0.8, 10 epochs of 10 batches: the lower bound on shuffling exceeds the Poisson epsilon
    a user would have reported; under add-remove it is at most random allocation's upper bound (the same pair)."""
    from privdyn.privacy import random_allocation, shuffling

    with pytest.raises(accounting.NotAccountableError) as caught:
        accounting.dpsgd_epsilon(correlated.Independent(), noise_multiplier=0.8, n=1_000, batch_size=100,
                                 num_steps=100, delta=1e-5, sampler="shuffle", neighboring="replace_one")
    evidence = shuffling.shuffle_evidence(0.8, n=1_000, batch_size=100, num_steps=100, delta=1e-5,
                                          neighboring=NeighboringRelation.REPLACE_ONE)
    message = str(caught.value)
    assert caught.value.reason == "shuffled_epochs"
    assert f"{evidence.poisson_epsilon:.4g}" in message and f"{evidence.lower_bound:.4g}" in message
    assert evidence.epochs == 10 and evidence.batches_per_epoch == 10
    assert evidence.lower_bound > evidence.poisson_epsilon > 0.0
    add_remove = shuffling.shuffle_evidence(0.8, n=1_000, batch_size=100, num_steps=100, delta=1e-5,
                                            neighboring=NeighboringRelation.ADD_REMOVE)
    upper = random_allocation.epsilon(0.8, steps_per_epoch=10, num_epochs=10, delta=1e-5)
    assert 0.0 < add_remove.lower_bound <= float(upper.value)


def test_a_partial_batch_and_a_partial_epoch_only_lower_the_bound():
    from privdyn.privacy import shuffling

    whole = shuffling.shuffle_evidence(0.8, n=1_000, batch_size=100, num_steps=100, delta=1e-5,
                                       neighboring=NeighboringRelation.REPLACE_ONE)
    ragged = shuffling.shuffle_evidence(0.8, n=1_050, batch_size=100, num_steps=105, delta=1e-5,
                                        neighboring=NeighboringRelation.REPLACE_ONE)
    assert ragged.epochs == 9 and ragged.batches_per_epoch == 10  # 11 steps per epoch, 10 full batches
    assert 0.0 < ragged.lower_bound < whole.lower_bound
    short = shuffling.shuffle_evidence(0.8, n=1_000, batch_size=100, num_steps=5, delta=1e-5,
                                       neighboring=NeighboringRelation.REPLACE_ONE)
    assert short.epochs == 0 and short.lower_bound == 0.0 and "no whole epoch" in short.describe()
