"""One BatchSampler describes a run's participation to the optimizer, the accountant and the engine; the old string
arguments still work (deprecated) and a disagreement with the sampler is refused; checkpoints record the mechanism."""

import functools
import io
import itertools
import warnings

import numpy as np
import pytest

pytest.importorskip("torch.func", reason="the privdyn[torch] extra is not installed (no PyTorch)")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from privdyn.privacy import correlated as cn  # noqa: E402
from privdyn.torch import BatchSampler, DPSGDAccountant, PrivateOptimizer  # noqa: E402
from privdyn.torch.accountant import calibrate_noise_multiplier  # noqa: E402

N, BATCH, STEPS, DELTA = 200, 20, 10, 1e-5
LOSS = functools.partial(F.cross_entropy, reduction="none")


def _sampler(sampler="poisson", neighboring="add_remove", n=N, batch=BATCH, seed=0):
    return BatchSampler(n, batch, sampler=sampler, neighboring=neighboring, num_steps=STEPS,
                        generator=np.random.default_rng(seed))


def _data():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(N, 4, generator=generator, dtype=torch.float64)
    return x, (x[:, 0] > 0).long()


def _optimizer(**kwargs):
    torch.manual_seed(0)
    model = nn.Linear(4, 2).double()
    kwargs.setdefault("noise_source", cn.step_normals(0, "one-sampler"))
    private = PrivateOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, clip=1.0,
                               noise_multiplier=kwargs.pop("noise_multiplier", 1.0), num_steps=STEPS,
                               per_example="vmap", **kwargs)
    return model, private


def test_the_optimizer_reads_the_participation_from_the_loaders_sampler():
    """The sampler the DataLoader draws from is the optimizer's description: no string, no size, and no warning;
    the run equals the one the deprecated strings describe, number for number."""
    x, y = _data()
    dataset = torch.utils.data.TensorDataset(x, y)
    batches = _sampler()
    loader = torch.utils.data.DataLoader(dataset, batch_sampler=batches)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model, private = _optimizer(strategy=cn.Independent(), batch_sampler=batches)
    assert private.batch_sampler is batches is private.accountant.batch_sampler
    assert private.batch_size == BATCH and private.accountant.participation.sampling_prob == BATCH / N
    for xb, yb in loader:
        private.step(xb, yb)
    with pytest.warns(DeprecationWarning, match=r"PrivateOptimizer: the arguments 'n', 'sampler', 'neighboring' are "
                                                r"deprecated .* batch_sampler=BatchSampler"):
        old_model, old = _optimizer(strategy=cn.Independent(), batch_size=BATCH, n=N, sampler="poisson",
                                    neighboring="add_remove")
    for index in _sampler():
        old.step(x[index], y[index])
    for p, q in zip(model.parameters(), old_model.parameters(), strict=True):
        assert torch.equal(p, q)
    assert float(private.privacy_spent(DELTA)) == float(old.privacy_spent(DELTA)) > 0
    assert private.accountant.state_dict() == old.accountant.state_dict()


def test_the_accountant_takes_the_sampler_and_refuses_a_string_that_disagrees():
    batches = _sampler("fixed_size", "zero_out")
    accountant = DPSGDAccountant(cn.Independent(), batches, noise_multiplier=1.5)
    assert (accountant.sampler, accountant.n, accountant.batch_size, accountant.neighboring) == (
        "fixed_size", N, BATCH, "zero_out")
    with pytest.warns(DeprecationWarning, match="DPSGDAccountant: the arguments"):
        old = DPSGDAccountant(cn.Independent(), sampler="fixed_size", neighboring="zero_out", n=N, batch_size=BATCH,
                              noise_multiplier=1.5)
    assert float(old.epsilon(STEPS, DELTA)) == float(accountant.epsilon(STEPS, DELTA))
    for name, value, own in (("sampler", "poisson", "fixed_size"), ("n", 400, N), ("neighboring", "add_remove",
                                                                                   "zero_out")):
        with pytest.raises(ValueError, match=f"{name}={value!r} disagrees with the batch sampler's {name}={own!r}"), \
                pytest.warns(DeprecationWarning, match=f"'{name}' is deprecated"):
            DPSGDAccountant(cn.Independent(), batches, noise_multiplier=1.5, **{name: value})
    with pytest.raises(ValueError, match="batch_size=10 disagrees with the batch sampler's batch_size=20"):
        DPSGDAccountant(cn.Independent(), batches, noise_multiplier=1.5, batch_size=10)
    with pytest.raises(ValueError, match=r"give batch_sampler .* got batch_sampler=None"):
        DPSGDAccountant(cn.Independent(), noise_multiplier=1.5)
    with pytest.raises(ValueError, match="neighboring must be one of"):
        BatchSampler(N, BATCH, sampler="poisson", neighboring="add-remove", num_steps=1)


