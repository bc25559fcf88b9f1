"""``privdyn account``: the epsilon of a trained DP-SGD run, against dp-accounting, and its refusals."""

import json

import pytest
from dp_accounting.pld import privacy_loss_distribution

from privdyn.cli import main
from privdyn.plan._account import resolve_sizes

BASE = ["account", "--noise-multiplier", "1.1", "--delta", "1e-5", "--sampler", "poisson", "--neighboring",
        "add_remove"]


def _account(capsys, *args):
    status = main([*BASE, *args, "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)


def _dp_accounting_epsilon(kappa, rate, steps, delta, pessimistic):
    """dp-accounting's PLD of the Poisson-subsampled Gaussian: pessimistic (an upper bound on the true epsilon) or
    optimistic (a lower bound), both at discretization 1e-4."""
    pld = privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=kappa, sensitivity=1.0, sampling_prob=rate, pessimistic_estimate=pessimistic,
        value_discretization_interval=1e-4, use_connect_dots=pessimistic)  # optimistic: privacy buckets
    return pld.self_compose(steps).get_epsilon_for_delta(delta)


@pytest.mark.parametrize(("kappa", "n", "batch", "steps"), [(1.1, 60000, 256, 300), (0.8, 50000, 1024, 100),
                                                            (3.0, 1000, 100, 50)])
def test_independent_poisson_matches_dp_accounting(capsys, kappa, n, batch, steps) -> None:
    doc = _account(capsys, "--noise-multiplier", str(kappa), "--n", str(n), "--batch-size", str(batch),
                   "--num-steps", str(steps))
    oracle = _dp_accounting_epsilon(kappa, batch / n, steps, 1e-5, pessimistic=True)
    lower = _dp_accounting_epsilon(kappa, batch / n, steps, 1e-5, pessimistic=False)
    assert doc["guarantee"] == "bound" and doc["is_dp_guarantee"] is True
    assert doc["accountant"] == "dp_accounting_pld"
    # privdyn's row is dp-accounting's pessimistic PLD (an upper bound on the true epsilon) at its default
    # discretization: the same number through dp-accounting's public API, to rounding
    assert doc["epsilon"] == pytest.approx(oracle, rel=1e-9)
    assert doc["epsilon"] >= lower  # never below dp-accounting's optimistic (lower-bound) estimate
    assert doc["privacy_statement"]["sampler"] == "poisson"
    assert doc["privacy_statement"]["neighboring"] == "add_remove"
    assert "differential privacy" in doc["privacy_statement"]["text"]


def test_the_rate_alone_and_epochs_give_the_same_run(capsys) -> None:
    by_sizes = _account(capsys, "--n", "1000", "--batch-size", "20", "--num-steps", "150")
    by_rate = _account(capsys, "--sampling-rate", "0.02", "--epochs", "3")
    by_rate_and_n = _account(capsys, "--n", "1000", "--sampling-rate", "0.02", "--epochs", "3")
    assert by_rate["inputs"]["num_steps"] == by_sizes["inputs"]["num_steps"] == 150
    assert by_rate["inputs"]["sampling_prob"] == 0.02 and "n" not in by_rate["inputs"]
    assert by_rate_and_n["inputs"]["batch_size"] == 20
    assert by_rate["epsilon"] == by_sizes["epsilon"] == by_rate_and_n["epsilon"]


def test_epochs_round_up_to_whole_steps() -> None:
    # CIFAR-10 sized: 20 epochs of 50,000 examples in batches of 1,024 is 976.5625 steps: 977 are counted
    assert resolve_sizes(n=50000, batch_size=1024, sampling_prob=None, num_steps=None, epochs=20,
                         sampler="poisson")[:3] == (50000, 1024, 977)
    # a rate that is not exactly representable does not add a step
    assert resolve_sizes(n=None, batch_size=None, sampling_prob=0.1, num_steps=None, epochs=3,
                         sampler="poisson")[2] == 30


def test_fixed_size_replace_one_and_correlated_noise_are_accounted(capsys) -> None:
    status = main(["account", "--noise-multiplier", "2", "--n", "1000", "--batch-size", "50", "--num-steps", "40",
                   "--delta", "1e-5", "--sampler", "fixed_size", "--neighboring", "replace_one", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert status == 0 and doc["accountant"] == "dp_accounting_rdp" and doc["privacy_statement"]["rdp_curve"]
    status = main([*BASE, "--n", "1000", "--batch-size", "50", "--num-steps", "40", "--strategy", "lambda_cgd:0.5",
                   "--json"])
    correlated = json.loads(capsys.readouterr().out)
    assert status == 0 and correlated["accountant"] == "amplified_bound" and correlated["guarantee"] == "bound"
    independent = _account(capsys, "--n", "1000", "--batch-size", "50", "--num-steps", "40")
    assert correlated["epsilon"] > independent["epsilon"]  # the same kappa on a correlated stream costs more


def test_the_table_names_epsilon_label_and_statement(capsys) -> None:
    assert main([*BASE, "--n", "1000", "--batch-size", "10", "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("epsilon = ") and "guarantee 'bound'" in out and "privacy statement" in out
    assert "num_steps from --epochs x --n / --batch-size = 100" in out


SIZES = ["--n", "1000", "--batch-size", "10", "--num-steps", "5"]
BAD = {
    "shuffle is refused by the allow-list": (["--sampler", "shuffle", *SIZES], "not on the allow-list"),
    "correlated noise under replace_one": (["--sampler", "fixed_size", "--neighboring", "replace_one",
                                            "--strategy", "lambda_cgd:0.3", *SIZES], "not on the allow-list"),
    "square root noise": (["--strategy", "square_root", *SIZES], "not on the allow-list"),
    "missing noise multiplier": (["account", "--delta", "1e-5", "--sampler", "poisson", "--neighboring",
                                  "add_remove", *SIZES], "--noise-multiplier is required"),
    "zero noise": (["--noise-multiplier", "0", *SIZES], "--noise-multiplier must be a finite number > 0"),
    "both batch size and rate": (["--n", "1000", "--batch-size", "10", "--sampling-rate", "0.01", "--num-steps",
                                  "5"], "give --batch-size or --sampling-rate, not both"),
    "both steps and epochs": (["--n", "1000", "--batch-size", "10", "--num-steps", "5", "--epochs", "1"],
                              "give --num-steps or --epochs, not both"),
    "neither steps nor epochs": (["--n", "1000", "--batch-size", "10"], "--num-steps or --epochs is required"),
    "batch size without n": (["--batch-size", "10", "--num-steps", "5"], "--batch-size needs --n"),
    "rate above one": (["--sampling-rate", "1.5", "--num-steps", "5"], "--sampling-rate must be in (0.0, 1.0]"),
    "rate times n not whole": (["--n", "100", "--sampling-rate", "0.013", "--num-steps", "5"],
                               "--sampling-rate x --n must be a whole batch size"),
    "rate alone under fixed_size": (["--sampler", "fixed_size", "--neighboring", "zero_out", "--sampling-rate",
                                     "0.01", "--num-steps", "5"], "accepted for poisson sampling only"),
    "batch larger than n": (["--n", "10", "--batch-size", "20", "--num-steps", "5"], "--batch-size must be <= --n"),
    "negative epochs": (["--n", "10", "--batch-size", "2", "--epochs", "-1"], "--epochs must be > 0"),
    "unknown strategy": (["--strategy", "nope", *SIZES], "strategy must be"),
    "bad delta": (["--delta", "2", *SIZES], "delta must be in (0.0, 1.0)"),
}


@pytest.mark.parametrize(("args", "fragment"), BAD.values(), ids=BAD.keys())
def test_bad_input_exits_2_with_one_line(capsys, args, fragment) -> None:
    argv = args if args[0] == "account" else [*BASE, *args]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], captured.err
    assert "Traceback" not in captured.err and "keyword-only" not in captured.err
