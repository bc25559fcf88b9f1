"""Planning from a data file: its statistics as public numbers, or estimated under DP with a planning share.

A dpgd plan needs the spectrum of Σ, the projections of θ* on its eigenspaces and the label noise ζ. From a data
file (CSV with a header, .npy, or .parquet, one column of labels) they come from three second-moment statistics:
S_xx = Σ_i x_i x_iᵀ, S_xy = Σ_i y_i x_i and S_yy = Σ_i y_i². Σ̂ = S_xx/n, θ̂ = Σ̂⁻¹S_xy/n (on the eigenvalues raised to a
floor: 1e-6 of the largest and, under DP, the noise matrix's spectral norm 2√d·s/n, below which an eigenvalue is
noise) and ζ̂² = S_yy/n − θ̂ᵀS_xy/n, the residual variance of least squares.

* ``public_stats=True``: the statistics are computed exactly and the plan records that the user declared them
  public; no privacy is claimed for them.
* ``planning_share=f``: each row is projected onto the public ball ‖x‖ <= ``feature_norm_bound`` = B and each label
  clipped to [−Y, Y] (``label_bound``); the three sums are released by Gaussian mechanisms (Dwork, Talwar, Thakurta
  & Zhang 2014, "Analyze Gauss", for S_xx with symmetric noise on the upper triangle), each spending a third of
  f·(total zCDP). Under replace-one neighbours — the relation of the training guarantee — the L2 sensitivities are
  √2·B² (the upper triangle of x xᵀ − x′x′ᵀ has Frobenius norm at most √(‖x‖⁴ + ‖x′‖⁴)), 2·B·Y and Y². A Gaussian
  mechanism of sensitivity Δ and noise std s is Δ²/(2s²)-zCDP (Bun & Steinke 2016, Proposition 1.6); the three
  compose with training additively in zCDP, and the plan's total guarantee includes them.
"""

from __future__ import annotations

import csv
import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from privdyn import _check
from privdyn.plan._budget import PlanningShare
from privdyn.privacy.labels import NeighboringRelation

if TYPE_CHECKING:
    from privdyn.privacy.mechanism import GaussianReleases

__all__ = ["Release", "load_data", "dpgd_model_from_data", "planning_releases", "release_statistics"]

def _where(row: int, column: int, names: list[str] | None, lines: list[int] | None) -> str:
    """``column j ('name'), row i (line k of the file)``: where a cell is, counted from 0 (columns) and 1 (rows)."""
    where = f"column {column}" + (f" ({names[column]!r})" if names and column < len(names) else "")
    return f"{where}, row {row + 1}" + (f" (line {lines[row]} of the file)" if lines is not None else "")


def _numeric(path: Path, rows: list[list[str]], names: list[str] | None, lines: list[int]) -> np.ndarray:
    width = len(names) if names is not None else len(rows[0]) if rows else 0
    for i, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"data file {str(path)!r}: row {i + 1} (line {lines[i]} of the file) has {len(row)} "
                             f"values; every row must have {width}, as the {'header' if names else 'first row'} "
                             "has.")
        for j, v in enumerate(row):
            try:
                float(v)
            except ValueError:
                raise ValueError(f"data file {str(path)!r} holds non-numeric values: every column, the label "
                                 f"column included, must be a number; got {v!r} in "
                                 f"{_where(i, j, names, lines)}.") from None
    return np.array([[float(v) for v in row] for row in rows], dtype=float).reshape(len(rows), width)


