"""The statistics of eval verdicts: 95% intervals of pass rates and of their difference, and
the runs an interval of a given width would take. Pure functions of numbers, no I/O.

Which interval when (docs/evals.md says the same to users):

- The mean pass rate of runs: Student's t interval over the runs' pass rates, unless every
  run passed all or none of its expectations (or all runs have the same rate): those runs are
  pass/fail trials, where the t interval collapses to a point at 0 and 1, so the Wilson score
  interval of the trials is used instead.
- The share of runs that met every expectation: the Wilson score interval.
- The difference of two configurations' means: Welch's t interval (Welch–Satterthwaite
  degrees of freedom) over the runs of both; when both are pass/fail trials as above,
  Newcombe's hybrid score interval (his method 10, built from the two Wilson intervals).
- Several evals pooled: the same, stratified by eval (each eval's mean weighted by its share
  of the runs, variances added per eval, degrees of freedom by Welch–Satterthwaite).

Intervals are clipped to what a rate (0..1) or a difference of rates (-1..1) can be.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: The two-sided 95% quantile of the standard normal distribution.
Z95 = 1.959963984540054
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    def excludes(self, value: float) -> bool:
        return value < self.low or value > self.high

    def rounded(self, digits: int = 4) -> tuple[float, float]:
        """``[low, high]`` as benchmark.json writes it."""
        return round(self.low, digits), round(self.high, digits)


# -- Student's t distribution -------------------------------------------------------------


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny, epsilon = 1e-300, 3e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 400):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1.0) < epsilon:
            break
    return result


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` (not necessarily whole) degrees of freedom."""
    tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(probability: float, df: float) -> float:
    """The ``probability`` quantile of Student's t with ``df`` degrees of freedom (bisection
    on the distribution function: slow beside a table, exact to 1e-12)."""
    if not 0.0 < probability < 1.0 or df <= 0:
        raise ValueError(
            f"t_quantile needs 0 < probability < 1 and df > 0, got {probability}, {df}"
        )
    if probability < 0.5:
        return -t_quantile(1.0 - probability, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < probability:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if t_cdf(middle, df) < probability:
            low = middle
        else:
            high = middle
        if high - low < 1e-12:
            break
    return (low + high) / 2.0


def t95(df: float) -> float:
    """The two-sided 95% critical value of Student's t."""
    return t_quantile(0.5 + CONFIDENCE / 2.0, df)


# -- one proportion, one mean ---------------------------------------------------------------


def wilson(successes: float, trials: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval of ``successes`` of ``trials`` (None without trials)."""
    if trials <= 0:
        return None
    share = successes / trials
    denominator = 1.0 + z * z / trials
    centre = (share + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / denominator
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def is_pass_fail(values: Sequence[float]) -> bool:
    """Whether ``values`` are pass/fail trials: every one 0 or 1, or all the same."""
    return all(value in (0.0, 1.0) for value in values) or len(set(values)) <= 1


def mean_interval(values: Sequence[float]) -> Interval | None:
    """The 95% interval of the mean of ``values`` (pass rates from 0 to 1); None under two
    values (no spread to see)."""
    count = len(values)
    if count < 2:
        return None
    mean = statistics.fmean(values)
    if is_pass_fail(values):
        return wilson(mean * count, count)
    half = t95(count - 1) * statistics.stdev(values) / math.sqrt(count)
    return Interval(max(0.0, mean - half), min(1.0, mean + half))


# -- the difference of two configurations ----------------------------------------------------


def welch(first: Sequence[float], second: Sequence[float]) -> Interval | None:
    """Welch's 95% t interval of mean(first) - mean(second); None when either has under two
    values or neither has any spread (the Welch–Satterthwaite degrees of freedom are 0/0)."""
    return stratified_welch([(first, second)])


def stratified_welch(strata: Sequence[tuple[Sequence[float], Sequence[float]]]) -> Interval | None:
    """The 95% t interval of the difference of two pooled means, stratified: each stratum's
    difference weighted by its share of the runs, its variance added, the degrees of freedom
    by Welch–Satterthwaite over every stratum's two parts.  One stratum is Welch's interval."""
    if not strata or any(len(a) < 2 or len(b) < 2 for a, b in strata):
        return None
    total = sum(len(a) + len(b) for a, b in strata)
    estimate, parts = 0.0, []
    for a, b in strata:
        weight = (len(a) + len(b)) / total
        estimate += weight * (statistics.fmean(a) - statistics.fmean(b))
        parts += [(weight**2 * statistics.variance(x) / len(x), len(x) - 1) for x in (a, b)]
    half = _half_width(parts)
    if half is None:
        return None
    return Interval(max(-1.0, estimate - half), min(1.0, estimate + half))


def _half_width(parts: Sequence[tuple[float, int]]) -> float | None:
    """Half the 95% t interval of a sum of variance parts, each with its degrees of freedom
    (Welch–Satterthwaite); None when the parts add to no variance."""
    variance = sum(part for part, _ in parts)
    if variance <= 0.0:
        return None
    df = variance**2 / sum(part**2 / freedom for part, freedom in parts if part > 0)
    return t95(df) * math.sqrt(variance)


def newcombe(first: Sequence[float], second: Sequence[float]) -> Interval | None:
    """Newcombe's hybrid score interval (method 10) of share(first) - share(second) for
    pass/fail trials: the two Wilson intervals combined."""
    a = wilson(sum(first), len(first))
    b = wilson(sum(second), len(second))
    if a is None or b is None:
        return None
    p, q = statistics.fmean(first), statistics.fmean(second)
    difference = p - q
    below = math.sqrt((p - a.low) ** 2 + (b.high - q) ** 2)
    above = math.sqrt((a.high - p) ** 2 + (q - b.low) ** 2)
    return Interval(max(-1.0, difference - below), min(1.0, difference + above))


def difference_interval(first: Sequence[float], second: Sequence[float]) -> Interval | None:
    """The 95% interval of mean(first) - mean(second) for two configurations' pass rates:
    Newcombe's when both are pass/fail trials, Welch's otherwise; None under two runs each."""
    if len(first) < 2 or len(second) < 2:
        return None
    if is_pass_fail(first) and is_pass_fail(second):
        return newcombe(first, second)
    return welch(first, second)


def pooled_difference(strata: Sequence[tuple[Sequence[float], Sequence[float]]]) -> Interval | None:
    """The interval of the difference over several evals, stratified by eval (one eval:
    :func:`difference_interval`)."""
    usable = [(a, b) for a, b in strata if len(a) >= 2 and len(b) >= 2]
    if not usable:
        return None
    if len(usable) == 1:
        return difference_interval(*usable[0])
    if all(is_pass_fail(a) and is_pass_fail(b) for a, b in usable):
        return newcombe([v for a, _ in usable for v in a], [v for _, b in usable for v in b])
    return stratified_welch(usable)


def pooled_mean_interval(strata: Sequence[Sequence[float]]) -> Interval | None:
    """The interval of the mean pass rate of every run of several evals, stratified by eval."""
    usable = [values for values in strata if len(values) >= 2]
    everything = [value for values in usable for value in values]
    if not usable:
        return None
    if len(usable) == 1 or is_pass_fail(everything):
        return mean_interval(everything)
    total = len(everything)
    half = _half_width(
        [
            (
                (len(values) / total) ** 2 * statistics.variance(values) / len(values),
                len(values) - 1,
            )
            for values in usable
        ]
    )
    if half is None:
        return mean_interval(everything)
    mean = statistics.fmean(everything)
    return Interval(max(0.0, mean - half), min(1.0, mean + half))


# -- how many runs ---------------------------------------------------------------------------

#: The half-width the run hint aims at.
TARGET_HALF_WIDTH = 0.10
#: The most runs the hint ever names (beyond it: "more than").
MOST_RUNS = 10_000


def _spread_of(values: Sequence[float]) -> float:
    """The variance of one run: the sample variance; for runs with none, a pass/fail run's
    at the plus-four rate (Agresti–Coull), so that no spread seen is not taken as none."""
    variance = statistics.variance(values)
    if variance > 0.0:
        return variance
    rate = (sum(values) + 2.0) / (len(values) + 4.0)
    return rate * (1.0 - rate)


def runs_for(
    first: Sequence[float], second: Sequence[float], half_width: float = TARGET_HALF_WIDTH
) -> int | None:
    """Runs per configuration that would bring the Welch interval of the difference to
    ±``half_width`` at the spread observed; None under two runs each (no spread seen)."""
    if len(first) < 2 or len(second) < 2:
        return None
    a, b = _spread_of(first), _spread_of(second)
    count = 2
    while count < MOST_RUNS:
        df = (count - 1) * (a + b) ** 2 / (a * a + b * b)
        if t95(df) * math.sqrt((a + b) / count) <= half_width:
            return count
        # The normal bound jumps close to the answer; the t factor is then checked step by step.
        count = max(count + 1, math.ceil(Z95 * Z95 * (a + b) / half_width**2) - 1)
    return MOST_RUNS
