"""The statistics of eval verdicts against independent computations: scipy as the oracle of
Student's t, Welch's interval and the Wilson interval, Newcombe's published worked examples
for the Wilson and the hybrid score intervals, and the coverage of the 95% intervals on the
seeded stochastic model of the eval tests."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from scipy import stats as oracle

from pytest_agent_skills.evals.verdicts import stats
from tests.support.evals import Behaviour, simulated_pass_rates


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 7.25, 10, 29.9, 100, 1000])
def test_the_t_quantile_is_scipys(df: float) -> None:
    assert stats.t95(df) == pytest.approx(oracle.t.ppf(0.975, df), abs=1e-9)
    assert stats.t_quantile(0.1, df) == pytest.approx(oracle.t.ppf(0.1, df), abs=1e-9)
    assert stats.t_cdf(1.3, df) == pytest.approx(oracle.t.cdf(1.3, df), abs=1e-12)


def test_welch_is_scipys_welch_interval() -> None:
    generator = random.Random(3)
    for _ in range(40):
        first = [generator.choice([0.25, 0.5, 0.75, 1.0]) for _ in range(generator.randint(2, 9))]
        second = [generator.random() for _ in range(generator.randint(2, 9))]
        if len(set(first)) == 1:
            continue
        expected = oracle.ttest_ind(first, second, equal_var=False).confidence_interval(0.95)
        found = stats.welch(first, second)
        assert found is not None
        assert found.low == pytest.approx(max(-1.0, expected.low), abs=1e-9)
        assert found.high == pytest.approx(min(1.0, expected.high), abs=1e-9)


@pytest.mark.parametrize("trials", [1, 2, 3, 5, 10, 37])
def test_wilson_is_scipys(trials: int) -> None:
    for successes in range(trials + 1):
        expected = oracle.binomtest(successes, trials).proportion_ci(0.95, method="wilson")
        found = stats.wilson(successes, trials)
        assert found is not None
        assert (found.low, found.high) == pytest.approx((expected.low, expected.high), abs=1e-12)


# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Statistics in
# Medicine 17:857-872, table I, method 3 (Wilson score, no continuity correction).
@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611),
     (1, 29, 0.0061, 0.1718)],
)  # fmt: skip
def test_wilson_matches_newcombes_worked_examples(
    successes: int, trials: int, low: float, high: float
) -> None:
    found = stats.wilson(successes, trials)
    assert found is not None and found.rounded() == (low, high)


# Newcombe (1998), "Interval estimation for the difference between independent proportions",
# Statistics in Medicine 17:873-890, table II, method 10 (hybrid score, no correction).
@pytest.mark.parametrize(
    ("a", "m", "b", "n", "low", "high"),
    [(56, 70, 48, 80, 0.0524, 0.3339), (9, 10, 3, 10, 0.1705, 0.8090),
     (5, 56, 0, 29, -0.0381, 0.1926),
     (0, 10, 0, 20, -0.1611, 0.2775), (0, 10, 0, 10, -0.2775, 0.2775),
     (10, 10, 0, 20, 0.6791, 1.0), (10, 10, 0, 10, 0.6075, 1.0)],
)  # fmt: skip
def test_newcombe_matches_his_worked_examples(
    a: int, m: int, b: int, n: int, low: float, high: float
) -> None:
    first = [1.0] * a + [0.0] * (m - a)
    second = [1.0] * b + [0.0] * (n - b)
    found = stats.difference_interval(first, second)
    assert found is not None and found.rounded() == (low, high)


def test_a_mean_interval_is_the_t_interval_and_wilson_for_pass_fail_runs() -> None:
    rates = [0.5, 0.75, 0.5, 0.25, 0.75]
    expected = oracle.t.interval(
        0.95, len(rates) - 1, loc=statistics.fmean(rates), scale=oracle.sem(rates)
    )
    found = stats.mean_interval(rates)
    assert found is not None and (found.low, found.high) == pytest.approx(expected, abs=1e-9)
    wilson = oracle.binomtest(2, 3).proportion_ci(0.95, method="wilson")
    found = stats.mean_interval([1.0, 0.0, 1.0])
    assert found is not None and (found.low, found.high) == pytest.approx(
        (wilson.low, wilson.high), abs=1e-12
    )


def test_edge_cases_all_pass_none_pass_and_one_run() -> None:
    all_pass = stats.mean_interval([1.0, 1.0, 1.0])
    none_pass = stats.mean_interval([0.0, 0.0, 0.0])
    assert all_pass is not None and all_pass.rounded() == (0.4385, 1.0)  # Wilson 3/3
    assert none_pass is not None and none_pass.rounded() == (0.0, 0.5615)
    # Runs that all pass against runs that all fail: an interval, not a point.
    separated = stats.difference_interval([1.0] * 3, [0.0] * 3)
    assert separated is not None and separated.rounded() == (0.2059, 1.0)
    # Nothing changes, whatever the configuration: the interval contains 0.
    same = stats.difference_interval([1.0] * 3, [1.0] * 3)
    assert same is not None and not same.excludes(0.0)
    assert stats.mean_interval([0.5]) is None
    assert stats.difference_interval([1.0], [0.0, 1.0]) is None
    assert stats.runs_for([1.0], [0.0, 1.0]) is None


def test_the_stratified_interval_is_the_textbook_formula() -> None:
    strata = [([0.5, 0.75, 1.0], [0.25, 0.5, 0.25, 0.5]), ([1.0, 0.75], [0.75, 0.5, 0.25])]
    total = sum(len(a) + len(b) for a, b in strata)
    weights = [(len(a) + len(b)) / total for a, b in strata]
    estimate = sum(
        w * (statistics.fmean(a) - statistics.fmean(b))
        for w, (a, b) in zip(weights, strata, strict=True)
    )
    parts = [
        (w**2 * statistics.variance(x) / len(x), len(x) - 1)
        for w, (a, b) in zip(weights, strata, strict=True)
        for x in (a, b)
    ]
    variance = sum(v for v, _ in parts)
    df = variance**2 / sum(v * v / d for v, d in parts)
    half = oracle.t.ppf(0.975, df) * math.sqrt(variance)
    found = stats.pooled_difference(strata)
    assert found is not None
    assert (found.low, found.high) == pytest.approx((estimate - half, estimate + half), abs=1e-9)
    # One stratum: Welch's interval itself.
    alone = stats.pooled_difference(strata[:1])
    expected = oracle.ttest_ind(*strata[0], equal_var=False).confidence_interval(0.95)
    assert alone is not None
    assert (alone.low, alone.high) == pytest.approx((expected.low, expected.high), abs=1e-9)


@pytest.mark.parametrize(
    ("first", "second"),
    [([0.5, 0.75, 1.0], [0.25, 0.5, 0.5]), ([1.0, 0.0, 1.0], [0.0, 0.0, 1.0]),
     ([0.9, 0.95, 1.0, 0.9], [0.1, 0.2, 0.1, 0.15])],
)  # fmt: skip
def test_runs_for_a_tenth_is_the_least_count_whose_welch_interval_is_that_narrow(
    first: list[float], second: list[float]
) -> None:
    needed = stats.runs_for(first, second)
    assert needed is not None
    a, b = statistics.variance(first), statistics.variance(second)

    def half_width(count: int) -> float:
        df = (count - 1) * (a + b) ** 2 / (a * a + b * b)
        return float(oracle.t.ppf(0.975, df) * math.sqrt((a + b) / count))

    assert half_width(needed) <= 0.10 < half_width(needed - 1)


def test_runs_for_runs_without_spread_takes_the_plus_four_spread() -> None:
    needed = stats.runs_for([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])
    rate_a, rate_b = 5 / 7, 2 / 7  # (3 + 2) / (3 + 4), (0 + 2) / (3 + 4)
    spread = rate_a * (1 - rate_a) + rate_b * (1 - rate_b)
    assert needed is not None and abs(needed - 1.96**2 * spread / 0.01) < 3


def _coverage(evals: int, seeds: tuple[int, int]) -> tuple[float, float]:
    """The shares of ``evals`` simulated evals (true pass rate 0.7 with the skill, 0.4
    without; 8 runs of 3 expectations per configuration) whose intervals of the mean and of
    the delta cover the true values."""
    covered_mean = covered_delta = 0
    for number in range(evals):
        with_skill = simulated_pass_rates(
            Behaviour(seed=seeds[0], grader_pass=0.7), f"eval {number}", 8, 3
        )
        without = simulated_pass_rates(
            Behaviour(seed=seeds[1], grader_pass=0.4), f"eval {number}", 8, 3
        )
        mean = stats.mean_interval(with_skill)
        delta = stats.difference_interval(with_skill, without)
        assert mean is not None and delta is not None
        covered_mean += mean.low <= 0.7 <= mean.high
        covered_delta += delta.low <= 0.3 <= delta.high
    return covered_mean / evals, covered_delta / evals


def test_the_intervals_cover_the_true_rate_of_the_seeded_model_95_percent_of_the_time() -> None:
    """200 evals: 93-97% covered; 2,000 more (the share's own spread is then ±0.5 points):
    94-96%."""
    for share in _coverage(200, (3, 4)):
        assert 0.93 <= share <= 0.97
    for share in _coverage(2000, (1, 2)):
        assert 0.94 <= share <= 0.96