def load_data(path: str | Path, label_column: str | int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Features (n, d) and labels (n,) from a CSV (header optional), .npy (2-D) or .parquet file.

    ``label_column`` is a column name (CSV with a header, parquet) or an index; default the last column.
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"data must be a readable file; got data={str(p)!r} (no such file).")
    names: list[str] | None = None
    lines: list[int] | None = None  # line of the file of each row (CSV)
    try:
        if p.suffix == ".npy":
            table = np.asarray(np.load(p, allow_pickle=False))
            if table.dtype.kind not in "biuf":
                raise ValueError(f"data file {str(p)!r} holds non-numeric values (dtype {table.dtype}).")
            table = table.astype(float)
        elif p.suffix == ".csv":
            with p.open(newline="", encoding="utf-8") as handle:
                reader = csv.reader(handle)
                numbered = [(reader.line_num, row) for row in reader if row]
            if not numbered:
                raise ValueError(f"data file {str(p)!r} is empty.")
            try:
                [float(v) for v in numbered[0][1]]
            except ValueError:
                names, numbered = [v.strip() for v in numbered[0][1]], numbered[1:]
            lines = [line for line, _ in numbered]
            table = _numeric(p, [row for _, row in numbered], names, lines)
        elif p.suffix == ".parquet":
            try:
                import pyarrow.parquet as pq  # type: ignore[import-not-found]
            except ImportError:
                raise ValueError(f"reading {str(p)!r} needs pyarrow (pip install pyarrow); or give a CSV or .npy "
                                 "file.") from None
            frame = pq.read_table(p)
            names = list(frame.column_names)
            table = np.column_stack([np.asarray(frame.column(i).to_numpy(), dtype=float) for i in range(len(names))])
        else:
            raise ValueError(f"data must be a .csv, .npy or .parquet file; got {str(p)!r}.")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"data file {str(p)!r} is not readable: {' '.join(str(exc).split())}") from None
    if table.ndim != 2 or table.shape[0] < 2 or table.shape[1] < 2:
        raise ValueError(f"data must be a table with at least 2 rows and 2 columns (features and a label); got "
                         f"shape {table.shape} in {str(p)!r}.")
    if not np.all(np.isfinite(table)):
        i, j = (int(k) for k in np.argwhere(~np.isfinite(table))[0])
        raise ValueError(f"data file {str(p)!r} holds non-finite values (nan or inf): every cell must be a finite "
                         f"number; got {float(table[i, j])!r} in {_where(i, j, names, lines)}.")
    if label_column is None:
        index = table.shape[1] - 1
    elif isinstance(label_column, str) and not label_column.lstrip("-").isdigit():
        if names is None or label_column not in names:
            columns = ", ".join(names) if names else "it has no header: give an index"
            raise ValueError(f"label_column must name a column of {str(p)!r} ({columns}); got "
                             f"label_column={label_column!r}.")
        index = names.index(label_column)
    else:
        index = int(label_column)
        if not -table.shape[1] <= index < table.shape[1]:
            raise ValueError(f"label_column must be in [0, {table.shape[1] - 1}]; got label_column={label_column!r}.")
        index %= table.shape[1]
    labels = table[:, index]
    features = np.delete(table, index, axis=1)
    return features, labels


def dpgd_model_from_data(data: Any, *, budget_zcdp: float, label_column: str | int | None, public_stats: bool,
                         planning_share: float | None, feature_norm_bound: float | None, label_bound: float | None,
                         n: int | None, d: int | None, target_exponent: float | None,
                         label_noise: float | None,
                         rng: np.random.Generator | None = None,
                         intercept_column: bool = False, precondition: bool = False,
                         data_checks: bool = True) -> tuple[Any, PlanningShare]:
    """The dpgd data model from a data file (or a pair (features, labels)) and the planning share it spent.

    ``rng`` draws the planning share's noise; None means fresh OS entropy (a DP release whose noise nobody can
    reproduce). A seeded generator makes the plan reproducible, for tests and experiments.
    """
    given = [name for name, value in (("n", n), ("d", d), ("target_exponent", target_exponent),
                                      ("label_noise", label_noise)) if value is not None]
    if given:
        raise ValueError(f"{given[0]} comes from the data file; drop it when data is given.")
    if public_stats and planning_share is not None:
        raise ValueError("give either public_stats (--public-stats) or planning_share (--planning-share), not both.")
    if not public_stats and planning_share is None:
        raise ValueError("a data file is refused unless you say how its statistics may be used: --public-stats "
                         "(they are public) or --planning-share FRACTION (estimated under DP from that share of the "
                         "budget, with --feature-norm-bound and --label-bound).")
    if isinstance(data, tuple):
        features, labels = (np.asarray(v, dtype=float) for v in data)
        source = "arrays given in Python"
        if features.ndim != 2 or labels.shape != (features.shape[0],) or features.shape[0] < 2:
            raise ValueError(f"data must be (features (n, d), labels (n,)) with n >= 2; got {features.shape} and "
                             f"{labels.shape}.")
        _check.finite(features=features, labels=labels)
    else:
        features, labels = load_data(data, label_column)
        source = str(data)
    rows, dim = features.shape
    if data_checks:
        _check_degenerate(features[:, :-1] if intercept_column else features, labels, source, shape=features.shape)
    elif rows <= dim:
        raise ValueError(f"data must have more rows than features (n > d); got n={rows}, d={dim} in {source}.")
    if public_stats:
        sxx, sxy, syy = features.T @ features, features.T @ labels, float(labels @ labels)
        share = PlanningShare(mode="public_stats", source=source)
        release = None
    else:
        _check.scalar(planning_share=planning_share)
        _check.in_range(0.0, 1.0, closed="neither", planning_share=planning_share)
        if feature_norm_bound is None or label_bound is None:
            raise ValueError("planning_share needs public bounds: feature_norm_bound (--feature-norm-bound) on ||x|| "
                             "and label_bound (--label-bound) on |y|, both > 0.")
        _check.scalar(feature_norm_bound=feature_norm_bound, label_bound=label_bound)
        _check.positive(feature_norm_bound=feature_norm_bound, label_bound=label_bound)
        b, y_max = float(feature_norm_bound), float(label_bound)
        zcdp = float(planning_share) * budget_zcdp  # type: ignore[arg-type]  # checked above
        if rng is None:
            rng = np.random.default_rng()  # fresh OS entropy: the noise of a DP release must not be reproducible
        _check.generator(rng=rng)
        release = release_statistics(features, labels, feature_norm_bound=b, label_bound=y_max, zcdp=zcdp, rng=rng)
        sxx, sxy, syy = release.sxx, release.sxy, release.syy
        share = PlanningShare(
            mode="dp", zcdp=zcdp, fraction=float(planning_share), source=source,  # type: ignore[arg-type]
            neighboring=NeighboringRelation.REPLACE_ONE.value,
            bounds={"feature_norm_bound": b, "label_bound": y_max},
            mechanisms=tuple({"statistic": k, "sensitivity": release.sensitivities[k], "noise_std": release.stds[k],
                              "zcdp": zcdp / 3.0} for k in release.stds))
    from privdyn.plan._dpgd_data import data_model

    m = data_model(sxx, sxy, syy, rows=rows, release=release, features=features if public_stats else None,
                   labels=labels if public_stats else None, source=source, statistics=share.mode,
                   precondition=precondition)
    return m, share


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class Release:
    """The planning share's release: the three noisy sums and what their noise is.

    Attributes:
        sxx, sxy, syy: Σ x xᵀ + E (E symmetric, upper triangle i.i.d. N(0, s_xx²)), Σ y x + s_xy·z, Σ y² + s_yy·w,
            on the rows projected onto the public ball and the clipped labels.
        stds: the noise standard deviations s_xx, s_xy, s_yy (keys as in ``sensitivities``).
        sensitivities: the replace-one L2 sensitivities √2·B², 2·B·Y and Y².
        feature_norm_bound, label_bound: B and Y.
        projected_share, clipped_share: not released (None): the fraction of rows and labels the bounds changed is
            a statistic of the private data; kept None so that no code reads it by mistake.
    """

    sxx: np.ndarray
    sxy: np.ndarray
    syy: float
    stds: dict[str, float]
    sensitivities: dict[str, float]
    feature_norm_bound: float
    label_bound: float


