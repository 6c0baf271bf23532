"""Long sums of latencies (VO convoys) drawn in one go must match exact sums."""

import numba
import numpy as np
import pytest

from simcore import PROVIDERS
from simcore.engine import EXACT_SUM_MAX_TERMS, _draw_long_sum

QUANTILES = [1, 10, 50, 90, 99]


@numba.njit
def _long_sums(rng, count, mean, var, third, size):
    out = np.empty(size)
    for i in range(size):
        out[i] = _draw_long_sum(rng.bit_generator, count, mean, var, third)
    return out


@pytest.mark.parametrize("provider", sorted(p for p in PROVIDERS if p != "instant"))
@pytest.mark.parametrize("count", [EXACT_SUM_MAX_TERMS + 1, 200])
def test_fitted_sum_matches_exact_sum_quantiles(provider, count):
    read = PROVIDERS[provider].read()
    mean, var, third = read.moments()
    rng = np.random.default_rng(11)
    exact = np.maximum(rng.lognormal(read.mu, read.sigma, (40_000, count)), read.floor_ms).sum(axis=1)
    fitted = _long_sums(np.random.default_rng(12), count, mean, var, third, 200_000)
    assert fitted.mean() == pytest.approx(exact.mean(), rel=0.002)
    assert fitted.std() == pytest.approx(exact.std(), rel=0.02)
    # 40,000 exact sums put the 1% and 99% quantiles within ~1% of the truth.
    assert np.percentile(fitted, QUANTILES) == pytest.approx(np.percentile(exact, QUANTILES), rel=0.015)


def test_moments_of_a_floored_lognormal_match_sampling():
    read = PROVIDERS["s3"].read()  # ~5% of draws sit at the 10 ms floor
    x = np.maximum(np.random.default_rng(3).lognormal(read.mu, read.sigma, 2_000_000), read.floor_ms)
    mean, var, third = read.moments()
    assert mean == pytest.approx(x.mean(), rel=0.002)
    assert var == pytest.approx(x.var(), rel=0.01)
    assert third == pytest.approx(((x - x.mean()) ** 3).mean(), rel=0.05)
