package dev.gort.agent.work;

/**
 * The CPU-bound part of {@code RandomizedStressTest}: a call-free loop that only the injected polls
 * can preempt. A pure function of its argument, so the instrumented copy must return what the plain
 * one does.
 */
public final class StressWork {
    private StressWork() {}

    /** {@code iterations} rounds of a multiply-xorshift mix. */
    public static long spin(long iterations) {
        long x = 0x9E3779B97F4A7C15L;
        for (long i = 0; i < iterations; i++) {
            x = (x ^ i) * 0xBF58476D1CE4E5B9L;
            x ^= x >>> 31;
        }
        return x;
    }
}
