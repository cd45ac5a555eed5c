package dev.gort.agent.work;

import java.util.concurrent.atomic.AtomicInteger;

/** Goroutine bodies that wait with {@code Thread.yield()}: the instrumenting loader rewrites the calls. */
public final class Yielders {
    private Yielders() {}

    /** Waits for its turn by yielding, then passes the turn to the other side; {@code rounds} times. */
    public static void pingPong(int me, int rounds, AtomicInteger turn) {
        for (int r = 0; r < rounds; r++) {
            while (turn.get() != me) {
                Thread.yield();
            }
            turn.set(1 - me);
        }
    }

    /**
     * Yields {@code n} times inside a monitor: none of them may take the goroutine off the carrier
     * that owns the monitor. Returns how many times the carrier changed.
     */
    public static int yieldLocked(Object lock, int n) {
        synchronized (lock) {
            Thread carrier = Thread.currentThread();
            int moved = 0;
            for (int i = 0; i < n; i++) {
                Thread.yield();
                if (Thread.currentThread() != carrier) {
                    moved++;
                }
            }
            return moved;
        }
    }
}
