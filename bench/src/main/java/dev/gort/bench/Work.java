package dev.gort.bench;

import org.openjdk.jmh.annotations.CompilerControl;

/**
 * Calibrated CPU work: a xorshift loop with no calls in its body (so only back-edge polls can
 * preempt it) and a result that depends on every iteration (so C2 cannot drop it).
 */
public final class Work {
    private Work() {}

    /**
     * A fixed piece of work for comparisons that need the same work in every fork and in the Go
     * twin (the fan-out's efficiency): rounds of {@link #spin} that take about 1 ms on the
     * reference machine (AMD EPYC under KVM: {@link #calibrate} gives 584,000 to 610,000). The Go
     * twin's {@code unitIters} is the same figure.
     */
    public static final long UNIT_ITERATIONS = 600_000;

    /**
     * Spins {@code iterations} rounds of xorshift64 from {@code seed}; returns the last state. Never
     * inlined: every caller (a goroutine's body, a virtual or platform thread's, the serial loop on
     * the benchmark thread) runs the one compiled copy of the loop, so that a comparison between
     * them measures the scheduling, not where C2 placed and aligned each inlined copy.
     */
    @CompilerControl(CompilerControl.Mode.DONT_INLINE)
    public static long spin(long iterations, long seed) {
        long x = seed | 1;
        for (long i = 0; i < iterations; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    /**
     * How many iterations of {@link #spin} take {@code targetNanos} on the calling thread: warms the
     * loop up, then takes the fastest of several timed runs (the one least disturbed by other load).
     */
    public static long calibrate(long targetNanos) {
        long sink = 0;
        for (int i = 0; i < 200; i++) {
            sink += spin(100_000, i);
        }
        long n = 1_000_000;
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 7; round++) {
            long t0 = System.nanoTime();
            sink += spin(n, round);
            long dt = System.nanoTime() - t0;
            best = Math.min(best, (double) dt / n);
            if (dt < 20_000_000L) {
                n *= 2;
            }
        }
        if (sink == 42) {
            System.out.print("");
        }
        return Math.max(1, Math.round(targetNanos / best));
    }
}
