package dev.gort.bench.report;

import java.util.Arrays;

/**
 * The median of a sample and a distribution-free confidence interval for it, the statistic Go's
 * benchstat reports: no assumption about the shape of the distribution, so that a few slow
 * iterations (a fork that ran beside a busy neighbour, a GC that landed in one iteration) move the
 * figure little, where they pull a mean and widen a Student's t interval.
 *
 * <p>The interval is [x(k), x(n+1-k)] of the sorted sample, for the largest rank k whose two tails
 * hold at most {@code 1 - level} of the Binomial(n, 1/2) distribution together: the median of the
 * population lies below x(k) with probability P(Bin(n, 1/2) &lt;= k-1) (at most k-1 observations
 * below it), and above x(n+1-k) with the same probability. {@link #level} is the exact coverage of
 * that interval (at least the level asked for). With too few observations for the level asked
 * (fewer than 6 at 95 %), no rank qualifies: the interval is then the whole range, and
 * {@link #level} says how much less it covers (5 observations: 93.75 %; 3: 75 %).
 *
 * @param median the sample median (the mean of the two middle values when n is even)
 * @param lo the interval's lower end
 * @param hi the interval's upper end
 * @param level the interval's exact coverage, between 0 and 1
 * @param n the sample size
 */
record MedianCi(double median, double lo, double hi, double level, int n) {
    /** The confidence level the report asks for (benchstat's default). */
    static final double LEVEL = 0.95;

    /** The larger distance from the median to an end of the interval: the report's "±". */
    double halfWidth() {
        return Math.max(median - lo, hi - median);
    }

    /** The statistic of {@code xs} (NaNs left out) at {@link #LEVEL}; null when nothing is left. */
    static MedianCi of(double[] xs) {
        return of(xs, LEVEL);
    }

    static MedianCi of(double[] xs, double level) {
        double[] s = Arrays.stream(xs).filter(x -> !Double.isNaN(x)).sorted().toArray();
        int n = s.length;
        if (n == 0) {
            return null;
        }
        double median = n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
        // The largest k with P(Bin(n, 1/2) <= k-1) <= (1 - level) / 2; tail = P(Bin <= k-1).
        int k = 0;
        double tail = 0;
        double cdf = 0;
        for (int i = 0; i <= n / 2; i++) {
            cdf += binomialHalf(n, i);
            if (cdf > (1 - level) / 2) {
                break;
            }
            k = i + 1;
            tail = cdf;
        }
        if (k == 0) {
            // Too few observations for the level: the whole range, covering 1 - 2 P(Bin = 0).
            return new MedianCi(median, s[0], s[n - 1], 1 - 2 * binomialHalf(n, 0), n);
        }
        return new MedianCi(median, s[k - 1], s[n - k], 1 - 2 * tail, n);
    }

    /** P(Bin(n, 1/2) = i), computed in logarithms (no overflow for any n a benchmark has). */
    static double binomialHalf(int n, int i) {
        double log = -n * Math.log(2);
        for (int j = 1; j <= i; j++) {
            log += Math.log(n - i + j) - Math.log(j);
        }
        return Math.exp(log);
    }
}
