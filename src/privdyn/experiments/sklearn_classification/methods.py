"""The private classifiers compared by ``sklearn-classification``, each run as its library's users would.

Every method sees the same rows: standardized features clipped to a box and divided by its half-width (the
experiment's docstring), so every coordinate is in [−1, 1] and ‖x‖ <= √d, the norm bound each method is given.
The loss is the same everywhere: the L2-regularized logistic loss (multinomial for K >= 3 classes; diffprivlib
runs one-vs-rest, its only multi-class scheme).

* ``DPLogisticRegression``: :class:`privdyn.sklearn.DPLogisticRegression` with ``feature_norm = √d`` and its
  defaults (planned ridge, step, steps and noise; δ = 1/n^1.1; accounted by the last-iterate bound).
* ``diffprivlib``: diffprivlib 0.6.6's ``LogisticRegression`` (objective perturbation by the Vector mechanism,
  Chaudhuri, Monteleoni, Sarwate 2011; pure ε-DP) with ``data_norm = √d`` and its defaults (C = 1, L-BFGS), as its
  documentation asks: a data-independent ``data_norm``.
* ``opendp-noisy-gd``: full-batch noisy GD accounted by composition over all iterations in OpenDP 0.16: one step
  is OpenDP's Gaussian measurement (``make_gaussian`` on the L2-bounded gradient sum, zCDP), the K steps are
  composed by OpenDP's ``make_composition`` and converted by ``make_zCDP_to_approxDP``; the noise scale is the
  smallest whose composed ε at δ is at most the target (bisection on OpenDP's own map). OpenDP 0.16 ships no
  logistic regression (its scikit-learn extras hold a Theil–Sen linear regression and PCA), so this is the
  mechanism built from its primitives, with the same loss, ridge and step as DPLogisticRegression's plan and the
  number of steps the same utility bound picks under composition (:func:`composition_num_steps`): the two differ
  only in the accountant and what it lets the planner choose.
* ``dp-sgd``: DP-SGD (Abadi et al. 2016) on the same model: Poisson sampling at rate q = B/n with expected batch B =
  min(256, n/4), per-example gradients clipped to 1 (they have norm <= 1 binary, <= √2 multinomial, on rows of norm
  <= 1), 20 epochs, the final iterate, the noise multiplier from Opacus' ``get_noise_multiplier`` with its PRV
  accountant (the default of Opacus' ``PrivacyEngine``), the same ridge and step size as DPLogisticRegression.

Neighbouring relations differ: privdyn's and OpenDP's accounting here are for replace-one neighbours, Opacus' for
add-remove, diffprivlib's for its own (replace-one) relation; methods are compared at the same nominal ε.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy import special

__all__ = ["METHODS", "diffprivlib_logistic_regression", "fit_predict"]

METHODS = ("DPLogisticRegression", "diffprivlib", "opendp-noisy-gd", "dp-sgd")
"""The private methods, in table order."""

DPSGD_EPOCHS = 20
DPSGD_MAX_BATCH = 256


def diffprivlib_logistic_regression(*, epsilon: float, data_norm: float, random_state: int) -> Any:
    """diffprivlib 0.6.6's ``LogisticRegression`` with its defaults, made on a current scikit-learn.

    diffprivlib 0.6.6 (its latest release) imports two names scikit-learn no longer defines (``DOUBLE``, ``DTYPE``
    of ``sklearn.tree._tree``), and its ``__init__`` passes ``multi_class="ovr"`` to scikit-learn's
    ``LogisticRegression.__init__``, which scikit-learn 1.8 removed. The names are defined with their former values
    and the object is initialized as diffprivlib's ``__init__`` would, without that one argument; its ``fit`` (the
    private part: one-vs-rest, objective perturbation, L-BFGS) runs unchanged.
    """
    import inspect

    import sklearn.tree._tree as tree

    from sklearn import linear_model

    for name, value in (("DOUBLE", np.float64), ("DTYPE", np.float32)):
        if not hasattr(tree, name):
            setattr(tree, name, value)
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models import LogisticRegression

    model = LogisticRegression.__new__(LogisticRegression)
    wanted: dict[str, Any] = {
        "penalty": "l2", "dual": False, "tol": 1e-4, "C": 1.0, "fit_intercept": True, "intercept_scaling": 1.0,
        "class_weight": None, "random_state": random_state, "solver": "lbfgs", "max_iter": 100, "verbose": 0,
        "warm_start": False, "n_jobs": None}
    accepted = inspect.signature(linear_model.LogisticRegression.__init__).parameters
    linear_model.LogisticRegression.__init__(model, **{k: v for k, v in wanted.items() if k in accepted})
    model.epsilon, model.data_norm, model.classes_ = epsilon, data_norm, None
    model.accountant = BudgetAccountant.load_default(None)
    for name, value in wanted.items():  # what diffprivlib's get_params reads, whatever scikit-learn kept
        if not hasattr(model, name):
            setattr(model, name, value)
    return model


def _gradient(theta: np.ndarray, rows: np.ndarray, labels: np.ndarray, classes: int) -> np.ndarray:
    """Per-example gradients of the unregularized loss, shape (n, p) (θ flattened as in DPLogisticRegression)."""
    if classes == 2:
        signs = 2.0 * labels - 1.0
        return (-signs * special.expit(-signs * (rows @ theta)))[:, None] * rows
    weights = theta.reshape(classes, rows.shape[1])
    residuals = special.softmax(rows @ weights.T, axis=1)
    residuals[np.arange(len(labels)), labels] -= 1.0
    return (residuals[:, :, None] * rows[:, None, :]).reshape(len(labels), -1)


def _predict(theta: np.ndarray, rows: np.ndarray, classes: int) -> np.ndarray:
    if classes == 2:
        return (rows @ theta > 0).astype(int)
    return np.asarray(np.argmax(rows @ theta.reshape(classes, rows.shape[1]).T, axis=1))


def _rows(features: np.ndarray, fitted: Any) -> np.ndarray:
    """The rows as DPLogisticRegression's mechanism saw them (projected, intercept column, divided by R)."""
    from privdyn.sklearn import project_rows

    return project_rows(features, math.sqrt(features.shape[1]), True)[0]


