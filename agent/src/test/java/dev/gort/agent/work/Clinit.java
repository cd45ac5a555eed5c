package dev.gort.agent.work;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A class initialiser that blocks its carrier (so sysmon retakes the P) and then runs a long
 * CPU-bound loop in a method it calls, while another goroutine waits for the class.
 */
public final class Clinit {
    private Clinit() {}

    private static CountDownLatch entered;
    private static CountDownLatch gate;
    private static long cpuNanos;

    /** Before the first {@link #value()}: the initialiser counts {@code entered} down, waits for {@code gate}. */
    public static synchronized void prepare(CountDownLatch entered, CountDownLatch gate, long cpuNanos) {
        Clinit.entered = entered;
        Clinit.gate = gate;
        Clinit.cpuNanos = cpuNanos;
    }

    private static synchronized CountDownLatch entered() {
        return entered;
    }

    private static synchronized CountDownLatch gate() {
        return gate;
    }

    private static synchronized long cpuNanos() {
        return cpuNanos;
    }

    static final class Slow {
        static final long VALUE = initBody();
    }

    static long initBody() {
        entered().countDown();
        try {
            gate().await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        return Spinners.spinCpu(cpuNanos(), new AtomicLong()) | 1;
    }

    /** Initialises {@link Slow} (or waits for its initialisation) and returns its value. */
    public static long value() {
        return Slow.VALUE;
    }
}
