package dev.gort.bench;

/**
 * Calibrated CPU work: a xorshift loop with no calls in its body (so only back-edge polls can
 * preempt it) and a result that depends on every iteration (so C2 cannot drop it).
 */
public final class Work {
    private Work() {}

    /** Spins {@code iterations} rounds of xorshift64 from {@code seed}; returns the last state. */
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