@functools.lru_cache(maxsize=256)
def _opendp_scale(sensitivity: float, num_steps: int, width: int, epsilon: float, delta: float) -> float:
    """The Gaussian scale whose K-fold composition is (ε, δ)-DP by OpenDP's own accountant."""
    return float(_opendp_chain_search(sensitivity, num_steps, width, epsilon, delta))


def _opendp_measurement(scale: float, width: int, num_steps: int) -> Any:
    """OpenDP's K-fold composition of its Gaussian measurement on the gradient sum, as approximate DP."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=width), dp.l2_distance(T=float)
    step = dp.m.make_gaussian(*space, scale=scale)
    return dp.c.make_zCDP_to_approxDP(dp.c.make_composition([step] * num_steps))


def _opendp_chain_search(sensitivity: float, num_steps: int, width: int, epsilon: float, delta: float) -> float:
    def epsilon_at(scale: float) -> float:
        return float(_opendp_measurement(scale, width, num_steps).map(sensitivity).epsilon(delta))

    low, high = 1e-6, 1.0
    while epsilon_at(high) > epsilon:
        high *= 2.0
    for _ in range(60):  # bisection to 1e-12 relative on the scale: the composed epsilon is monotone in it
        middle = 0.5 * (low + high)
        if epsilon_at(middle) > epsilon:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return high


def _opendp_noisy_gd(rows: np.ndarray, labels: np.ndarray, classes: int, training: dict[str, Any], epsilon: float,
                     delta: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Full-batch noisy GD, Gaussian noise of OpenDP's calibrated scale on the gradient sum, composition over K steps.

    The noise is drawn from ``rng`` at the scale OpenDP's accountant calibrated (OpenDP's own sampler cannot be
    seeded, and the comparison must be reproducible); the law is the same Gaussian.
    """
    n, width = rows.shape
    p = width if classes == 2 else classes * width
    eta, ridge = float(training["step_size"]), float(training["ridge"])
    sensitivity, radius = float(training["sensitivity"]), float(training["radius"])
    k = composition_num_steps(n=n, parameters=p, training=training, epsilon=epsilon, delta=delta,
                              max_steps=int(training["max_iter"]))
    scale = _opendp_scale(sensitivity, k, p, epsilon, delta)
    composed = _opendp_measurement(scale, p, k)
    theta = np.zeros(p)
    for _ in range(k):
        noisy_sum = _gradient(theta, rows, labels, classes).sum(axis=0) + scale * rng.standard_normal(p)
        theta = theta - eta * (noisy_sum / n + ridge * theta)
        norm = float(np.linalg.norm(theta))
        if norm > radius:
            theta *= radius / norm
    return theta, float(composed.map(sensitivity).epsilon(delta))


