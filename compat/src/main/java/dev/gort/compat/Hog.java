package dev.gort.compat;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A CPU hog: arithmetic in a loop, nothing else, until told to stop. Its class is instrumented by
 * the agent like the library's ({@code -Dgort.agent.include=dev/gort/compat/Hog}: the agent skips
 * gort's own packages otherwise), so its back-edge polls let sysmon preempt it after 10 ms, and
 * whatever shares its P is preempted in turn.
 */
public final class Hog {
    /** Written by the hogs when they stop, so the JIT cannot drop the loop; never read. */
    static volatile long sink;

    private Hog() {}

    /** Spins until {@code stop} is non-zero. */
    public static void spin(AtomicInteger stop) {
        long x = 1;
        while (stop.get() == 0) {
            for (int i = 0; i < 1_000_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink = x;
    }
}
