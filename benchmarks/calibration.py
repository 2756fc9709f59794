"""Calibration of the verdict rule on synthetic data with a known truth (prints the figures).

False positives: both sides drawn from one distribution (CV 5%, n = 10 a side); how often the 95%
interval of the ratio excludes 1 (decided different), and how often an "about equal (±5%)" claim comes
out "not reproduced". Power: a real 10% effect at n = 10, CV 5%; how often the interval excludes 1 and
how often an "at least higher" claim comes out "reproduced". Run:
    PYTHONPATH=$PWD python benchmarks/calibration.py
"""

from __future__ import annotations

import numpy as np

from kitlib.claims.core import NOT_REPRODUCED, REPRODUCED, about_equal, at_least_higher, band_status
from kitlib.stats import welch_log_intervals

SEED = 20140721
DRAWS = 20000


def draws(effect: float, n: int = 10, cv: float = 0.05, count: int = DRAWS, seed: int = SEED):
    """`count` pairs of samples: baseline around 100, the other around 100 × (1 + effect)."""
    rng = np.random.default_rng(seed)
    sigma = np.sqrt(np.log1p(cv**2))
    base = 100 * rng.lognormal(0, sigma, (count, n))
    other = 100 * (1 + effect) * rng.lognormal(0, sigma, (count, n))
    return other, base


def figures(n: int = 10, cv: float = 0.05, count: int = DRAWS) -> dict[str, float]:
    other, base = draws(0.0, n, cv, count)
    _, low, high = welch_log_intervals(other, base)
    null_different = float(np.mean((low > 1) | (high < 1)))
    null_equal_refuted = float(np.mean(band_status(low, high, about_equal(0.05)) == NOT_REPRODUCED))
    other, base = draws(0.10, n, cv, count, SEED + 1)
    _, low, high = welch_log_intervals(other, base)
    power = float(np.mean((low > 1) | (high < 1)))
    power_claim = float(np.mean(band_status(low, high, at_least_higher(0.0)) == REPRODUCED))
    return {
        "false_positive_rate": null_different,
        "about_equal_refuted_under_no_effect": null_equal_refuted,
        "power_10pct_n10": power,
        "higher_claim_reproduced_10pct_n10": power_claim,
    }


if __name__ == "__main__":
    for name, value in figures().items():
        print(f"{name}: {value:.4f}")
    print("n = 3, CV 5%, 10% effect:", f"{figures(n=3)['power_10pct_n10']:.4f}")