def planning_releases(sensitivities: dict[str, float], zcdp: float) -> GaussianReleases:
    """The planning share's Gaussian releases (replace-one sensitivities by statistic), each given zcdp/3
    (:meth:`~privdyn.privacy.mechanism.GaussianReleases.calibrate_zcdp`)."""
    from privdyn.privacy.mechanism import GaussianRelease, GaussianReleases

    return GaussianReleases(releases=tuple(
        GaussianRelease(sensitivity=v, noise_std=v, neighboring=NeighboringRelation.REPLACE_ONE, statistic=k)
        for k, v in sensitivities.items())).calibrate_zcdp(zcdp)


def release_statistics(features: np.ndarray, labels: np.ndarray, *, feature_norm_bound: float, label_bound: float,
                       zcdp: float, rng: np.random.Generator) -> Release:
    """Release S_xx, S_xy and S_yy by three Gaussian mechanisms, each ``zcdp``/3-zCDP (replace-one neighbours).

    Each row is projected onto ‖x‖ <= B and each label clipped to [−Y, Y] first (see the module docstring).
    """
    b, y_max = float(feature_norm_bound), float(label_bound)
    dim = features.shape[1]
    norms = np.linalg.norm(features, axis=1)
    with np.errstate(divide="ignore"):
        x = features * np.minimum(1.0, b / np.where(norms > 0, norms, np.inf))[:, None]
    y = np.clip(labels, -y_max, y_max)
    sens = {"second_moment_features": math.sqrt(2.0) * b**2, "feature_label_moment": 2.0 * b * y_max,
            "label_second_moment": y_max**2}
    stds = {r.statistic: r.noise_std for r in planning_releases(sens, zcdp).releases}
    upper = rng.standard_normal((dim, dim)) * stds["second_moment_features"]
    noise = np.triu(upper) + np.triu(upper, 1).T
    sxx = x.T @ x + noise
    sxy = x.T @ y + rng.standard_normal(dim) * stds["feature_label_moment"]
    syy = float(y @ y) + float(rng.standard_normal()) * stds["label_second_moment"]
    return Release(sxx=sxx, sxy=sxy, syy=syy, stds=stds, sensitivities=sens, feature_norm_bound=b, label_bound=y_max)


def _check_degenerate(features: np.ndarray, labels: np.ndarray, source: str, *, shape: tuple[int, int]) -> None:
    """ValueError for statistics a plan cannot be built on: d >= n, a constant feature column, a constant label."""
    rows, dim = shape
    if dim >= rows:
        raise ValueError(f"data must have more rows than features (n > d) to plan from its second moments; got "
                         f"n={rows}, d={dim} in {source}.")
    spread = np.ptp(features, axis=0)
    constant = np.flatnonzero(spread == 0)
    if constant.size:
        raise ValueError(f"data must not hold a constant feature column (its statistics are degenerate: the "
                         f"column is a multiple of an intercept and carries no variation); got column "
                         f"{int(constant[0])} constant (value {features[0, constant[0]]:g}) in {source}. Drop it.")
    if np.ptp(labels) == 0:
        raise ValueError(f"data's label column must vary (a constant label has nothing to regress); got every label "
                         f"= {labels[0]:g} in {source}.")