def composition_num_steps(*, n: int, parameters: int, training: dict[str, Any], epsilon: float, delta: float,
                          max_steps: int = 1000) -> int:
    """The K that the planner's utility bound picks when the noise is calibrated by composition instead.

    The same bound DPLogisticRegression's plan minimizes (:func:`privdyn.plan.langevin` with a given step:
    (β/2)[(1 − ηλ)^{2K} L²/λ² + 2pησ²/(1 − (1 − ηλ)²)]), with σ² = S_g²ηK/(4n²ρ), the noise scale at which K
    composed steps are ρ-zCDP (ρ the zCDP of the (ε, δ) budget): composition makes σ grow with K, so it stops
    earlier. Each accountant gets the number of steps that is best for it by the same public criterion.
    """
    from privdyn.privacy.conversions import epsilon_to_zcdp

    rho = float(epsilon_to_zcdp(epsilon, delta=delta, method="optimal"))
    eta, lam = float(training["step_size"]), float(training["ridge"])
    s, lipschitz = float(training["sensitivity"]), float(training["lipschitz"])
    ks = np.arange(1, max_steps + 1, dtype=float)
    sigma2 = s**2 * eta * ks / (4.0 * n**2 * rho)
    q2 = (1.0 - eta * lam) ** 2
    bound = q2**ks * lipschitz**2 / lam**2 + 2.0 * parameters * eta * sigma2 / (1.0 - q2)
    return int(ks[int(np.argmin(bound))])


@functools.lru_cache(maxsize=256)
def _opacus_noise_multiplier(epsilon: float, delta: float, sample_rate: float, steps: int) -> float:
    from opacus.accountants.utils import get_noise_multiplier

    return float(get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=sample_rate,
                                      steps=steps, accountant="prv", epsilon_tolerance=0.005))


def _dp_sgd(rows: np.ndarray, labels: np.ndarray, classes: int, training: dict[str, Any], epsilon: float,
            delta: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """DP-SGD with Poisson sampling, clip 1, Opacus' PRV-calibrated noise multiplier (module docstring)."""
    n, width = rows.shape
    p = width if classes == 2 else classes * width
    batch = min(DPSGD_MAX_BATCH, n // 4)
    rate = batch / n
    steps = int(math.ceil(DPSGD_EPOCHS / rate))
    multiplier = _opacus_noise_multiplier(epsilon, delta, rate, steps)
    eta, ridge = float(training["step_size"]), float(training["ridge"])
    theta = np.zeros(p)
    for _ in range(steps):
        chosen = rng.random(n) < rate
        gradients = _gradient(theta, rows[chosen], labels[chosen], classes)
        norms = np.linalg.norm(gradients, axis=1)
        gradients /= np.maximum(1.0, norms)[:, None]
        noisy = gradients.sum(axis=0) + multiplier * rng.standard_normal(p)
        theta = theta - eta * (noisy / batch + ridge * theta)
    return theta, epsilon


def fit_predict(method: str, *, epsilon: float, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
                rng: np.random.Generator, reference: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Fit ``method`` privately and predict the test rows; also what the fit recorded.

    ``reference`` carries DPLogisticRegression's ``classes_`` and ``training_`` for the same split and ε (the OpenDP
    and DP-SGD runs reuse its ridge, step and constraint radius, planned from public numbers only). The
    DPLogisticRegression record holds ``training`` (its ``training_``) for that purpose.
    """
    import warnings

    d = x_train.shape[1]
    n = x_train.shape[0]
    delta = float(n) ** -1.1
    if method == "DPLogisticRegression":
        from privdyn.sklearn import DPLogisticRegression

        model = DPLogisticRegression(epsilon=epsilon, feature_norm=math.sqrt(d), random_state=rng).fit(x_train, y_train)
        privacy = model.privacy_
        return model.predict(x_test), {
            "epsilon": privacy["epsilon"], "delta": privacy["delta"], "bound": privacy["bound"],
            "last_iterate_epsilon": privacy["last_iterate_epsilon"],
            "composition_epsilon": privacy["composition_epsilon"], "num_steps": model.training_["num_steps"],
            "ridge": model.training_["ridge"], "training": dict(model.training_)}
    if method == "diffprivlib":
        model = diffprivlib_logistic_regression(epsilon=epsilon, data_norm=math.sqrt(d),
                                                random_state=int(rng.integers(2**31 - 1)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(x_train, y_train)
        return model.predict(x_test), {"epsilon": epsilon, "delta": 0.0}
    if reference is None:
        raise ValueError(f"method {method!r} needs the fitted DPLogisticRegression of the same split as reference.")
    classes = reference.classes_
    labels = np.searchsorted(classes, y_train)
    rows, test_rows = _rows(x_train, reference), _rows(x_test, reference)
    if method == "opendp-noisy-gd":
        theta, spent = _opendp_noisy_gd(rows, labels, classes.size, reference.training_, epsilon, delta, rng)
    elif method == "dp-sgd":
        theta, spent = _dp_sgd(rows, labels, classes.size, reference.training_, epsilon, delta, rng)
    else:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got method={method!r}.")
    return classes[_predict(theta, test_rows, classes.size)], {"epsilon": spent, "delta": delta}
