"""Independent transcriptions of the kan paper's closed-form noise multipliers (arXiv 2605.12648v1, Theorems F.12 and
D.9) in 50-digit arithmetic, apart from :mod:`privdyn.privacy.correlated_calibration`, which ``kan-calibration``'s
invariants check against them."""

from __future__ import annotations

import mpmath

__all__ = ["reference_noise_multiplier_f12", "reference_noise_multiplier_d9"]


def reference_noise_multiplier_f12(noise_correlation: float, *, n: int, batch_size: int, num_steps: int,
                                   epsilon: float, delta: float, constant: float) -> float | None:
    """Theorem F.12 (= Thm 5.1) of arXiv 2605.12648v1 transcribed independently, in 50-digit arithmetic.

        kappa^2 = K ((1 - lambda^T) / (1 - lambda))^2 (r T + sqrt(3 r T ln(2 / delta))) ln(2.5 / delta) / epsilon^2,

    ``r = B / n``, ``K = 8`` as stated (2 as its proof gives). Written independently of
    :mod:`privdyn.privacy.correlated_calibration` (the reference of ``kan-calibration``'s invariant).

    Returns:
        kappa, or None where the theorem's conditions fail (``epsilon > 1``, ``delta > 1`` or
        ``r T < 3 ln(2 / delta)``).
    """
    with mpmath.workdps(50):
        lam, eps, dlt = mpmath.mpf(noise_correlation), mpmath.mpf(epsilon), mpmath.mpf(delta)
        rate_steps = mpmath.mpf(batch_size) / mpmath.mpf(n) * num_steps
        if eps > 1 or dlt > 1 or rate_steps < 3 * mpmath.log(2 / dlt):
            return None
        geometric = (1 - lam**num_steps) / (1 - lam)
        tau = rate_steps + mpmath.sqrt(3 * rate_steps * mpmath.log(2 / dlt))
        kappa2 = mpmath.mpf(constant) * geometric**2 * tau * mpmath.log(mpmath.mpf("2.5") / dlt) / eps**2
        return float(mpmath.sqrt(kappa2))


def reference_noise_multiplier_d9(*, n: int, batch_size: int, num_steps: int, epsilon: float, delta: float) -> float:
    """Theorem D.9 (= Thm 5.4) of arXiv 2605.12648v1 transcribed independently, in 50-digit arithmetic.

        kappa^2 = 16 B^2 T / (n^2 epsilon) + 32 B^2 T ln(1 / delta) / (n^2 epsilon^2).
    """
    with mpmath.workdps(50):
        b, m, eps, dlt = mpmath.mpf(batch_size), mpmath.mpf(n), mpmath.mpf(epsilon), mpmath.mpf(delta)
        kappa2 = 16 * b**2 * num_steps / (m**2 * eps) + 32 * b**2 * num_steps * mpmath.log(1 / dlt) / (m**2 * eps**2)
        return float(mpmath.sqrt(kappa2))
