"""One vocabulary in code: every sampler subset is a subset of :class:`Sampler`, validated by one helper."""

from __future__ import annotations

import pytest

from privdyn import privacy
from privdyn.algorithms import dpsgd as dpsgd_module
from privdyn.privacy import accounting, correlated, correlated_calibration, labels
from privdyn.privacy.amplification import pair

SUBSETS = {
    "DPSGD_SAMPLERS": labels.DPSGD_SAMPLERS,
    "DP_ACCOUNTING_SAMPLERS": labels.DP_ACCOUNTING_SAMPLERS,
    "AMPLIFIED_SAMPLERS": labels.AMPLIFIED_SAMPLERS,
    "STATEMENT_SAMPLERS": labels.STATEMENT_SAMPLERS,
}


@pytest.mark.parametrize("name", SUBSETS)
def test_every_subset_holds_members_of_the_one_type_once(name):
    subset = SUBSETS[name]
    assert subset and all(isinstance(s, labels.Sampler) for s in subset) and len(set(subset)) == len(subset)


def test_the_old_names_are_the_subsets_themselves():
    assert privacy.Sampler is labels.Sampler and labels.STATEMENT_SAMPLERS == tuple(labels.Sampler)
    assert labels.SAMPLERS is accounting.SAMPLERS is dpsgd_module.SAMPLERS is labels.DPSGD_SAMPLERS
    assert privacy.SAMPLERS is labels.DPSGD_SAMPLERS
    assert correlated_calibration.SAMPLERS is privacy.DP_ACCOUNTING_SAMPLERS is labels.DP_ACCOUNTING_SAMPLERS
    assert pair.SAMPLERS is privacy.amplification.SAMPLERS is labels.AMPLIFIED_SAMPLERS
    assert set(labels.DP_ACCOUNTING_SAMPLERS) <= set(labels.DPSGD_SAMPLERS)
    assert set(labels.AMPLIFIED_SAMPLERS) <= set(labels.DPSGD_SAMPLERS)
    assert {row.sampler for row in accounting.ALLOW_LIST} <= set(labels.DPSGD_SAMPLERS)


def test_as_sampler_takes_a_member_or_its_value_and_names_parameter_value_and_choices():
    for member in labels.Sampler:
        assert labels.as_sampler(member, labels.STATEMENT_SAMPLERS) is member
        assert labels.as_sampler(member.value, labels.STATEMENT_SAMPLERS) is member
    with pytest.raises(ValueError, match=r"^batches must be one of 'poisson', 'fixed_size'; got batches='shuffle'\.$"):
        labels.as_sampler("shuffle", labels.AMPLIFIED_SAMPLERS, name="batches")
    with pytest.raises(ValueError, match=r"got sampler=<Sampler.FULL_BATCH: 'full_batch'>"):
        labels.as_sampler(labels.Sampler.FULL_BATCH)
    with pytest.raises(ValueError, match=r"^neighboring must be one of 'replace_one', 'add_remove', 'zero_out'; "
                                         r"got neighboring='swap'\.$"):
        labels.as_neighboring("swap")


def test_a_member_and_its_value_give_the_same_number_and_the_same_refusal():
    sizes = dict(n=200, batch_size=20, num_steps=20, delta=1e-5, neighboring="add_remove")
    by_value = accounting.dpsgd_epsilon(correlated.Independent(), noise_multiplier=2.0, sampler="poisson", **sizes)
    by_member = accounting.dpsgd_epsilon(correlated.Independent(), noise_multiplier=2.0,
                                         sampler=labels.Sampler.POISSON, **sizes)
    assert float(by_member) == float(by_value) and by_member.sampler == by_value.sampler == "poisson"
    messages = []
    for sampler in ("shuffle", labels.Sampler.SHUFFLE):
        with pytest.raises(accounting.NotAccountableError) as caught:
            accounting.accountant_for(correlated.LambdaCGD(0.5), sampler=sampler, neighboring="add_remove")
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "sampler='shuffle'" in messages[0]
