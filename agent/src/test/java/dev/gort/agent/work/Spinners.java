package dev.gort.agent.work;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** CPU-bound goroutine bodies with no hand-written polls: the instrumenting loader adds them. */
public final class Spinners {
    private Spinners() {}

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** A call-free loop (JDK calls aside) that uses {@code cpuNanos} of CPU, publishing its progress. */
    public static long spinCpu(long cpuNanos, AtomicLong progress) {
        long x = 1;
        Thread last = Thread.currentThread();
        long lastCpu = THREADS.getCurrentThreadCpuTime();
        long used = 0;
        for (; ; ) {
            for (int i = 0; i < 4096; i++) {
                x = x * 31 + i;
            }
            Thread t = Thread.currentThread();
            long cpu = THREADS.getCurrentThreadCpuTime();
            if (t == last) {
                used += cpu - lastCpu;
            }
            last = t;
            lastCpu = cpu;
            progress.set(used);
            if (used >= cpuNanos) {
                return x;
            }
        }
    }

    /**
     * Spins inside a monitor for {@code cpuNanos} of CPU (so the stay lasts at least that long in
     * wall time, however loaded the machine): polls there must be refused. Records when it left the
     * monitor in {@code unlockedAt}.
     */
    public static long spinLocked(Object lock, long cpuNanos, AtomicLong unlockedAt) {
        long x = 0;
        synchronized (lock) {
            AtomicLong used = new AtomicLong();
            x = spinCpu(cpuNanos, used);
            unlockedAt.set(System.nanoTime());
        }
        // outside the monitor: a re-armed request is honoured at the next back-edge
        for (int k = 0; k < 1_000_000; k++) {
            x += k;
        }
        return x;
    }

    /**
     * Go's TestPreemption body: two goroutines pass ownership of x back and forth n times; each
     * spins, calling a non-inlined function, until it is its turn. On one P it finishes only if a
     * spinning goroutine is preempted.
     */
    public static void preemptionBody(int g, int n, AtomicInteger x) {
        for (int i = 0; i < n; i++) {
            while (x.get() != g) {
                preempt();
            }
            x.set(1 - g);
        }
    }

    private static int sink;

    /**
     * Recursion without a loop: no back-edge anywhere, so only the poll at the entry of a method
     * that calls others ({@code backedge}'s caller entries) can stop it.
     */
    public static long fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    /** Go's preempt(): a small non-inlined function (here: a method call with a tiny loop). */
    static void preempt() {
        int s = 0;
        for (int i = 0; i < 16; i++) {
            s += i;
        }
        sink += s;
    }
}
