package dev.gort.runtime;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A lock-free histogram of durations, shaped like Go's timeHistogram: buckets at powers of two of
 * nanoseconds, each split in {@value #SUB} linear sub-buckets, from 1 ns to 2^{@value #MAX_POW} ns
 * (~18 minutes), plus an overflow bucket. Any thread records (one atomic add); readers get a racy
 * snapshot, as with runtime/metrics.
 *
 * <p>Go: histogram.go timeHistogram, metrics.go Float64Histogram
 */
public final class TimeHistogram {
    static final int SUB_BITS = 2;
    static final int SUB = 1 << SUB_BITS;
    static final int MAX_POW = 40;
    /** Bucket 0: [0, 1ns); then per power p (0..MAX_POW-1) SUB sub-buckets; then overflow. */
    private final AtomicLongArray counts = new AtomicLongArray(1 + MAX_POW * SUB + 1);

    TimeHistogram() {}

    static int bucket(long ns) {
        if (ns <= 0) {
            return 0;
        }
        int p = 63 - Long.numberOfLeadingZeros(ns); // 2^p <= ns < 2^(p+1)
        if (p >= MAX_POW) {
            return 1 + MAX_POW * SUB;
        }
        int sub = p < SUB_BITS ? (int) (ns - (1L << p)) * SUB >> p : (int) ((ns >>> (p - SUB_BITS)) & (SUB - 1));
        return 1 + p * SUB + Math.min(sub, SUB - 1);
    }

    /** Lower bound of bucket i in nanoseconds. */
    static double lower(int i) {
        if (i == 0) {
            return Double.NEGATIVE_INFINITY;
        }
        if (i > MAX_POW * SUB) {
            return Math.pow(2, MAX_POW);
        }
        int p = (i - 1) / SUB;
        int s = (i - 1) % SUB;
        return Math.pow(2, p) * (1 + (double) s / SUB);
    }

    public void record(long ns) {
        counts.incrementAndGet(bucket(ns));
    }

    /** Counts per bucket (racy snapshot). */
    public long[] counts() {
        long[] c = new long[counts.length()];
        for (int i = 0; i < c.length; i++) {
            c[i] = counts.get(i);
        }
        return c;
    }

    /** Bucket boundaries in seconds, {@code counts().length + 1} of them (first -Inf, last +Inf), as Go's Float64Histogram. */
    public double[] bucketsSeconds() {
        int n = counts.length();
        double[] b = new double[n + 1];
        b[0] = Double.NEGATIVE_INFINITY;
        for (int i = 1; i < n; i++) {
            b[i] = lower(i) / 1e9;
        }
        b[n] = Double.POSITIVE_INFINITY;
        return b;
    }

    long total() {
        long t = 0;
        for (int i = 0; i < counts.length(); i++) {
            t += counts.get(i);
        }
        return t;
    }

    /** Approximate quantile (0..1) in seconds: the upper bound of the bucket holding it; NaN when empty. */
    public double quantileSeconds(double q) {
        long[] c = counts();
        long total = 0;
        for (long x : c) {
            total += x;
        }
        if (total == 0) {
            return Double.NaN;
        }
        long rank = (long) Math.ceil(q * total);
        long acc = 0;
        for (int i = 0; i < c.length; i++) {
            acc += c[i];
            if (acc >= Math.max(1, rank)) {
                return (i + 1 < c.length ? lower(i + 1) : lower(i)) / 1e9;
            }
        }
        return Double.NaN;
    }
}
