"""Bootstrap and Wilson intervals."""

from __future__ import annotations

import numpy as np
from scipy import stats

from assay.metrics.uncertainty import bootstrap_ci, proportion, wilson_interval

DATA = list(np.random.default_rng(3).normal(0.6, 0.2, size=40))


def test_the_same_seed_gives_an_identical_bootstrap_interval():
    a = bootstrap_ci(DATA, n_resamples=500, seed=11, method="BCa")
    b = bootstrap_ci(DATA, n_resamples=500, seed=11, method="BCa")
    assert a == b


def test_a_different_seed_gives_a_different_interval():
    a = bootstrap_ci(DATA, n_resamples=500, seed=1)
    b = bootstrap_ci(DATA, n_resamples=500, seed=2)
    assert a.ci != b.ci and a.value == b.value


def test_percentile_interval_is_close_to_the_normal_theory_interval_of_the_mean():
    """Cross-check: percentile bootstrap vs mean ± t·SE (they converge for a mean)."""
    m = bootstrap_ci(DATA, n_resamples=4000, seed=0)
    se = stats.sem(DATA)
    assert abs(m.ci.low - (np.mean(DATA) - 1.96 * se)) < 0.02
    assert abs(m.ci.high - (np.mean(DATA) + 1.96 * se)) < 0.02


def test_bca_interval_matches_a_hand_bca_from_the_same_resamples():
    """Second implementation: Efron's BCa (bias z0 and jackknife acceleration) by hand,
    applied to the bootstrap distribution SciPy drew with the same seed."""
    x = np.asarray(DATA)
    res = stats.bootstrap((x,), np.mean, n_resamples=2000, method="percentile",
                          rng=np.random.default_rng(5))
    theta = res.bootstrap_distribution
    z0 = stats.norm.ppf(np.mean(theta < x.mean()))
    jack = np.array([np.delete(x, i).mean() for i in range(len(x))])
    d = jack.mean() - jack
    a = (d**3).sum() / (6 * ((d**2).sum()) ** 1.5)
    alphas = [stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
              for z in stats.norm.ppf([0.025, 0.975])]
    low, high = np.percentile(theta, [100 * alphas[0], 100 * alphas[1]])
    m = bootstrap_ci(DATA, n_resamples=2000, seed=5, method="BCa")
    assert abs(m.ci.low - low) < 1e-3 and abs(m.ci.high - high) < 1e-3


def test_paired_bootstrap_resamples_sequences_together():
    a, b = [1.0, 2.0, 3.0, 4.0], [0.5, 1.5, 2.5, 3.5]
    m = bootstrap_ci((a, b), lambda x, y, axis=-1: np.mean(x - y, axis=axis), paired=True,
                     n_resamples=200, seed=0)
    # resampled as pairs, every difference stays 0.5, so the interval has no width
    assert m.value == 0.5 and m.ci.low == m.ci.high == 0.5


def test_bca_on_constant_data_gives_no_interval_with_a_reason():
    m = bootstrap_ci([0.7] * 10, n_resamples=200, seed=0, method="BCa")
    assert m.value == 0.7 and m.ci is None and m.reason


def test_bootstrap_of_no_data_is_undefined():
    assert bootstrap_ci([], seed=0).value is None


def test_wilson_interval_matches_the_closed_form():
    """Cross-check: statsmodels vs (p̂ + z²/2n ± z√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)."""
    k, n, z = 17, 40, stats.norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    interval = wilson_interval(k, n)
    assert abs(interval.low - (centre - half)) < 1e-12
    assert abs(interval.high - (centre + half)) < 1e-12


def test_a_proportion_of_zero_observations_is_undefined():
    assert proportion(0, 0).value is None and wilson_interval(0, 0) is None


def test_batched_resampling_on_a_large_run_gives_the_unbatched_interval_and_p_value(monkeypatch):
    """Memory bounded by batching (``resample_batch``), the figures unchanged: the CI and the
    permutation p-value on 5,001 pairs equal SciPy's unbatched ones with the same seed."""
    from assay.metrics import uncertainty
    from assay.metrics.significance import paired_permutation

    rng = np.random.default_rng(8)
    a, b = rng.random(5001), rng.random(5001) + 0.02
    monkeypatch.setattr(uncertainty, "RESAMPLE_CELLS", 3 * 5001)  # three resamples a batch
    assert uncertainty.resample_batch(5001) == 3

    def difference(x, y, axis=-1):
        return np.mean(x - y, axis=axis)

    batched = bootstrap_ci((a, b), difference, paired=True, n_resamples=400, seed=4)
    whole = stats.bootstrap((a, b), difference, paired=True, vectorized=True, n_resamples=400,
                            method="percentile", rng=np.random.default_rng(4))
    assert (batched.ci.low, batched.ci.high) == (whole.confidence_interval.low,
                                                 whole.confidence_interval.high)
    test = paired_permutation(a, b, n_resamples=999, seed=4)
    unbatched = stats.permutation_test((a, b), difference, permutation_type="samples",
                                       vectorized=True, n_resamples=999,
                                       rng=np.random.default_rng(4))
    assert test.p_value == unbatched.pvalue