def test_calibration_reads_the_sampler_and_equals_the_deprecated_strings():
    batches = _sampler()
    kappa = calibrate_noise_multiplier(cn.Independent(), batches, epsilon=2.0, delta=DELTA, num_steps=STEPS)
    with pytest.warns(DeprecationWarning, match="calibrate_noise_multiplier: the arguments"):
        old = calibrate_noise_multiplier(cn.Independent(), epsilon=2.0, delta=DELTA, num_steps=STEPS, n=N,
                                         batch_size=BATCH, sampler="poisson", neighboring="add_remove")
    assert float(kappa) == float(old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.manual_seed(0)
        model = nn.Linear(4, 2).double()
        private = PrivateOptimizer.with_epsilon(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS,
                                                epsilon=2.0, delta=DELTA, clip=1.0, num_steps=STEPS,
                                                batch_sampler=batches, noise_source=cn.step_normals(0, "c"))
    assert float(private.calibration) == float(kappa) == private.accountant.noise_multiplier
    with pytest.raises(ValueError, match="sampler='fixed_size' disagrees with the batch sampler's "
                                         "sampler='poisson'"), pytest.warns(DeprecationWarning):
        PrivateOptimizer.with_epsilon(torch.optim.SGD(model.parameters(), lr=0.1), model, LOSS, epsilon=2.0,
                                      delta=DELTA, clip=1.0, num_steps=STEPS, batch_sampler=batches,
                                      sampler="fixed_size")


def test_the_accountant_checkpoint_records_the_mechanism_and_refuses_another():
    accountant = DPSGDAccountant(cn.LambdaCGD(0.5), _sampler("fixed_size", "zero_out"), noise_multiplier=3.0,
                                 num_steps=STEPS)
    accountant.step(4)
    buffer = io.BytesIO()
    torch.save(accountant.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    assert state == {"format": "privdyn.torch.DPSGDAccountant/2", "steps": 4, "mechanism": {
        "strategy": "LambdaCGD(noise_correlation=0.5)", "sampler": "fixed_size", "n": N, "batch_size": BATCH,
        "neighboring": "zero_out", "noise_multiplier": 3.0}}
    same = DPSGDAccountant(cn.LambdaCGD(0.5), _sampler("fixed_size", "zero_out", seed=1), noise_multiplier=3.0,
                           num_steps=STEPS)
    same.load_state_dict(state)
    assert same.steps == 4
    others = {  # each other mechanism, and the fields its refusal must name
        "strategy": (DPSGDAccountant(cn.LambdaCGD(0.6), _sampler("fixed_size", "zero_out"), noise_multiplier=3.0),
                     ["strategy: checkpoint 'LambdaCGD(noise_correlation=0.5)', this accountant "
                      "'LambdaCGD(noise_correlation=0.6)'"]),
        "sampler and relation": (
            DPSGDAccountant(cn.LambdaCGD(0.5), _sampler("poisson", "add_remove"), noise_multiplier=3.0),
            ["sampler: checkpoint 'fixed_size', this accountant 'poisson'",
             "neighboring: checkpoint 'zero_out', this accountant 'add_remove'"]),
        "sizes": (DPSGDAccountant(cn.LambdaCGD(0.5), _sampler("fixed_size", "zero_out", n=400, batch=40),
                                  noise_multiplier=3.0),
                  ["n: checkpoint 200, this accountant 400", "batch_size: checkpoint 20, this accountant 40"]),
        "noise": (DPSGDAccountant(cn.LambdaCGD(0.5), _sampler("fixed_size", "zero_out"), noise_multiplier=2.5),
                  ["noise_multiplier: checkpoint 3.0, this accountant 2.5"]),
    }
    for other, fields in others.values():
        with pytest.raises(ValueError, match="another mechanism") as refused:
            other.load_state_dict(state)
        for field in fields:
            assert field in str(refused.value)
        assert other.steps == 0
    short = DPSGDAccountant(cn.LambdaCGD(0.5), _sampler("fixed_size", "zero_out"), noise_multiplier=3.0, num_steps=3)
    with pytest.raises(ValueError, match="steps=4, past this accountant's planned num_steps=3"):
        short.load_state_dict(state)
    with pytest.raises(ValueError, match="format"):
        same.load_state_dict({**state, "format": "privdyn.torch.DPSGDAccountant/9"})
    with pytest.raises(ValueError, match="from DPSGDAccountant.state_dict"):
        same.load_state_dict({"mechanism": state["mechanism"]})


def test_a_checkpoint_of_the_first_format_loads_with_a_warning_that_it_was_not_checked():
    accountant = DPSGDAccountant(cn.Independent(), _sampler(), noise_multiplier=1.0)
    with pytest.warns(UserWarning, match=r"first format, \{'steps': n\}.*could not be checked"):
        accountant.load_state_dict({"steps": 7})
    assert accountant.steps == 7
    with pytest.raises(ValueError, match="steps must be"):
        accountant.load_state_dict({"steps": -1})


def test_the_optimizer_checkpoint_refuses_another_mechanism_and_an_unaccounted_run():
    x, y = _data()
    batches = _sampler("fixed_size", "zero_out")
    _, private = _optimizer(strategy=cn.LambdaCGD(0.5), batch_sampler=batches)
    for index in batches:
        private.step(x[index], y[index])
        if private.steps == 3:
            break
    state = private.state_dict()
    _, resumed = _optimizer(strategy=cn.LambdaCGD(0.5), batch_sampler=_sampler("fixed_size", "zero_out"))
    resumed.load_state_dict(state)
    assert resumed.steps == resumed.accountant.steps == 3
    _, other = _optimizer(strategy=cn.LambdaCGD(0.5), batch_sampler=_sampler("poisson", "zero_out"))
    with pytest.raises(ValueError, match="sampler: checkpoint 'fixed_size', this accountant 'poisson'"):
        other.load_state_dict(state)
    assert other.steps == other.accountant.steps == 0
    _, unbound = _optimizer(strategy=cn.LambdaCGD(0.5), batch_size=BATCH)
    with pytest.raises(ValueError, match="no accountant state"):
        resumed.load_state_dict(unbound.state_dict())
    _, noisier = _optimizer(strategy=cn.LambdaCGD(0.6), batch_sampler=_sampler("fixed_size", "zero_out"))
    with pytest.raises(ValueError, match="strategy: checkpoint"):
        noisier.load_state_dict(state)


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")
def test_the_engine_reads_the_loaders_sampler_and_its_optimizer_checkpoints_the_accountant():
    pytest.importorskip("opacus", reason="Opacus is not installed")
    from privdyn.torch import PrivacyEngine

    x, y = _data()
    dataset = torch.utils.data.TensorDataset(x, y)

    def make(batches, **engine_kwargs):
        torch.manual_seed(0)
        model = nn.Linear(4, 2).double()
        engine = PrivacyEngine(noise_source=cn.step_normals(0, "engine"), **engine_kwargs)
        wrapped, optimizer, loader = engine.make_private(
            module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            data_loader=torch.utils.data.DataLoader(dataset, batch_sampler=batches), noise_multiplier=1.0,
            max_grad_norm=1.0, num_steps=STEPS)
        return engine, wrapped, optimizer, loader

    batches = _sampler("fixed_size", "zero_out")
    engine, wrapped, optimizer, loader = make(batches)
    assert loader.batch_sampler is batches
    assert (engine.accountant.sampler, engine.accountant.neighboring, engine.accountant.batch_size) == (
        "fixed_size", "zero_out", BATCH)
    for xb, yb in itertools.islice(loader, 4):
        optimizer.zero_grad()
        F.cross_entropy(wrapped(xb), yb).backward()
        optimizer.step()
    state = optimizer.state_dict()
    assert state["accountant"]["steps"] == 4 and state["accountant"]["mechanism"]["neighboring"] == "zero_out"
    resumed_engine, _, resumed, _ = make(_sampler("fixed_size", "zero_out"))
    resumed.load_state_dict(state)
    assert resumed.steps == resumed_engine.accountant.steps == 4
    other_engine, _, other, _ = make(_sampler("fixed_size", "replace_one"))
    with pytest.raises(ValueError, match="neighboring: checkpoint 'zero_out', this accountant 'replace_one'"):
        other.load_state_dict(state)
    assert other_engine.accountant.steps == 0
    legacy = {key: value for key, value in state.items() if key != "accountant"}
    with pytest.warns(UserWarning, match="could not be checked"):
        other.load_state_dict(legacy)
    assert other_engine.accountant.steps == 4
    with pytest.raises(ValueError, match="sampler='poisson' disagrees with the batch sampler's "
                                         "sampler='fixed_size'"), pytest.warns(DeprecationWarning):
        make(_sampler("fixed_size", "zero_out"), sampler="poisson")
    with pytest.raises(ValueError, match=r"n=400 examples, but its dataset has len\(dataset\)=200"):
        make(_sampler("fixed_size", "zero_out", n=400))


def test_the_noise_checkpoint_names_every_field_that_differs():
    from privdyn.torch import noise_stream

    stream = noise_stream(cn.LambdaCGD(0.5), (3,), cn.step_normals(0, "n"), scale=1.0)
    stream.next()
    other = noise_stream(cn.LambdaCGD(0.4), (3,), cn.step_normals(0, "n"), scale=2.0)
    with pytest.raises(ValueError, match="another noise") as refused:
        other.load_state_dict(stream.state_dict())
    assert ("strategy: checkpoint 'LambdaCGD(noise_correlation=0.5)', this stream 'LambdaCGD(noise_correlation=0.4)'"
            in str(refused.value)) and "scale: checkpoint 1.0, this stream 2.0" in str(refused.value)
    assert other.step == 0
